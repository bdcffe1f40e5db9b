"""train(): constraints after training, regularisers, early stopping, curriculum, determinism."""

from dataclasses import dataclass, field

import pytest
import torch

from neurodyn.models import LeakyRNN, LowRankRNN
from neurodyn.models.constraints import make_sparse_mask
from neurodyn.tasks.flipflop import FlipFlop
from neurodyn.training import TrainingDivergedError, train
from neurodyn.training.curriculum import Curriculum
from neurodyn.training.early_stopping import EarlyStopping
from neurodyn.training.regularizers import l1_weight, l2_rate, l2_weight

TASK = FlipFlop(n_bits=2, n_steps=8)
FAST = {"batch_size": 8, "progress": False, "eval_every": 0}


@dataclass(frozen=True)
class ScriptedFlipFlop(FlipFlop):
    """A flip-flop whose evaluation returns a scripted metric sequence (one value per call)."""

    script: tuple = ()
    metric: str = "accuracy"
    calls: list = field(default_factory=list, compare=False)

    def evaluate(self, outputs, batch):
        self.calls.append(batch.n_steps)
        return {self.metric: self.script[min(len(self.calls) - 1, len(self.script) - 1)]}


def test_constraints_hold_exactly_after_training_with_large_lr():
    rec = make_sparse_mask((10, 10), 0.5, seed=1)
    m0 = LeakyRNN(2, 10, 2, dale=True, dale_output=True, no_autapse=True, rec_mask=rec, seed=0)
    res = train(m0, TASK, n_iterations=25, lr=0.5, clip_grad_norm=None, **FAST)
    p = res.model.params()
    sign = m0.dale_sign
    for j in range(10):  # column by column: presynaptic unit j keeps its sign
        col = p.w_rec[:, j]
        assert torch.all(col >= 0) if sign[j] > 0 else torch.all(col <= 0), f"column {j} flipped"
    assert torch.all(p.w_rec[rec == 0] == 0)
    assert torch.all(torch.diagonal(p.w_rec) == 0)
    assert torch.all(p.w_out[:, 8:] == 0) and torch.all(p.w_out >= 0)
    # the large lr did move the raw weights across zero: the constraint, not luck, keeps the signs
    raw_signs = torch.sign(res.model.w_rec.detach()) * sign
    assert bool((raw_signs < 0).any())
    assert not torch.equal(res.model.w_rec, m0.w_rec)


def test_low_rank_stays_rank_r_after_training():
    res = train(LowRankRNN(2, 12, 2, rank=2, seed=0), TASK, n_iterations=10, lr=0.1, **FAST)
    w = res.model.double().params().w_rec.detach()
    assert int(torch.linalg.matrix_rank(w)) == 2


def _first_loss(model, **kw):
    res = train(model, TASK, n_iterations=1, lr=1e-6, **FAST, **kw)
    return res.history


def test_weight_penalties_closed_form():
    m = LeakyRNN(2, 6, 2, seed=3)
    base = _first_loss(m)
    hist = _first_loss(m, regularizers=[l2_weight(0.3), l1_weight(0.2, ("w_rec",))])
    p = m.params()
    l2 = sum(float(w.detach().pow(2).mean()) for w in (p.w_in, p.w_rec, p.w_out))
    l1 = float(p.w_rec.detach().abs().mean())
    assert hist["task_loss"][0] == base["loss"][0]
    assert hist["reg_l2_weight"][0] == pytest.approx(0.3 * l2, rel=1e-6)
    assert hist["reg_l1_weight"][0] == pytest.approx(0.2 * l1, rel=1e-6)
    assert hist["loss"][0] - base["loss"][0] == pytest.approx(0.3 * l2 + 0.2 * l1, rel=1e-5)


@pytest.mark.parametrize("spec", [{"l2_rate": 0.5}, [l2_rate(0.5)]])
def test_rate_penalty_closed_form(spec):
    m = LeakyRNN(2, 6, 2, seed=3)
    base = _first_loss(m)
    hist = _first_loss(m, regularizers=spec)
    x, _, _ = TASK.sample(8, seed=0, first_trial=0).to_torch()
    states = m(x, noise=False).states.detach()
    assert hist["loss"][0] - base["loss"][0] == pytest.approx(0.5 * float(states.pow(2).mean()), rel=1e-5)


def test_bad_regularizer_specs():
    with pytest.raises(ValueError, match="unknown regularizer"):
        _first_loss(LeakyRNN(2, 4, 2), regularizers={"l3_rate": 1.0})
    with pytest.raises(ValueError, match="strength must be finite and >= 0"):
        _first_loss(LeakyRNN(2, 4, 2), regularizers={"l2_rate": -1.0})


