"""Agreement with peer libraries (rsatoolbox, netrep, google/svcca) on stored seeded inputs.

The reference file is produced by tests/reference/make_similarity_references.py.
"""


import numpy as np
import pytest
from _paths import REFERENCE

from neurodyn.analysis import (
    cca_similarity,
    cka,
    compare_rdms,
    permutation_distance,
    procrustes_distance,
    pwcca,
    rdm,
)

REF = np.load(REFERENCE / "similarity_reference.npz")
SEED_INDEX = range(REF["seeds"].size)


def _ref(key, i):
    return REF[key][i]


@pytest.mark.parametrize("i", SEED_INDEX)
@pytest.mark.parametrize("alpha", [1.0, 0.5, 0.0])
def test_procrustes_angular_matches_netrep(i, alpha):
    X, Y = _ref("X", i), _ref("Y", i)
    ours = procrustes_distance(X, Y, kind="angular", alpha=alpha)
    assert ours == pytest.approx(float(_ref(f"procrustes_angular_alpha{alpha}", i)), abs=1e-6)


@pytest.mark.parametrize("i", SEED_INDEX)
def test_procrustes_euclidean_matches_netrep_up_to_sqrt_samples(i):
    X, Y = _ref("X", i), _ref("Y", i)
    ours = procrustes_distance(X, Y, kind="euclidean") * np.sqrt(X.shape[0])
    assert ours == pytest.approx(float(_ref("procrustes_euclidean_alpha1.0", i)), rel=1e-9)


@pytest.mark.parametrize("i", SEED_INDEX)
def test_permutation_matches_netrep(i):
    X, Y = _ref("X", i), _ref("Y", i)
    assert permutation_distance(X, Y, kind="angular") == pytest.approx(
        float(_ref("permutation_angular", i)), rel=1e-9
    )
    assert permutation_distance(X, Y, kind="euclidean") * np.sqrt(X.shape[0]) == pytest.approx(
        float(_ref("permutation_euclidean", i)), rel=1e-9
    )


@pytest.mark.parametrize("i", SEED_INDEX)
def test_linear_cka_matches_netrep_angle(i):
    X, Y = _ref("X", i), _ref("Y", i)
    assert np.arccos(cka(X, Y)) == pytest.approx(float(_ref("linear_cka_angle", i)), rel=1e-9)


@pytest.mark.parametrize("i", SEED_INDEX)
def test_cca_and_pwcca_match_google_svcca(i):
    X, Y = _ref("X", i), _ref("Y", i)
    assert cca_similarity(X, Y) == pytest.approx(float(_ref("cca_mean_rho", i)), rel=1e-6)
    # the reference implementation's projection weights coincide with the paper's when X is whitened
    assert pwcca(_ref("X_whitened", i), Y) == pytest.approx(float(_ref("pwcca_whitened_x", i)), rel=1e-6)


@pytest.mark.parametrize("i", SEED_INDEX)
@pytest.mark.parametrize("method", ["euclidean", "correlation", "mahalanobis", "crossnobis"])
def test_rdm_matches_rsatoolbox(i, method):
    obs, cond, runs, cov = _ref("obs", i), _ref("conditions", i), _ref("runs", i), _ref("noise_cov", i)
    ours = {
        "euclidean": lambda: rdm(obs, method="sqeuclidean", conditions=cond),
        "correlation": lambda: rdm(obs, method="correlation", conditions=cond),
        "mahalanobis": lambda: rdm(obs, method="mahalanobis", conditions=cond, noise_cov=cov),
        "crossnobis": lambda: rdm(obs, method="crossnobis", conditions=cond, runs=runs, noise_cov=cov),
    }[method]()
    vec = ours[np.triu_indices(ours.shape[0], k=1)]
    if method != "correlation":  # rsatoolbox divides squared distances by the number of units
        vec = vec / obs.shape[1]
    np.testing.assert_allclose(vec, _ref(f"rdm_{method}", i), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("i", SEED_INDEX)
@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        ("cosine", "cosine"),
        ("pearson", "corr"),
        ("spearman", "spearman"),
        ("kendall_tau_a", "tau-a"),
        ("whitened_pearson", "corr_cov"),
        ("whitened_cosine", "cosine_cov"),
    ],
)
def test_compare_rdms_matches_rsatoolbox(i, ours, theirs):
    value = compare_rdms(_ref("rdm_a", i), _ref("rdm_b", i), method=ours)
    assert value == pytest.approx(float(_ref(f"compare_{theirs}", i)), rel=1e-9)


def _netrep_convention(X, Y, alpha, kind):
    """The shape distance with netrep's conventions, from its definition: whitening built from the
    eigenvalues of ``Xc^T Xc`` (not divided by n_sample, clipped at 1e-7), each whitened network rescaled
    to keep its total variance, and the Euclidean distance not divided by ``sqrt(n_sample)``."""
    Z = []
    for A in (X, Y):
        Ac = A - A.mean(axis=0)
        lam, V = np.linalg.eigh(Ac.T @ Ac)
        lam = np.maximum(lam, 1e-7)
        d = alpha + (1 - alpha) / np.sqrt(lam)
        d *= np.sqrt(lam.sum() / np.sum((alpha * np.sqrt(lam) + 1 - alpha) ** 2))
        Z.append(Ac @ (V * d) @ V.T)
    n = max(z.shape[1] for z in Z)
    Zx, Zy = (np.pad(z, ((0, 0), (0, n - z.shape[1]))) for z in Z)
    nuclear = np.linalg.svd(Zx.T @ Zy, compute_uv=False).sum()
    if kind == "angular":
        return np.arccos(nuclear / np.linalg.norm(Zx) / np.linalg.norm(Zy))
    return np.sqrt(np.linalg.norm(Zx) ** 2 + np.linalg.norm(Zy) ** 2 - 2 * nuclear)


@pytest.mark.parametrize("i", SEED_INDEX)
def test_netrep_euclidean_relation_holds_only_at_alpha_one(i):
    X, Y = _ref("X", i), _ref("Y", i)
    root_n = np.sqrt(X.shape[0])
    for alpha in (1.0, 0.5, 0.0):  # the definition above reproduces netrep's stored angular values
        assert _netrep_convention(X / root_n, Y / root_n, alpha, "angular") == pytest.approx(
            float(_ref(f"procrustes_angular_alpha{alpha}", i)), abs=1e-6)
    assert _netrep_convention(X, Y, 1.0, "euclidean") == pytest.approx(
        float(_ref("procrustes_euclidean_alpha1.0", i)), rel=1e-9)
    # docs/similarity.md: netrep's Euclidean value is sqrt(n_sample) times ours at alpha = 1 only; its
    # variance-preserving rescaling breaks the relation for alpha < 1, on raw or on 1/sqrt(n)-scaled inputs
    for alpha in (0.5, 0.0):
        ours = procrustes_distance(X, Y, kind="euclidean", alpha=alpha)
        assert abs(_netrep_convention(X, Y, alpha, "euclidean") / (root_n * ours) - 1) > 1e-3
        assert abs(_netrep_convention(X / root_n, Y / root_n, alpha, "euclidean") / ours - 1) > 1e-3
