"""Procrustes shape metrics, permutation and soft-matching distances: invariances, metric axioms,
closed forms and identities."""

import itertools

import numpy as np
import pytest
from scipy.stats import ortho_group

from neurodyn.analysis import (
    PermutationMetric,
    ProcrustesMetric,
    permutation_distance,
    procrustes_distance,
    soft_matching_distance,
)

SEEDS = [0, 1, 2, 3]


def _data(seed, n_sample=50, n_unit=7):
    return np.random.default_rng(seed).normal(size=(n_sample, n_unit))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("alpha", [1.0, 0.0])
def test_angular_procrustes_zero_under_rotation_scale_shift(seed, alpha):
    X = _data(seed)
    rng = np.random.default_rng(100 + seed)
    Q = ortho_group.rvs(X.shape[1], random_state=seed)
    Y = 2.7 * X @ Q + rng.normal(size=X.shape[1])
    assert procrustes_distance(X, Y, alpha=alpha) == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize("seed", SEEDS)
def test_procrustes_zero_under_rotation_shift_for_every_alpha_and_kind(seed):
    X = _data(seed)
    Y = X @ ortho_group.rvs(X.shape[1], random_state=seed) - 3.0
    for alpha, kind in itertools.product([1.0, 0.6, 0.2], ["angular", "euclidean"]):
        assert procrustes_distance(X, Y, alpha=alpha, kind=kind) == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize("seed", SEEDS)
def test_full_whitening_zero_under_invertible_linear_maps(seed):
    X = _data(seed)
    A = np.random.default_rng(seed).normal(size=(X.shape[1], X.shape[1]))
    assert procrustes_distance(X, X @ A, alpha=0.0) == pytest.approx(0.0, abs=1e-6)
    assert procrustes_distance(X, X @ A, alpha=1.0) > 0.05


@pytest.mark.parametrize("seed", SEEDS)
def test_procrustes_closed_forms(seed):
    rng = np.random.default_rng(seed)
    X, Y = rng.normal(size=(30, 5)), rng.normal(size=(30, 8))
    Xc, Yc = X - X.mean(0), Y - Y.mean(0)
    nuclear = np.linalg.svd(Xc.T @ Yc, compute_uv=False).sum()
    nx, ny = np.linalg.norm(Xc), np.linalg.norm(Yc)
    assert procrustes_distance(X, Y) == pytest.approx(np.arccos(nuclear / (nx * ny)), rel=1e-10)
    expected = np.sqrt(nx**2 + ny**2 - 2 * nuclear) / np.sqrt(30)
    assert procrustes_distance(X, Y, kind="euclidean") == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("seed", SEEDS)
def test_procrustes_symmetric(seed):
    rng = np.random.default_rng(seed)
    X, Y = rng.normal(size=(30, 4)), rng.normal(size=(30, 6))
    for kind, alpha in [("angular", 1.0), ("euclidean", 0.5), ("angular", 0.0)]:
        d_xy = procrustes_distance(X, Y, kind=kind, alpha=alpha)
        assert d_xy == pytest.approx(procrustes_distance(Y, X, kind=kind, alpha=alpha), rel=1e-9)


def _cohort(seed, n=5):
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(40, 6))
    return [base @ rng.normal(size=(6, k)) + rng.normal(size=(40, k)) for k in (6, 4, 6, 8, 5)[:n]]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(
    "distance",
    [
        lambda a, b: procrustes_distance(a, b, kind="angular"),
        lambda a, b: procrustes_distance(a, b, kind="euclidean"),
        lambda a, b: procrustes_distance(a, b, kind="angular", alpha=0.5),
        lambda a, b: procrustes_distance(a, b, kind="euclidean", alpha=0.3),
        lambda a, b: permutation_distance(a, b, kind="angular"),
        lambda a, b: permutation_distance(a, b, kind="euclidean"),
        lambda a, b: soft_matching_distance(a, b, kind="euclidean"),
    ],
    ids=["proc-ang", "proc-euc", "proc-ang-a0.5", "proc-euc-a0.3", "perm-ang", "perm-euc", "soft-euc"],
)
def test_triangle_inequality_on_random_cohort(seed, distance):
    nets = _cohort(seed)
    D = np.array([[distance(a, b) for b in nets] for a in nets])
    np.testing.assert_allclose(np.diag(D), 0.0, atol=1e-6)
    np.testing.assert_allclose(D, D.T, rtol=1e-8, atol=1e-10)
    for i, j, k in itertools.permutations(range(len(nets)), 3):
        assert D[i, k] <= D[i, j] + D[j, k] + 1e-9


