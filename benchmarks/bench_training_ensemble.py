"""Ensemble training throughput on the CPU: ``train_ensemble`` against sequential ``train`` calls.

32 networks of one family (``--family``: leaky RNN with tanh and alpha 0.2, GRU, PLRNN, ALRNN with
16 ReLU units, shallow PLRNN with 64 hidden units; 64 units/latents each) on the 3-bit flip-flop,
batches of 64 trials per network;
every contender runs the same number of Adam steps per network (lr 1e-3, clipping at 1, masked MSE)
in this one process, interleaved and repeated, and the median seconds per optimiser step (all
networks) are compared:

* ``ensemble_fused``: ``train_ensemble(..., backend="auto")`` — all networks' rollouts in one fused
  Numba call per step (one network per parallel item), one batched Adam step;
* ``ensemble_fused_1thread``: the same on one Numba thread (``numba.set_num_threads(1)``);
* ``ensemble_fused_fresh_buffers``: the same with every per-step buffer allocated afresh, as before
  the training engine let the kernels reuse them (:mod:`neurodyn.kernels._workspace`);
* ``ensemble_torch``: ``train_ensemble(..., backend="torch")`` — the batched torch loop;
* ``sequential_fused``: one ``train(..., backend="auto", seed=s)`` call per network, in turn.

Every contender samples each network's batches from the task inside its loop (``train`` one
``task.sample`` per step, ``train_ensemble`` one ``task.sample_networks`` for all networks). To show
where the time goes, a second table times the parts of one ensemble step alone: sampling the 32
batches (``sample_batches``: one ``task.sample`` per network converted to torch, the reference,
which leaves out the stacking the per-network loop needed; ``sample_networks``: the one call and
torch conversion ``train_ensemble`` makes), the fused rollout of the 32 networks (forward +
backward, :func:`neurodyn.kernels.fused_states` on the stacked params, on Numba's threads and on
one) and the same rollout as 32 single-network calls.

    python benchmarks/bench_training_ensemble.py                # 10 steps x 3 repeats
    python benchmarks/bench_training_ensemble.py --family gru   # -> results/training_ensemble_gru.json
    python benchmarks/bench_training_ensemble.py --steps 2 --repeats 1 --n-networks 4 --out /dev/null

glibc returns freed blocks above its mmap threshold to the system, so fresh stacked buffers (tens of
MB) page-fault again at every step; the training engine therefore lets the kernels reuse theirs
(``ensemble_fused_fresh_buffers`` shows the difference). The parts table calls ``fused_states``
outside the engine, with fresh buffers. ``MALLOC_MMAP_THRESHOLD_`` / ``MALLOC_TRIM_THRESHOLD_`` in the
environment also change this, and the record keeps any ``MALLOC_*`` settings of the run.
"""

from __future__ import annotations

import os
import platform

import torch
from _record import bench_parser, write_json
from bench_training import table, timed

from neurodyn.kernels import fused_states, stack_params
from neurodyn.models import ALRNN, GRU, PLRNN, LeakyRNN, ShallowPLRNN
from neurodyn.tasks import FlipFlop
from neurodyn.training import train, train_ensemble

ALPHA, N_UNITS, BATCH, N_RELU = 0.2, 64, 64, 16
FAMILIES = ("leaky", "gru", "plrnn", "alrnn", "shplrnn")
#: the family of every contender (set from ``--family``)
FAMILY = ["leaky"]


def factory(task: FlipFlop):
    """``seed -> model`` of the benchmarked family."""
    sizes = (task.n_inputs, N_UNITS, task.n_outputs)
    return {"leaky": lambda seed: LeakyRNN(*sizes, alpha=ALPHA, seed=seed),
            "gru": lambda seed: GRU(*sizes, seed=seed), "plrnn": lambda seed: PLRNN(*sizes, seed=seed),
            "alrnn": lambda seed: ALRNN(*sizes, n_relu=N_RELU, seed=seed),
            "shplrnn": lambda seed: ShallowPLRNN(*sizes, n_hidden=N_UNITS, seed=seed)}[FAMILY[0]]


def run_ensemble(task: FlipFlop, n_networks: int, n_steps: int, backend: str) -> None:
    res = train_ensemble(factory(task), task, n_networks=n_networks, n_iterations=n_steps, batch_size=BATCH,
                         lr=1e-3, eval_every=0, progress=False, backend=backend)
    assert res.config["backend"] == ("numba" if backend == "auto" else "torch"), res.config["backend"]


def one_thread(fn):
    """``fn`` run on one Numba thread."""
    import numba

    def run() -> None:
        n = numba.get_num_threads()
        numba.set_num_threads(1)
        try:
            fn()
        finally:
            numba.set_num_threads(n)

    return run


def fresh_buffers(fn):
    """``fn`` run with the fused kernels' buffers allocated afresh at every step (none reused)."""
    from neurodyn.kernels import _workspace

    def run() -> None:
        keep = _workspace.MIN_BYTES
        _workspace.MIN_BYTES = 1 << 62
        try:
            fn()
        finally:
            _workspace.MIN_BYTES = keep

    return run


def run_sequential(task: FlipFlop, n_networks: int, n_steps: int) -> None:
    make = factory(task)
    for seed in range(n_networks):
        res = train(make(seed), task, n_iterations=n_steps, batch_size=BATCH, lr=1e-3, eval_every=0,
                    progress=False, seed=seed, backend="auto")
        assert res.config["backend"] == "numba", res.config["backend"]


