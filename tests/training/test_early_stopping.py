"""EarlyStopping: the documented stopping step on scripted metric sequences, and its settings checked."""

import math

import pytest
import torch

from neurodyn.training import EarlyStopping, TrainConfig, _engine


def _scripted(values, rule, every=1):
    """Run the engine on a toy parameter with the held-out metric following ``values``."""
    p = torch.zeros(1, requires_grad=True)
    cfg = TrainConfig(n_epochs=len(values) * every, eval_every=every, progress=False)

    def objective(batch):
        loss = (p - 1).pow(2).sum()
        return loss, {"loss": loss}

    _, rec = _engine.run([p], objective, lambda step: None, cfg,
                         evaluate=lambda epoch: {rule.metric: values[epoch // every]}, early_stopping=rule)
    return rec


@pytest.mark.parametrize("every", [1, 2])
def test_stops_after_patience_evaluations_without_improvement(every):
    # best at the 3rd evaluation; the 3 evaluations after it do not improve -> stop at the 6th
    rec = _scripted([5.0, 4.0, 3.0, 3.0, 3.5, 3.0, 1.0], EarlyStopping("loss", 3), every)
    assert rec["status"] == "stopped_early"
    assert rec["iterations_run"] == 6 * every
    assert rec["early_stopping"]["best_iteration"] == 3 * every - 1
    assert rec["early_stopping"]["best_value"] == 3.0


def test_min_delta_and_direction():
    # improvements of 0.05 < min_delta = 0.1 do not count: stop after 2 evaluations past the first
    rec = _scripted([5.0, 4.95, 4.9, 4.85], EarlyStopping("loss", 2, min_delta=0.1))
    assert (rec["iterations_run"], rec["early_stopping"]["best_iteration"]) == (3, 0)
    rec = _scripted([0.1, 0.2, 0.3, 0.4], EarlyStopping("accuracy", 1))  # rising accuracy improves
    assert rec["status"] == "completed" and rec["early_stopping"]["best_iteration"] == 3


@pytest.mark.parametrize("min_delta", [-1.0, math.nan, math.inf, "0.1"])
def test_bad_min_delta_is_refused(min_delta):
    # a negative min_delta counted a flat metric as improving (training never stopped); NaN made every
    # evaluation a non-improvement (training stopped while the metric still fell)
    with pytest.raises(ValueError, match="min_delta must be a finite number >= 0"):
        EarlyStopping("loss", 2, min_delta=min_delta)


@pytest.mark.parametrize("patience", [0, 0.5, 2.5, math.nan, True, "3"])
def test_bad_patience_is_refused(patience):
    with pytest.raises(ValueError, match="patience must be an integer >= 1"):
        EarlyStopping("loss", patience)


def test_coerce_checks_patience():
    assert EarlyStopping.coerce(("loss", 4.0)).patience == 4
    with pytest.raises(ValueError, match="patience must be an integer >= 1, got 'x'"):
        EarlyStopping.coerce(("loss", "x"))
