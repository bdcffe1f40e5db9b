"""Cross-validated ridge predictivity and permutation-invariant weight distances."""

import itertools

import numpy as np
import pytest
import xarray as xr

from neurodyn.analysis import LinearPredictivity, linear_predictivity, match_recurrent_units, weight_distance

SEEDS = [0, 1, 2, 3]


@pytest.mark.parametrize("seed", SEEDS)
def test_predictivity_of_linear_map_near_one_and_of_noise_not_above_zero(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(120, 5))
    Y = X @ rng.normal(size=(5, 3)) + 0.01 * rng.normal(size=(120, 3)) + 2.0
    res = linear_predictivity(X, Y, alpha=1e-6, cv=5, seed=seed)
    assert res.r2 == pytest.approx(1.0, abs=1e-3)
    np.testing.assert_allclose(res.r_y, 1.0, atol=1e-3)
    assert np.all(np.isnan(res.r_x)) and np.isnan(res.r2_y_to_x)
    noise = linear_predictivity(X, rng.normal(size=(120, 3)), alpha=1.0, seed=seed)
    assert noise.r2 < 0.05  # out-of-fold R^2 of an unrelated target is about zero or negative


@pytest.mark.parametrize("seed", SEEDS)
def test_predictivity_matches_manual_kfold_and_is_reproducible(seed):
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import KFold

    rng = np.random.default_rng(seed)
    X, Y = rng.normal(size=(40, 4)), rng.normal(size=(40, 2))
    Y = Y + X[:, :2]
    res = linear_predictivity(X, Y, alpha=2.0, cv=4, seed=seed, direction="both")
    pred = np.empty_like(Y)
    for train, test in KFold(4, shuffle=True, random_state=seed).split(X):
        pred[test] = Ridge(alpha=2.0).fit(X[train], Y[train]).predict(X[test])
    r2 = 1 - np.sum((Y - pred) ** 2) / np.sum((Y - Y.mean(0)) ** 2)
    assert res.r2_x_to_y == pytest.approx(r2, rel=1e-10)
    assert res.r_y[0] == pytest.approx(np.corrcoef(pred[:, 0], Y[:, 0])[0, 1], rel=1e-10)
    assert res.r2 == pytest.approx((res.r2_x_to_y + res.r2_y_to_x) / 2)
    again = linear_predictivity(X, Y, alpha=2.0, cv=4, seed=seed, direction="both")
    assert again.r2 == res.r2 and np.array_equal(again.r_x, res.r_x)


def test_predictivity_result_round_trips_through_netcdf(tmp_path):
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(30, 3)), rng.normal(size=(30, 2))
    ds = linear_predictivity(X, Y, direction="both", seed=3).to_xarray()
    ds.to_netcdf(tmp_path / "pred.nc", engine="h5netcdf")
    back = xr.load_dataset(tmp_path / "pred.nc", engine="h5netcdf")
    xr.testing.assert_identical(ds, back)
    assert back.attrs["seed"] == 3 and dict(back.sizes) == {"unit_y": 2, "unit_x": 3}


def test_linear_predictivity_estimator_fit_score():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 3))
    W = rng.normal(size=(3, 2))
    est = LinearPredictivity(alpha=1e-8).fit(X[:40], X[:40] @ W + 1.0)
    np.testing.assert_allclose(est.coef_, W.T, atol=1e-6)
    assert est.score(X[40:], X[40:] @ W + 1.0) == pytest.approx(1.0, abs=1e-9)
    with pytest.raises(ValueError, match="fitted on 3"):
        est.predict(X[:, :2])


def test_linear_predictivity_estimator_with_one_target_unit_keeps_2d_coefficients():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 3))
    Y = X @ np.array([[1.0], [2.0], [0.0]]) + 5.0
    est = LinearPredictivity(alpha=1e-8).fit(X, Y)
    assert est.coef_.shape == (1, 3) and est.intercept_.shape == (1,)
    assert est.predict(X).shape == (60, 1)
    assert est.score(X, Y) == pytest.approx(1.0, abs=1e-9)
    assert linear_predictivity(X, Y, alpha=1e-6, cv=3).r2 == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n_unit", [8, 40])
