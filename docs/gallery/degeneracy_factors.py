# %% [markdown]
# # Solution degeneracy across tasks and factors
#
# Huang, Singh, Martinelli & Rajan (2025, NeurIPS) ask what makes networks trained on the same task
# differ from each other, at three levels of description: behaviour (the spread across seeds of the
# out-of-distribution loss, `task.ood()`), dynamics (the mean pairwise distance of the hidden-state
# trajectories) and weights (the mean permutation-invariant distance of the recurrent weights). Four tasks
# (flip-flop, sine generation, delayed discrimination `romo`, path integration) meet four factors, each
# varied alone at two levels: the task's complexity knob, feature learning through the readout scale
# `output_scale` (lazy → rich), `n_units` and L1 weight regularisation. Every task and factor is one
# sweep (`neurodyn.sweep.run_sweep`), everything else at its base value, all on one local Dask cluster;
# each level is also measured on the same networks untrained (their initial weights), the baseline.
#
# It runs at a small size when the site is built, which checks the plumbing only: two sweeps (flip-flop ×
# complexity, delayed discrimination × size), 2 levels × 2 seeds of 4–8-unit networks trained for
# 10 iterations, dynamics by Procrustes, in this process; its directions say nothing about the paper's
# claims. Set `NEURODYN_FULL=1` for all 16 sweeps of 32-unit base networks (16 → 64 units for size),
# 4 seeds and 400 iterations, dynamics by DSA, on a cluster of one worker per CPU. `NEURODYN_SEEDS`,
# `NEURODYN_N_ITERATIONS`, `NEURODYN_DYNAMICS_METRIC` and `NEURODYN_WORKERS` (0: serially) change
# those; the sweeps are written under `NEURODYN_OUT_DIR` (default: a temporary folder), and
# `NEURODYN_SUMMARISE_ONLY=1` trains nothing and reads the sweeps finished there.
# `python examples/degeneracy_factors.py [--tiny] [--out-dir DIR] [--workers N] [--seeds S]
# [--n-iterations I] [--dynamics-metric M] [--summarise-only]` runs this page from the command line
# (full size unless `--tiny`) and writes `factors.nc`, `factors.png` and `table.md` beside the sweeps in
# `DIR`. The guide's page *Sweeps* shows the table of a 96-network run and what it can say.

# %%
import contextlib
import json
import os
import tempfile
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import xarray as xr

from neurodyn.io import load
from neurodyn.sweep import run_sweep

full = os.environ.get("NEURODYN_FULL") == "1"
out = Path(os.environ.get("NEURODYN_OUT_DIR") or tempfile.mkdtemp(prefix="degeneracy_factors_"))
seeds = int(os.environ.get("NEURODYN_SEEDS") or (4 if full else 2))
n_iterations = int(os.environ.get("NEURODYN_N_ITERATIONS") or (400 if full else 10))
dynamics_metric = (os.environ.get("NEURODYN_DYNAMICS_METRIC") or "dsa") if full else "procrustes"
workers = os.environ.get("NEURODYN_WORKERS")  # None: one per CPU at full size; 0: serially
workers = int(workers) if workers else (None if full else 0)
summarise_only = os.environ.get("NEURODYN_SUMMARISE_ONLY") == "1"

LEVELS = ("behaviour_degeneracy_ood", "dynamics_degeneracy", "weight_degeneracy")
LEVEL_NAMES = ("behaviour", "dynamics", "weights")
#: task -> (complexity knob, [low, high] complexity, base options, small-size options)
TASKS = {
    "flipflop": ("n_bits", [2, 3], {"n_steps": 32}, {"n_steps": 12}),
    "sine_wave": ("n_frequencies", [2, 4], {"duration_ms": 300.0}, {"duration_ms": 120.0}),
    "romo": ("delta_f", [8.0, 4.0], {"fixation_ms": 100.0, "stimulus_ms": 100.0, "delay_min_ms": 100.0,
                                     "delay_max_ms": 300.0, "decision_ms": 100.0},
             {"fixation_ms": 40.0, "stimulus_ms": 40.0, "delay_min_ms": 40.0, "delay_max_ms": 80.0,
              "decision_ms": 40.0, "grace_ms": 20.0}),
    "path_integration": ("n_dims", [1, 2], {}, {"duration_ms": 200.0}),
}
#: factor -> (grid key, [low, high]); the complexity key depends on the task, the sizes on the page's size
FACTORS = {
    "complexity": None,
    "feature_learning": ("model.output_scale", ["lazy", "rich"]),
    "size": ("model.n_units", [16, 64] if full else [4, 8]),
    "regularisation": ("training.l1_weight", [0.0, 1e-3]),
}
#: the sweeps run at the small size: (task, factor)
SMALL = (("flipflop", "complexity"), ("romo", "size"))
#: the paper's direction of each factor's effect per level (-1 reduces degeneracy, +1 increases, 0 mixed)
PAPER = {"complexity": (0, -1, 1), "feature_learning": (0, -1, 1), "size": (-1, -1, -1),
         "regularisation": (-1, -1, -1)}
