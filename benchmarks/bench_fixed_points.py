"""Benchmark of the fixed-point search: batched per-candidate methods vs a Python loop vs joint Adam.

Network: a ``LeakyRNN(3, 128, 3)`` (tanh, ``alpha`` 1.0 by default) trained on the 3-bit flip-flop
(``neurodyn.train``, lr 1e-2, batch 64, stopped at held-out accuracy 1.0 or ``--train-iters``), so
the map is multistable with 8 stable fixed points and many saddles. Initial states: 4,096 states
sampled from noise-free task rollouts plus N(0, 0.1²) noise; constant input u* = 0; float64.

Methods, all with the defaults of ``find_fixed_points`` (tol_q 1e-12, tol_dq 1e-20, max_iters 5000,
lr_init 1.0):

* ``levenberg_marquardt`` and ``gradient`` — one batched tensor, per-candidate step sizes and
  stopping (``find_fixed_points``'s per-candidate methods);
* ``loop:<method>`` — the same method run on one candidate at a time in a Python loop; only
  ``--loop-subset`` candidates are timed and the wall time is extrapolated linearly to all of them
  (``time × n_inits / subset``), iterations are those of the subset;
* ``joint`` — FixedPointFinder's scheme: Adam on the mean q of all candidates, one adaptive rate.

Timed is the minimisation only (identical post-processing — de-duplication, Jacobians — excluded);
"converged" is the fraction of candidates that reached q < tol_q. Run from the repository root:

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_fixed_points.py [--quick]

Writes a JSON file (``--out``, default ``benchmarks/results/fixed_points.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np
import torch

from neurodyn import __version__, train
from neurodyn.analysis import find_fixed_points
from neurodyn.analysis.fixed_points import _init as _fp_init
from neurodyn.analysis.fixed_points._newton import METHODS
from neurodyn.models import LeakyRNN
from neurodyn.tasks import FlipFlop
from neurodyn.training import evaluate

DEFAULTS = dict(tol_q=1e-12, tol_dq=1e-20, max_iters=5000, lr_init=1.0)


def trained_network(n_units: int, alpha: float, train_iters: int, seed: int):
    task = FlipFlop(n_bits=3, n_steps=64, p_pulse=0.1)
    t0 = time.perf_counter()
    result = train(LeakyRNN(3, n_units, 3, alpha=alpha, seed=seed), task, n_iterations=train_iters,
                   batch_size=64, lr=1e-2, eval_every=25, target_metric=("accuracy", 1.0),
                   progress=False, seed=seed)
    info = {"train_seconds": time.perf_counter() - t0,
            "train_iterations": result.config["iterations_run"],
            "accuracy": evaluate(result.model, task, n_trials=256, seed=99)["accuracy"]}
    return result.model, task, info


def run(args) -> dict:
    torch.manual_seed(0)
    model, task, info = trained_network(args.n_units, args.alpha, args.train_iters, args.seed)
    print(f"trained LeakyRNN(3, {args.n_units}, 3), alpha {args.alpha}: {info}")
    shell = model.double().eval().requires_grad_(False)
    pool = _fp_init.task_states(shell, task, args.seed, "cpu", torch.float64).reshape(-1, args.n_units)
    x0 = torch.as_tensor(_fp_init.sample_states(pool, args.n_inits, 0.1, args.seed))
    u = torch.zeros(1, 3, dtype=torch.float64)

    def G(h):
        return shell.step(h, u.expand(h.shape[0], -1))

    rows = []
    for name in args.methods:
        if name.startswith("loop:"):
            method = name.split(":", 1)[1]
            sub = x0[: args.loop_subset]
            t0 = time.perf_counter()
            parts = [METHODS[method](G, sub[i:i + 1], **DEFAULTS) for i in range(sub.shape[0])]
            seconds = (time.perf_counter() - t0) * x0.shape[0] / sub.shape[0]
            iters = torch.cat([p.iterations for p in parts]).numpy()
            conv = torch.cat([p.converged for p in parts]).numpy()
            timed = sub.shape[0]
        else:
            t0 = time.perf_counter()
            found = METHODS[name](G, x0, **DEFAULTS)
            seconds = time.perf_counter() - t0
            iters, conv, timed = found.iterations.numpy(), found.converged.numpy(), x0.shape[0]
        row = {"method": name, "seconds": seconds, "extrapolated": name.startswith("loop:"),
               "candidates_timed": timed, "converged_fraction": float(conv.mean()),
               "iterations_median": float(np.median(iters)), "iterations_max": int(iters.max())}
        rows.append(row)
        print(f"  {name:<28} {seconds:10.1f} s  converged {row['converged_fraction']:.3f}  "
              f"iterations median {row['iterations_median']:.0f} max {row['iterations_max']}")
    res = find_fixed_points(model, initial_states=x0.numpy(), n_inits=args.n_inits, seed=args.seed)
    counts = {label: int(((res.stability == label) & res.converged & (res.order == 1)).sum())
              for label in ("stable", "saddle", "unstable", "marginal")}
    print(res.summary())
    return {"benchmark": "fixed_points", "n_inits": args.n_inits, "n_units": args.n_units,
            "alpha": args.alpha, "network": info, "settings": DEFAULTS, "results": rows,
            "default_method_counts": counts, "default_method": res.attrs["method"],
            "neurodyn_version": __version__, "torch_version": torch.__version__,
            "torch_threads": torch.get_num_threads(), "machine": platform.processor() or platform.machine(),
            "load_average_at_end": os.getloadavg()}


def print_table(report: dict) -> None:
    """Wall time, ratio to the fastest method, iterations; then the speed-up from batching."""
    rows = report["results"]
    fastest = min(r["seconds"] for r in rows)
    seconds = {r["method"]: r["seconds"] for r in rows}
    print(f"\n{report['n_inits']} initial states, {report['n_units']} units, alpha {report['alpha']}")
    print(f"{'method':<30}{'wall s':>10}{'× fastest':>11}{'conv.':>8}{'it. median':>12}{'it. max':>9}")
    for r in rows:
        mark = "*" if r["extrapolated"] else " "
        print(f"{r['method']:<30}{r['seconds']:>9.1f}{mark}{r['seconds'] / fastest:>11.1f}"
              f"{r['converged_fraction']:>8.3f}{r['iterations_median']:>12.0f}{r['iterations_max']:>9d}")
    print("* extrapolated from a timed subset")
    for name, t in seconds.items():
        if name.startswith("loop:") and name[5:] in seconds:
            print(f"batching speed-up, {name[5:]}: {t / seconds[name[5:]]:.1f}× (Python loop / batched)")
    if "joint" in seconds:
        for name in ("gradient", "levenberg_marquardt"):
            if name in seconds:
                print(f"joint / {name}: {seconds['joint'] / seconds[name]:.1f}×")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-inits", type=int, default=4096)
    parser.add_argument("--n-units", type=int, default=128)
    parser.add_argument("--alpha", type=float, default=1.0)
    parser.add_argument("--train-iters", type=int, default=600)
    parser.add_argument("--loop-subset", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--methods", nargs="+", default=[
        "levenberg_marquardt", "gradient", "joint", "loop:levenberg_marquardt", "loop:gradient"])
    parser.add_argument("--quick", action="store_true", help="256 states, 32 units, subset 4")
    parser.add_argument("--out", default="benchmarks/results/fixed_points.json")
    parser.add_argument("--table", default=None, help="only print the table of a saved JSON file")
    args = parser.parse_args()
    if args.table:
        print_table(json.loads(Path(args.table).read_text()))
        return
    if args.quick:
        args.n_inits, args.n_units, args.loop_subset = 256, 32, 4
    report = run(args)
    print_table(report)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
