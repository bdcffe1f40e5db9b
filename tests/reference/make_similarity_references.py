"""Generate tests/reference/similarity_reference.npz from peer libraries.

Reference values for neurodyn.analysis.similarity on fixed seeded inputs, computed with

* rsatoolbox 0.3.2 (PyPI): RDMs (euclidean, correlation, mahalanobis, crossnobis) and RDM comparisons
  (cosine, corr, spearman, tau-a, corr_cov, cosine_cov);
* netrep (github.com/ahwillia/netrep, commit 0186b8a): LinearMetric (alpha 1, 0.5, 0; angular and
  euclidean), PermutationMetric, LinearCKA;
* google/svcca (github.com/google/svcca, cca_core.py and pwcca.py): mean CCA and PWCCA.

None of these is a dependency of neurodyn. The file was produced with

    pip install rsatoolbox==0.3.2                       # into a scratch environment
    git clone https://github.com/ahwillia/netrep /tmp/simrefs/netrep
    git clone https://github.com/google/svcca /tmp/simrefs/svcca
    PYTHONPATH=/tmp/simrefs/netrep:/tmp/simrefs/svcca python tests/reference/make_similarity_references.py

Conventions bridged here (see docs/similarity.md): rsatoolbox divides squared distances by the number of
units and takes a noise *precision*; netrep's euclidean distance is not divided by sqrt(n_sample) and its
partial whitening uses X^T X rather than the covariance X^T X / n_sample (inputs are scaled by
1/sqrt(n_sample) so that the two coincide; the angular distance is unaffected by netrep's variance
rescaling); google/svcca takes (unit, sample) arrays and is given column-centred data; its PWCCA weights are
compared on whitened X (see svcca_values).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

SEEDS = (0, 1, 2)
N_SAMPLE, N_X, N_Y = 40, 6, 9
N_COND, N_RUN, N_REP, N_CHAN = 6, 3, 2, 7
ALPHAS = (1.0, 0.5, 0.0)
RDM_METHODS = ("cosine", "corr", "spearman", "tau-a", "corr_cov", "cosine_cov")


def make_inputs(seed: int) -> dict[str, np.ndarray]:
    """Fixed paired data, grouped observations and two RDMs for one seed."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N_SAMPLE, N_X))
    Y = np.tanh(X @ rng.normal(size=(N_X, N_Y))) + 0.5 * rng.normal(size=(N_SAMPLE, N_Y)) + 1.0
    patterns = rng.normal(size=(N_COND, N_CHAN))
    obs = np.repeat(patterns[None], N_RUN * N_REP, axis=0).reshape(-1, N_CHAN)
    obs = obs + rng.normal(size=obs.shape)
    conditions = np.tile(np.arange(N_COND), N_RUN * N_REP)
    runs = np.repeat(np.arange(N_RUN), N_COND * N_REP)
    A = rng.normal(size=(N_CHAN, N_CHAN))
    noise_cov = A @ A.T / N_CHAN + np.eye(N_CHAN)
    rdm_a = rng.uniform(size=N_COND * (N_COND - 1) // 2)
    rdm_b = rdm_a + 0.3 * rng.uniform(size=rdm_a.size)
    rdm_b[:3] = rdm_b[3]  # ties, to exercise tau-a
    return dict(X=X, Y=Y, obs=obs, conditions=conditions, runs=runs, noise_cov=noise_cov,
                rdm_a=rdm_a, rdm_b=rdm_b)


def rsatoolbox_values(inp: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    import rsatoolbox

    ds = rsatoolbox.data.Dataset(
        inp["obs"], obs_descriptors={"conds": inp["conditions"], "runs": inp["runs"]}
    )
    prec = np.linalg.inv(inp["noise_cov"])
    out = {}
    for name, kwargs in {
        "euclidean": {"method": "euclidean"},
        "correlation": {"method": "correlation"},
        "mahalanobis": {"method": "mahalanobis", "noise": prec},
        "crossnobis": {"method": "crossnobis", "noise": prec, "cv_descriptor": "runs"},
    }.items():
        rdms = rsatoolbox.rdm.calc_rdm(ds, descriptor="conds", **kwargs)
        out[f"rdm_{name}"] = rdms.get_vectors()[0]
    r1 = rsatoolbox.rdm.RDMs(inp["rdm_a"][None])
    r2 = rsatoolbox.rdm.RDMs(inp["rdm_b"][None])
    for method in RDM_METHODS:
        out[f"compare_{method}"] = np.asarray(rsatoolbox.rdm.compare(r1, r2, method=method)).item()
    return out


def netrep_values(X: np.ndarray, Y: np.ndarray) -> dict[str, float]:
    from netrep.metrics import LinearCKA, LinearMetric, PermutationMetric

    m = X.shape[0]
    out = {}
    for alpha in ALPHAS:
        metric = LinearMetric(alpha=alpha, center_columns=True, zero_pad=True, score_method="angular")
        out[f"procrustes_angular_alpha{alpha}"] = metric.fit_score(X / np.sqrt(m), Y / np.sqrt(m))
    metric = LinearMetric(alpha=1.0, center_columns=True, zero_pad=True, score_method="euclidean")
    out["procrustes_euclidean_alpha1.0"] = metric.fit_score(X, Y)
    for kind in ("angular", "euclidean"):
        metric = PermutationMetric(center_columns=True, zero_pad=True, score_method=kind)
        out[f"permutation_{kind}"] = metric.fit_score(X, Y)
    out["linear_cka_angle"] = LinearCKA(center_columns=True).score(X, Y)
    return out


def svcca_values(X: np.ndarray, Y: np.ndarray) -> dict[str, float]:
    import cca_core
    import pwcca

    Xc, Yc = (X - X.mean(axis=0)).T, (Y - Y.mean(axis=0)).T
    res = cca_core.get_cca_similarity(Xc, Yc, epsilon=0.0, verbose=False)
    # pwcca.compute_pwcca builds its "canonical directions" as u^T x without the Sigma_xx^{-1/2} factor,
    # which equals the canonical variates of Morcos et al. only when X is whitened; compare there.
    lam, V = np.linalg.eigh(np.cov(Xc))
    Xw = (V / np.sqrt(lam)).T @ Xc
    return {"cca_mean_rho": float(np.mean(res["cca_coef1"])),
            "pwcca_whitened_x": float(pwcca.compute_pwcca(Xw, Yc, epsilon=0.0)[0]),
            "X_whitened": Xw.T}


def main() -> None:
    arrays: dict[str, list] = {}
    for seed in SEEDS:
        inp = make_inputs(seed)
        values = {**inp, **rsatoolbox_values(inp), **netrep_values(inp["X"], inp["Y"]),
                  **svcca_values(inp["X"], inp["Y"])}
        for key, value in values.items():
            arrays.setdefault(key, []).append(np.asarray(value))
    path = Path(__file__).with_name("similarity_reference.npz")
    np.savez_compressed(path, seeds=np.array(SEEDS), **{k: np.stack(v) for k, v in arrays.items()})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
