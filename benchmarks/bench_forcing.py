"""Cost of a forced or a diffusion training step relative to a plain BPTT step (ratios measured side by side).

Trains a leaky RNN on delayed XOR for ``--iterations`` iterations per call with each method (plain BPTT,
error-forcing BPTT, teacher-forcing BPTT, RFLO, error-forcing RFLO), interleaving the methods over
``--repeats`` rounds in one process, and reports the median seconds per iteration and its ratio to plain
BPTT (the reference, measured in the same rounds). Each method runs once before timing (imports, allocator).
The diffusion objective (``train_diffusion``) is timed the same way against plain BPTT on its own task, a
two-item continuous report with a ring-coded report (``--ring`` outputs), interleaved in the same rounds;
both on the plain torch rollout (``backend="torch"``), since ``train_diffusion`` has no fused kernel.
Every method trains with ``backend="auto"``: plain, error- and teacher-forced BPTT run the fused Numba
kernel, RFLO the torch rollout; the record names the backend each ran and the load average before and
after.

    OMP_NUM_THREADS=1 python benchmarks/bench_forcing.py --json benchmarks/results/forcing.json
    OMP_NUM_THREADS=1 python benchmarks/bench_forcing.py --quick
    OMP_NUM_THREADS=1 python benchmarks/bench_forcing.py --only-diffusion \
        --json benchmarks/results/diffusion.json
"""

from __future__ import annotations

import os
import platform
import statistics
import time

import torch
from _record import bench_parser, torch_line, write_json

import neurodyn
from neurodyn.models import LeakyRNN
from neurodyn.tasks import ContinuousReport, DelayedXOR
from neurodyn.training import train
from neurodyn.training.diffusion import train_diffusion

#: label → keywords of :func:`neurodyn.training.train`; the first is the reference
METHODS = {
    "BPTT": {},
    "EF-BPTT": {"forcing": "error"},
    "TF-BPTT": {"forcing": "teacher"},
    "RFLO": {"learning_rule": "rflo"},
    "EF-RFLO": {"forcing": "error", "learning_rule": "rflo"},
}


def seconds_per_iteration(task, n_units: int, batch_size: int, n_iterations: int, options: dict,
                          ran: dict | None = None) -> float:
    """Seconds per iteration of ``train`` with ``options``; ``ran["backend"]`` gets the backend it ran."""
    model = LeakyRNN(task.n_inputs, n_units, task.n_outputs, alpha=0.2, seed=0)
    t0 = time.perf_counter()
    result = train(model, task, n_iterations=n_iterations, batch_size=batch_size, lr=1e-3, eval_every=0,
                   progress=False, seed=0, **options)
    assert result.status == "completed"
    if ran is not None:
        ran["backend"] = result.config["backend"]
    return (time.perf_counter() - t0) / n_iterations


def diffusion_seconds_per_iteration(task, n_units: int, batch_size: int, n_iterations: int,
                                    diffusion: bool) -> float:
    """Seconds per iteration of ``train_diffusion`` (surrogate reports, 20 % swaps) or of plain ``train``."""
    extra = task.output_ring if diffusion else 0
    model = LeakyRNN(task.n_inputs + extra, n_units, task.n_outputs, alpha=0.2, seed=0)
    t0 = time.perf_counter()
    if diffusion:
        swaps = {"kappa": 8.0, "p_target": 0.7, "p_swap": 0.2, "p_guess": 0.1}
        result = train_diffusion(model, task, behaviour=swaps, n_iterations=n_iterations,
                                 batch_size=batch_size, eval_every=0, progress=False, seed=0)
    else:
        result = train(model, task, n_iterations=n_iterations, batch_size=batch_size, lr=1e-3, eval_every=0,
                       progress=False, seed=0, backend="torch")  # the rollout train_diffusion runs on
    assert result.status == "completed"
    return (time.perf_counter() - t0) / n_iterations