ARROW = {-1: "↓", 1: "↑", 0: "mixed", None: "?"}


def spec_for(task: str, factor: str) -> dict:
    """The sweep of one task and one factor: two levels of the factor × ``seeds`` seeds."""
    knob, complexity, base, small = TASKS[task]
    key, values = (f"task.{knob}", complexity) if factor == "complexity" else FACTORS[factor]
    model = {"alpha": 1.0 if task == "flipflop" else 0.5, "n_units": 32 if full else 6}
    if key == "model.n_units":
        del model["n_units"]
    return {
        "task": {"name": task, **(base if full else small)},
        "model": model,
        "training": {"n_iterations": n_iterations, "batch_size": 32 if full else 8, "lr": 1e-2,
                     "eval_every": 0},
        "analysis": {"n_trials": 16 if full else 8, "n_inits": 16 if full else 8,
                     "max_iters": 200 if full else 50, "graph": False, "dynamics_metric": dynamics_metric},
        "grid": {key: values},
        "seeds": seeds,
    }


@contextlib.contextmanager
def local_cluster(n_workers: int | None):
    """The address of one local Dask cluster for all sweeps (None when ``n_workers`` is 0: serially)."""
    if n_workers == 0:
        yield None
        return
    from distributed import LocalCluster

    with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster:
        yield cluster.scheduler_address


# %% [markdown]
# ## The sweeps
#
# Factor by factor (so an interrupted run has whole factors), one sweep per task; each sweep's dataset
# gives, per grid cell, the three levels and their untrained baselines, and per network the loss in and
# out of distribution.

# %%
tasks, factors = list(TASKS), list(FACTORS)
shape = (len(tasks), len(factors), 2, len(LEVELS))  # (task, factor, low/high level of the factor, level)
trained, untrained = np.full(shape, np.nan), np.full(shape, np.nan)
losses: dict[str, list[np.ndarray]] = {t: [] for t in tasks}  # (network, [ID, OOD]) per sweep
ran = np.zeros((len(tasks), len(factors)), bool)
network_seconds = 0.0
t0 = time.perf_counter()
with local_cluster(0 if summarise_only else workers) as address:
    for j, factor in enumerate(factors):
        for i, task in enumerate(tasks):
            if not full and (task, factor) not in SMALL:
                continue
            folder = out / f"{task}-{factor}"
            if summarise_only:
                if not (folder / "sweep.nc").exists():
                    continue
                ds = load(folder / "sweep.nc").dataset
            else:
                mode = {"scheduler": address} if address else {"workers": 0}
                ds = run_sweep(spec_for(task, factor), folder, progress=full, **mode).dataset
            ran[i, j] = True
            network_seconds += float(ds["train_seconds"].sum() + ds["analysis_seconds"].sum())
            for k, level in enumerate(LEVELS):  # one grid dim, the factor's low level first
                trained[i, j, :, k] = ds[level].values
                untrained[i, j, :, k] = ds[f"baseline_{level}"].values
            losses[task].append(np.c_[ds["id_loss"].values.ravel(), ds["ood_loss"].values.ravel()])
seconds = time.perf_counter() - t0
if not ran.any():  # only possible with NEURODYN_SUMMARISE_ONLY=1: nothing to summarise
    raise FileNotFoundError(f"nothing to summarise: no finished sweep in {out} (no <task>-<factor>/sweep.nc);"
                            " run the sweeps there first (without --summarise-only)")

