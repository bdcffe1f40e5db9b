"""CCA family and CKA: invariances, closed forms, brute-force debiased HSIC and the RDM identity."""

import itertools
import warnings

import numpy as np
import pytest
from scipy.stats import ortho_group

from neurodyn.analysis import canonical_correlations, cca_similarity, cka, pwcca, rbf_bandwidth, rdm, svcca

SEEDS = [0, 1, 2, 3]


def _pair(seed, n_sample=60, n_x=6, n_y=9):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_sample, n_x))
    Y = np.tanh(X @ rng.normal(size=(n_x, n_y))) + 0.5 * rng.normal(size=(n_sample, n_y))
    return X, Y


@pytest.mark.parametrize("seed", SEEDS)
def test_cca_one_under_invertible_linear_maps(seed):
    X, _ = _pair(seed)
    A = np.random.default_rng(seed + 10).normal(size=(6, 6))
    for kind in ("mean_rho", "mean_rho2"):
        assert cca_similarity(X, X @ A + 2.0, kind=kind) == pytest.approx(1.0, abs=1e-9)
    assert svcca(X, X @ A, keep=6) == pytest.approx(1.0, abs=1e-9)
    assert pwcca(X, X @ A) == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("seed", SEEDS)
def test_canonical_correlations_match_covariance_eigenproblem(seed):
    X, Y = _pair(seed)
    Cxx, Cyy = np.cov(X.T), np.cov(Y.T)
    Cxy = np.cov(X.T, Y.T)[:6, 6:]
    M = np.linalg.solve(Cxx, Cxy) @ np.linalg.solve(Cyy, Cxy.T)
    expected = np.sqrt(np.sort(np.linalg.eigvals(M).real)[::-1])
    np.testing.assert_allclose(canonical_correlations(X, Y), expected, rtol=1e-8)
    rho = canonical_correlations(X, Y)
    assert cca_similarity(X, Y, kind="mean_rho2") == pytest.approx(np.mean(rho**2), rel=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_svcca_keeps_components_by_variance(seed):
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=(80, 3))
    X = latent @ rng.normal(size=(3, 10)) + 1e-3 * rng.normal(size=(80, 10))
    Y = latent @ rng.normal(size=(3, 7)) + 1e-3 * rng.normal(size=(80, 7))
    # 99% of variance lies in the 3 latent dims, which both networks share
    assert svcca(X, Y, keep=0.99) == pytest.approx(1.0, abs=1e-3)
    assert svcca(X, Y, keep=0.99) > cca_similarity(X, Y)


def test_cca_warns_when_samples_do_not_exceed_units():
    X, Y = _pair(0, n_sample=8, n_x=6, n_y=9)
    with pytest.warns(UserWarning, match="all 6 canonical correlations are 1 for any data"):
        value = cca_similarity(X, Y)
    assert value == pytest.approx(1.0)  # spurious perfect correlations
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cca_similarity(*_pair(0))


@pytest.mark.parametrize("seed", SEEDS)
def test_linear_cka_one_under_rotation_isotropic_scale_shift(seed):
    X, _ = _pair(seed)
    Y = 0.3 * X @ ortho_group.rvs(6, random_state=seed) + 5.0
    assert cka(X, Y) == pytest.approx(1.0, abs=1e-12)
    assert cka(X, Y, debiased=True) == pytest.approx(1.0, abs=1e-12)
    assert cka(X, Y, kernel="rbf") == pytest.approx(1.0, abs=1e-12)  # distances scale with sigma


@pytest.mark.parametrize("seed", SEEDS)
def test_linear_cka_feature_space_formula(seed):
    X, Y = _pair(seed)
    Xc, Yc = X - X.mean(0), Y - Y.mean(0)
    expected = np.linalg.norm(Yc.T @ Xc) ** 2 / (np.linalg.norm(Xc.T @ Xc) * np.linalg.norm(Yc.T @ Yc))
    assert cka(X, Y) == pytest.approx(expected, rel=1e-12)


