"""Benchmark of sweeps: networks per second serially and on a local Dask cluster of 1 and 2 workers,
and a plan for the 3,400-network degeneracy study (Huang et al. 2025) on a SLURM cluster.

The benchmark sweep: flip-flop networks (``--n-bits`` bits, 32 steps) of ``--n-units`` leaky tanh
units, ``--n-iterations`` training iterations (batch 32, lr 1e-2), fixed points from 64 starts, a grid
of two ``l2_rate`` values × ``--seeds`` seeds. Each run starts from an empty output folder; its wall
time covers training, the per-network analyses (task metrics, fixed points, degeneracy features of
the trained and untrained network), the per-cell degeneracy and writing ``sweep.nc``. The local Dask
cluster is started before the clock starts (its start-up is recorded apart), and the 1- and 2-worker
runs alternate ``--repeats`` times in this one process, side by side; the load average of the machine
is recorded before and after each run, since on a shared machine it decides what 2 workers can gain.
The plan calibrates a study-sized network (``--plan-units`` units, ``--plan-iterations`` iterations,
3-bit flip-flop, the analyses' defaults) with
:func:`neurodyn.sweep.estimate_sweep` and scales it to ``--plan-networks`` networks. Run from the
repository root:

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_sweep.py [--quick] [--repeats 2]

Writes a JSON file (``--out``, default ``benchmarks/results/sweep.json``) and prints the plan.
"""

from __future__ import annotations

import math
import os
import platform
import tempfile
import time
from pathlib import Path

from _record import bench_parser, write_json


def bench_spec(n_units: int, n_bits: int, n_iterations: int, seeds: int) -> dict:
    return {
        "task": {"name": "flipflop", "n_bits": n_bits, "n_steps": 32},
        "model": {"n_units": n_units, "alpha": 1.0},
        "training": {"n_iterations": n_iterations, "batch_size": 32, "lr": 1e-2, "eval_every": 0},
        "analysis": {"n_trials": 32, "n_inits": 64, "max_iters": 500, "dynamics_metric": "procrustes"},
        "grid": {"training.l2_rate": [0.0, 1e-3]},
        "seeds": seeds,
    }


def study_spec(n_units: int, n_iterations: int) -> dict:
    return {
        "task": {"name": "flipflop", "n_bits": 3, "n_steps": 64},
        "model": {"n_units": n_units, "alpha": 1.0},
        "training": {"n_iterations": n_iterations, "batch_size": 64, "lr": 1e-2},
        "grid": {"training.l2_rate": [0.0, 1e-3]},
        "seeds": 1,
    }


def one_run(spec: dict, workers: int, n_items: int, run_sweep) -> dict:
    """One sweep from an empty folder: serially (0) or on a local cluster started before the clock."""
    import contextlib

    with tempfile.TemporaryDirectory() as out, contextlib.ExitStack() as stack:
        t0 = time.perf_counter()
        mode: dict = {"workers": 0}
        if workers:
            from distributed import LocalCluster

            cluster = stack.enter_context(LocalCluster(n_workers=workers, threads_per_worker=1,
                                                       processes=True, dashboard_address=None))
            mode = {"scheduler": cluster.scheduler_address}
        start = time.perf_counter() - t0
        load_before = os.getloadavg()
        t0 = time.perf_counter()
        result = run_sweep(spec, Path(out) / "sweep", progress=False, **mode)
        wall = time.perf_counter() - t0
    return {"workers": workers, "n_items": n_items, "cluster_start_seconds": start, "wall_seconds": wall,
            "items_per_second": n_items / wall, "n_failed": result.n_failed,
            "load_before": load_before, "load_after": os.getloadavg(),
            "mean_train_seconds": float(result.dataset["train_seconds"].mean()),
            "mean_analysis_seconds": float(result.dataset["analysis_seconds"].mean())}


