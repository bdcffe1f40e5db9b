"""Training throughput on a CUDA GPU: ``train`` on the fused Triton rollout against torch loops.

The 3-bit flip-flop with a leaky RNN (tanh, alpha 0.2; ``--units``, at most 64, the Triton training
kernels' limit) and batches of ``--batch`` trials; every contender runs the same number of Adam steps
(lr 1e-3, gradient-norm clipping at 1, masked MSE) on the GPU in this one process, interleaved and
repeated, and the median seconds per step are compared:

* ``train_triton``: ``neurodyn.train(..., device="cuda", backend="auto")`` — the fused Triton forward
  and BPTT (the whole call, batch sampling included);
* ``train_torch``: ``neurodyn.train(..., device="cuda", backend="torch")`` — the reference path;
* ``plain_torch``: a hand-written loop over time steps with autograd (``bench_training.plain_step``);
* ``nn_rnn``: ``torch.nn.RNN`` (cuDNN; a vanilla tanh RNN, alpha 1).

A second table times the rollout alone, forward plus backward on one fixed batch:
:func:`neurodyn.kernels.fused_states` (Triton) against the plain loop and ``torch.nn.RNN``. Every
timing ends with ``torch.cuda.synchronize()``. On a machine without CUDA the script exits with a
one-line message.

    python benchmarks/bench_training_gpu.py                         # -> results/training_gpu.json
    python benchmarks/bench_training_gpu.py --units 32 --batch 256 --out results/training_gpu_32.json
"""

from __future__ import annotations

import os
import platform
import sys

import torch
from _record import bench_parser, write_json
from bench_training import ALPHA, adam_steps, plain_step, plain_weights, table, timed

from neurodyn.kernels import fused_states
from neurodyn.models import LeakyRNN
from neurodyn.tasks import FlipFlop
from neurodyn.training import train

DEVICE = "cuda"


def batches(task: FlipFlop, n_steps: int, batch: int):
    """The batches ``train(seed=0)`` trains on, on the GPU."""
    for i in range(n_steps):
        yield task.sample(batch, seed=0, first_trial=i * batch).to_torch(DEVICE, torch.float32)


def gpu_weights(task: FlipFlop, n_units: int) -> list[torch.Tensor]:
    """``bench_training.plain_weights`` of the leaky RNN at ``n_units``, as GPU leaves."""
    import bench_training

    bench_training.N_UNITS = n_units
    return [w.detach().to(DEVICE).requires_grad_() for w in plain_weights(task, "leaky")]