@pytest.mark.parametrize("metric, sign", [("accuracy", 1.0), ("mse", -1.0)])
def test_early_stopping_stops_at_the_right_iteration(metric, sign):
    script = tuple(sign * v for v in (0.1, 0.5, 0.4, 0.6, 0.55, 0.5, 0.58, 0.9, 0.95))
    task = ScriptedFlipFlop(n_bits=2, n_steps=8, script=script, metric=metric)
    m = LeakyRNN(2, 6, 2, seed=0)
    res = train(m, task, n_iterations=9, lr=0.05, batch_size=8, progress=False, eval_every=1,
                early_stopping=(metric, 3))
    # best 0.6 at evaluation 3; evaluations 4, 5, 6 do not improve -> stop after iteration 6
    assert res.config["iterations_run"] == 7
    assert res.config["stop_reason"] == "early_stopping"
    assert res.config["early_stopping"]["best_iteration"] == 3
    assert res.config["early_stopping"]["mode"] == ("max" if sign > 0 else "min")
    # the best weights are restored: equal, bit for bit, to 4 plain iterations
    ref = train(m, TASK, n_iterations=4, lr=0.05, **FAST)
    for a, b in zip(res.model.parameters(), ref.model.parameters()):
        assert torch.equal(a, b)


def test_early_stopping_validation():
    with pytest.raises(ValueError, match="patience must be an integer >= 1"):
        EarlyStopping("loss", 0)
    with pytest.raises(ValueError, match="not evaluated; available"):
        train(LeakyRNN(2, 4, 2), TASK, n_iterations=2, batch_size=4, progress=False, eval_every=1,
              early_stopping=("nope", 2))


@pytest.mark.parametrize(("option", "what"), [
    ({"early_stopping": ("acuracy", 3)}, "early_stopping"),
    ({"target_metric": ("acc", 1.0)}, "target_metric"),
    ({"curriculum": Curriculum("n_steps", (4, 8), ("nope", 0.1))}, "curriculum"),
])
def test_a_metric_that_is_not_evaluated_is_refused_before_any_training_step(option, what):
    steps = []
    message = f"^{what} metric '.*' is not evaluated; available: mse, accuracy, loss$"
    with pytest.raises(ValueError, match=message):
        train(LeakyRNN(2, 4, 2), TASK, n_iterations=50, batch_size=4, progress=False, eval_every=25,
              state_hook=lambda t, h: steps.append(t) or h, backend="torch", **option)
    assert steps == []


def test_curriculum_advances_on_scripted_metric():
    task = ScriptedFlipFlop(n_bits=2, n_steps=8, script=(0.2, 0.6, 0.3, 0.7, 0.1, 0.1))
    lengths = []

    def hook(t, h):
        if t == 0:
            lengths.append(0)
        lengths[-1] = t + 1
        return h

    cur = Curriculum("n_steps", (4, 6, 9), advance_when=("accuracy", 0.5))
    res = train(LeakyRNN(2, 6, 2), task, n_iterations=6, lr=0.01, batch_size=4, progress=False,
                eval_every=1, curriculum=cur, state_hook=hook)
    assert res.history["curriculum_advance_iteration"] == [1, 3]
    assert res.history["stage"] == [0, 0, 1, 1, 2, 2]
    assert lengths == [4, 4, 6, 6, 9, 9]  # training batches come from the current stage's task
    assert task.calls == [4, 4, 6, 6, 9, 9]  # and so do the held-out evaluations
    assert res.config["curriculum"]["final_value"] == 9


def test_curriculum_validation():
    with pytest.raises(ValueError, match="not a field of FlipFlop"):
        Curriculum("delay", (1, 2), ("loss", 0.1)).task_at(TASK, 0)
    with pytest.raises(ValueError, match="changes the task's input/output sizes"):
        Curriculum("n_bits", (2, 3), ("loss", 0.1)).task_at(TASK, 1)
    with pytest.raises(ValueError, match="at least one value"):
        Curriculum("n_steps", (), ("loss", 0.1))
    with pytest.raises(ValueError, match="curriculum metric 'nope' is not evaluated"):
        train(LeakyRNN(2, 4, 2), TASK, n_iterations=2, batch_size=4, progress=False, eval_every=1,
              curriculum=Curriculum("n_steps", (4, 8), ("nope", 0.1)))


def test_target_metric_direction_follows_the_metric():
    res = train(LeakyRNN(2, 4, 2), TASK, n_iterations=5, batch_size=4, progress=False, eval_every=1,
                target_metric=("loss", 100.0))  # a loss is reached from below: stops at once
    assert res.config["iterations_run"] == 1 and res.config["stop_reason"] == "target_metric"


