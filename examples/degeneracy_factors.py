"""Solution degeneracy across task complexity, feature learning, size and regularisation (Huang et al. 2025).

Usage: python examples/degeneracy_factors.py [--tiny] [--out-dir runs/example_degeneracy_factors]
                                             [--workers N] [--seeds S] [--n-iterations I]

Four tasks (flip-flop, sine generation, delayed discrimination, path integration) × four factors (the
task's complexity knob, feature learning through the readout scale ``output_scale`` lazy → rich,
``n_units``, L1 weight regularisation) × two levels of each factor × seeds. For every task and factor
one sweep (neurodyn.sweep) varies that factor alone, everything else at its base value, on one local
Dask cluster shared by all sweeps (``--workers 0``: serially, in this process). Degeneracy is measured
per grid cell at three levels of description: behaviour (standard deviation across seeds of the
out-of-distribution task loss, ``task.ood()``), dynamics (mean pairwise DSA distance of the hidden-state
trajectories, ``--dynamics-metric``; Procrustes with ``--tiny``) and weights (mean permutation-invariant
distance of the
recurrent weights), each beside the same measure for the same networks untrained (their initial weights).

The figure has the paper's layout: one panel per level of description, the factor on the x-axis, one line
per task; the y-axis is log(degeneracy at the factor's high level / at its low level), so a point below 0
means the factor reduces degeneracy. ``table.md`` sets the paper's direction beside neurodyn's for each
factor and level (raw, and relative to the untrained baseline) and checks, per task, that the OOD batch is
harder than the training distribution. Writes, under --out-dir: one sweep folder per task and factor (with
its sweep.nc), factors.nc, factors.png and table.md; ``--summarise-only`` rewrites the last three from
the sweeps finished so far (the others left out). Uses only the public API.

``--tiny`` checks the plumbing in four sweeps, each task with one factor (flip-flop × complexity, sine
× feature learning, delayed discrimination × size, path integration × regularisation), 2 levels × 2 seeds
of 4-8-unit networks trained for 10 iterations; its directions say nothing about the paper's claims.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import xarray as xr  # noqa: E402

from neurodyn.io import load  # noqa: E402
from neurodyn.sweep import run_sweep  # noqa: E402

LEVELS = ("behaviour_degeneracy_ood", "dynamics_degeneracy", "weight_degeneracy")
LEVEL_NAMES = ("behaviour", "dynamics", "weights")
#: task -> (complexity knob, [low, high] complexity, base options, tiny options)
TASKS = {
    "flipflop": ("n_bits", [2, 3], {"n_steps": 32}, {"n_steps": 12}),
    "sine_wave": ("n_frequencies", [2, 4], {"duration_ms": 300.0}, {"duration_ms": 120.0}),
    "romo": ("delta_f", [8.0, 4.0], {"fixation_ms": 100.0, "stimulus_ms": 100.0, "delay_min_ms": 100.0,
                                     "delay_max_ms": 300.0, "decision_ms": 100.0},
             {"fixation_ms": 40.0, "stimulus_ms": 40.0, "delay_min_ms": 40.0, "delay_max_ms": 80.0,
              "decision_ms": 40.0, "grace_ms": 20.0}),
    "path_integration": ("n_dims", [1, 2], {}, {"duration_ms": 200.0}),
}
#: factor -> (grid key, [low, high]); the complexity key depends on the task, the size values on --tiny
FACTORS = {
    "complexity": None,
    "feature_learning": ("model.output_scale", ["lazy", "rich"]),
    "size": ("model.n_units", [16, 64]),
    "regularisation": ("training.l1_weight", [0.0, 1e-3]),
}
#: the paper's direction of each factor's effect per level (-1 reduces degeneracy, +1 increases, 0 mixed)
PAPER = {"complexity": (0, -1, 1), "feature_learning": (0, -1, 1), "size": (-1, -1, -1),
         "regularisation": (-1, -1, -1)}
ARROW = {-1: "↓", 1: "↑", 0: "mixed", None: "?"}


def spec_for(task: str, factor: str, *, tiny: bool, seeds: int, n_iterations: int,
             dynamics_metric: str = "dsa") -> dict:
    """The sweep of one task and one factor: two levels of the factor × ``seeds`` seeds."""
    knob, complexity, base, small = TASKS[task]
    key, values = (f"task.{knob}", complexity) if factor == "complexity" else FACTORS[factor]
    if factor == "size" and tiny:
        values = [4, 8]
    model = {"alpha": 1.0 if task == "flipflop" else 0.5, "n_units": 6 if tiny else 32}
    if key == "model.n_units":
        del model["n_units"]
    return {
        "task": {"name": task, **(small if tiny else base)},
        "model": model,
        "training": {"n_iterations": n_iterations, "batch_size": 8 if tiny else 32, "lr": 1e-2,
                     "eval_every": 0},
        "analysis": {"n_trials": 8 if tiny else 16, "n_inits": 8 if tiny else 16,
                     "max_iters": 50 if tiny else 200, "graph": False,
                     "dynamics_metric": "procrustes" if tiny else dynamics_metric},
        "grid": {key: values},
        "seeds": seeds,
    }


@contextlib.contextmanager
def local_cluster(workers: int | None):
    """The address of one local Dask cluster for all sweeps (None: run serially)."""
    if workers == 0:
        yield None
        return
    from distributed import LocalCluster

    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster:
        yield cluster.scheduler_address


def main(tiny: bool = False, out_dir: str = "runs/example_degeneracy_factors", workers: int | None = None,
         seeds: int | None = None, n_iterations: int | None = None, dynamics_metric: str = "dsa",
         summarise_only: bool = False) -> dict:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    seeds = seeds or (2 if tiny else 4)
    n_iterations = n_iterations or (10 if tiny else 400)
    tasks, factors = list(TASKS), list(FACTORS)
    shape = (len(tasks), len(factors), 2, len(LEVELS))
    trained, untrained = np.full(shape, np.nan), np.full(shape, np.nan)
    losses: dict[str, list[np.ndarray]] = {t: [] for t in tasks}  # (network, [ID, OOD]) per sweep
    ran = np.zeros((len(tasks), len(factors)), bool)
    network_seconds = 0.0
    t0 = time.perf_counter()
    with local_cluster(0 if tiny and workers is None or summarise_only else workers) as address:
        for j, factor in enumerate(factors):  # factor by factor: an interrupted run has whole factors
            for i, task in enumerate(tasks):
                if tiny and i != j:  # the tiny run: one factor per task
                    continue
                spec = spec_for(task, factor, tiny=tiny, seeds=seeds, n_iterations=n_iterations,
                                dynamics_metric=dynamics_metric)
                folder = out / f"{task}-{factor}"
                if summarise_only:
                    if not (folder / "sweep.nc").exists():
                        continue
                    ds = load(folder / "sweep.nc").dataset
                else:
                    mode = {"scheduler": address} if address else {"workers": 0}
                    ds = run_sweep(spec, folder, progress=not tiny, **mode).dataset
                ran[i, j] = True
                network_seconds += float(ds["train_seconds"].sum() + ds["analysis_seconds"].sum())
                for k, level in enumerate(LEVELS):  # one grid dim, the factor's low level first
                    trained[i, j, :, k] = ds[level].values
                    untrained[i, j, :, k] = ds[f"baseline_{level}"].values
                losses[task].append(np.c_[ds["id_loss"].values.ravel(), ds["ood_loss"].values.ravel()])
    seconds = time.perf_counter() - t0
    loss = np.array([np.nanmean(np.concatenate(losses[t]), axis=0) if losses[t] else [np.nan, np.nan]
                     for t in tasks])  # mean ID and OOD loss over every trained network of the task
    with np.errstate(divide="ignore", invalid="ignore"):
        change = np.log(trained[:, :, 1] / trained[:, :, 0])
        relative = change - np.log(untrained[:, :, 1] / untrained[:, :, 0])
    n_sweeps = int(ran.sum())
    scale = {"tiny": tiny, "tasks": tasks, "factors": factors, "levels_per_factor": 2, "seeds": seeds,
             "n_iterations": n_iterations, "dynamics_metric": "procrustes" if tiny else dynamics_metric,
             "n_sweeps": n_sweeps,
             "n_networks": n_sweeps * 2 * seeds, "network_seconds": round(network_seconds),
             "seconds": round(seconds, 1)}
    dims = ("task", "factor", "factor_level", "level")
    summary = xr.Dataset(
        {"degeneracy": (dims, trained), "baseline_degeneracy": (dims, untrained),
         "log_ratio": (dims[:2] + dims[3:], change),
         "log_ratio_vs_untrained": (dims[:2] + dims[3:], relative),
         "id_loss": ("task", loss[:, 0]), "ood_loss": ("task", loss[:, 1])},
        coords={"task": tasks, "factor": factors, "factor_level": ["low", "high"],
                "level": list(LEVEL_NAMES)},
        attrs={"scale": json.dumps(scale),
               "reference": "Huang, Singh, Martinelli & Rajan (2025), NeurIPS"})
    summary.to_netcdf(out / "factors.nc", engine="h5netcdf")
    plot(change, tasks, factors, out / "factors.png")
    table = write_table(change, relative, loss, ran, tasks, factors, scale)
    (out / "table.md").write_text(table)
    print(table)
    return {"tasks": tasks, "factors": factors, "log_ratio": change, "log_ratio_vs_untrained": relative,
            "loss": loss, "seconds": seconds}


def plot(change: np.ndarray, tasks: list[str], factors: list[str], path: Path) -> None:
    """One panel per level of description, the factor on the x-axis, one line per task."""
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6), layout="constrained", sharey=True)
    for k, (ax, name) in enumerate(zip(axes, LEVEL_NAMES)):
        for i, task in enumerate(tasks):
            ax.plot(range(len(factors)), change[i, :, k], "o-", label=task)
        ax.axhline(0, color="0.6", lw=0.8)
        ax.set_xticks(range(len(factors)), factors, rotation=20)
        ax.set_title(name)
    axes[0].set_ylabel("log(degeneracy high / low)")
    axes[-1].legend(frameon=False, fontsize=8)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _sign(v: float) -> int | None:
    return int(np.sign(v)) if np.isfinite(v) else None


def write_table(change, relative, loss, ran, tasks, factors, scale) -> str:
    """Markdown: the paper's direction vs neurodyn's per factor and level, then ID vs OOD loss per task
    (mean over every trained network of the task)."""
    lines = [f"Scale: {scale['n_sweeps']} sweeps ({len(tasks)} tasks, {len(factors)} factors), 2 levels × "
             f"{scale['seeds']} seeds = {scale['n_networks']} networks, "
             f"{scale['n_iterations']} training iterations"
             f"{' (tiny)' if scale['tiny'] else ''}, dynamics by {scale['dynamics_metric']}, "
             f"{scale['seconds']:.0f} s wall, {scale['network_seconds']} s summed over networks.", "",
             "| factor | level | paper | neurodyn (per task) | agree | vs untrained (per task) | agree |",
             "|---|---|---|---|---|---|---|"]
    for j, factor in enumerate(factors):
        for k, level in enumerate(LEVEL_NAMES):
            paper = PAPER[factor][k]
            cols = []
            done = np.flatnonzero(ran[:, j])  # the sweeps run for this factor
            for values in (change[done, j, k], relative[done, j, k]):
                ours = [_sign(v) for v in values]
                agree = "n/a" if paper == 0 else f"{sum(o == paper for o in ours)}/{len(ours)}"
                cols += [", ".join(f"{tasks[i]} {ARROW[o]}" for i, o in zip(done, ours)), agree]
            lines.append(f"| {factor} | {level} | {ARROW[paper]} | {' | '.join(cols)} |")
    lines += ["", "| task | mean ID loss | mean OOD loss | OOD harder |", "|---|---|---|---|"]
    for t, (id_loss, ood_loss) in zip(tasks, loss):
        if np.isfinite(id_loss):
            harder = "yes" if ood_loss > id_loss else "no"
            lines.append(f"| {t} | {id_loss:.3g} | {ood_loss:.3g} | {harder} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="2 seeds of 4-8-unit networks, 10 iterations")
    parser.add_argument("--out-dir", default="runs/example_degeneracy_factors")
    parser.add_argument("--workers", type=int, default=None,
                        help="Dask workers (default: the CPU count; with --tiny 0, serial)")
    parser.add_argument("--seeds", type=int, default=None, help="seeds per cell (default 4; --tiny 2)")
    parser.add_argument("--n-iterations", type=int, default=None, help="default 400; --tiny 10")
    parser.add_argument("--dynamics-metric", default="dsa",
                        help="pairwise dynamics distance (--tiny: procrustes)")
    parser.add_argument("--summarise-only", action="store_true",
                        help="table and figure from the sweeps finished under --out-dir; train nothing")
    args = parser.parse_args()
    main(tiny=args.tiny, out_dir=args.out_dir, workers=args.workers, seeds=args.seeds,
         n_iterations=args.n_iterations, dynamics_metric=args.dynamics_metric,
         summarise_only=args.summarise_only)
