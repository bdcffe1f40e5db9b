"""One divergence policy for every trainer: stop, keep the last finite weights, status "diverged", warn.

The oracle for "the last finite weights" is the same run stopped by its length just before the
divergence: its weights must equal, bit for bit, those the diverged run returns.
"""

import dataclasses
import warnings

import numpy as np
import pytest
import torch

from neurodyn.models import PLRNN, LeakyRNN, ShallowPLRNN
from neurodyn.tasks import HMMEmulation
from neurodyn.tasks.flipflop import FlipFlop
from neurodyn.training import TrainingDivergedError, fit_teacher_forcing, train, train_ensemble
from neurodyn.training._engine import data_scale
from neurodyn.training.deflation import train_deflated
from neurodyn.training.distribution import train_distribution

TASK = FlipFlop(n_bits=2, n_steps=8)
FAST = {"batch_size": 8, "progress": False, "eval_every": 0}


def same_weights(a, b):
    return all(torch.equal(p, q) for p, q in zip(a.state_dict().values(), b.state_dict().values()))


@dataclasses.dataclass(frozen=True)
class PoisonedFlipFlop(FlipFlop):
    """Flip-flop trials whose inputs are multiplied by ``factor`` from trial ``from_trial`` on."""

    from_trial: int = 0
    factor: float = float("nan")

    def sample(self, n_trials, *, seed=None, first_trial=0):
        batch = super().sample(n_trials, seed=seed, first_trial=first_trial)
        if first_trial < self.from_trial or first_trial >= 10**9:  # the held-out batch stays clean
            return batch
        return dataclasses.replace(batch, inputs=batch.inputs * np.float32(self.factor))


@pytest.mark.parametrize("factor, cause", [(float("nan"), "data_not_finite"), (1e30, "data_scale")])
def test_train_keeps_the_weights_before_the_bad_batch_and_names_the_data(factor, cause):
    task = PoisonedFlipFlop(n_bits=2, n_steps=8, from_trial=3 * 8, factor=factor)
    m = LeakyRNN(2, 6, 2, activation="relu", seed=0)
    with pytest.warns(RuntimeWarning, match="diverged at iteration 3: the loss became"):
        res = train(m, task, n_iterations=10, lr=0.05, **FAST)
    assert res.status == "diverged" and res.config["status"] == "diverged"
    assert res.divergence["iteration"] == 3 and res.divergence["cause"] == cause
    assert ("standardise" in res.divergence["message"]) == (cause == "data_scale")
    ref = train(m, TASK, n_iterations=3, lr=0.05, **FAST)
    assert same_weights(res.model, ref.model) and res.history["loss"] == ref.history["loss"]


