"""Pairwise RSA: equal to per-pair ``compare_rdms``, to scipy's rank statistics and to rsatoolbox."""

import itertools

import numpy as np
import pytest
import torch
from _paths import REFERENCE
from scipy.stats import pearsonr, spearmanr

from neurodyn.analysis import compare_rdms, pairwise_distances, rdm
from neurodyn.analysis.similarity._compare_rdms import upper_triangle

COMPARE = ("pearson", "spearman", "kendall_tau_a", "cosine", "whitened_pearson", "whitened_cosine")
REF = np.load(REFERENCE / "rsa_pairwise_reference.npz")


def _activity(n_networks=4, n_conditions=12, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(n_conditions, 3 + k)) for k in range(n_networks)]


@pytest.mark.parametrize("rdm_method", ["euclidean", "correlation"])
@pytest.mark.parametrize("compare_method", COMPARE)
def test_rsa_equals_per_pair_compare_rdms(rdm_method, compare_method):
    acts = _activity()
    D = pairwise_distances(acts, metric="rsa", rdm_method=rdm_method, compare_method=compare_method,
                           progress=False)
    for a, b in itertools.combinations(range(len(acts)), 2):
        expected = compare_rdms(rdm(acts[a], method=rdm_method), rdm(acts[b], method=rdm_method),
                                method=compare_method)
        assert abs(D.values[a, b] - expected) <= 1e-12
    np.testing.assert_array_equal(D.values, D.values.T)
    np.testing.assert_array_equal(np.diag(D.values), 1.0)
    assert D.attrs["metric"] == "rsa" and D.attrs["kind"] == "similarity"
    assert D.attrs["rdm_method"] == rdm_method and D.attrs["compare_method"] == compare_method


def test_rsa_defaults_are_spearman_on_euclidean_rdms_and_match_scipy():
    acts = _activity(n_networks=3, n_conditions=15, seed=1)
    D = pairwise_distances([torch.as_tensor(a) for a in acts], metric="rsa", progress=False)
    assert D.attrs["rdm_method"] == "euclidean" and D.attrs["compare_method"] == "spearman"
    vecs = [upper_triangle(rdm(a)) for a in acts]
    for a, b in itertools.combinations(range(3), 2):
        assert D.values[a, b] == pytest.approx(spearmanr(vecs[a], vecs[b]).statistic, abs=1e-12)
    P = pairwise_distances(acts, metric="rsa", compare_method="pearson", progress=False)
    assert P.values[0, 1] == pytest.approx(pearsonr(vecs[0], vecs[1]).statistic, abs=1e-12)


def test_rsa_spearman_with_tied_rdms_matches_scipy():
    # integer-valued activity gives tied distances: ranks must be averaged like scipy's
    rng = np.random.default_rng(2)
    acts = [rng.integers(0, 3, size=(10, 2)).astype(float) for _ in range(3)]
    D = pairwise_distances(acts, metric="rsa", progress=False)
    vecs = [upper_triangle(rdm(a)) for a in acts]
    assert len(np.unique(vecs[0])) < vecs[0].size
    for a, b in itertools.combinations(range(3), 2):
        assert D.values[a, b] == pytest.approx(spearmanr(vecs[a], vecs[b]).statistic, abs=1e-12)


def test_rsa_kendall_tau_a_brute_force_and_tied_diagonal():
    rng = np.random.default_rng(3)
    acts = [rng.integers(0, 3, size=(7, 2)).astype(float) for _ in range(3)]
    D = pairwise_distances(acts, metric="rsa", compare_method="kendall_tau_a", progress=False)
    vecs = [upper_triangle(rdm(a)) for a in acts]

    def tau_a(x, y):
        pairs = list(itertools.combinations(range(x.size), 2))
        return sum(np.sign(x[p] - x[q]) * np.sign(y[p] - y[q]) for p, q in pairs) / len(pairs)

    for a, b in itertools.product(range(3), repeat=2):
        assert D.values[a, b] == pytest.approx(tau_a(vecs[a], vecs[b]), abs=1e-12)
    assert np.all(np.diag(D.values) < 1.0)  # tied entries count as neither concordant nor discordant


@pytest.mark.parametrize("rdm_method", ["euclidean", "correlation"])
@pytest.mark.parametrize("compare_method", ["spearman", "kendall_tau_a"])
def test_rsa_matches_rsatoolbox(rdm_method, compare_method):
    acts = [REF[f"activity_{k}"] for k in range(6)]
    D = pairwise_distances(acts, metric="rsa", rdm_method=rdm_method, compare_method=compare_method,
                           progress=False)
    np.testing.assert_allclose(D.values, REF[f"{rdm_method}_{compare_method}"], rtol=0, atol=1e-12)


@pytest.mark.parametrize("rdm_method, ours", [("euclidean", "sqeuclidean"), ("correlation", "correlation")])
def test_rsa_pearson_matches_rsatoolbox(rdm_method, ours):
    # rsatoolbox's euclidean RDM is the squared distance over the unit count; Pearson ignores the scale
    acts = [REF[f"activity_{k}"] for k in range(6)]
    D = pairwise_distances(acts, metric="rsa", rdm_method=ours, compare_method="pearson", progress=False)
    np.testing.assert_allclose(D.values, REF[f"{rdm_method}_pearson"], rtol=0, atol=1e-12)


def test_rsa_errors():
    acts = _activity(n_networks=2)
    with pytest.raises(ValueError, match="compare_method"):
        pairwise_distances(acts, metric="rsa", compare_method="nope", progress=False)
    with pytest.raises(ValueError, match="method"):
        pairwise_distances(acts, metric="rsa", rdm_method="nope", progress=False)
    with pytest.raises(ValueError, match="constant RDM"):
        pairwise_distances([acts[0], np.ones((12, 3))], metric="rsa", progress=False)
    with pytest.raises(ValueError, match="same samples"):
        pairwise_distances([acts[0], acts[1][:5]], metric="rsa", progress=False)


def test_rsa_refuses_crossnobis_rdms_with_a_fix_it_can_use():
    # pairwise RSA cannot pass conditions=/runs=, so the message must not ask for them
    with pytest.raises(ValueError, match="rdm_method='crossnobis' needs per-observation labels"):
        pairwise_distances(_activity(n_networks=2), metric="rsa", rdm_method="crossnobis", progress=False)
