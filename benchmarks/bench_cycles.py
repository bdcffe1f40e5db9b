"""Benchmark of the exact PL cycle search: dimension, cycle order, regions visited, wall time.

Random PLRNNs ``z' = A z + W relu(z) + h`` (``A`` diagonal uniform in [-0.9, 0.9], ``W``
off-diagonal ``N(0, (2.5/sqrt(M))**2)``, ``h ~ N(0, 1)``) of latent size ``M``. For each ``M`` the heuristic
search (SCYFI region iteration) runs with a fixed number of restarts; where ``2**M`` regions can
be enumerated, the exhaustive search runs too and the table reports how many of the enumerated
cycles the heuristic found (``found/total``).

A second family (``--family multistable``) has ``2**M`` fixed points (weakly coupled bistable
units), which shows how much of a large set the restarts cover.

Run: ``python benchmarks/bench_cycles.py [--dims 10,20,50,100] [--max-order 3] [--family random]
[--json out.json]``
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

from neurodyn.analysis import find_cycles
from neurodyn.analysis.plrnn._cycle_algebra import same_cycle
from neurodyn.analysis.plrnn._cycle_search import exhaustive_affordable
from neurodyn.models import PLRNN


def random_plrnn(n: int, seed: int) -> PLRNN:
    rng = np.random.default_rng(seed)
    W = rng.normal(size=(n, n)) * 2.5 / np.sqrt(n)
    np.fill_diagonal(W, 0.0)
    return PLRNN.from_arrays(rng.uniform(-0.9, 0.9, n), W, rng.normal(size=n))


def multistable_plrnn(n: int, seed: int) -> PLRNN:
    """Weakly coupled bistable units (self-excitation on the diagonal of ``W``): one stable point
    near ``h / (1 - a)`` and one unstable at ``-h / a`` per unit, so ``2**M`` fixed points."""
    rng = np.random.default_rng(seed)
    W = rng.normal(size=(n, n)) * 0.05 / np.sqrt(n)
    np.fill_diagonal(W, 1.0)
    return PLRNN.from_arrays(rng.uniform(0.2, 0.5, n), W, -0.5 + 0.05 * rng.normal(size=n))


FAMILIES = {"random": random_plrnn, "multistable": multistable_plrnn}


def n_found(reference, result, order: int) -> int:
    """How many of ``reference``'s cycles of this order ``result`` also lists."""
    mine = result.cycles(order)
    return sum(any(same_cycle(c, m, 1e-9, 1e-8) for m in mine) for c in reference.cycles(order))


def run(dims: list[int], max_order: int, n_restarts: int, seed: int, exhaustive_max_dim: int,
        time_budget: float, family: str = "random") -> list[dict]:
    rows = []
    for n in dims:
        model = FAMILIES[family](n, seed)
        t0 = time.perf_counter()
        heur = find_cycles(model, max_order=max_order, n_restarts=n_restarts, seed=seed,
                           time_budget=time_budget)
        t_heur = time.perf_counter() - t0
        exact, t_exact = None, float("nan")
        k_exact = max((k for k in range(1, max_order + 1) if exhaustive_affordable(2**n, k)), default=0)
        if n <= exhaustive_max_dim and k_exact:
            t0 = time.perf_counter()
            exact = find_cycles(model, max_order=k_exact, exhaustive=True, time_budget=time_budget)
            t_exact = time.perf_counter() - t0
        for i, k in enumerate(range(1, max_order + 1)):
            row = {
                "M": n, "order": k, "cycles": len(heur.cycles(k)),
                "regions_visited": int(heur.search["n_regions_visited"][i]),
                "solves": int(heur.search["n_solves"][i]),
                "ill_conditioned": int(heur.search["n_ill_conditioned"][i]),
                "time_s": float(heur.search["wall_time"][i]),
                "total_time_s": t_heur,
            }
            if exact is not None and k <= k_exact:
                row.update({
                    "exhaustive_cycles": len(exact.cycles(k)),
                    "found": n_found(exact, heur, k),
                    "exhaustive_solves": int(exact.search["n_solves"][i]),
                    "exhaustive_time_s": float(exact.search["wall_time"][i]),
                    "exhaustive_complete": bool(exact.search["complete"][i]),
                    "exhaustive_total_time_s": t_exact,
                })
            rows.append(row)
    return rows


def print_table(rows: list[dict]) -> None:
    head = (f"{'M':>4} {'k':>2} {'cycles':>6} {'regions':>8} {'solves':>7} {'time s':>8} "
            f"{'exh. found/total':>17} {'exh. solves':>11} {'exh. time s':>11}")
    print(head)
    for r in rows:
        if "found" in r:
            exh = (f"{r['found']:>8}/{r['exhaustive_cycles']:<8}{r['exhaustive_solves']:>11} "
                   f"{r['exhaustive_time_s']:>11.3f}" + ("" if r["exhaustive_complete"] else " (budget)"))
        else:
            exh = f"{'-':>17} {'-':>11} {'-':>11}"
        print(f"{r['M']:>4} {r['order']:>2} {r['cycles']:>6} {r['regions_visited']:>8} "
              f"{r['solves']:>7} {r['time_s']:>8.3f} {exh}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", default="2,3,4,6,8,10,20,50,100")
    parser.add_argument("--max-order", type=int, default=3)
    parser.add_argument("--n-restarts", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--exhaustive-max-dim", type=int, default=10,
                        help="run the exhaustive search for M up to this (2**M regions)")
    parser.add_argument("--time-budget", type=float, default=60.0, help="seconds per search")
    parser.add_argument("--family", choices=sorted(FAMILIES), default="random",
                        help="random couplings, or weakly coupled bistable units (2**M fixed points)")
    parser.add_argument("--json", default=None, help="also write the rows to this JSON file")
    args = parser.parse_args()
    dims = [int(d) for d in args.dims.split(",")]
    rows = run(dims, args.max_order, args.n_restarts, args.seed, args.exhaustive_max_dim,
               args.time_budget, args.family)
    print(f"threads: OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}")
    print_table(rows)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