def plain_forward(weights: list[torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    *rec, w_out, b_out = weights
    h, states = x.new_zeros(x.shape[0], rec[1].shape[0]), []
    for t in range(x.shape[1]):
        h = plain_step("leaky", rec, h, x[:, t])
        states.append(h)
    return torch.stack(states, 1) @ w_out.T + b_out


def make_rnn(task: FlipFlop, n_units: int):
    torch.manual_seed(0)  # nn.Module init draws from the global generator; benchmark only
    rnn = torch.nn.RNN(task.n_inputs, n_units, batch_first=True).to(DEVICE)
    out = torch.nn.Linear(n_units, task.n_outputs).to(DEVICE)
    return rnn, out


def run_train(task: FlipFlop, n_steps: int, backend: str, n_units: int, batch: int) -> None:
    model = LeakyRNN(task.n_inputs, n_units, task.n_outputs, alpha=ALPHA, seed=0)
    res = train(model, task, n_iterations=n_steps, batch_size=batch, lr=1e-3, eval_every=0, progress=False,
                seed=0, backend=backend, device=DEVICE)
    torch.cuda.synchronize()
    want = "triton" if backend == "auto" else "torch"
    assert res.config["backend"] == want, res.config["backend"]


def rollout_contenders(task: FlipFlop, n_units: int, batch: int) -> dict:
    model = LeakyRNN(task.n_inputs, n_units, task.n_outputs, alpha=ALPHA, seed=0).to(DEVICE)
    weights = gpu_weights(task, n_units)
    rnn, out = make_rnn(task, n_units)
    x = next(batches(task, 1, batch))[0]

    def fused():
        states = fused_states(model.params(), model.initial_state(batch), x)
        model.readout(states).square().sum().backward()
        torch.cuda.synchronize()

    def plain():
        plain_forward(weights, x).square().sum().backward()
        torch.cuda.synchronize()

    def cudnn():
        out(rnn(x)[0]).square().sum().backward()
        torch.cuda.synchronize()

    return {"fused_states": fused, "plain_torch": plain, "nn_rnn": cudnn}


def main() -> None:
    p = bench_parser(__doc__, repeats=(5, "interleaved repeats (median; default 5)"), out="training_gpu.json")
    p.add_argument("--steps", type=int, default=30, help="optimiser steps per contender (default 30)")
    p.add_argument("--trial-steps", type=int, default=64, help="time steps per trial (default 64)")
    p.add_argument("--units", type=int, default=64, help="recurrent units, at most 64 (default 64)")
    p.add_argument("--batch", type=int, default=64, help="trials per batch (default 64)")
    args = p.parse_args()
    if not torch.cuda.is_available():
        sys.exit("bench_training_gpu.py needs a CUDA GPU (torch.cuda.is_available() is False); "
                 "run bench_training.py for the CPU")
    if not 1 <= args.units <= 64:
        sys.exit(f"--units must be in [1, 64] (the Triton training kernels' limit), got {args.units}")
    task = FlipFlop(n_bits=3, n_steps=args.trial_steps)
    n, b = args.units, args.batch
    weights = gpu_weights(task, n)
    rnn, out = make_rnn(task, n)
    contenders = {
        "train_triton": lambda k=args.steps: run_train(task, k, "auto", n, b),
        "train_torch": lambda k=args.steps: run_train(task, k, "torch", n, b),
        "plain_torch": lambda k=args.steps: adam_steps(weights, batches(task, k, b),
                                                       lambda x: plain_forward(weights, x),
                                                       torch.cuda.synchronize),
        "nn_rnn": lambda k=args.steps: adam_steps([*rnn.parameters(), *out.parameters()], batches(task, k, b),
                                                  lambda x: out(rnn(x)[0]), torch.cuda.synchronize),
    }
    rollouts = rollout_contenders(task, n, b)
    for fn in contenders.values():  # warm-up: Triton compiles, cuDNN plans, the allocator
        fn(2)
    for fn in rollouts.values():
        fn()
    load = os.getloadavg()
    gpu = torch.cuda.get_device_name()
    print(f"torch {torch.__version__} on {gpu}, load {load[0]:.1f}; flip-flop 3 bits, {args.trial_steps} "
          f"time steps, leaky {n} units, batch {b}; medians of {args.repeats}")
    train_times = timed(contenders, args.repeats, args.steps)
    med, ratios = table(f"seconds per optimiser step ({args.steps} steps)", train_times, "train_triton")
    roll_times = timed(rollouts, 3 * args.repeats, 1)
    roll_med, roll_ratios = table("one rollout, forward + backward", roll_times, "fused_states")
    record = {"task": "flipflop", "family": "leaky", "device": gpu, "n_bits": 3,
              "n_time_steps": args.trial_steps, "n_units": n, "batch_size": b, "alpha": ALPHA,
              "optimizer_steps": args.steps, "repeats": args.repeats, "seconds_per_step": train_times,
              "median_seconds_per_step": med, "ratios": ratios, "rollout_seconds": roll_times,
              "rollout_median_seconds": roll_med, "rollout_ratios": roll_ratios,
              "load_average_before": list(load), "load_average_after": list(os.getloadavg()),
              "torch": torch.__version__, "machine": platform.machine()}
    write_json(record, args.out)


if __name__ == "__main__":
    main()
