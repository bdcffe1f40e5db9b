"""Loading structure: a planted spurious correlation is flagged, a ground-truth sample is not."""

import numpy as np
import pytest
import torch
from scipy import stats

from neurodyn.analysis.low_rank import compute_loading_structure
from neurodyn.models import LowRankRNN


def _truth_rows(n_units, seed):
    """Rank-2 ground-truth law: m ~ N(0, I), n = m A^T (identified correlations), b = 0."""
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((n_units, 2))
    return np.c_[m, m @ np.array([[2.0, -1.0], [1.0, 2.0]]).T, np.zeros(n_units)]


@pytest.mark.parametrize("seed", [0, 1])
def test_planted_correlation_is_spurious_and_a_truth_sample_is_not(seed):
    truth = LowRankRNN.from_loadings(torch.as_tensor(_truth_rows(400, seed)), rank=2)
    # a "plain fit": the truth's rows plus unidentified spread of n that follows the bias,
    # and a bias that follows m0 (structure the truth does not have)
    rng = np.random.default_rng(100 + seed)
    plain = _truth_rows(400, seed)
    plain[:, 4] = 0.4 * plain[:, 0] + rng.standard_normal(400)
    ds = compute_loading_structure(plain, truth, seed=seed)
    names = truth.loading_names()
    assert list(ds.loading.values) == names
    flagged = {tuple(sorted((a, b))) for a in names for b in names
               if a != b and bool(ds.spurious.sel(loading=a, loading_=b))}
    # b correlates with m0 (planted, 0.37), and with n0 and n1 through n = m A^T (0.16, 0.33)
    assert ("b", "m0") in flagged and flagged <= {("b", "m0"), ("b", "n0"), ("b", "n1")}
    # every identified correlation of the truth (m with n) is there in both: not spurious
    assert bool(ds.significant_reference.sel(loading="m0", loading_="n0"))
    # a fresh draw from the ground-truth law is not flagged
    fresh = compute_loading_structure(_truth_rows(400, 50 + seed), truth, seed=seed)
    assert fresh.n_spurious == 0


def test_threshold_matches_the_null_distribution_of_the_largest_correlation():
    # independent columns: corr ~ N(0, 1/N); the max over P pairs exceeds z/sqrt(N) with prob ~ level
    # (Bonferroni: z = Phi^-1(1 - level / (2 P)), slightly conservative)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1000, 4))
    ds = compute_loading_structure(x, n_permutations=400, seed=0)
    bonferroni = stats.norm.ppf(1 - 0.05 / (2 * 6)) / np.sqrt(1000)
    assert 0.85 * bonferroni < float(ds.corr_threshold) <= 1.02 * bonferroni
    # rate of false flags over independent samples, at this level
    hits = [compute_loading_structure(rng.standard_normal((200, 4)), n_permutations=40, level=0.1,
                                      seed=k).significant.any() for k in range(40)]
    assert 0.02 <= np.mean(hits) <= 0.25


def test_moments_match_scipy_and_constant_columns_are_not_flagged():
    rng = np.random.default_rng(0)
    x = np.c_[rng.exponential(size=500), rng.standard_t(6, 500), np.ones(500)]
    ds = compute_loading_structure(x, seed=0)
    np.testing.assert_allclose(ds.skew[:2], stats.skew(x[:, :2]), rtol=1e-10)
    np.testing.assert_allclose(ds.excess_kurtosis[:2], stats.kurtosis(x[:, :2]), rtol=1e-10)
    assert np.isnan(ds.corr[2, 0]) and not ds.significant[2].any() and np.isnan(ds.skew[2])


def test_same_seed_same_threshold_and_bad_input():
    x = np.random.default_rng(0).standard_normal((100, 3))
    a, b = compute_loading_structure(x, seed=4), compute_loading_structure(x, seed=4)
    assert float(a.corr_threshold) == float(b.corr_threshold)
    with pytest.raises(ValueError, match="NaN"):
        compute_loading_structure(np.where(x > 2, np.nan, x))
    with pytest.raises(ValueError, match="components"):
        compute_loading_structure(x, x[:, :2])
    with pytest.raises(ValueError, match="level"):
        compute_loading_structure(x, level=1.5)
    with pytest.raises(ValueError, match="too few"):
        compute_loading_structure(x, n_permutations=5)
    with pytest.raises(ValueError, match="at least 4"):
        compute_loading_structure(x[:3])
