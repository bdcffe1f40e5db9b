"""RDMs and RDM comparisons: closed forms, brute force, invariances and cross-validation."""

import itertools

import numpy as np
import pytest
from scipy.spatial.distance import pdist, squareform
from scipy.stats import pearsonr

from neurodyn.analysis import compare_rdms, rdm
from neurodyn.analysis.similarity._compare_rdms import upper_triangle

SEEDS = [0, 1, 2, 3]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(
    ("method", "scipy_metric"),
    [("euclidean", "euclidean"), ("sqeuclidean", "sqeuclidean"), ("correlation", "correlation")],
)
def test_rdm_matches_scipy_pdist(seed, method, scipy_metric):
    X = np.random.default_rng(seed).normal(size=(9, 5))
    R = rdm(X, method=method)
    np.testing.assert_allclose(R, squareform(pdist(X, scipy_metric)), rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(R, R.T)
    np.testing.assert_array_equal(np.diag(R), 0.0)


@pytest.mark.parametrize("seed", SEEDS)
def test_mahalanobis_matches_scipy_and_conditions_average(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(6, 4))
    A = rng.normal(size=(4, 4))
    cov = A @ A.T + np.eye(4)
    expected = squareform(pdist(X, "mahalanobis", VI=np.linalg.inv(cov))) ** 2
    np.testing.assert_allclose(rdm(X, method="mahalanobis", noise_cov=cov), expected, rtol=1e-9)
    # repeated observations averaged per condition, output in sorted label order
    obs = np.vstack([X + 0.1, X - 0.1])[::-1]
    labels = np.concatenate([np.arange(6), np.arange(6)])[::-1]
    np.testing.assert_allclose(rdm(obs, method="euclidean", conditions=labels), rdm(X), rtol=1e-9)


@pytest.mark.parametrize("seed", SEEDS)
def test_crossnobis_equals_mahalanobis_without_noise_and_is_unbiased(seed):
    rng = np.random.default_rng(seed)
    patterns = rng.normal(size=(5, 8))
    conditions, runs = np.tile(np.arange(5), 4), np.repeat(np.arange(4), 5)
    cov = np.diag(rng.uniform(0.5, 2.0, size=8))
    clean = rdm(patterns[conditions], method="crossnobis", conditions=conditions, runs=runs, noise_cov=cov)
    np.testing.assert_allclose(clean, rdm(patterns, method="mahalanobis", noise_cov=cov), rtol=1e-9)
    # pure noise: the cross-validated distance is zero in expectation, the plain one is positive
    noise = rng.normal(size=(400 * 5, 8))
    cond, run = np.tile(np.arange(5), 400), np.repeat(np.arange(400), 5)
    cv = rdm(noise, method="crossnobis", conditions=cond, runs=run)
    off = cv[np.triu_indices(5, k=1)]
    assert abs(off.mean()) < 4 * 2 * np.sqrt(8) / 400  # standard error of the mean of crossnobis
    assert np.all(rdm(noise[:5], method="sqeuclidean")[np.triu_indices(5, k=1)] > 0)


def test_crossnobis_needs_runs_and_complete_runs():
    X = np.random.default_rng(0).normal(size=(6, 3))
    with pytest.raises(ValueError, match="conditions= and runs="):
        rdm(X, method="crossnobis")
    with pytest.raises(ValueError, match="has no observations of condition"):
        rdm(X, method="crossnobis", conditions=[0, 1, 2, 0, 1, 1], runs=[0, 0, 0, 1, 1, 1])
    with pytest.raises(ValueError, match="at least 2 runs"):
        rdm(X, method="crossnobis", conditions=[0, 1, 2, 0, 1, 2], runs=[0] * 6)


@pytest.mark.parametrize("seed", SEEDS)
def test_spearman_and_kendall_unchanged_by_monotone_maps(seed):
    rng = np.random.default_rng(seed)
    R1, R2 = rdm(rng.normal(size=(10, 4))), rdm(rng.normal(size=(10, 4)))
    for method in ("spearman", "kendall_tau_a"):
        base = compare_rdms(R1, R2, method=method)
        assert compare_rdms(np.exp(R1) - 1.0, R2**3, method=method) == pytest.approx(base, rel=1e-12)
    assert compare_rdms(R1, R2, method="pearson") != pytest.approx(
        compare_rdms(np.exp(R1), R2**3, method="pearson"), rel=1e-6
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_kendall_tau_a_brute_force_with_ties(seed):
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, 4, size=15).astype(float), rng.integers(0, 4, size=15).astype(float)
    sign = sum(np.sign(a[i] - a[j]) * np.sign(b[i] - b[j]) for i, j in itertools.combinations(range(15), 2))
    assert compare_rdms(a, b, method="kendall_tau_a") == pytest.approx(sign / (15 * 14 / 2), rel=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_pearson_cosine_and_whitened_forms(seed):
    rng = np.random.default_rng(seed)
    a, b = rng.uniform(size=10), rng.uniform(size=10)  # 5 conditions
    assert compare_rdms(a, b, method="pearson") == pytest.approx(pearsonr(a, b).statistic, rel=1e-12)
    assert compare_rdms(a, b, method="cosine") == pytest.approx(
        a @ b / np.linalg.norm(a) / np.linalg.norm(b), rel=1e-12
    )
    for method in ("whitened_pearson", "whitened_cosine"):
        assert compare_rdms(a, 3.0 * a, method=method) == pytest.approx(1.0, rel=1e-12)
        assert compare_rdms(a, b, method=method) == pytest.approx(compare_rdms(b, a, method=method))
    # square and condensed forms give the same answer
    assert compare_rdms(squareform(a), squareform(b)) == pytest.approx(compare_rdms(a, b), rel=1e-12)


def test_upper_triangle_order_and_errors():
    R = squareform(np.arange(1.0, 7.0))
    np.testing.assert_array_equal(upper_triangle(R), np.arange(1.0, 7.0))
    with pytest.raises(ValueError, match="not symmetric"):
        compare_rdms(R + np.triu(np.ones((4, 4)), 1), R)
    with pytest.raises(ValueError, match="different numbers of condition pairs"):
        compare_rdms(R, np.ones(10))
    with pytest.raises(ValueError, match="n\\(n-1\\)/2"):
        compare_rdms(np.ones(5), np.ones(5))
    with pytest.raises(ValueError, match="method must be one of"):
        compare_rdms(R, R, method="pearsonr")


@pytest.mark.parametrize("method", ["mahalanobis", "crossnobis"])
def test_rdm_refuses_a_noise_cov_that_is_not_a_covariance(method):
    # a negative-definite or asymmetric "covariance" gave an all-zero or skewed RDM without a word
    X = np.random.default_rng(0).normal(size=(8, 3))
    labels = {"conditions": [0, 1, 2, 3] * 2, "runs": [0] * 4 + [1] * 4} if method == "crossnobis" else {}
    for bad in (-np.eye(3), np.eye(3) + np.triu(np.ones((3, 3)), 1), np.diag([1.0, 1.0, 0.0])):
        with pytest.raises(ValueError, match="noise_cov must be a symmetric positive-definite"):
            rdm(X, method=method, noise_cov=bad, **labels)


def test_rdm_refuses_options_its_method_does_not_use():
    # noise_cov with euclidean (or runs without crossnobis) was silently ignored
    X = np.random.default_rng(0).normal(size=(6, 3))
    for method in ("euclidean", "sqeuclidean", "correlation"):
        with pytest.raises(ValueError, match="noise_cov is only used by"):
            rdm(X, method=method, noise_cov=np.eye(3))
    for method in ("euclidean", "mahalanobis"):
        with pytest.raises(ValueError, match="runs is only used by"):
            rdm(X, method=method, runs=[0, 0, 0, 1, 1, 1])


@pytest.mark.parametrize("method", ["euclidean", "crossnobis"])
def test_rdm_refuses_missing_condition_labels(method):
    # NaN labels matched no row, so their condition mean (and the RDM) came out NaN
    X = np.random.default_rng(0).normal(size=(8, 3))
    conditions = np.array([0.0, 1.0, np.nan, 0.0, 1.0, np.nan, 0.0, 1.0])
    runs = {"runs": [0, 0, 0, 0, 1, 1, 1, 1]} if method == "crossnobis" else {}
    with pytest.raises(ValueError, match="conditions contains 2 missing"):
        rdm(X, method=method, conditions=conditions, **runs)
    with pytest.raises(ValueError, match="conditions contains 1 missing"):
        rdm(X, method=method, conditions=[0, 1, None, 0, 1, 2, 0, 1], **runs)


def test_compare_rdms_refuses_an_empty_matrix_in_one_line():
    # a (0, 0) RDM fell through to numpy's "zero-size array to reduction operation maximum"
    for empty in (np.zeros((0, 0)), np.zeros((1, 0))):
        with pytest.raises(ValueError, match="R1 must be a square .* RDM or its upper triangle; got shape"):
            compare_rdms(empty, np.ones(3))


def test_whitened_comparison_too_large_for_memory_is_refused_before_allocating():
    # 2000 conditions: the (pair, pair) covariance of the whitened methods takes 32 TB; numpy raised
    # its own MemoryError while building the contrasts
    v = np.random.default_rng(0).random(2000 * 1999 // 2)
    message = (r"^whitened RDM comparison needs about .* GiB \(3 \(1999000, 1999000\) float64 matrices\) "
               r"but .* are available; use fewer conditions or ")
    with pytest.raises(ValueError, match=message):
        compare_rdms(v, v, method="whitened_pearson")
    assert compare_rdms(v, v, method="pearson") == pytest.approx(1.0)
