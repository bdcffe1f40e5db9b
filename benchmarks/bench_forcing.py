"""Cost of a forced training step relative to a plain BPTT step (ratios measured side by side).

Trains a leaky RNN on delayed XOR for ``--iterations`` iterations per call with each method (plain BPTT,
error-forcing BPTT, teacher-forcing BPTT, RFLO, error-forcing RFLO), interleaving the methods over
``--repeats`` rounds in one process, and reports the median seconds per iteration and its ratio to plain
BPTT (the reference, measured in the same rounds). Each method runs once before timing (imports, allocator).

    OMP_NUM_THREADS=1 python benchmarks/bench_forcing.py --json benchmarks/results/forcing.json
    OMP_NUM_THREADS=1 python benchmarks/bench_forcing.py --quick
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time

import torch

import neurodyn
from neurodyn.models import LeakyRNN
from neurodyn.tasks import DelayedXOR
from neurodyn.training import train

#: label → keywords of :func:`neurodyn.training.train`; the first is the reference
METHODS = {
    "BPTT": {},
    "EF-BPTT": {"forcing": "error"},
    "TF-BPTT": {"forcing": "teacher"},
    "RFLO": {"learning_rule": "rflo"},
    "EF-RFLO": {"forcing": "error", "learning_rule": "rflo"},
}


def seconds_per_iteration(task, n_units: int, batch_size: int, n_iterations: int, options: dict) -> float:
    model = LeakyRNN(task.n_inputs, n_units, task.n_outputs, alpha=0.2, seed=0)
    t0 = time.perf_counter()
    result = train(model, task, n_iterations=n_iterations, batch_size=batch_size, lr=1e-3, eval_every=0,
                   progress=False, seed=0, **options)
    assert result.status == "completed"
    return (time.perf_counter() - t0) / n_iterations


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="16 units, 3 rounds")
    p.add_argument("--n-units", type=int, default=64)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--delay-ms", type=float, default=200.0)
    p.add_argument("--iterations", type=int, default=10, help="iterations per timed call")
    p.add_argument("--repeats", type=int, default=5, help="interleaved rounds (medians are reported)")
    p.add_argument("--json", default=None, help="also write the results to this file")
    args = p.parse_args()
    n_units, repeats = (16, 3) if args.quick else (args.n_units, args.repeats)
    task = DelayedXOR(delay_ms=args.delay_ms, dt=10.0)
    for options in METHODS.values():  # warm-up
        seconds_per_iteration(task, n_units, args.batch_size, 2, options)
    times: dict[str, list[float]] = {k: [] for k in METHODS}
    for _ in range(repeats):
        for label, options in METHODS.items():
            seconds = seconds_per_iteration(task, n_units, args.batch_size, args.iterations, options)
            times[label].append(seconds)
    ref = statistics.median(times["BPTT"])
    rows = {label: {"median_s_per_iteration": statistics.median(t),
                    "ratio_to_bptt": statistics.median(t) / ref, "all_s_per_iteration": t}
            for label, t in times.items()}
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s); {n_units} units, batch "
          f"{args.batch_size}, {task.n_steps} steps per trial, {repeats} rounds of {args.iterations} "
          "iterations")
    for label, row in rows.items():
        print(f"{label:>8}: {1000 * row['median_s_per_iteration']:8.2f} ms/iteration  "
              f"x{row['ratio_to_bptt']:.2f} of BPTT")
    if args.json:
        record = {"benchmark": "forcing", "reference": "BPTT (plain train, same rounds)",
                  "neurodyn": neurodyn.__version__, "torch": torch.__version__,
                  "threads": torch.get_num_threads(), "machine": platform.machine(), "n_units": n_units,
                  "batch_size": args.batch_size, "n_steps": task.n_steps, "iterations": args.iterations,
                  "repeats": repeats, "methods": rows}
        with open(args.json, "w") as f:
            json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