def test_weight_distance_zero_under_simultaneous_permutation(seed, n_unit):
    rng = np.random.default_rng(seed)
    W = rng.normal(size=(n_unit, n_unit)) / np.sqrt(n_unit)
    perm = rng.permutation(n_unit)
    Wp = W[np.ix_(perm, perm)]
    for kind in ("angular", "euclidean"):
        assert weight_distance(W, Wp, kind=kind) == pytest.approx(0.0, abs=1e-7)
        assert weight_distance(W, Wp, kind=kind, permutation_invariant=False) > 0.1
    np.testing.assert_array_equal(match_recurrent_units(W, Wp), np.argsort(perm))


@pytest.mark.parametrize("seed", SEEDS)
def test_weight_distance_equals_brute_force_on_small_noisy_problems(seed):
    rng = np.random.default_rng(seed)
    W1 = rng.normal(size=(6, 6))
    perm = rng.permutation(6)
    W2 = W1[np.ix_(perm, perm)] + 0.3 * rng.normal(size=(6, 6))
    best = min(np.linalg.norm(W1 - W2[np.ix_(p, p)]) for p in map(list, itertools.permutations(range(6))))
    assert weight_distance(W1, W2, kind="euclidean") == pytest.approx(best / np.sqrt(6), rel=1e-9)


def test_weight_distance_normalisation_comparable_across_sizes():
    rng = np.random.default_rng(0)
    values = []
    for n in (20, 80):
        W1, W2 = (rng.normal(size=(n, n)) / np.sqrt(n) for _ in range(2))
        values.append(weight_distance(W1, W2, kind="euclidean", permutation_invariant=False))
    # independent g/sqrt(n) matrices: ||W1 - W2||_F / sqrt(n) -> sqrt(2) for every n
    np.testing.assert_allclose(values, np.sqrt(2), rtol=0.05)
    W = rng.normal(size=(5, 5))
    assert weight_distance(W, 2 * W, kind="angular") == pytest.approx(0.0, abs=1e-7)
    assert weight_distance(W, -W, kind="angular", permutation_invariant=False) == pytest.approx(np.pi)
    assert weight_distance(W, -W, kind="angular") < np.pi  # a relabelling aligns -W better


def test_weight_distance_pads_smaller_network():
    rng = np.random.default_rng(2)
    W = rng.normal(size=(5, 5))
    big = np.zeros((7, 7))
    big[2:, 2:] = W
    assert weight_distance(W, big) == pytest.approx(0.0, abs=1e-7)
    with pytest.raises(ValueError, match="square"):
        weight_distance(W, rng.normal(size=(5, 4)))


@pytest.mark.parametrize("sizes", [(6, 4), (8, 8), (12, 9)])
def test_weight_distance_is_symmetric_for_unrelated_matrices(sizes):
    # the matching is heuristic; a distance must still not depend on the order of its arguments
    rng = np.random.default_rng(0)
    for _ in range(5):
        W1, W2 = (rng.normal(size=(n, n)) for n in sizes)
        for kind in ("angular", "euclidean"):
            assert weight_distance(W1, W2, kind=kind) == pytest.approx(weight_distance(W2, W1, kind=kind),
                                                                       rel=1e-12, abs=1e-12)


def test_ridge_penalty_must_be_finite():
    # alpha=inf passed the ">= 0" check and failed inside scikit-learn's Ridge
    X = np.random.default_rng(0).normal(size=(20, 3))
    for bad in (float("inf"), float("nan"), -1.0, "1"):
        with pytest.raises(ValueError, match="alpha must be a finite number >= 0"):
            LinearPredictivity(alpha=bad).fit(X, X)
        with pytest.raises(ValueError, match="alpha must be a finite number >= 0"):
            linear_predictivity(X, X, alpha=bad)
