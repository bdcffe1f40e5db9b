"""Solution degeneracy across task complexity, feature learning, size and regularisation (Huang et al. 2025).

Usage: python examples/degeneracy_factors.py [--tiny] [--out-dir runs/example_degeneracy_factors]
                                             [--workers N]

For every task and every factor, one sweep (neurodyn.sweep) trains networks at two levels of that factor
× several seeds, everything else fixed, and measures degeneracy per level at three levels of description:
behaviour (spread of the in-distribution task loss across seeds), dynamics (mean pairwise distance of the
hidden-state trajectories) and weights (mean permutation-invariant distance of the recurrent weights).
The figure has the paper's layout, one panel per level of description, the factor on the x-axis and one
line per task; the y-axis is log(degeneracy at the high level / at the low level), so a line below 0 means
the factor reduces degeneracy. ``table.md`` sets the paper's direction beside neurodyn's for each factor
and level. Writes, under --out-dir: one sweep folder per task and factor (with its sweep.nc),
factors.nc, factors.png and table.md. Uses only the public API.

This is a skeleton at a stated, small scale: ``--tiny`` is one task, one factor, 2 levels × 2 seeds of
8-unit networks trained for 30 iterations, so its directions say nothing about the paper's claims.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import xarray as xr  # noqa: E402

from neurodyn.sweep import run_sweep  # noqa: E402

LEVELS = ("behaviour_degeneracy_id", "dynamics_degeneracy", "weight_degeneracy")
#: task -> its complexity knob and two values, low then high complexity
COMPLEXITY = {"flipflop": ("n_bits", [2, 3]), "sine_wave": ("n_frequencies", [2, 4]),
              "romo": ("delta_f", [8.0, 4.0]), "path_integration": ("n_dims", [1, 2])}
#: factor -> (grid key, low and high level); the complexity key depends on the task
FACTORS = {
    "complexity": None,
    "feature_learning": ("model.output_scale", ["lazy", "rich"]),
    "size": ("model.n_units", [32, 128]),
    "regularisation": ("training.l1_weight", [0.0, 1e-3]),
}
#: the paper's direction of each factor's effect (-1 reduces degeneracy, +1 increases it, 0 mixed)
PAPER = {"complexity": (0, -1, 1), "feature_learning": (0, -1, 1), "size": (-1, -1, -1),
         "regularisation": (-1, -1, -1)}


def spec_for(task: str, factor: str, tiny: bool) -> dict:
    key, values = (f"task.{COMPLEXITY[task][0]}", COMPLEXITY[task][1]) if factor == "complexity" \
        else FACTORS[factor]
    if tiny and factor == "size":
        values = [8, 16]
    model = {"alpha": 1.0, "n_units": 8 if tiny else 64}
    if key == "model.n_units":
        del model["n_units"]
    return {
        "task": {"name": task, **({"n_steps": 16} if tiny and task == "flipflop" else {})},
        "model": model,
        "training": {"n_iterations": 30 if tiny else 2000, "batch_size": 16 if tiny else 64, "lr": 1e-2,
                     "eval_every": 0},
        "analysis": {"n_trials": 16 if tiny else 64, "n_inits": 16 if tiny else 128,
                     "max_iters": 100 if tiny else 5000, "dynamics_metric": "procrustes" if tiny else "dsa"},
        "grid": {key: values},
        "seeds": 2 if tiny else 10,
    }


def main(tiny: bool = False, out_dir: str = "runs/example_degeneracy_factors",
         workers: int | None = None) -> dict:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tasks = ["flipflop"] if tiny else list(COMPLEXITY)
    factors = ["size"] if tiny else list(FACTORS)
    change = np.full((len(tasks), len(factors), len(LEVELS)), np.nan)
    for i, task in enumerate(tasks):
        for j, factor in enumerate(factors):
            result = run_sweep(spec_for(task, factor, tiny), out / f"{task}-{factor}",
                               workers=0 if tiny else workers, progress=not tiny)
            ds = result.dataset
            for k, level in enumerate(LEVELS):
                low, high = ds[level].values  # one grid dim, low level first
                change[i, j, k] = np.log(high / low) if low > 0 and high > 0 else np.nan
    summary = xr.Dataset({"log_ratio": (("task", "factor", "level"), change)},
                         coords={"task": tasks, "factor": factors, "level": list(LEVELS)},
                         attrs={"scale": json.dumps({"tiny": tiny, "tasks": tasks, "factors": factors})})
    summary.to_netcdf(out / "factors.nc", engine="h5netcdf")
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6), layout="constrained", sharey=True)
    for k, (ax, level) in enumerate(zip(axes, LEVELS)):
        for i, task in enumerate(tasks):
            ax.plot(range(len(factors)), change[i, :, k], "o-", label=task)
        ax.axhline(0, color="0.6", lw=0.8)
        ax.set_xticks(range(len(factors)), factors, rotation=20)
        ax.set_title(level.replace("_degeneracy", "").replace("_id", ""))
    axes[0].set_ylabel("log(degeneracy high / low)")
    axes[-1].legend(frameon=False)
    fig.savefig(out / "factors.png", dpi=120)
    plt.close(fig)
    arrow = {-1: "↓", 1: "↑", 0: "mixed"}
    lines = [f"Scale: {len(tasks)} task(s), {len(factors)} factor(s), "
             f"{'2 seeds of 8-16 units, 30 iterations' if tiny else '10 seeds, 2000 iterations'}.", "",
             "| factor | level | paper | neurodyn (per task) | agree |", "|---|---|---|---|---|"]
    for j, factor in enumerate(factors):
        for k, level in enumerate(LEVELS):
            ours = [int(np.sign(c)) if np.isfinite(c) else None for c in change[:, j, k]]
            paper = PAPER[factor][k]
            agree = "n/a" if paper == 0 else ("yes" if all(o == paper for o in ours) else "no")
            shown = ", ".join(f"{t} {arrow.get(o, '?')}" for t, o in zip(tasks, ours))
            lines.append(f"| {factor} | {level} | {arrow[paper]} | {shown} | {agree} |")
    (out / "table.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return {"tasks": tasks, "factors": factors, "log_ratio": change}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="one task, one factor, 4 small networks")
    parser.add_argument("--out-dir", default="runs/example_degeneracy_factors")
    parser.add_argument("--workers", type=int, default=None, help="Dask workers (default: CPU count)")
    args = parser.parse_args()
    main(tiny=args.tiny, out_dir=args.out_dir, workers=args.workers)
