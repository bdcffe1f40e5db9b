"""Generate tests/reference/dsa_reference.npz with the dsa-metric package (Ostrow et al., 2023).

Run once, by hand, in an environment where ``dsa-metric`` is importable (it is not a neurodyn dependency):

    PYTHONPATH=/path/to/dsa-metric .venv/bin/python tests/reference/make_dsa_reference.py

Stored: the seeded inputs, the eigenvalues of dsa-metric's HAVOK operators (``DMD.A_v``), its
eigenvalue-Wasserstein score (the squared 2-Wasserstein distance) and its angular score (rotations only,
Adam over the Cayley parametrisation of SO(n)).
"""

from pathlib import Path

import numpy as np
import torch
from DSA.dmd import DMD
from DSA.simdist import SimilarityTransformDist


def trajectories(theta: float, seed: int, n: int = 4, n_trials: int = 8, n_steps: int = 40) -> np.ndarray:
    rng = np.random.default_rng(seed)
    A = 0.9 * np.eye(n)
    A[:2, :2] = 0.98 * np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
    A = A + 0.03 * rng.standard_normal((n, n))
    x = rng.standard_normal((n_trials, n))
    out = []
    for _ in range(n_steps):
        out.append(x)
        x = x @ A.T + 0.05 * rng.standard_normal(x.shape)
    return np.stack(out, axis=1)


def main() -> None:
    torch.manual_seed(0)
    X, Y = trajectories(0.3, 0), trajectories(0.8, 1)
    out = {"X": X, "Y": Y}
    for tag, (n_delays, rank) in {"full": (2, None), "r4": (2, 4)}.items():
        ops = []
        for name, Z in (("X", X), ("Y", Y)):
            dmd = DMD(torch.as_tensor(Z, dtype=torch.float64), n_delays=n_delays, rank=rank)
            dmd.fit()
            ops.append(dmd.A_v.detach().clone())
            out[f"eig_{name}_{tag}"] = np.sort_complex(np.linalg.eigvals(ops[-1].numpy()))
        for score in ("angular", "wasserstein"):
            sim = SimilarityTransformDist(iters=1500, lr=5e-3, score_method=score)
            out[f"{score}_{tag}"] = float(sim.fit_score(ops[0].clone().float(), ops[1].clone().float()))
    np.savez(Path(__file__).with_name("dsa_reference.npz"), **out)
    print({k: v for k, v in out.items() if np.ndim(v) == 0})


if __name__ == "__main__":
    main()
