# %% [markdown]
# # How fine is the dynamics level of degeneracy?
#
# The dynamics level of solution degeneracy is the mean DSA distance between networks of different seeds
# (`compute_solution_degeneracy`'s default: 5 delays, rank 10). A difference between two grid cells'
# dynamics degeneracy means something only if it exceeds the measure's own noise floor: the distance DSA
# reports between a network and itself, seen through two independent batches of the same task (seeds 1
# and 2). For every grid cell of finished sweeps (folders written by `neurodyn sweep` or `run_sweep`,
# with their checkpoints) this page sets the between-seed distances, on one batch, beside each network's
# distance to itself across the two batches.
#
# It runs at a small size when the site is built: it makes a sweep of its own, one cell of three 4-unit
# 1-bit flip-flop networks trained for 10 iterations, and aligns with 4 random starts on 8 trials. Set
# `NEURODYN_SWEEPS` to sweep folders (separated by `:`) to measure those instead, and `NEURODYN_FULL=1`
# for 32 trials and 32 starts (without `NEURODYN_SWEEPS` the full size makes the guide's design of sweep:
# 2-bit flip-flop networks of 16 and 32 units, 4 seeds, 150 iterations); `NEURODYN_N_TRIALS` and
# `NEURODYN_N_RESTARTS` change those two, and the page's own sweep is written under `NEURODYN_OUT_DIR`
# (default: a temporary folder). `python examples/dsa_resolution.py [SWEEP_DIR ...] [--tiny]
# [--n-trials 32] [--n-restarts 32] [--out-dir DIR]` runs this page from the command line and writes
# `resolution.json` (one row per cell) and the figure into `DIR`. The guide's page *Sweeps* reads the
# answer for 16- and 32-unit networks.
#
# DSA keeps rank 10, below the full rank of the delay-embedded operators, as the degeneracy default does;
# it says so in a `UserWarning` (the distance is then invariant to orthogonal maps and scaling of the
# units, not to every invertible map), which the output below shows.

# %%
import os
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from neurodyn.analysis import degeneracy_features, pairwise_distances
from neurodyn.io import load, load_checkpoint
from neurodyn.sweep import run_sweep

full = os.environ.get("NEURODYN_FULL") == "1"
sweeps = [Path(s) for s in os.environ.get("NEURODYN_SWEEPS", "").split(os.pathsep) if s]
n_trials = int(os.environ.get("NEURODYN_N_TRIALS") or (32 if full else 8))
n_restarts = int(os.environ.get("NEURODYN_N_RESTARTS") or (32 if full else 4))


def cell_rows(sweep_dir: Path) -> tuple[list[dict], list[dict]]:
    """One row per grid cell of a finished sweep (between-seed and same-network DSA distances: their
    summary), and the distances themselves (``between``: one per pair of seeds, ``floor``: one per
    network)."""
    ds = load(sweep_dir / "sweep.nc").dataset
    grid = [d for d in ds["key"].dims if d != "seed"]
    stacked = ds[["key", "status"]].stack(cell=grid)
    rows, values = [], []
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
        values.append({"between": pairs.tolist(), "floor": floor})
    return rows, values


# %% [markdown]
# ## The sweep
#
# Without `NEURODYN_SWEEPS`, a sweep of the page's own (`run_sweep`, serially in this process).

# %%
if not sweeps:
    out = Path(os.environ.get("NEURODYN_OUT_DIR") or tempfile.mkdtemp(prefix="dsa_resolution_"))
    spec = ({"task": {"name": "flipflop", "n_bits": 2}, "model": {"alpha": 1.0},
             "training": {"n_iterations": 150, "batch_size": 32, "eval_every": 0},
             "analysis": {"n_trials": n_trials, "n_inits": 16, "max_iters": 200, "graph": False,
                          "dynamics_metric": "dsa"},
             "grid": {"model.n_units": [16, 32]}, "seeds": 4} if full else
            {"task": {"name": "flipflop", "n_bits": 1, "n_steps": 16}, "model": {"alpha": 1.0},
             "training": {"n_iterations": 10, "batch_size": 8, "eval_every": 0},
             "analysis": {"n_trials": 8, "n_inits": 8, "max_iters": 50, "graph": False,
                          "dynamics_metric": "procrustes"},
             "grid": {"model.n_units": [4]}, "seeds": 3})
    run_sweep(spec, out / "sweep", workers=0, progress=full)
    sweeps = [out / "sweep"]

# %% [markdown]
# ## Between seeds against the noise floor

# %%
rows, distances = [], []
for sweep in sweeps:
    found = cell_rows(sweep)
    rows += found[0]
    distances += found[1]
print("| sweep | cell | between seeds (mean ± sd, sem) | same network, other trials (mean, max) |")
print("|---|---|---|---|")
for r in rows:
    print(f"| {Path(r['sweep']).name} | {r['cell']} | {r['between_mean']:.3f} ± {r['between_sd']:.3f} "
          f"({r['between_sem']:.3f}) | {r['floor_mean']:.3f}, {r['floor_max']:.3f} |")

# %% [markdown]
# ## The figure
#
# Each cell's between-seed distances (one dot per pair) beside each network's distance to itself on
# other trials (one cross per network).

# %%
fig, ax = plt.subplots(figsize=(1.6 + 1.2 * len(rows), 3.2), layout="constrained")
for c, d in enumerate(distances):
    ax.plot(np.full(len(d["between"]), c - 0.12), d["between"], "o", color="C0",
            label="between seeds" if c == 0 else None)
    ax.plot(np.full(len(d["floor"]), c + 0.12), d["floor"], "x", color="C3",
            label="same network, other trials" if c == 0 else None)
ax.set_xticks(range(len(rows)), [", ".join(f"{k} {v}" for k, v in r["cell"].items()) for r in rows])
ax.set(xlim=(-0.6, len(rows) - 0.4), ylabel="DSA distance")
ax.legend(fontsize=7)
plt.show()
