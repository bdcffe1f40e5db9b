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
    dsa_distance,
    embed_distances,
    linear_predictivity,
    pairwise_distances,
    permutation_distance,
    prepare_activity,
    procrustes_distance,
    pwcca,
    rbf_bandwidth,
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
    with pytest.raises(ValueError, match="alpha must be a finite number in"):
        procrustes_distance(X, Y, alpha=1.5)
    with pytest.raises(ValueError, match="kernel must be one of"):
        cka(X, Y, kernel="poly")
    with pytest.raises(ValueError, match="keep as a variance fraction"):
        svcca(X, Y, keep=1.5)
    with pytest.raises(ValueError, match="method must be one of"):
        rdm(X, method="cityblock")
    with pytest.raises(ValueError, match="cv must be an integer in"):
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


@pytest.mark.parametrize("name", sorted(PAIRED))
@pytest.mark.parametrize("as_torch", [False, True])
def test_complex_input_refused_not_cast(name, as_torch):
    X, Y = _pair()
    Xc = X + 5j * np.random.default_rng(1).normal(size=X.shape)
    Xc = torch.as_tensor(Xc) if as_torch else Xc
    with pytest.raises(TypeError, match=r"^X is complex; pass real data \(e\.g\. X\.real or abs\(X\)\)$"):
        PAIRED[name](Xc, Y)
    with pytest.raises(TypeError, match="^Y is complex"):
        PAIRED[name](Y, Xc)


def test_complex_input_refused_by_dsa_weights_and_pairwise():
    rng = np.random.default_rng(0)
    T = rng.normal(size=(20, 2))
    with pytest.raises(TypeError, match="^Y is complex"):
        dsa_distance(T, T + 1j, n_delays=2, n_restarts=2)
    W = rng.normal(size=(3, 3))
    with pytest.raises(TypeError, match="^W2 is complex"):
        weight_distance(W, W.astype(complex))
    with pytest.raises(TypeError, match=r"^activity\[1\] is complex"):
        pairwise_distances([T, T + 1j], metric="cka", progress=False)
    with pytest.raises(TypeError, match="^D is complex"):
        embed_distances(np.zeros((3, 3), dtype=complex))


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda X, Y: linear_predictivity(X, Y, cv=2.5), r"cv must be an integer in \[2, 30\], got 2\.5"),
        (lambda X, Y: linear_predictivity(X, Y, cv=31), r"cv must be an integer in \[2, 30\], got 31"),
        (lambda X, Y: weight_distance(X[:4], Y[:4], n_iter=-1), "n_iter must be an integer >= 0, got -1"),
        (lambda X, Y: weight_distance(X[:4], Y[:4], n_iter=1.5), "n_iter must be an integer >= 0, got 1.5"),
        (lambda X, Y: dsa_distance(X, Y, n_delays=1.5), "n_delays must be an integer >= 1, got 1.5"),
        (lambda X, Y: dsa_distance(X, Y, n_delays=2, delay_interval=0.5),
         "delay_interval must be an integer >= 1, got 0.5"),
    ],
)
def test_non_integer_or_out_of_range_counts_refused(call, match):
    X, Y = _pair()
    with pytest.raises(ValueError, match=match):
        call(X, Y)


def test_embed_distances_checks_n_components_and_size():
    D = np.array([[0.0, 3.0, 4.0], [3.0, 0.0, 5.0], [4.0, 5.0, 0.0]])
    for bad in (10, 4, 0, 1.5):
        with pytest.raises(ValueError, match=rf"n_components must be an integer in \[1, 3\], got {bad}"):
            embed_distances(D, n_components=bad)
    for small in (np.zeros((0, 0)), np.zeros((1, 1))):
        with pytest.raises(ValueError, match="at least 2 networks"):
            embed_distances(small)
    assert embed_distances(D, n_components=3, seed=0).shape == (3, 3)


@pytest.mark.parametrize("what, call", [
    ("rdm", lambda X: rdm(X)),
    ("cka", lambda X: cka(X, X, kernel="rbf")),
    ("rbf_bandwidth", lambda X: rbf_bandwidth(X)),
    ("pairwise RSA", lambda X: pairwise_distances([X, X], metric="rsa", progress=False, device="cpu")),
])
def test_sample_by_sample_matrices_too_large_for_memory_are_refused_before_allocating(what, call):
    # 2e6 samples: each (sample, sample) float64 matrix takes 32 TB; numpy failed with its own MemoryError
    X = np.arange(2_000_000.0)[:, None]
    with pytest.raises(ValueError, match=rf"^{what} needs about .* GiB \(.*\) but .* GiB are available; "):
        call(X)


def test_settings_that_are_not_finite_numbers_are_named():
    # sigma=inf blamed "a representation is constant"; alpha="0.5" and sigma="1" failed comparing str to float
    X = np.random.default_rng(0).normal(size=(30, 3))
    for kw in ({"sigma": float("inf")}, {"sigma": "1"}, {"sigma": (1.0, float("inf"))}, {"sigma": 0.0}):
        with pytest.raises(ValueError, match=r"^RBF bandwidths must be finite numbers > 0; got "):
            cka(X, X, kernel="rbf", **kw)
    with pytest.raises(ValueError, match=r"^sigma_factor must be a finite number > 0, got inf"):
        cka(X, X, kernel="rbf", sigma_factor=float("inf"))
    for alpha in ("0.5", float("nan"), 1.5, -1.0):
        with pytest.raises(ValueError, match=r"^alpha must be a finite number in \[0, 1\], got "):
            procrustes_distance(X, X, alpha=alpha)
        # the batched path whitened with any alpha and returned values that are no distances
        with pytest.raises(ValueError, match=r"^alpha must be a finite number in \[0, 1\], got "):
            pairwise_distances([X, 2 * X], alpha=alpha, progress=False, device="cpu")


def test_prepare_activity_names_an_option_that_belongs_to_the_pairwise_stage():
    # the error named the private _prepare_procrustes()
    X = np.random.default_rng(0).normal(size=(30, 3))
    with pytest.raises(TypeError, match=r"^prepare_activity\(metric='procrustes'\) got an unexpected keyword "
                                        r"argument 'kind'; its options are \['alpha', 'center'\]"):
        prepare_activity(X, metric="procrustes", kind="angular")
    with pytest.raises(TypeError, match=r"^prepare_activity\(metric='dsa'\) got an unexpected keyword "
                                        r"argument 'score'; its options are \['n_delays', 'rank', "):
        prepare_activity(X[None], metric="dsa", n_delays=2, score="angular")