def main() -> int:
    parser = bench_parser(__doc__, quick="8 units, 30 iterations, 2 seeds",
                          repeats=(1, "alternating rounds of the worker counts"), out="sweep.json")
    parser.add_argument("--n-units", type=int, default=32)
    parser.add_argument("--n-bits", type=int, default=2)
    parser.add_argument("--n-iterations", type=int, default=200)
    parser.add_argument("--seeds", type=int, default=4, help="seeds per grid value (items = 2 × seeds)")
    parser.add_argument("--workers", default="1,2", help="comma-separated worker counts (0: serial)")
    parser.add_argument("--plan-networks", type=int, default=3400)
    parser.add_argument("--plan-units", type=int, default=128)
    parser.add_argument("--plan-iterations", type=int, default=2000)
    parser.add_argument("--plan-workers", type=int, default=200, help="SLURM workers (one core each)")
    args = parser.parse_args()

    from neurodyn import __version__
    from neurodyn.sweep import estimate_sweep, run_sweep

    if args.quick:
        args.n_units, args.n_iterations, args.seeds = 8, 30, 2
    spec = bench_spec(args.n_units, args.n_bits, args.n_iterations, args.seeds)
    n_items = 2 * args.seeds
    rows = []
    print(f"{'workers':>8}{'items':>7}{'start s':>9}{'wall s':>9}{'items/s':>9}{'load':>7}")
    for _ in range(args.repeats):
        for w in [int(v) for v in args.workers.split(",")]:
            rows.append(one_run(spec, w, n_items, run_sweep))
            r = rows[-1]
            print(f"{w:>8}{n_items:>7}{r['cluster_start_seconds']:>9.1f}{r['wall_seconds']:>9.1f}"
                  f"{r['items_per_second']:>9.3f}{r['load_before'][0]:>7.1f}")
    rates: dict[int, list[float]] = {}
    for r in rows:
        rates.setdefault(r["workers"], []).append(r["items_per_second"])
    speedup = (sum(rates[2]) / len(rates[2])) / (sum(rates[1]) / len(rates[1])) if 1 in rates and 2 in rates \
        else None
    if speedup is not None:
        print(f"2 workers / 1 worker: {speedup:.2f}x items per second")

    record = {"neurodyn": __version__, "machine": platform.platform(), "cpus": os.cpu_count(),
              "spec": spec, "runs": rows, "speedup_2_over_1_workers": speedup,
              "note": "wall times on a shared machine (see each run's load average); items/s excludes the "
                      "cluster's start-up (cluster_start_seconds)"}
    write_json(record, args.out, quiet=True)  # kept if the calibration is interrupted

    est = estimate_sweep(study_spec(args.plan_units, args.plan_iterations), workers=args.plan_workers)
    per = est["seconds_per_item"]
    core_hours = per * args.plan_networks / 3600
    wall_hours = per * -(-args.plan_networks // args.plan_workers) / 3600
    walltime = f"{max(4, math.ceil(2 * wall_hours)):02d}:00:00"  # room for the slowest worker's share
    command = (f"neurodyn sweep study.toml --out /scratch/$USER/degeneracy --cluster slurm "
               f"--workers {args.plan_workers}")
    plan = {
        "n_networks": args.plan_networks, "n_units": args.plan_units, "n_iterations": args.plan_iterations,
        "seconds_per_network_one_core": per, "train_seconds": est["train_seconds_per_item"],
        "analysis_seconds": est["analysis_seconds_per_item"], "core_hours": core_hours,
        "workers": args.plan_workers, "wall_hours": wall_hours, "command": command,
        "dask_config": {"jobqueue": {"slurm": {"cores": 1, "processes": 1, "memory": "2GB",
                                               "walltime": walltime}}},
    }
    print(f"\nplan: {args.plan_networks} networks of {args.plan_units} units × {args.plan_iterations} "
          f"iterations, {per:.1f} s each on one core (measured here, extrapolated from a calibration run)")
    print(f"  {core_hours:.0f} core-hours; about {wall_hours:.1f} h on {args.plan_workers} one-core SLURM "
          "workers (plus queueing); per-cell degeneracy runs after its networks")
    print("  ~/.config/dask/jobqueue.yaml:  jobqueue: {slurm: {cores: 1, processes: 1, memory: 2GB, "
          f"walltime: '{walltime}'}}}}")
    print(f"  {command}")
    print("  (an interrupted run resumes with the same command; finished networks are skipped)")
    record.update(plan=plan, plan_load_average=os.getloadavg())
    write_json(record, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
