"""Generate tests/reference/dsa_alignment_reference.npz: dsa-metric's angular DSA on 20-dimensional operators.

The alignment search of the angular DSA score (``max_C tr(A^T C B C^T)`` over orthogonal ``C``) has many
local maxima once operators have ~20 dimensions. This file stores, for 24 pairs of rank-20 HAVOK operators
of random tanh RNNs, the angular score of dsa-metric 2.0.2 (PyPI; not a neurodyn dependency; rotations
only, Adam over the Cayley map, 1500 iterations from the identity and from a two-unit swap, in float32),
so that tests and ``benchmarks/bench_similarity.py`` can compare neurodyn's search with it.

    python -m venv /tmp/peers && /tmp/peers/bin/pip install dsa-metric==2.0.2
    PYTHONPATH=. /tmp/peers/bin/python tests/reference/make_dsa_alignment_reference.py

The operators are fitted here with neurodyn's ``fit_havok`` (5 delays, rank 20) and stored, so the
comparison does not depend on the operator fit.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

SEED, N_NETWORKS, N_PAIRS, RANK = 0, 16, 24, 20


def rnn_trajectories(rng: np.random.Generator, n_trials: int = 16, n_steps: int = 50) -> np.ndarray:
    """``(trial, time, unit)`` states of a random tanh RNN with gain 1.3 and small state noise."""
    n_units = int(rng.integers(20, 41))
    W = 1.3 * rng.standard_normal((n_units, n_units)) / np.sqrt(n_units)
    states = [rng.standard_normal((n_trials, n_units))]
    while len(states) < n_steps:
        states.append(np.tanh(states[-1] @ W.T) + 0.05 * rng.standard_normal((n_trials, n_units)))
    return np.stack(states, axis=1)


def operators() -> tuple[np.ndarray, np.ndarray]:
    """``(network, RANK, RANK)`` operators and the ``(pair, 2)`` indices of the compared pairs."""
    from neurodyn.analysis import fit_havok

    rng = np.random.default_rng(SEED)
    ops = np.stack([fit_havok(rnn_trajectories(rng), n_delays=5, rank=RANK, warn=False).operator
                    for _ in range(N_NETWORKS)])
    all_pairs = np.array([(i, j) for i in range(N_NETWORKS) for j in range(i + 1, N_NETWORKS)])
    return ops, all_pairs[np.sort(rng.choice(len(all_pairs), N_PAIRS, replace=False))]


def main() -> None:
    import torch
    from DSA.simdist import SimilarityTransformDist

    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    ops, pairs = operators()
    scores = []
    for i, j in pairs:
        sim = SimilarityTransformDist(iters=1500, lr=5e-3, score_method="angular")
        scores.append(float(sim.fit_score(torch.as_tensor(ops[i]).float(), torch.as_tensor(ops[j]).float())))
        print(i, j, scores[-1], flush=True)
    path = Path(__file__).with_name("dsa_alignment_reference.npz")
    np.savez_compressed(path, operators=ops, pairs=pairs, dsa_metric_angular=np.array(scores))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
