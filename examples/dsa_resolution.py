"""How fine is the dynamics level? Between-seed DSA distances against the measure's own noise floor.

Usage: python examples/dsa_resolution.py SWEEP_DIR [SWEEP_DIR ...] [--out-dir runs/example_dsa_resolution]
                                         [--n-trials 32] [--n-restarts 32] [--tiny]

For every grid cell of the given sweeps (folders written by ``neurodyn sweep`` / ``run_sweep``, with their
checkpoints), the DSA distance (``neurodyn.analysis.compute_solution_degeneracy``'s default: 5 delays,
rank 10) is computed between

* different seeds on the same batch of trials (what the dynamics level of degeneracy averages), and
* each network with itself on two independent batches of the same task (seeds 1 and 2): the noise floor,
  the distance the measure reports for identical dynamics seen through different trial samples.

A difference between two cells' dynamics degeneracy means something only if it exceeds both the noise
floor and the spread of the between-seed distances. Writes ``resolution.json`` (one row per cell) under
--out-dir and prints a table. ``--tiny`` makes a 1-cell × 3-seed sweep of 4-unit networks itself and
aligns with 4 random starts.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from neurodyn.analysis import degeneracy_features, pairwise_distances
from neurodyn.io import load, load_checkpoint
from neurodyn.sweep import run_sweep


def cell_rows(sweep_dir: Path, n_trials: int, n_restarts: int = 32) -> list[dict]:
    """One row per grid cell of a finished sweep: between-seed and same-network DSA distances."""
    ds = load(sweep_dir / "sweep.nc").dataset
    grid = [d for d in ds["key"].dims if d != "seed"]
    stacked = ds[["key", "status"]].stack(cell=grid)
    rows = []
    for c in range(stacked.sizes["cell"]):
        at = stacked.isel(cell=c)
        keys = [str(k) for k, s in zip(at["key"].values, at["status"].values) if s == "ok"]
        ckpts = [load_checkpoint(sweep_dir / "items" / k / "model.pt") for k in keys]
        first, second = ([degeneracy_features(ck.model, ck.task, n_trials=n_trials, seed=seed,
                                              dynamics_metric="dsa").dynamics for ck in ckpts]
                         for seed in (1, 2))
        rank = min(first[0].info["rank"], *(p.info["full_rank"] for p in first + second))
        opts = {"metric": "dsa", "rank": rank, "n_restarts": n_restarts, "progress": False, "device": "cpu"}
        between = pairwise_distances(first, **opts).values
        floor = [float(pairwise_distances([a, b], **opts).values[0, 1]) for a, b in zip(first, second)]
        pairs = between[np.triu_indices(len(ckpts), k=1)]
        label = {d: at[d].item() for d in grid}
        rows.append({"sweep": str(sweep_dir), "cell": label, "n_networks": len(ckpts), "rank": int(rank),
                     "between_mean": float(pairs.mean()), "between_sd": float(pairs.std(ddof=1)),
                     "between_sem": float(pairs.std(ddof=1) / np.sqrt(len(pairs))),
                     "floor_mean": float(np.mean(floor)), "floor_max": float(np.max(floor))})
    return rows


def main(sweeps: list[str], out_dir: str = "runs/example_dsa_resolution", n_trials: int = 32,
         n_restarts: int = 32, tiny: bool = False) -> list[dict]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if tiny:
        spec = {"task": {"name": "flipflop", "n_bits": 1, "n_steps": 16}, "model": {"alpha": 1.0},
                "training": {"n_iterations": 10, "batch_size": 8, "eval_every": 0},
                "analysis": {"n_trials": 8, "n_inits": 8, "max_iters": 50, "graph": False,
                             "dynamics_metric": "procrustes"},
                "grid": {"model.n_units": [4]}, "seeds": 3}
        run_sweep(spec, out / "sweep", workers=0, progress=False)
        sweeps, n_trials, n_restarts = [str(out / "sweep")], 8, 4
    rows = [row for s in sweeps for row in cell_rows(Path(s), n_trials, n_restarts)]
    (out / "resolution.json").write_text(json.dumps(rows, indent=1))
    print("| sweep | cell | between seeds (mean ± sd, sem) | same network, other trials (mean, max) |")
    print("|---|---|---|---|")
    for r in rows:
        print(f"| {Path(r['sweep']).name} | {r['cell']} | {r['between_mean']:.3f} ± {r['between_sd']:.3f} "
              f"({r['between_sem']:.3f}) | {r['floor_mean']:.3f}, {r['floor_max']:.3f} |")
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sweeps", nargs="*", help="sweep output folders")
    parser.add_argument("--out-dir", default="runs/example_dsa_resolution")
    parser.add_argument("--n-trials", type=int, default=32)
    parser.add_argument("--n-restarts", type=int, default=32, help="DSA alignment starts per round")
    parser.add_argument("--tiny", action="store_true", help="make and measure a tiny sweep (no SWEEP_DIR)")
    args = parser.parse_args()
    main(args.sweeps, out_dir=args.out_dir, n_trials=args.n_trials, n_restarts=args.n_restarts,
         tiny=args.tiny)