def main() -> None:
    p = bench_parser(__doc__, quick="16 units, 3 rounds", json_file=True,
                     repeats=(5, "interleaved rounds (medians are reported)"))
    p.add_argument("--n-units", type=int, default=64)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--delay-ms", type=float, default=200.0)
    p.add_argument("--iterations", type=int, default=10, help="iterations per timed call")
    p.add_argument("--only-diffusion", action="store_true", help="time only the diffusion comparison")
    p.add_argument("--ring", type=int, default=12, help="report ring units of the diffusion comparison")
    args = p.parse_args()
    n_units, repeats = (16, 3) if args.quick else (args.n_units, args.repeats)
    task = DelayedXOR(delay_ms=args.delay_ms, dt=10.0)
    report = ContinuousReport(n_items=2, n_ring=8, output_ring=args.ring, delay_min_ms=200.0,
                              delay_max_ms=200.0)
    methods = {} if args.only_diffusion else METHODS
    load = os.getloadavg()
    backends: dict[str, dict] = {label: {} for label in methods}
    for label, options in methods.items():  # warm-up
        seconds_per_iteration(task, n_units, args.batch_size, 2, options, backends[label])
    for diffusion in (False, True):
        diffusion_seconds_per_iteration(report, n_units, args.batch_size, 2, diffusion)
    times: dict[str, list[float]] = {k: [] for k in methods}
    report_times: dict[str, list[float]] = {"BPTT": [], "diffusion": []}
    for _ in range(repeats):
        for label, options in methods.items():
            seconds = seconds_per_iteration(task, n_units, args.batch_size, args.iterations, options)
            times[label].append(seconds)
        for label in report_times:
            report_times[label].append(diffusion_seconds_per_iteration(
                report, n_units, args.batch_size, args.iterations, label == "diffusion"))
    ref = statistics.median(times["BPTT"]) if times else float("nan")
    rows = {label: {"median_s_per_iteration": statistics.median(t),
                    "ratio_to_bptt": statistics.median(t) / ref, "all_s_per_iteration": t,
                    "backend": backends[label]["backend"]}
            for label, t in times.items()}
    print(f"{torch_line()}; {n_units} units, batch {args.batch_size}, {repeats} rounds of "
          f"{args.iterations} iterations")
    if rows:
        print(f"delayed XOR, {task.n_steps} steps per trial:")
    for label, row in rows.items():
        print(f"{label:>8}: {1000 * row['median_s_per_iteration']:8.2f} ms/iteration  "
              f"x{row['ratio_to_bptt']:.2f} of BPTT  ({row['backend']})")
    report_ref = statistics.median(report_times["BPTT"])
    report_rows = {label: {"median_s_per_iteration": statistics.median(t),
                           "ratio_to_bptt": statistics.median(t) / report_ref, "all_s_per_iteration": t}
                   for label, t in report_times.items()}
    print(f"continuous report, {args.ring} ring outputs, {report.n_steps} steps per trial "
          f"({report.n_steps - report.sample(1, seed=0).periods['response'][0, 0]} response steps):")
    for label, row in report_rows.items():
        print(f"{label:>9}: {1000 * row['median_s_per_iteration']:8.2f} ms/iteration  "
              f"x{row['ratio_to_bptt']:.2f} of BPTT")
    if args.json:
        record = {"benchmark": "forcing", "reference": "BPTT (plain train, same rounds)",
                  "neurodyn": neurodyn.__version__, "torch": torch.__version__,
                  "threads": torch.get_num_threads(), "machine": platform.machine(), "n_units": n_units,
                  "batch_size": args.batch_size, "iterations": args.iterations, "repeats": repeats,
                  **({"n_steps": task.n_steps, "methods": rows} if rows else {}),
                  "diffusion": {"task": "continuous_report (2 items, ring-coded report)", "ring": args.ring,
                                "reference": "BPTT (plain train, backend torch, same rounds)",
                                "n_steps": report.n_steps, "methods": report_rows},
                  "load_average_before": list(load), "load_average_after": list(os.getloadavg())}
        write_json(record, args.json)


if __name__ == "__main__":
    main()