@pytest.mark.parametrize("kw, message", [
    ({"batch_size": 0}, "batch_size must be an integer >= 1, got 0"),
    ({"lr": 0.0}, "lr must be a finite number > 0, got 0.0"),
    ({"n_iterations": 0}, "n_iterations must be an integer >= 1, got 0"),
    ({"eval_every": 0, "early_stopping": ("loss", 2)}, "set eval_every > 0"),
    ({"eval_every": 0, "curriculum": Curriculum("n_steps", (4, 8), ("loss", 1.0))}, "set eval_every > 0"),
])
def test_bad_training_settings(kw, message):
    with pytest.raises(ValueError, match=message):
        train(LeakyRNN(2, 4, 2), TASK, **{"n_iterations": 1, "progress": False, **kw})


def test_state_hook_is_applied_during_training():
    calls = []
    train(LeakyRNN(2, 4, 2), TASK, n_iterations=3, lr=0.01, **FAST,
          state_hook=lambda t, h: calls.append(t) or h)
    assert calls == list(range(8)) * 3


def test_same_seed_same_weights_bit_for_bit():
    m = LeakyRNN(2, 8, 2, dale=True, noise_std=0.1, alpha=0.5, seed=1)
    kw = dict(n_iterations=6, lr=0.05, regularizers={"l2_rate": 0.01}, **FAST)
    a, b = train(m, TASK, seed=7, **kw), train(m, TASK, seed=7, **kw)
    c = train(m, TASK, seed=8, **kw)
    for pa, pb in zip(a.model.state_dict().values(), b.model.state_dict().values()):
        assert torch.equal(pa, pb)
    assert a.history["loss"] == b.history["loss"]
    assert not torch.equal(a.model.w_rec, c.model.w_rec)


def test_nan_loss_stops_with_the_initial_weights_and_warns():
    def poison(t, h):
        return h * float("nan") if t == 3 else h

    m = LeakyRNN(2, 4, 2)
    with pytest.warns(RuntimeWarning, match=r"diverged at iteration 0: the loss became nan.*lower lr"):
        res = train(m, TASK, n_iterations=2, lr=0.01, **FAST, state_hook=poison)
    assert res.status == "diverged" and res.config["iterations_run"] == 0 and res.history["loss"] == []
    assert all(torch.equal(a, b) for a, b in zip(res.model.parameters(), m.parameters()))
    with pytest.raises(TrainingDivergedError, match="the loss became nan"):
        res.raise_if_diverged()


def test_exploding_lr_stops_at_the_last_finite_weights():
    m = LeakyRNN(2, 8, 2, activation="relu", gain=3.0, seed=0)
    kw = dict(lr=1e3, clip_grad_norm=None, **FAST)
    with pytest.warns(RuntimeWarning, match="diverged at iteration 1: the loss became inf"):
        res = train(m, TASK, n_iterations=50, **kw)
    assert res.status == "diverged" and res.config["stop_reason"] == "diverged"
    assert res.divergence["iteration"] == 1 and res.divergence["cause"] == "optimisation"
    one = train(m, TASK, n_iterations=1, **kw)  # the weights after iteration 0, bit for bit
    assert all(torch.equal(a, b) for a, b in zip(res.model.parameters(), one.model.parameters()))
    assert res.history["loss"] == one.history["loss"] and one.status == "completed"
    one.raise_if_diverged()  # nothing to raise


def test_input_model_not_modified():
    m = LeakyRNN(2, 4, 2, seed=0)
    before = {k: v.clone() for k, v in m.state_dict().items()}
    train(m, TASK, n_iterations=2, lr=0.1, **FAST)
    assert all(torch.equal(before[k], v) for k, v in m.state_dict().items())


def test_huge_batch_size_is_refused_up_front():
    from neurodyn.training import train_ensemble

    with pytest.raises(ValueError, match=r"FlipFlop.sample needs about .* GiB .*lower n_trials / batch_size"):
        train(LeakyRNN(2, 6, 2), TASK, n_iterations=2, **{**FAST, "batch_size": 10**12})
    with pytest.raises(ValueError, match=r"FlipFlop.sample_networks needs about .* GiB"):
        train_ensemble(lambda seed: LeakyRNN(2, 6, 2, seed=seed), TASK, n_networks=2, n_iterations=2,
                       **{**FAST, "batch_size": 10**12})


def test_curriculum_refuses_string_values_and_stages_out_of_range():
    # a string was split into one stage per character; a stage past the end raised an IndexError
    with pytest.raises(ValueError, match="curriculum values must be a sequence of values"):
        Curriculum("n_steps", "20", advance_when=("accuracy", 0.9))
    curriculum = Curriculum("n_steps", [10, 20], advance_when=("accuracy", 0.9))
    assert curriculum.task_at(TASK, 1).n_steps == 20
    for stage in (2, -1):
        with pytest.raises(ValueError, match=r"stage .* is out of range; the curriculum has stages 0..1"):
            curriculum.task_at(TASK, stage)
