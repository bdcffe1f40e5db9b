"""Generate tests/reference/rsa_pairwise_reference.npz with rsatoolbox (Nili et al., 2014).

Reference matrices for ``pairwise_distances(..., metric="rsa")`` on fixed seeded activity of a few
networks with different unit counts, computed with rsatoolbox 0.3.2 (PyPI; not a neurodyn dependency):

    python -m venv /tmp/peers && /tmp/peers/bin/pip install rsatoolbox==0.3.2
    /tmp/peers/bin/python tests/reference/make_rsa_pairwise_reference.py

Conventions bridged here: rsatoolbox's "euclidean" RDM is the squared distance divided by the number of
units, which a per-RDM scale and a monotone map away from neurodyn's "euclidean" / "sqeuclidean" RDMs:
Spearman and Kendall's tau-a are unchanged by either, Pearson by the scale only (so its reference is for
neurodyn's "sqeuclidean").
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

SEED, N_NETWORKS, N_CONDITIONS = 0, 6, 20
COMPARISONS = {"spearman": "spearman", "pearson": "corr", "kendall_tau_a": "tau-a"}


def make_activity() -> list[np.ndarray]:
    """``(condition, unit)`` activity of related networks: a shared latent through different maps."""
    rng = np.random.default_rng(SEED)
    latent = rng.normal(size=(N_CONDITIONS, 3))
    out = []
    for k in range(N_NETWORKS):
        n_units = 4 + 2 * k
        out.append(np.tanh(latent @ rng.normal(size=(3, n_units))) + 0.3 * rng.normal(size=(N_CONDITIONS,
                                                                                                 n_units)))
    return out


def main() -> None:
    import rsatoolbox

    acts = make_activity()
    out = {f"activity_{k}": a for k, a in enumerate(acts)}
    for rdm_method in ("euclidean", "correlation"):
        rdms = rsatoolbox.rdm.concat([rsatoolbox.rdm.calc_rdm(rsatoolbox.data.Dataset(a), method=rdm_method)
                                      for a in acts])
        for ours, theirs in COMPARISONS.items():
            out[f"{rdm_method}_{ours}"] = rsatoolbox.rdm.compare(rdms, rdms, method=theirs)
    path = Path(__file__).with_name("rsa_pairwise_reference.npz")
    np.savez_compressed(path, **out)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
