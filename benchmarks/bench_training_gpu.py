"""Training throughput on a CUDA GPU: ``train`` on the fused Triton rollout against torch loops.

The 3-bit flip-flop with a network of ``--family`` (leaky RNN with tanh and alpha 0.2, PLRNN, ALRNN
with 16 ReLU units, or GRU; ``--units``, at most 64, the Triton training kernels' limit) and batches
of ``--batch`` trials; every contender runs the same number of Adam steps (lr 1e-3, gradient-norm
clipping at 1, masked MSE) on the GPU in this one process, interleaved and repeated, and the median
seconds per step are compared:

* ``train_triton``: ``neurodyn.train(..., device="cuda", backend="triton")`` — the fused Triton
  forward and BPTT (the whole call, batch sampling included); what ``backend="auto"`` runs on CUDA;
* ``train_torch``: ``neurodyn.train(..., device="cuda", backend="torch")`` — the reference path;
* ``plain_torch``: a hand-written loop over time steps with autograd (``bench_training.plain_step``);
* ``nn_rnn``: ``torch.nn.RNN`` (cuDNN; a vanilla tanh RNN, alpha 1) for the leaky RNN,
  ``torch.nn.GRU`` for the GRU; none for the PL family.

A second table times the rollout alone, forward plus backward on one fixed batch:
:func:`neurodyn.kernels.fused_states` (Triton) against the plain loop and ``torch.nn.RNN``. Every
timing ends with ``torch.cuda.synchronize()``. On a machine without CUDA the script exits with a
one-line message; ``--device cpu`` with ``TRITON_INTERPRET=1`` runs the script in Triton's CPU
interpreter, a smoke test of the script only (no meaningful timings).

    python benchmarks/bench_training_gpu.py                         # -> results/training_gpu.json
    python benchmarks/bench_training_gpu.py --family plrnn          # -> results/training_gpu_plrnn.json
    python benchmarks/bench_training_gpu.py --units 32 --batch 256 --out results/training_gpu_32.json
    TRITON_INTERPRET=1 python benchmarks/bench_training_gpu.py --device cpu --units 8 --batch 4 \
        --trial-steps 5 --steps 1 --repeats 1 --out /dev/null
"""

from __future__ import annotations

import os
import platform
import sys

import bench_training
import torch
from _record import bench_parser, write_json
from bench_training import ALPHA, adam_steps, make_model, plain_step, plain_weights, table, timed

from neurodyn.kernels import fused_states
from neurodyn.tasks import FlipFlop
from neurodyn.training import train

#: the device of every contender (``--device``; ``cpu`` only under ``TRITON_INTERPRET=1``)
DEVICE = ["cuda"]
FAMILY = ["leaky"]


def sync() -> None:
    """Wait for the queued GPU work, so that a timing covers it (nothing to wait for on the CPU)."""
    if DEVICE[0] == "cuda":
        torch.cuda.synchronize()


def batches(task: FlipFlop, n_steps: int, batch: int):
    """The batches ``train(seed=0)`` trains on, on the GPU."""
    for i in range(n_steps):
        yield task.sample(batch, seed=0, first_trial=i * batch).to_torch(DEVICE[0], torch.float32)


def gpu_weights(task: FlipFlop) -> list[torch.Tensor]:
    """``bench_training.plain_weights`` of the family (at ``bench_training.N_UNITS``), as GPU leaves."""
    return [w.detach().to(DEVICE[0]).requires_grad_() for w in plain_weights(task, FAMILY[0])]


