"""Cross-validated decoding of task variables: exact on a planted readout, chance on unrelated states."""

import numpy as np
import pytest
import torch

from neurodyn.analysis import compute_decodability, compute_decodability_over_time
from neurodyn.models import LeakyRNN
from neurodyn.tasks import FlipFlop


def test_decoding_matches_least_squares_on_the_same_trial_folds():
    task = FlipFlop(n_bits=2, n_steps=40, p_pulse=0.2)
    model = LeakyRNN(2, 4, 2, activation="tanh", alpha=1.0, seed=0)
    batch = task.sample(16, seed=3)
    ds = compute_decodability(model, task, n_trials=16, n_folds=4, alpha=1e-8, seed=3)
    with torch.no_grad():
        h = model(torch.as_tensor(batch.inputs), noise=False).states.double().numpy()
    H, Y = h.reshape(-1, 4), batch.targets.reshape(-1, 2).astype(float)
    # oracle: the same trial folds, fitted by least squares
    from sklearn.model_selection import GroupKFold

    order = np.random.default_rng(3).permutation(16)
    trial = np.repeat(np.arange(16), 40)
    pred = np.zeros_like(Y)
    for tr, te in GroupKFold(4).split(H, Y, groups=order[trial]):
        A = np.c_[H[tr], np.ones(len(tr))]
        w = np.linalg.lstsq(A, Y[tr], rcond=None)[0]
        pred[te] = np.c_[H[te], np.ones(len(te))] @ w
    r2 = 1 - ((Y - pred) ** 2).sum(0) / ((Y - Y.mean(0)) ** 2).sum(0)
    np.testing.assert_allclose(ds.r2.values, r2, atol=1e-6)
    np.testing.assert_allclose(ds.sign_accuracy.values, (np.sign(pred) == Y).mean(0))


def test_memoryless_network_cannot_decode_the_bits_and_is_seeded():
    task = FlipFlop(n_bits=1, n_steps=60, p_pulse=0.05)
    model = LeakyRNN(1, 4, 1, activation="tanh", alpha=1.0, seed=0)
    with torch.no_grad():
        model.w_rec.zero_()  # h[t] = tanh(W_in u[t]): pulses only, no memory of the bit
    a = compute_decodability(model, task, n_trials=40, n_folds=5, seed=1)
    assert a.identical(compute_decodability(model, task, n_trials=40, n_folds=5, seed=1))
    assert float(a.r2[0]) < 0.2  # the bit is held between pulses; a memoryless state misses it
    with pytest.raises(ValueError, match="n_folds"):
        compute_decodability(model, task, n_trials=3, n_folds=5)


def test_decodability_over_time_finds_when_a_variable_enters_the_states():
    from neurodyn.analysis import compute_decodability_over_time

    rng = np.random.default_rng(1)
    v = rng.uniform(-1, 1, (60, 2))
    states = 0.01 * rng.standard_normal((60, 5, 4))
    states[:, 1:, 0] += v[:, :1]  # variable a from step 1, b from step 3 (mixed into two units)
    states[:, 3:, 1] += v[:, 1:] + v[:, :1]
    ds = compute_decodability_over_time(states, v, names=["a", "b"], n_folds=5, alpha=1e-4)
    r2 = ds.r2.transpose("time", "variable").values
    assert (r2[0] < 0.1).all() and r2[1:, 0].min() > 0.99
    assert r2[1:3, 1].max() < 0.1 and r2[3:, 1].min() > 0.99
    # invariance: an invertible linear mix of the units decodes the same
    mixed = states @ (np.eye(4) + 0.5 * rng.standard_normal((4, 4)))
    again = compute_decodability_over_time(mixed, v, names=["a", "b"], n_folds=5, alpha=1e-4)
    np.testing.assert_allclose(again.r2.values[1:, 0], r2[1:, 0], atol=1e-3)
    with pytest.raises(ValueError, match="same trials"):
        compute_decodability_over_time(states, v[:-1])


def test_decodability_over_time_refuses_bad_names_dicts_constants_and_nan_by_name():
    from neurodyn.analysis import compute_decodability_over_time

    rng = np.random.default_rng(0)
    states, v = rng.standard_normal((12, 3, 4)), rng.standard_normal((12, 6))
    with pytest.raises(ValueError, match=r"^names has 2 entries for 6 variables"):
        compute_decodability_over_time(states, v, names=["a", "b"], n_folds=3)
    with pytest.raises(TypeError, match=r"^variables must be an array, got a dict"):
        compute_decodability_over_time(states, {"a": v[:, 0], "b": v[:, 1]}, n_folds=3)
    const = v.copy()
    const[:, 4] = 2.0
    with pytest.raises(ValueError, match=r"^variable 'e' is constant over trials"):
        compute_decodability_over_time(states, const, names=list("abcdef"), n_folds=3)
    bad = states.copy()
    bad[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match=r"^states contains 1 NaN/Inf"):
        compute_decodability_over_time(bad, v, n_folds=3)
    v[1, 1] = np.inf
    with pytest.raises(ValueError, match=r"^variables contains 1 NaN/Inf"):
        compute_decodability_over_time(states, v, n_folds=3)


def test_decodability_settings_must_be_whole_finite_numbers():
    # n_folds=2.5 was truncated to 2, n_trials="20" accepted, alpha=inf failed inside scikit-learn
    model = LeakyRNN(1, 4, 1, activation="linear", seed=0)
    task = FlipFlop(n_bits=1, n_steps=10)
    rng = np.random.default_rng(0)
    states, v = rng.standard_normal((12, 3, 2)), rng.standard_normal((12, 1))
    for bad, match in (({"n_folds": 2.5}, "n_folds must be an integer"),
                       ({"n_trials": "20"}, "n_trials must be"),
                       ({"alpha": float("inf")}, "alpha must be a finite number >= 0")):
        with pytest.raises(ValueError, match=match):
            compute_decodability(model, task, **{"n_trials": 12, "n_folds": 3, **bad})
        if "n_trials" not in bad:
            with pytest.raises(ValueError, match=match):
                compute_decodability_over_time(states, v, **{"n_folds": 3, **bad})
    with pytest.raises(ValueError, match=r"n_folds must be an integer in \[2, 12\]"):
        compute_decodability_over_time(states, v, n_folds=13)


def test_decodability_over_time_refuses_states_without_steps_or_units():
    # (trial, 0, unit) failed in numpy's stack; (trial, time, 0) blamed an "X" the caller never passed
    v = np.random.default_rng(0).standard_normal((12, 1))
    for shape in ((12, 0, 3), (12, 4, 0)):
        with pytest.raises(ValueError, match=r"^states needs at least 1 time step and 1 unit; got shape"):
            compute_decodability_over_time(np.zeros(shape), v, n_folds=3)
