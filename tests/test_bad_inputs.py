"""Malformed arguments to tasks, models, training and rollouts raise clear errors early."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import neurodyn
from neurodyn.kernels import rollout
from neurodyn.models import LeakyRNN, LowRankRNN
from neurodyn.tasks import make_task


@pytest.mark.parametrize("n_trials", [2.5, "3", 3.0, True])
def test_task_sample_rejects_non_integer_trial_counts(n_trials):
    task = make_task("flipflop", n_bits=1, n_steps=5)
    with pytest.raises(TypeError, match="n_trials must be an int"):
        task.sample(n_trials, seed=0)


def test_task_sample_accepts_numpy_integers_and_rejects_float_first_trial():
    task = make_task("flipflop", n_bits=1, n_steps=5)
    a = task.sample(np.int64(4), seed=0, first_trial=np.int32(2))
    assert np.array_equal(a.inputs, task.sample(6, seed=0).inputs[2:])
    with pytest.raises(TypeError, match="first_trial must be an int"):
        task.sample(2, seed=0, first_trial=1.5)


@pytest.mark.parametrize("device, match", [("gpu0", "not a torch device"), ("cuda", "CUDA is not available")])
def test_train_rejects_malformed_or_unavailable_devices(device, match):
    if device == "cuda" and torch.cuda.is_available():
        pytest.skip("CUDA is available on this machine, so device='cuda' is valid")
    task = make_task("flipflop", n_bits=1, n_steps=5)
    with pytest.raises(ValueError, match=match):
        neurodyn.train(LeakyRNN(1, 4, 1, seed=0), task, n_iterations=1, batch_size=2, progress=False,
                       device=device)


def test_forward_names_numpy_and_dtype_mismatches():
    net = LeakyRNN(2, 4, 1, seed=0)
    with pytest.raises(TypeError, match="inputs must be a torch.Tensor"):
        net(np.zeros((1, 3, 2), dtype=np.float32))
    with pytest.raises(ValueError, match="dtype torch.float64 but the model's parameters are torch.float32"):
        net(torch.zeros(1, 3, 2, dtype=torch.float64))
    with pytest.raises(ValueError, match="h0 has dtype"):
        net(torch.zeros(1, 3, 2), torch.zeros(1, 4, dtype=torch.float64))
    out = net.double()(torch.zeros(1, 3, 2, dtype=torch.float64))
    assert out.states.dtype == torch.float64


def test_forward_with_zero_time_steps_returns_empty_rollout():
    out = LeakyRNN(2, 4, 3, seed=0)(torch.zeros(5, 0, 2))
    assert out.states.shape == (5, 0, 4) and out.outputs.shape == (5, 0, 3)


@pytest.mark.parametrize("kwargs", [
    {"spectral_radius": float("nan")}, {"spectral_radius": -1.0}, {"spectral_radius": 0.0},
    {"noise_std": -0.1}, {"noise_std": float("nan")}, {"gain": float("inf")},
])
def test_leaky_rnn_rejects_non_finite_or_negative_scales(kwargs):
    name = next(iter(kwargs))
    with pytest.raises(ValueError, match=f"{name} must be finite"):
        LeakyRNN(2, 6, 1, seed=0, **kwargs)


def test_low_rank_rnn_rejects_nan_random_gain():
    with pytest.raises(ValueError, match="random_gain must be finite"):
        LowRankRNN(2, 6, 1, rank=1, random_gain=float("nan"), seed=0)


def test_rollout_rejects_nan_noise_and_malformed_seed_without_noise():
    net = LeakyRNN(2, 4, 1, seed=0)
    h0, u = torch.zeros(3, 4), torch.zeros(3, 2)
    with pytest.raises(ValueError, match="noise_std must be finite"):
        rollout(net, h0=h0, inputs=u, n_steps=2, noise_std=float("nan"), backend="torch")
    for bad in (1.5, "x", -1):
        with pytest.raises((TypeError, ValueError), match="seed must be"):
            rollout(net, h0=h0, inputs=u, n_steps=2, seed=bad, backend="torch")


def _ensemble(**kwargs):
    from neurodyn.training import train_ensemble

    task = make_task("flipflop", n_bits=1, n_steps=4)
    settings = {"n_iterations": 1, "batch_size": 2, "progress": False, **kwargs}
    return train_ensemble(lambda seed: LeakyRNN(1, 4, 1, seed=seed), task, seeds=[0, 1], **settings)


@pytest.mark.parametrize("kwargs, match", [
    ({"hyperparameters": {"n_active": [2, 9]}}, r"n_active of network 1 must be an integer in \[1, 4\]"),
    ({"hyperparameters": {"n_active": [0, 2]}}, "n_active of network 0 must be an integer in"),
    ({"hyperparameters": {"weight_decay": [-1e-3, 0.0]}}, "weight_decay of network 0 must be a finite"),
    ({"lr": float("nan")}, "lr must be a finite number > 0"),
    ({"loss": "mae"}, "unknown loss 'mae'"),
])
def test_train_ensemble_rejects_impossible_settings(kwargs, match):
    with pytest.raises(ValueError, match=match):
        _ensemble(**kwargs)


def test_curriculum_rejects_nan_threshold():
    from neurodyn.training.curriculum import Curriculum

    with pytest.raises(ValueError, match="threshold must be finite"):
        Curriculum("n_steps", (5, 10), advance_when=("loss", float("nan")))


def test_linear_predictivity_of_a_constant_target_raises_instead_of_nan():
    from neurodyn.analysis import LinearPredictivity, linear_predictivity

    X = np.random.default_rng(0).normal(size=(40, 3))
    with pytest.raises(ValueError, match="constant target"):
        linear_predictivity(X, np.ones((40, 2)), seed=0)
    with pytest.raises(ValueError, match="constant target"):
        LinearPredictivity().fit(X, X[:, :2]).score(X, np.ones((40, 2)))
    assert linear_predictivity(np.ones((40, 2)), X, seed=0).r2 <= 0.0   # a constant predictor is allowed


@pytest.mark.parametrize("name", ["romo", "dms"])
def test_decision_tasks_score_nan_outputs_as_errors(name):
    task = make_task(name)
    batch = task.sample(8, seed=0)
    metrics = task.evaluate(np.full((*batch.targets.shape[:2], 3), np.nan), batch)
    assert metrics == {"accuracy": 0.0, "fixation_accuracy": 0.0}
    perfect = np.eye(3)[batch.targets[..., 0].astype(int)]
    assert task.evaluate(perfect, batch) == {"accuracy": 1.0, "fixation_accuracy": 1.0}


def test_evaluate_names_a_shape_mismatch():
    task = make_task("sine_wave")
    batch = task.sample(2, seed=0)
    with pytest.raises(ValueError, match=r"outputs must have shape \(2, 100, 1\)"):
        task.evaluate(np.zeros((2, 10, 1)), batch)


@pytest.mark.parametrize("kappa", [-1.0, float("nan"), float("inf")])
def test_continuous_report_rejects_invalid_concentration(kappa):
    from neurodyn.tasks import ContinuousReport

    with pytest.raises(ValueError, match="kappa"):
        ContinuousReport(kappa=kappa)


def test_cka_sigma_must_be_one_or_two_bandwidths_and_only_for_rbf():
    from neurodyn.analysis import cka

    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(30, 3)), rng.normal(size=(30, 4))
    with pytest.raises(ValueError, match="one bandwidth or a pair"):
        cka(X, Y, kernel="rbf", sigma=(1.0, 2.0, 3.0))
    with pytest.raises(ValueError, match="no effect with kernel='linear'"):
        cka(X, Y, sigma=1.0)
    assert cka(X, Y, kernel="rbf", sigma=np.array([1.0, 2.0])) == cka(X, Y, kernel="rbf", sigma=(1.0, 2.0))


@pytest.mark.parametrize("hook", [lambda t, h: None, lambda t, h: h[:, :2]])
def test_state_hook_must_return_a_state_of_the_same_shape(hook):
    net = LeakyRNN(1, 4, 1, seed=0)
    with pytest.raises(ValueError, match=r"state_hook must return the state, a tensor of shape \(3, 4\)"):
        net(torch.zeros(3, 5, 1), state_hook=hook)
    clamped = net(torch.zeros(3, 5, 1), state_hook=lambda t, h: h.clamp(min=0.0)).states
    assert torch.all(clamped >= 0)


def test_train_rejects_a_nan_target_metric():
    task = make_task("flipflop", n_bits=1, n_steps=5)
    with pytest.raises(ValueError, match="target_metric must be"):
        neurodyn.train(LeakyRNN(1, 4, 1, seed=0), task, n_iterations=2, batch_size=2, eval_every=1,
                       target_metric=("loss", float("nan")), progress=False)
