"""Degenerate regimes of the CCA family and fully whitened Procrustes, with an exact oracle.

Centring leaves an (n_sample - 1)-dimensional sample space. Column spaces of ranks r_x and r_y in it
share at least r_x + r_y - (n_sample - 1) directions, each a canonical correlation of exactly 1: at
``max(r_x, r_y) = n_sample - 1`` every measure is perfect for any data (independent included), and for
``r_x + r_y > n_sample - 1`` some correlations are forced to 1. Both regimes must warn; beyond them,
independent data must score clearly imperfect and without a warning.
"""

import warnings

import numpy as np
import pytest
import torch

from neurodyn.analysis import (
    canonical_correlations,
    cca_similarity,
    embed_distances,
    pairwise_distances,
    procrustes_distance,
    pwcca,
    svcca,
)

N_UNITS = 8
# (name, similarity function: 1 is perfect)
MEASURES = [
    ("cca", cca_similarity),
    ("svcca", lambda X, Y: svcca(X, Y, keep=N_UNITS)),
    ("pwcca", pwcca),
    ("procrustes_alpha0", lambda X, Y: np.cos(procrustes_distance(X, Y, alpha=0.0))),
]


def _independent(n_sample, seed, n_units=N_UNITS):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n_sample, n_units)), rng.normal(size=(n_sample, n_units))


def _call(fn, X, Y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = fn(X, Y)
    return value, [str(w.message) for w in caught if issubclass(w.category, UserWarning)]


@pytest.mark.parametrize("name, fn", MEASURES)
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("n_sample", [N_UNITS, N_UNITS + 1])  # n - 1 below and at the unit count
def test_perfect_for_independent_data_at_and_below_threshold_and_warns(name, fn, seed, n_sample):
    value, messages = _call(fn, *_independent(n_sample, seed))
    assert value == pytest.approx(1.0, abs=1e-9)  # the oracle: provably perfect for any data
    assert len(messages) == 1 and "are 1 for any data" in messages[0] and "all" in messages[0]
    assert f"at least {2 * (n_sample - 1) + 1 if n_sample <= N_UNITS else 2 * N_UNITS + 1} samples" \
        in messages[0]


@pytest.mark.parametrize("name, fn", MEASURES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_one_sample_above_threshold_is_imperfect_and_warns_of_forced_correlations(name, fn, seed):
    value, messages = _call(fn, *_independent(N_UNITS + 2, seed))
    assert value < 0.97
    assert len(messages) == 1 and f"at least {N_UNITS - 1} of the {N_UNITS}" in messages[0]


@pytest.mark.parametrize("name, fn", MEASURES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_clear_of_the_regime_independent_data_score_low_without_warning(name, fn, seed):
    value, messages = _call(fn, *_independent(20 * N_UNITS, seed))
    assert messages == []
    assert value < 0.5


def test_forced_correlation_count_matches_canonical_correlations():
    X, Y = _independent(12, 3)  # ranks 8 + 8 in an 11-dimensional space: at least 5 forced
    with pytest.warns(UserWarning, match="at least 5 of the 8"):
        rho = canonical_correlations(X, Y)
    assert np.sum(rho > 1 - 1e-9) == 5 and rho[5] < 0.99


def test_whitened_procrustes_with_unequal_ranks_depends_on_ranks_only():
    rng = np.random.default_rng(4)
    X, Y = rng.normal(size=(9, 3)), rng.normal(size=(9, 8))  # rank Y = n - 1: every rho is 1
    with pytest.warns(UserWarning, match="all 3 canonical correlations"):
        d = procrustes_distance(X, Y, alpha=0.0)
    assert d == pytest.approx(np.arccos(np.sqrt(3 / 8)), abs=1e-9)


def test_svd_truncation_and_partial_whitening_are_the_fixes():
    X, Y = _independent(N_UNITS + 1, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert svcca(X, Y, keep=3) < 0.95  # 3 + 3 components in 8 dimensions: nothing forced
        assert svcca(X, Y, keep=4) < 0.95  # 4 + 4 = 8 = n - 1: the last size with nothing forced
        assert procrustes_distance(X, Y, alpha=0.5) > 0.2
    with pytest.warns(UserWarning, match="at least 2 of the 5 .* at least 11 samples"):
        svcca(X, Y, keep=5)


def test_uncentred_whitening_counts_all_samples():
    X, Y = _independent(N_UNITS, 6)
    with pytest.warns(UserWarning, match="8-dimensional sample space"):
        assert procrustes_distance(X, Y, alpha=0.0, center=False) == pytest.approx(0.0, abs=1e-6)


def test_pairwise_whitened_procrustes_warns_once():
    rng = np.random.default_rng(7)
    acts = [rng.normal(size=(N_UNITS + 1, N_UNITS)) for _ in range(4)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        D = pairwise_distances(acts, metric="procrustes", alpha=0.0, progress=False)
    assert len(caught) == 1 and "for any data" in str(caught[0].message)
    np.testing.assert_allclose(D.values, 0.0, atol=1e-6)


def test_embed_distances_accepts_tensors():
    pts = np.random.default_rng(0).standard_normal((6, 2))
    D = np.linalg.norm(pts[:, None] - pts[None], axis=-1)
    np.testing.assert_array_equal(embed_distances(torch.as_tensor(D), seed=0), embed_distances(D, seed=0))
    with pytest.raises(ValueError, match="numeric array or tensor"):
        embed_distances("not a matrix")