# %% [markdown]
# ## Each factor's effect
#
# For every task, factor and level of description, log(degeneracy at the factor's high level / at its
# low level): below 0 the factor reduces degeneracy. The same ratio of the untrained networks is taken
# away in the "vs untrained" columns.

# %%
loss = np.array([np.nanmean(np.concatenate(losses[t]), axis=0) if losses[t] else [np.nan, np.nan]
                 for t in tasks])  # mean ID and OOD loss over every trained network of the task
with np.errstate(divide="ignore", invalid="ignore"):
    change = np.log(trained[:, :, 1] / trained[:, :, 0])
    relative = change - np.log(untrained[:, :, 1] / untrained[:, :, 0])
n_sweeps = int(ran.sum())
scale = {"tiny": not full, "tasks": tasks, "factors": factors, "levels_per_factor": 2, "seeds": seeds,
         "n_iterations": n_iterations, "dynamics_metric": dynamics_metric, "n_sweeps": n_sweeps,
         "n_networks": n_sweeps * 2 * seeds, "network_seconds": round(network_seconds),
         "seconds": round(seconds, 1)}
dims = ("task", "factor", "factor_level", "level")
summary = xr.Dataset(
    {"degeneracy": (dims, trained), "baseline_degeneracy": (dims, untrained),
     "log_ratio": (dims[:2] + dims[3:], change), "log_ratio_vs_untrained": (dims[:2] + dims[3:], relative),
     "id_loss": ("task", loss[:, 0]), "ood_loss": ("task", loss[:, 1])},
    coords={"task": tasks, "factor": factors, "factor_level": ["low", "high"], "level": list(LEVEL_NAMES)},
    attrs={"scale": json.dumps(scale), "reference": "Huang, Singh, Martinelli & Rajan (2025), NeurIPS"})


def sign(v: float) -> int | None:
    return int(np.sign(v)) if np.isfinite(v) else None


n_tasks, n_factors = int(ran.any(axis=1).sum()), int(ran.any(axis=0).sum())  # those of the sweeps run
lines = [f"Scale: {n_sweeps} sweeps ({n_tasks} tasks, {n_factors} factors), 2 levels × {seeds} seeds = "
         f"{scale['n_networks']} networks, {n_iterations} training iterations{'' if full else ' (tiny)'}, "
         f"dynamics by {dynamics_metric}, {seconds:.0f} s wall, {scale['network_seconds']} s summed over "
         "networks.", "",
         "| factor | level | paper | neurodyn (per task) | agree | vs untrained (per task) | agree |",
         "|---|---|---|---|---|---|---|"]
for j, factor in enumerate(factors):
    done = np.flatnonzero(ran[:, j])  # the sweeps run for this factor
    for k, level in enumerate(LEVEL_NAMES if done.size else ()):
        paper, cols = PAPER[factor][k], []
        for values in (change[done, j, k], relative[done, j, k]):
            ours = [sign(v) for v in values]
            agree = "n/a" if paper == 0 else f"{sum(o == paper for o in ours)}/{len(ours)}"
            cols += [", ".join(f"{tasks[i]} {ARROW[o]}" for i, o in zip(done, ours)), agree]
        lines.append(f"| {factor} | {level} | {ARROW[paper]} | {' | '.join(cols)} |")
lines += ["", "| task | mean ID loss | mean OOD loss | OOD harder |", "|---|---|---|---|"]
for t, (id_loss, ood_loss) in zip(tasks, loss):
    if np.isfinite(id_loss):
        lines.append(f"| {t} | {id_loss:.3g} | {ood_loss:.3g} | {'yes' if ood_loss > id_loss else 'no'} |")
table = "\n".join(lines) + "\n"
print(table)

# %% [markdown]
# ## The figure
#
# The paper's layout: one panel per level of description, the factor on the x-axis, one line per task.

# %%
fig, axes = plt.subplots(1, 3, figsize=(13, 3.6), layout="constrained", sharey=True)
for k, (ax, name) in enumerate(zip(axes, LEVEL_NAMES)):
    for i, task in enumerate(tasks):
        ax.plot(range(len(factors)), change[i, :, k], "o-", label=task)
    ax.axhline(0, color="0.6", lw=0.8)
    ax.set_xticks(range(len(factors)), factors, rotation=20)
    ax.set_title(name)
axes[0].set_ylabel("log(degeneracy high / low)")
axes[-1].legend(frameon=False, fontsize=8)
plt.show()