def part_contenders(task: FlipFlop, n_networks: int) -> dict:
    """The parts of one ensemble step: sampling, and the fused rollout stacked or one by one."""
    nets = [factory(task)(s) for s in range(n_networks)]
    params = stack_params(nets)
    params = type(params)(*(v.requires_grad_(True) if isinstance(v, torch.Tensor) and v.is_floating_point()
                            and v.numel() else v for v in params))
    x = torch.stack([task.sample(BATCH, seed=s).to_torch("cpu", torch.float32)[0] for s in range(n_networks)])
    h0 = torch.zeros(n_networks, BATCH, nets[0].state_size)

    def sample():  # the reference: one task.sample per network, converted to torch (not stacked)
        for s in range(n_networks):
            task.sample(BATCH, seed=s, first_trial=BATCH).to_torch("cpu", torch.float32)

    def sample_networks():  # what train_ensemble does: all networks' batches in one call
        arrays = task.sample_networks(BATCH, range(n_networks), first_trial=BATCH)
        tuple(torch.as_tensor(a, dtype=torch.float32, device="cpu") for a in arrays)

    def stacked():
        fused_states(params, h0, x).square().sum().backward()

    def one_by_one():
        for e, net in enumerate(nets):
            fused_states(net.params(), h0[e], x[e]).square().sum().backward()

    return {"rollout_stacked": stacked, "rollout_stacked_1thread": one_thread(stacked),
            "rollout_one_by_one": one_by_one, "sample_batches": sample, "sample_networks": sample_networks}


def main() -> None:
    p = bench_parser(__doc__, repeats=(3, "interleaved repeats (median; default 3)"),
                     out="training_ensemble.json")
    p.add_argument("--steps", type=int, default=10, help="optimiser steps per contender (default 10)")
    p.add_argument("--n-networks", type=int, default=32, help="ensemble size (default 32)")
    p.add_argument("--trial-steps", type=int, default=64, help="time steps per trial (default 64)")
    p.add_argument("--family", choices=FAMILIES, default="leaky", help="model family (default leaky; "
                   "the default --out becomes training_ensemble_<family>.json for the others)")
    p.add_argument("--threads", type=int, default=1, help="torch intra-op threads (default 1, see "
                   "bench_training.py); Numba keeps its own thread count (NUMBA_NUM_THREADS)")
    args = p.parse_args()
    import numba

    FAMILY[0] = args.family
    if args.family != "leaky" and args.out == p.get_default("out"):
        args.out = args.out.replace("training_ensemble.json", f"training_ensemble_{args.family}.json")
    torch.set_num_threads(args.threads)
    task, n = FlipFlop(n_bits=3, n_steps=args.trial_steps), args.n_networks
    contenders = {
        "ensemble_fused": lambda: run_ensemble(task, n, args.steps, "auto"),
        "ensemble_fused_1thread": one_thread(lambda: run_ensemble(task, n, args.steps, "auto")),
        "ensemble_fused_fresh_buffers": fresh_buffers(lambda: run_ensemble(task, n, args.steps, "auto")),
        "ensemble_torch": lambda: run_ensemble(task, n, args.steps, "torch"),
        "sequential_fused": lambda: run_sequential(task, n, args.steps),
    }
    parts = part_contenders(task, n)
    run_ensemble(task, 2, 1, "auto")  # warm-up: imports, Numba cache, allocator
    run_ensemble(task, 2, 1, "torch")
    run_sequential(task, 2, 1)
    for fn in parts.values():
        fn()
    load = os.getloadavg()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} intra-op thread(s), numba "
          f"{numba.get_num_threads()} thread(s), {os.cpu_count()} cores, load {load[0]:.1f}; flip-flop "
          f"3 bits, {args.trial_steps} time steps, {n} {args.family} networks x {N_UNITS} units, "
          f"batch {BATCH}; "
          f"medians of {args.repeats}")
    times = timed(contenders, args.repeats, args.steps)
    med, ratios = table(f"seconds per optimiser step of all {n} networks ({args.steps} steps)", times,
                        "ensemble_fused")
    part_times = timed(parts, 3 * args.repeats, 1)
    part_med, part_ratios = table("parts of one ensemble step", part_times, "rollout_stacked")
    record = {"family": args.family, "task": "flipflop", "n_bits": 3, "n_time_steps": args.trial_steps,
              "n_networks": n,
              "n_units": N_UNITS, "batch_size": BATCH, "alpha": ALPHA, "optimizer_steps": args.steps,
              "repeats": args.repeats, "seconds_per_step": times, "median_seconds_per_step": med,
              "ratios": ratios, "part_seconds": part_times, "part_median_seconds": part_med,
              "part_ratios": part_ratios, "load_average_before": list(load),
              "load_average_after": list(os.getloadavg()),
              "malloc_env": {k: v for k, v in os.environ.items() if k.startswith("MALLOC_")},
              "torch": torch.__version__, "torch_threads": torch.get_num_threads(),
              "numba_threads": numba.get_num_threads(), "cores": os.cpu_count(),
              "machine": platform.machine()}
    write_json(record, args.out)


if __name__ == "__main__":
    main()
