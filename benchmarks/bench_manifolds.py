"""Wall time and accuracy of the PL manifold, homoclinic and Lyapunov analyses on CPU.

* Lozi map (a = 1.7, b = 0.5) as a PLRNN: manifolds versus depth (pieces, seconds), homoclinic
  points found, largest distance of F(unstable samples) from the unstable manifold, and the
  Lyapunov exponents versus the published 0.4703 / -1.1634 (Sprott 2003).
* Random 4-D PLRNNs with a saddle: manifold pieces and seconds.

    OMP_NUM_THREADS=1 python benchmarks/bench_manifolds.py            # full
    OMP_NUM_THREADS=1 python benchmarks/bench_manifolds.py --quick
"""

from __future__ import annotations

import json
import time

import numpy as np
from _record import bench_parser

from neurodyn.analysis import find_cycles, find_homoclinic_points, find_manifolds, lyapunov_spectrum
from neurodyn.models import PLRNN, pl_system


def lozi() -> PLRNN:
    return PLRNN.from_arrays(np.array([[1.7, 1.0], [0.5, 0.0]]), np.array([[-3.4, 0.0], [0.0, 0.0]]),
                             np.array([1.0, 0.0]))


def bench_lozi(depths: list[int], n_steps: int) -> dict:
    model = lozi()
    F = pl_system(model).step
    saddle = [np.array([1.0, 0.5]) / 2.2]
    rows = []
    for depth in depths:
        t0 = time.perf_counter()
        man = find_manifolds(model, saddle, box=3.0, max_depth=depth, max_pieces=20_000)
        t_man = time.perf_counter() - t0
        t0 = time.perf_counter()
        hom = find_homoclinic_points(model, man)
        t_hom = time.perf_counter() - t0
        inner = [p.samples for p in man.select("unstable") if p.depth < depth]
        err = float(np.max(man.distance(F(np.concatenate(inner)), "unstable"))) if inner else np.nan
        rows.append({"max_depth": depth, "n_stable": len(man.select("stable")),
                     "n_unstable": len(man.select("unstable")), "seconds_manifolds": round(t_man, 3),
                     "n_homoclinic": int(len(hom.points)), "seconds_homoclinic": round(t_hom, 3),
                     "invariance_error": err, "proves_chaos": hom.proves_chaos})
    t0 = time.perf_counter()
    lyap = lyapunov_spectrum(model, h0=[[0.1, 0.1], [-0.2, 0.05]], n_steps=n_steps, seed=0)
    return {"manifolds": rows, "lyapunov": {
        "n_steps": n_steps, "exponents": lyap.exponents.round(4).tolist(),
        "published": [0.4703, -1.1634], "seconds": round(time.perf_counter() - t0, 2)}}


def bench_random(n_models: int, depth: int) -> list[dict]:
    rng = np.random.default_rng(1)
    out = []
    while len(out) < n_models:
        A = rng.uniform(0.3, 0.9, 4)
        W = rng.normal(0, 0.9, (4, 4))
        np.fill_diagonal(W, 0)
        model = PLRNN.from_arrays(A, W, rng.normal(0, 0.5, 4))
        cycles = find_cycles(model, max_order=1, exhaustive=True)
        if not np.any(cycles.stability == "saddle"):
            continue
        t0 = time.perf_counter()
        man = find_manifolds(model, cycles, max_depth=depth, max_pieces=1000)
        out.append({"n_pieces": man.n_pieces, "seconds": round(time.perf_counter() - t0, 3),
                    "truncated": any(man.truncated.values()), "n_warnings": len(man.warnings)})
    return out


def main() -> None:
    parser = bench_parser(__doc__, quick="depths 4 and 6, 5,000 Lozi steps, 2 random maps of depth 8")
    args = parser.parse_args()
    depths = [4, 6] if args.quick else [4, 6, 8, 10]
    result = {"lozi": bench_lozi(depths, 5_000 if args.quick else 100_000),
              "random_4d": bench_random(2 if args.quick else 5, 8 if args.quick else 12)}
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