def _hsic_u_statistic(K, L):
    """Unbiased HSIC as the U-statistic over ordered 4-tuples of distinct samples (Song et al., 2012)."""
    n = K.shape[0]
    total = 0.0
    for i, j, q, r in itertools.permutations(range(n), 4):
        total += K[i, j] * L[i, j] + K[i, j] * L[q, r] - 2 * K[i, j] * L[i, q]
    return total / (n * (n - 1) * (n - 2) * (n - 3))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_debiased_cka_equals_brute_force_u_statistic(seed, kernel):
    X, Y = _pair(seed, n_sample=7)
    if kernel == "linear":
        K, L = X @ X.T, Y @ Y.T  # HSIC is unchanged by centring the features
    else:
        sx, sy = rbf_bandwidth(X), rbf_bandwidth(Y)
        K = np.exp(-np.sum((X[:, None] - X[None]) ** 2, -1) / (2 * sx**2))
        L = np.exp(-np.sum((Y[:, None] - Y[None]) ** 2, -1) / (2 * sy**2))
    expected = _hsic_u_statistic(K, L) / np.sqrt(_hsic_u_statistic(K, K) * _hsic_u_statistic(L, L))
    assert cka(X, Y, kernel=kernel, debiased=True) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("seed", SEEDS)
def test_debiased_cka_of_independent_gaussians_near_zero(seed):
    rng = np.random.default_rng(seed)
    X, Y = rng.normal(size=(32, 1000)), rng.normal(size=(32, 1000))
    n = X.shape[0]
    # null standard deviation of debiased CKA is about sqrt(2 / (n (n - 3))) = 0.046 here
    assert abs(cka(X, Y, debiased=True)) < 4 * np.sqrt(2 / (n * (n - 3)))
    with pytest.warns(UserWarning, match="biased CKA"):
        biased = cka(X, Y)
    assert biased > 0.9


def test_rbf_bandwidth_is_median_distance_times_factor():
    X = np.array([[0.0], [1.0], [3.0], [7.0]])  # distances 1, 3, 7, 2, 6, 4 -> median 3.5
    assert rbf_bandwidth(X) == pytest.approx(3.5)
    assert rbf_bandwidth(X, factor=0.5) == pytest.approx(1.75)
    X2, Y2 = _pair(0)
    explicit = cka(X2, Y2, kernel="rbf", sigma=(2 * rbf_bandwidth(X2), 2 * rbf_bandwidth(Y2)))
    assert cka(X2, Y2, kernel="rbf", sigma_factor=2.0) == pytest.approx(explicit, rel=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_linear_cka_equals_cosine_of_double_centred_squared_euclidean_rdms(seed):
    # -1/2 H D H = H X X^T H for the squared-Euclidean RDM D, so linear CKA is the cosine between the
    # double-centred RDMs (full matrices, diagonal included; the -1/2 cancels).
    X, Y = _pair(seed)
    n = X.shape[0]
    H = np.eye(n) - np.ones((n, n)) / n
    Dx, Dy = H @ rdm(X, method="sqeuclidean") @ H, H @ rdm(Y, method="sqeuclidean") @ H
    cosine = np.sum(Dx * Dy) / (np.linalg.norm(Dx) * np.linalg.norm(Dy))
    assert cka(X, Y) == pytest.approx(cosine, rel=1e-9)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("debiased", [False, True])
def test_linear_cka_feature_and_gram_paths_agree(seed, debiased):
    import importlib

    cka_module = importlib.import_module("neurodyn.analysis.similarity._cka")

    X, Y = _pair(seed, n_sample=40)
    Xc, Yc = X - X.mean(0), Y - Y.mean(0)
    K, L = Xc @ Xc.T, Yc @ Yc.T
    hsic = cka_module._hsic_unbiased if debiased else cka_module._hsic_biased
    gram = hsic(K, L) / np.sqrt(hsic(K, K) * hsic(L, L))
    assert cka(X, Y, debiased=debiased) == pytest.approx(gram, rel=1e-10)  # 40 samples > 9 units