def plain_forward(weights: list[torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    *rec, w_out, b_out = weights
    h, states = x.new_zeros(x.shape[0], w_out.shape[1]), []
    for t in range(x.shape[1]):
        h = plain_step(FAMILY[0], rec, h, x[:, t])
        states.append(h)
    return torch.stack(states, 1) @ w_out.T + b_out


def make_rnn(task: FlipFlop, n_units: int):
    """cuDNN's network of the family (``torch.nn.RNN`` / ``torch.nn.GRU``) and a readout; None for the
    PL family."""
    kind = {"leaky": torch.nn.RNN, "gru": torch.nn.GRU}.get(FAMILY[0])
    if kind is None:
        return None
    torch.manual_seed(0)  # nn.Module init draws from the global generator; benchmark only
    rnn = kind(task.n_inputs, n_units, batch_first=True).to(DEVICE[0])
    out = torch.nn.Linear(n_units, task.n_outputs).to(DEVICE[0])
    return rnn, out


def run_train(task: FlipFlop, n_steps: int, backend: str, batch: int) -> None:
    res = train(make_model(task, FAMILY[0]), task, n_iterations=n_steps, batch_size=batch, lr=1e-3,
                eval_every=0, progress=False, seed=0, backend=backend, device=DEVICE[0])
    sync()
    assert res.config["backend"] == backend, res.config["backend"]


def rollout_contenders(task: FlipFlop, batch: int, cudnn_net) -> dict:
    model = make_model(task, FAMILY[0]).to(DEVICE[0])
    weights = gpu_weights(task)
    x = next(batches(task, 1, batch))[0]

    def fused():
        states = fused_states(model.params(), model.initial_state(batch), x, backend="triton")
        model.readout(states).square().sum().backward()
        sync()

    def plain():
        plain_forward(weights, x).square().sum().backward()
        sync()

    out = {"fused_states": fused, "plain_torch": plain}
    if cudnn_net is not None:
        def cudnn():
            cudnn_net[1](cudnn_net[0](x)[0]).square().sum().backward()
            sync()

        out["nn_rnn"] = cudnn
    return out


def main() -> None:
    p = bench_parser(__doc__, repeats=(5, "interleaved repeats (median; default 5)"), out="training_gpu.json")
    p.add_argument("--steps", type=int, default=30, help="optimiser steps per contender (default 30)")
    p.add_argument("--trial-steps", type=int, default=64, help="time steps per trial (default 64)")
    p.add_argument("--units", type=int, default=64, help="recurrent units, at most 64 (default 64)")
    p.add_argument("--batch", type=int, default=64, help="trials per batch (default 64)")
    p.add_argument("--family", choices=("leaky", "plrnn", "alrnn", "gru"), default="leaky",
                   help="model family (default leaky; the default --out becomes training_gpu_<family>.json)")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                   help="cuda (default), or cpu under TRITON_INTERPRET=1 to smoke-test the script")
    args = p.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("bench_training_gpu.py needs a CUDA GPU (torch.cuda.is_available() is False); "
                 "run bench_training.py for the CPU")
    if args.device == "cpu" and os.environ.get("TRITON_INTERPRET") != "1":
        sys.exit("--device cpu runs only under TRITON_INTERPRET=1 (Triton's interpreter, a smoke test)")
    if not 1 <= args.units <= 64:
        sys.exit(f"--units must be in [1, 64] (the Triton training kernels' limit), got {args.units}")
    DEVICE[0], FAMILY[0] = args.device, args.family
    if args.family != "leaky" and args.out == p.get_default("out"):
        args.out = args.out.replace("training_gpu.json", f"training_gpu_{args.family}.json")
    bench_training.N_UNITS = args.units  # the size make_model and plain_weights build
    task = FlipFlop(n_bits=3, n_steps=args.trial_steps)
    n, b = args.units, args.batch
    weights = gpu_weights(task)
    cudnn_net = make_rnn(task, n)
    contenders = {
        "train_triton": lambda k=args.steps: run_train(task, k, "triton", b),
        "train_torch": lambda k=args.steps: run_train(task, k, "torch", b),
        "plain_torch": lambda k=args.steps: adam_steps(weights, batches(task, k, b),
                                                       lambda x: plain_forward(weights, x), sync),
    }
    if cudnn_net is not None:
        rnn, out = cudnn_net
        contenders["nn_rnn"] = lambda k=args.steps: adam_steps([*rnn.parameters(), *out.parameters()],
                                                                batches(task, k, b), lambda x: out(rnn(x)[0]),
                                                                sync)
    rollouts = rollout_contenders(task, b, cudnn_net)
    for fn in contenders.values():  # warm-up: Triton compiles, cuDNN plans, the allocator
        fn(2)
    for fn in rollouts.values():
        fn()
    load = os.getloadavg()
    gpu = torch.cuda.get_device_name() if args.device == "cuda" else "cpu (Triton interpreter)"
    print(f"torch {torch.__version__} on {gpu}, load {load[0]:.1f}; flip-flop 3 bits, {args.trial_steps} "
          f"time steps, {args.family} {n} units, batch {b}; medians of {args.repeats}")
    train_times = timed(contenders, args.repeats, args.steps)
    med, ratios = table(f"seconds per optimiser step ({args.steps} steps)", train_times, "train_triton")
    roll_times = timed(rollouts, 3 * args.repeats, 1)
    roll_med, roll_ratios = table("one rollout, forward + backward", roll_times, "fused_states")
    record = {"task": "flipflop", "family": args.family, "device": gpu, "n_bits": 3,
              "n_time_steps": args.trial_steps, "n_units": n, "batch_size": b, "alpha": ALPHA,
              "optimizer_steps": args.steps, "repeats": args.repeats, "seconds_per_step": train_times,
              "median_seconds_per_step": med, "ratios": ratios, "rollout_seconds": roll_times,
              "rollout_median_seconds": roll_med, "rollout_ratios": roll_ratios,
              "load_average_before": list(load), "load_average_after": list(os.getloadavg()),
              "torch": torch.__version__, "machine": platform.machine()}
    write_json(record, args.out)


if __name__ == "__main__":
    main()