@pytest.mark.parametrize("seed", SEEDS)
def test_estimator_generalises_fitted_alignment(seed):
    X = _data(seed, n_sample=80)
    Q = ortho_group.rvs(X.shape[1], random_state=seed)
    Y = X @ Q + 1.0
    metric = ProcrustesMetric(kind="euclidean").fit(X[:60], Y[:60])
    assert metric.score(X[60:], Y[60:]) == pytest.approx(0.0, abs=1e-8)
    Z = np.random.default_rng(1000 + seed).normal(size=X.shape)
    fitted = ProcrustesMetric(kind="angular").fit(X[:60], Z[:60])
    assert fitted.score(X[60:], Z[60:]) > fitted.score(X[:60], Z[:60])  # overfitting on training data


@pytest.mark.parametrize("seed", SEEDS)
def test_permutation_distance_zero_under_unit_permutation_and_shift(seed):
    X = _data(seed)
    perm = np.random.default_rng(seed).permutation(X.shape[1])
    for kind in ("angular", "euclidean"):
        assert permutation_distance(X, X[:, perm] + 4.0, kind=kind) == pytest.approx(0.0, abs=1e-7)
    metric = PermutationMetric().fit(X, X[:, perm])
    np.testing.assert_array_equal(perm[metric.perm_], np.arange(X.shape[1]))


@pytest.mark.parametrize("seed", SEEDS)
def test_permutation_distance_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    X, Y = rng.normal(size=(20, 5)), rng.normal(size=(20, 5))
    Xc, Yc = X - X.mean(0), Y - Y.mean(0)
    best = min(np.linalg.norm(Xc - Yc[:, list(p)]) for p in itertools.permutations(range(5)))
    assert permutation_distance(X, Y, kind="euclidean") == pytest.approx(best / np.sqrt(20), rel=1e-10)
    assert procrustes_distance(X, Y, kind="euclidean") <= permutation_distance(X, Y, kind="euclidean")


@pytest.mark.parametrize("seed", SEEDS)
def test_soft_matching_equals_permutation_for_equal_unit_counts(seed):
    rng = np.random.default_rng(seed)
    X, Y = rng.normal(size=(25, 6)), rng.normal(size=(25, 6))
    perm_euc = permutation_distance(X, Y, kind="euclidean")
    assert soft_matching_distance(X, Y) == pytest.approx(perm_euc / np.sqrt(6), rel=1e-9)
    angular = soft_matching_distance(X, Y, kind="angular")
    assert angular == pytest.approx(permutation_distance(X, Y, kind="angular"), rel=1e-9)


@pytest.mark.parametrize("seed", SEEDS)
def test_soft_matching_solvers_agree_and_duplicated_units_give_zero(seed):
    rng = np.random.default_rng(seed)
    X, Y = rng.normal(size=(25, 4)), rng.normal(size=(25, 6))
    pot = soft_matching_distance(X, Y, solver="pot")
    assert soft_matching_distance(X, Y, solver="linprog") == pytest.approx(pot, rel=1e-7)
    # every unit of X duplicated: the uniform marginals can be met exactly at zero cost
    assert soft_matching_distance(X, np.repeat(X, 2, axis=1) - 1.0) == pytest.approx(0.0, abs=1e-7)


@pytest.mark.parametrize("seed", SEEDS)
def test_soft_matching_equals_matching_of_replicated_units(seed):
    # With uniform marginals 1/4 and 1/6 the transport LP has integral vertices after scaling by 12, so the
    # optimum is a one-to-one matching between X's units repeated 3 times and Y's units repeated twice.
    rng = np.random.default_rng(seed)
    X, Y = rng.normal(size=(15, 4)), rng.normal(size=(15, 6))
    matched = permutation_distance(np.repeat(X, 3, axis=1), np.repeat(Y, 2, axis=1), kind="euclidean")
    assert soft_matching_distance(X, Y) == pytest.approx(matched / np.sqrt(12), rel=1e-9)


def test_estimators_expose_params_and_clone():
    from sklearn.base import clone

    metric = ProcrustesMetric(kind="euclidean", alpha=0.3)
    assert metric.get_params() == {"kind": "euclidean", "alpha": 0.3, "center": True}
    copy = clone(metric.set_params(alpha=0.7))
    assert copy.alpha == 0.7 and copy is not metric
    assert repr(PermutationMetric()) == "PermutationMetric(kind='angular', center=True)"
    with pytest.raises(ValueError, match="no parameter 'beta'"):
        metric.set_params(beta=1)