class _NaNGradient(torch.autograd.Function):
    """Identity forward; NaN backward (a finite loss whose step breaks the weights)."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return g * float("nan")


@dataclasses.dataclass(frozen=True)
class NaNGradientAt:
    """A zero-valued penalty whose gradient is NaN at call ``at`` (counts calls)."""

    at: int
    calls: list = dataclasses.field(default_factory=list)
    name: str = "nan_grad"
    strength: float = 1.0

    def __call__(self, params, states):
        self.calls.append(1)
        w = _NaNGradient.apply(params.w_rec) if len(self.calls) == self.at + 1 else params.w_rec
        return 0.0 * w.sum()


def test_train_detects_non_finite_parameters_after_a_step():
    m = LeakyRNN(2, 6, 2, seed=1)
    with pytest.warns(RuntimeWarning, match="diverged at iteration 4: a parameter became nan"):
        res = train(m, TASK, n_iterations=10, lr=0.05, regularizers=[NaNGradientAt(4)], **FAST)
    assert res.divergence["where"] == "parameters" and res.config["iterations_run"] == 4
    ref = train(m, TASK, n_iterations=4, lr=0.05, regularizers=[NaNGradientAt(99)], **FAST)
    assert same_weights(res.model, ref.model)
    assert all(torch.isfinite(p).all() for p in res.model.parameters())


def test_early_stopping_best_weights_survive_a_later_divergence():
    task = PoisonedFlipFlop(n_bits=2, n_steps=8, from_trial=6 * 8)
    m = LeakyRNN(2, 6, 2, seed=0)
    with pytest.warns(RuntimeWarning, match="diverged at iteration 6"):
        res = train(m, task, n_iterations=20, lr=0.05, batch_size=8, progress=False, eval_every=2,
                    early_stopping=("loss", 5))
    best = res.config["early_stopping"]["best_iteration"]
    assert res.status == "diverged" and best in (1, 3, 5)
    ref = train(m, TASK, n_iterations=best + 1, lr=0.05, **FAST)
    assert same_weights(res.model, ref.model)


def sine(n=400, c=2):
    t = np.arange(n) * 0.1
    return np.stack([np.sin(t + k) for k in range(c)], 1)


def test_fit_keeps_the_last_finite_epoch():
    def poison(epoch, model):  # after the snapshot of epoch 1: epoch 2 meets NaN weights
        if epoch == 1:
            with torch.no_grad():
                model.A.fill_(float("nan"))
        return {}

    kw = dict(observation="identity", n_epochs=5, batches_per_epoch=3, batch_size=4, seq_len=10, lr=1e-2,
              lr_end=None, progress=False, seed=2)
    m = PLRNN(0, 3, 2, seed=0)
    with pytest.warns(RuntimeWarning, match=r"diverged at epoch 2 \(step 6\): the loss became nan"):
        res = fit_teacher_forcing(m, sine(), callback=poison, **kw)
    assert res.status == "diverged" and res.config["epochs_run"] == 2 and res.history["epoch"] == [0, 1]
    ref = fit_teacher_forcing(m, sine(), **{**kw, "n_epochs": 2})
    assert same_weights(res.model, ref.model) and res.history["loss"] == ref.history["loss"]


def test_fit_on_unstandardised_data_blames_the_scale():
    model = ShallowPLRNN(0, 2, 2, n_hidden=4, seed=0)
    with pytest.warns(RuntimeWarning, match=r"\|x\| = .*standardise the data"):
        res = fit_teacher_forcing(model, 1e19 * sine(), observation="identity", n_epochs=2,
                                  batches_per_epoch=2, batch_size=4, seq_len=10, progress=False)
    assert res.status == "diverged" and res.divergence["cause"] == "data_scale"
    assert res.divergence["data_max_abs"] > 1e18


def _leaky(seed, **kw):
    return LeakyRNN(TASK.n_inputs, 7, TASK.n_outputs, activation="relu", seed=seed, **kw)


def test_a_diverged_network_stops_while_the_others_train_on():
    seeds, kw = [3, 4, 5], dict(n_iterations=5, batch_size=6, lr=1e-2, eval_every=0, progress=False)
    models = [_leaky(3), _leaky(4, gain=1e5), _leaky(5)]  # network 1 overflows at once
    hp = {"weight_decay": [0.0, 0.5, 0.0]}  # decay would move network 1 if it were not held
    with pytest.warns(RuntimeWarning, match=r"network 1 \(seed 4\) training diverged at iteration 0"):
        res = train_ensemble(models, TASK, seeds=seeds, hyperparameters=hp, **kw)
    assert res.status == ["completed", "diverged", "completed"]
    assert res.config["iterations_run"] == [5, 0, 5] and len(res.histories[1]["loss"]) == 0
    assert same_weights(res.models[1], models[1])
    assert res.network_config(1)["status"] == "diverged" and res.network_config(0)["status"] == "completed"
    assert list(res.to_xarray().status.values) == res.status
    for e in (0, 2):
        alone = train(models[e], TASK, seed=seeds[e], weight_decay=hp["weight_decay"][e], **kw)
        diff = max((a - b).abs().max().item() for a, b in zip(res.models[e].parameters(),
                                                                alone.model.parameters()))
        assert diff < 1e-6
    with pytest.raises(TrainingDivergedError, match="network 1"):
        res.raise_if_diverged()


def test_ensemble_divergence_equals_divergence_alone():
    kw = dict(n_iterations=6, batch_size=6, lr=100.0, clip_grad_norm=None, eval_every=0, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = train_ensemble(lambda seed: _leaky(seed), TASK, seeds=[0, 1], **kw)
        assert res.status == ["completed", "diverged"] and res.config["iterations_run"] == [6, 1]
        for e in (0, 1):
            alone = train(_leaky(e), TASK, seed=e, **kw)
            assert res.status[e] == alone.status
            assert res.config["iterations_run"][e] == alone.config["iterations_run"]
            assert res.histories[e]["loss"] == pytest.approx(alone.history["loss"], rel=1e-5)
            for a, b in zip(res.models[e].parameters(), alone.model.parameters()):  # |w| ~ lr here
                torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


def test_deflated_training_keeps_the_last_finite_weights():
    m, ref = LeakyRNN(2, 8, 2, activation="relu", gain=3.0, seed=0), LeakyRNN(2, 5, 2, seed=1)
    kw = dict(reference_models=[ref], lr=1e3, clip_grad_norm=None, **FAST)
    with pytest.warns(RuntimeWarning, match="diverged at iteration 1.*or lower lam"):
        res = train_deflated(m, TASK, n_iterations=20, **kw)
    assert res.status == "diverged" and res.config["deflation"]["n_references"] == 1
    one = train_deflated(m, TASK, n_iterations=1, **kw)
    assert same_weights(res.model, one.model) and res.history["predictivity"] == one.history["predictivity"]


@dataclasses.dataclass(frozen=True)
class NaNTargetsHMM(HMMEmulation):
    """HMM sequences whose targets are NaN from trial ``from_trial`` on."""

    from_trial: int = 0

    def sample(self, n_trials, *, seed=None, first_trial=0):
        batch = super().sample(n_trials, seed=seed, first_trial=first_trial)
        if first_trial < self.from_trial:
            return batch
        return dataclasses.replace(batch, targets=batch.targets * np.float32("nan"))


def test_distribution_training_keeps_the_last_finite_weights():
    task = NaNTargetsHMM(n_states=2, n_steps=6, n_noise=3, from_trial=2 * 16)
    m = LeakyRNN(task.n_inputs, 6, task.n_outputs, alpha=0.2, seed=0)
    kw = dict(batch_size=16, lr=1e-2, eval_every=0, progress=False, seed=1)
    with pytest.warns(RuntimeWarning, match="diverged at iteration 2.*NaN/Inf values: clean the data"):
        res = train_distribution(m, task, n_iterations=5, **kw)
    assert res.status == "diverged" and res.divergence["cause"] == "data_not_finite"
    clean = HMMEmulation(n_states=2, n_steps=6, n_noise=3)
    ref = train_distribution(m, clean, n_iterations=2, **kw)
    assert same_weights(res.model, ref.model) and res.history["loss"] == ref.history["loss"]


def test_data_scale_reads_nested_batches():
    batch = {"x": torch.tensor([1.0, -7.0]), "u": None, "n": 3, "y": (np.array([2.0, np.inf]),)}
    assert data_scale(batch) == (7.0, True)
    assert data_scale((torch.zeros(0), torch.ones(2, dtype=torch.int64))) == (0.0, False)
