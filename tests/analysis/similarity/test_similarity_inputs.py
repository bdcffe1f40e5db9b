"""Input handling shared by all similarity measures: errors, torch tensors, no in-place modification."""

import numpy as np
import pytest
import torch

from neurodyn.analysis import (
    PermutationMetric,
    ProcrustesMetric,
    cca_similarity,
    cka,
    compare_rdms,
    linear_predictivity,
    permutation_distance,
    procrustes_distance,
    pwcca,
    rdm,
    soft_matching_distance,
    svcca,
    weight_distance,
)

PAIRED = {
    "procrustes": lambda X, Y: procrustes_distance(X, Y, alpha=0.5),
    "permutation": permutation_distance,
    "soft_matching": soft_matching_distance,
    "cca": cca_similarity,
    "svcca": svcca,
    "pwcca": pwcca,
    "cka": cka,
    "cka_rbf_debiased": lambda X, Y: cka(X, Y, kernel="rbf", debiased=True),
    "predictivity": lambda X, Y: linear_predictivity(X, Y, direction="both").r2,
    "procrustes_estimator": lambda X, Y: ProcrustesMetric().fit(X, Y).score(X, Y),
    "permutation_estimator": lambda X, Y: PermutationMetric().fit(X, Y).score(X, Y),
}


def _pair(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(30, 4))
    return X, np.tanh(X @ rng.normal(size=(4, 5))) + 0.1 * rng.normal(size=(30, 5))


@pytest.mark.parametrize("name", PAIRED)
@pytest.mark.parametrize("seed", [0, 1])
def test_inputs_not_modified_and_torch_matches_numpy(name, seed):
    X, Y = _pair(seed)
    X0, Y0 = X.copy(), Y.copy()
    value = PAIRED[name](X, Y)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(Y, Y0)
    Xt, Yt = torch.tensor(X, dtype=torch.float32), torch.tensor(Y, dtype=torch.float64)
    Xt0 = Xt.clone()
    from_torch = PAIRED[name](Xt, Yt)
    assert torch.equal(Xt, Xt0)
    assert from_torch == pytest.approx(value, rel=1e-5, abs=1e-6)  # X was rounded to float32


@pytest.mark.parametrize("name", PAIRED)
def test_nan_inf_and_mismatched_samples_raise(name):
    X, Y = _pair()
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="X contains 1 NaN/Inf"):
        PAIRED[name](bad, Y)
    bad[3, 1] = np.inf
    with pytest.raises(ValueError, match="NaN/Inf"):
        PAIRED[name](Y, bad)
    with pytest.raises(ValueError, match="same number of samples"):
        PAIRED[name](X, Y[:-1])
    with pytest.raises(ValueError, match="must be 2-D"):
        PAIRED[name](X.ravel(), Y)


def test_rdm_and_weight_inputs_not_modified_and_validated():
    rng = np.random.default_rng(0)
    X, cov = rng.normal(size=(6, 3)), np.eye(3) * 2
    X0 = X.copy()
    R = rdm(X, method="mahalanobis", noise_cov=cov)
    R0 = R.copy()
    compare_rdms(R, R * 2, method="whitened_pearson")
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(R, R0)
    W1, W2 = rng.normal(size=(5, 5)), rng.normal(size=(5, 5))
    W10, W20 = W1.copy(), W2.copy()
    weight_distance(W1, W2)
    np.testing.assert_array_equal(W1, W10)
    np.testing.assert_array_equal(W2, W20)
    with pytest.raises(ValueError, match="noise_cov must have shape"):
        rdm(X, method="mahalanobis", noise_cov=np.eye(4))
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN/Inf"):
        rdm(X)
    W1[0, 0] = np.inf
    with pytest.raises(ValueError, match="W1 contains"):
        weight_distance(W1, W2)


def test_unknown_options_raise():
    X, Y = _pair()
    with pytest.raises(ValueError, match="kind must be one of"):
        procrustes_distance(X, Y, kind="cosine")
    with pytest.raises(ValueError, match="alpha must lie in"):
        procrustes_distance(X, Y, alpha=1.5)
    with pytest.raises(ValueError, match="kernel must be one of"):
        cka(X, Y, kernel="poly")
    with pytest.raises(ValueError, match="keep as a variance fraction"):
        svcca(X, Y, keep=1.5)
    with pytest.raises(ValueError, match="method must be one of"):
        rdm(X, method="cityblock")
    with pytest.raises(ValueError, match="cv must be between"):
        linear_predictivity(X, Y, cv=1)
    with pytest.raises(RuntimeError, match="not fitted"):
        ProcrustesMetric().score(X, Y)


@pytest.mark.parametrize(
    "measure",
    [
        procrustes_distance,
        permutation_distance,
        lambda X, Y: soft_matching_distance(X, Y, kind="angular"),
        cca_similarity,
        cka,
        lambda X, Y: cka(X, Y, debiased=True),
    ],
)
def test_constant_representation_raises(measure):
    X, Y = _pair()
    with pytest.raises(ValueError, match="undefined"):
        measure(X, np.full_like(Y, 3.0))


def test_full_whitening_warns_when_samples_do_not_exceed_units():
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(6, 4)), rng.normal(size=(6, 8))
    with pytest.warns(UserWarning, match="all 4 canonical correlations are 1 for any data"):
        procrustes_distance(X, Y, alpha=0.0)
