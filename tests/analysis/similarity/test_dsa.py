"""Dynamical similarity analysis: invariances, symmetry, sensitivity, input handling."""

import warnings

import numpy as np
import pytest

from neurodyn.analysis import dsa_distance, fit_havok, operator_distance
from neurodyn.analysis.similarity import delay_embed, eigenvalue_wasserstein


def _rotation_system(theta: float, n: int = 4, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    A = 0.9 * np.eye(n)
    A[:2, :2] = 0.98 * np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
    return A + 0.03 * rng.standard_normal((n, n))


def _trajectories(A: np.ndarray, n_trials: int = 8, n_steps: int = 40, noise: float = 0.0, seed: int = 1):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n_trials, A.shape[0]))
    out = []
    for _ in range(n_steps):
        out.append(x)
        x = x @ A.T + noise * rng.standard_normal(x.shape)
    return np.stack(out, axis=1)


def _reflection(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    if np.linalg.det(Q) > 0:
        Q[:, 0] = -Q[:, 0]
    return Q


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_reflected_system_has_zero_distance(seed):
    X = _trajectories(_rotation_system(0.3, seed=seed), noise=0.05, seed=seed)
    Q = _reflection(4, seed)
    assert np.linalg.det(Q) == pytest.approx(-1.0)
    Y = X @ Q.T  # y = Q x: trajectories of the conjugate system Q A Q^T
    assert dsa_distance(X, Y, n_delays=2) == pytest.approx(0.0, abs=1e-6)
    assert dsa_distance(X, Y, n_delays=2, score="euclidean") == pytest.approx(0.0, abs=1e-6)
    assert dsa_distance(X, Y, n_delays=2, score="wasserstein") == pytest.approx(0.0, abs=1e-8)


@pytest.mark.parametrize("n", [3, 6, 10])
def test_operator_conjugate_by_reflection_has_zero_distance(n):
    rng = np.random.default_rng(n)
    A = rng.standard_normal((n, n))
    Q = _reflection(n, n + 10)
    assert operator_distance(A, Q @ A @ Q.T) == pytest.approx(0.0, abs=1e-6)
    # a single sign flip is not reachable by rotations: the distance to the plain operator is large
    flip = np.eye(n)
    flip[0, 0] = -1
    assert operator_distance(A, flip @ A @ flip, n_restarts=0) == pytest.approx(0.0, abs=1e-6)
    assert operator_distance(A, rng.standard_normal((n, n))) > 0.3


def test_full_rank_invariant_to_invertible_maps():
    X = _trajectories(_rotation_system(0.4), noise=0.05)
    M = np.random.default_rng(5).standard_normal((4, 4)) + 2 * np.eye(4)
    assert dsa_distance(X, X @ M.T, n_delays=2) == pytest.approx(0.0, abs=1e-5)


def test_symmetric_exactly():
    X = _trajectories(_rotation_system(0.3), noise=0.05)
    Y = _trajectories(_rotation_system(0.7, n=5, seed=3), noise=0.05, seed=4)
    for score in ("angular", "euclidean", "wasserstein"):
        kw = {"n_delays": 2, "rank": 4, "score": score}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert dsa_distance(X, Y, **kw) == dsa_distance(Y, X, **kw)


def test_different_rotation_speeds_are_far_apart_and_ordered():
    base = _trajectories(_rotation_system(0.2), n_trials=20, noise=0.02)
    d = [dsa_distance(base, _trajectories(_rotation_system(th), n_trials=20, noise=0.02, seed=7), n_delays=1)
         for th in (0.2, 0.5, 1.0)]
    assert d[0] < 0.05
    assert d[1] > 0.1 and d[2] > d[1]


def test_inputs_not_modified_and_torch_accepted():
    import torch

    X = _trajectories(_rotation_system(0.3), noise=0.05)
    Y = torch.as_tensor(_trajectories(_rotation_system(0.6), noise=0.05, seed=2))
    X0, Y0 = X.copy(), Y.clone()
    A = np.array([[0.9, -0.3], [0.3, 0.9]])
    A0 = A.copy()
    dsa_distance(X, Y, n_delays=2)
    operator_distance(A, 2 * A)
    np.testing.assert_array_equal(X, X0)
    assert torch.equal(Y, Y0)
    np.testing.assert_array_equal(A, A0)


def test_warning_below_full_rank_only():
    X = _trajectories(_rotation_system(0.3), noise=0.05)
    with pytest.warns(UserWarning, match="below the full rank"):
        dsa_distance(X, X, n_delays=2, rank=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dsa_distance(X, X, n_delays=2)


def test_havok_recovers_linear_operator_eigenvalues():
    A = _rotation_system(0.3)
    fit = fit_havok(_trajectories(A, noise=0.0), n_delays=1)
    np.testing.assert_allclose(np.sort_complex(np.linalg.eigvals(fit.operator)),
                               np.sort_complex(np.linalg.eigvals(A)), atol=1e-6)
    assert fit.rank == fit.full_rank == 4
    rrr = fit_havok(_trajectories(A, noise=0.05), n_delays=2, rank=3, method="rrr", warn=False)
    assert rrr.operator.shape == (3, 3)


def test_delay_embedding_layout():
    X = np.arange(2 * 7 * 1, dtype=float).reshape(2, 7, 1)
    H = delay_embed(X, n_delays=3, delay_interval=2)
    assert H.shape == (2, 3, 3)
    np.testing.assert_array_equal(H[0, 0], [4.0, 2.0, 0.0])  # newest copy first


def test_eigenvalue_wasserstein_closed_form():
    A = np.diag([0.5, 0.9])
    B = np.diag([0.6, 0.9])
    assert eigenvalue_wasserstein(A, B) == pytest.approx(np.sqrt(0.01 / 2))


def test_same_seed_same_value():
    X = _trajectories(_rotation_system(0.3), noise=0.05)
    Y = _trajectories(_rotation_system(0.9, n=6), noise=0.05)
    a = dsa_distance(X, Y, n_delays=2, seed=3)
    assert a == dsa_distance(X, Y, n_delays=2, seed=3)


@pytest.mark.parametrize(
    "bad, match",
    [(np.zeros((2, 3)), "at least 3 time steps"), (np.full((2, 10, 2), np.nan), "NaN"),
     (np.ones((2, 2, 2, 2)), "trial, time, unit")],
)
def test_bad_inputs(bad, match):
    with pytest.raises(ValueError, match=match):
        dsa_distance(bad, np.ones((2, 10, 2)), n_delays=1)


def test_bad_options():
    X = _trajectories(_rotation_system(0.3), noise=0.05)
    with pytest.raises(ValueError, match="score"):
        dsa_distance(X, X, n_delays=1, score="cosine")
    with pytest.raises(ValueError, match="rank"):
        dsa_distance(X, X, n_delays=1, rank=9)
    with pytest.raises(ValueError, match="delays"):
        dsa_distance(X, X, n_delays=30, delay_interval=2)


def test_eigenvalue_wasserstein_unequal_counts_by_optimal_transport():
    pytest.importorskip("ot", reason="POT (extra neurodyn[ot]) is needed for unequal eigenvalue counts")
    A = np.diag([0.5, 0.9])
    B = np.array([[0.5]])
    # half of A's mass stays at 0.5, the other half moves from 0.9 to 0.5
    assert eigenvalue_wasserstein(A, B) == pytest.approx(np.sqrt(0.5 * 0.4**2))
    assert operator_distance(A, B, score="wasserstein") == operator_distance(B, A, score="wasserstein")


def test_errors_about_y_name_y():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 2))
    Y_inf = X.copy()
    Y_inf[3, 0] = np.inf
    with pytest.raises(ValueError, match="^Y contains 1 NaN/Inf"):
        dsa_distance(X, Y_inf, n_delays=2)
    with pytest.raises(ValueError, match="^X contains 1 NaN/Inf"):
        dsa_distance(Y_inf, X, n_delays=2)
    with pytest.raises(ValueError, match="^Y must have shape"):
        dsa_distance(X, X[None, None], n_delays=2)
    with pytest.raises(ValueError, match="^Y needs at least 3 time steps"):
        dsa_distance(X, X[:2], n_delays=2)
    with pytest.raises(ValueError, match="the 3 time steps of Y; reduce n_delays"):
        dsa_distance(X, X[:3], n_delays=2)


@pytest.mark.parametrize(
    "bad, match",
    [({"n_restarts": -1}, "n_restarts must be an integer >= 0"), ({"n_restarts": 1.5}, "n_restarts must be"),
     ({"max_rounds": 0}, "max_rounds must be an integer >= 1"), ({"max_iter": -5}, "max_iter must be"),
     ({"max_iter": 0}, "max_iter must be an integer >= 1"), ({"rank": 2.5}, "rank must be an integer")],
)
def test_search_options_are_checked_alike_for_one_pair_and_for_many(bad, match):
    # pairwise DSA failed inside numpy for n_restarts=-1 and took max_rounds=0; both took max_iter=-5
    # (no ascent: a value that is not the distance) and truncated rank=2.5 to 2
    from neurodyn.analysis import pairwise_distances

    X = _trajectories(_rotation_system(0.3), noise=0.05)
    with pytest.raises(ValueError, match=match):
        dsa_distance(X, X, n_delays=2, **bad)
    with pytest.raises(ValueError, match=match):
        pairwise_distances([X, X], metric="dsa", n_delays=2, progress=False, device="cpu", **bad)
