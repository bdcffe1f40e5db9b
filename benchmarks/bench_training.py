"""Training throughput on the CPU: ``train`` (fused Numba rollout) against plain torch loops.

The 3-bit flip-flop with a 64-unit leaky RNN (tanh, alpha 0.2) and batches of 64 trials; every
contender runs the same number of Adam steps (lr 1e-3, gradient-norm clipping at 1, masked MSE)
in this one process, interleaved and repeated, and the median seconds per step are compared:

* ``train_fused``: ``neurodyn.train(..., backend="auto")`` — the whole call, batch sampling included;
* ``train_torch``: ``neurodyn.train(..., backend="torch")`` — the reference path of the same call;
* ``plain_torch``: a hand-written loop over time steps with autograd (written below);
* ``nn_rnn``: the same loop on ``torch.nn.RNN`` (its fused C++ kernel; vanilla tanh RNN, alpha 1).

Every contender samples the same batches from the task inside its loop (``task.sample``, as
``train`` does). A second table times the rollout alone, forward plus backward on one fixed batch:
:func:`neurodyn.kernels.fused_states` against the same hand-written torch loop, without sampling
or optimiser.

    python benchmarks/bench_training.py                       # 30 steps x 3 repeats
    python benchmarks/bench_training.py --steps 10 --repeats 1 --out /dev/null   # quick
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from pathlib import Path

import torch
from _record import write_json

from neurodyn.kernels import fused_states
from neurodyn.models import LeakyRNN
from neurodyn.tasks import FlipFlop
from neurodyn.training import train

HERE = Path(__file__).resolve().parent
ALPHA, N_UNITS, BATCH = 0.2, 64, 64


def masked_mse(out: torch.Tensor, y: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
    return ((out - y) ** 2 * m).sum() / m.sum().clamp(min=1)


def batches(task: FlipFlop, n_steps: int):
    """The batches ``train(seed=0)`` trains on, sampled one by one."""
    for i in range(n_steps):
        yield task.sample(BATCH, seed=0, first_trial=i * BATCH).to_torch("cpu", torch.float32)


def adam_steps(params, batches, forward) -> None:
    """The reference optimisation loop shared by both torch baselines."""
    opt = torch.optim.Adam(params, lr=1e-3)
    for x, y, m in batches:
        loss = masked_mse(forward(x), y, m)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()


def plain_weights(task: FlipFlop) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    w_in = (torch.randn(N_UNITS, task.n_inputs, generator=gen) / task.n_inputs ** 0.5).requires_grad_()
    w_rec = (torch.randn(N_UNITS, N_UNITS, generator=gen) / N_UNITS ** 0.5).requires_grad_()
    b = torch.zeros(N_UNITS, requires_grad=True)
    w_out = (torch.randn(task.n_outputs, N_UNITS, generator=gen) / N_UNITS ** 0.5).requires_grad_()
    b_out = torch.zeros(task.n_outputs, requires_grad=True)
    return [w_in, w_rec, b, w_out, b_out]


def plain_forward(weights: list[torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    """The leaky RNN written out in torch: one autograd graph node per operation and step."""
    w_in, w_rec, b, w_out, b_out = weights
    h, states = torch.zeros(x.shape[0], N_UNITS), []
    for t in range(x.shape[1]):
        h = (1 - ALPHA) * h + ALPHA * torch.tanh(h @ w_rec.T + x[:, t] @ w_in.T + b)
        states.append(h)
    return torch.stack(states, 1) @ w_out.T + b_out


def plain_torch(task: FlipFlop, n_steps: int) -> None:
    weights = plain_weights(task)
    adam_steps(weights, batches(task, n_steps), lambda x: plain_forward(weights, x))


def nn_rnn(task: FlipFlop, n_steps: int) -> None:
    torch.manual_seed(0)  # nn.Module init draws from the global generator; benchmark only
    rnn = torch.nn.RNN(task.n_inputs, N_UNITS, batch_first=True)
    out = torch.nn.Linear(N_UNITS, task.n_outputs)
    adam_steps([*rnn.parameters(), *out.parameters()], batches(task, n_steps), lambda x: out(rnn(x)[0]))


def rollout_contenders(task: FlipFlop) -> dict:
    """Forward + backward of one batch's rollout: fused kernel against the plain torch loop."""
    model = LeakyRNN(task.n_inputs, N_UNITS, task.n_outputs, alpha=ALPHA, seed=0)
    weights = plain_weights(task)
    x = next(batches(task, 1))[0]

    def fused():
        states = fused_states(model.params(), model.initial_state(BATCH), x)
        model.readout(states).square().sum().backward()

    def plain():
        plain_forward(weights, x).square().sum().backward()

    return {"fused_states": fused, "plain_torch": plain}


def timed(contenders: dict, repeats: int, per: int) -> dict[str, list[float]]:
    """Seconds per unit of work of each contender, interleaved over ``repeats`` rounds."""
    times: dict[str, list[float]] = {k: [] for k in contenders}
    for _ in range(repeats):
        for name, fn in contenders.items():
            t0 = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - t0) / per)
    return times


def table(title: str, times: dict[str, list[float]], ref: str) -> tuple[dict, dict]:
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"{title}\n{'contender':>14} {'ms':>9} {'x ' + ref:>16}")
    for k, v in med.items():
        print(f"{k:>14} {1000 * v:>9.2f} {v / med[ref]:>16.2f}")
    return med, {f"{k}_over_{ref}": v / med[ref] for k, v in med.items() if k != ref}


def run_train(task: FlipFlop, n_steps: int, backend: str) -> None:
    model = LeakyRNN(task.n_inputs, N_UNITS, task.n_outputs, alpha=ALPHA, seed=0)
    res = train(model, task, n_iterations=n_steps, batch_size=BATCH, lr=1e-3, eval_every=0,
                progress=False, seed=0, backend=backend)
    assert res.config["backend"] == ("numba" if backend == "auto" else "torch"), res.config["backend"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=30, help="optimiser steps per contender (default 30)")
    p.add_argument("--repeats", type=int, default=3, help="interleaved repeats (median; default 3)")
    p.add_argument("--trial-steps", type=int, default=64, help="time steps per trial (default 64)")
    p.add_argument("--threads", type=int, default=1,
                   help="torch intra-op threads (default 1: on a shared 2-core machine more threads "
                        "spin-wait and the baselines slow down by an order of magnitude)")
    p.add_argument("--out", default=str(HERE / "results" / "training.json"))
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    task = FlipFlop(n_bits=3, n_steps=args.trial_steps)
    contenders = {
        "train_fused": lambda: run_train(task, args.steps, "auto"),
        "train_torch": lambda: run_train(task, args.steps, "torch"),
        "plain_torch": lambda: plain_torch(task, args.steps),
        "nn_rnn": lambda: nn_rnn(task, args.steps),
    }
    rollouts = rollout_contenders(task)
    run_train(task, 2, "auto")  # warm-up: imports, Numba cache, allocator
    run_train(task, 2, "torch")
    plain_torch(task, 2)
    nn_rnn(task, 2)
    for fn in rollouts.values():
        fn()
    load = os.getloadavg()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} intra-op thread(s), load {load[0]:.1f}; "
          f"flip-flop 3 bits, {args.trial_steps} time steps, {N_UNITS} units, batch {BATCH}; medians of "
          f"{args.repeats}")
    train_times = timed(contenders, args.repeats, args.steps)
    med, ratios = table(f"seconds per optimiser step ({args.steps} steps)", train_times, "train_fused")
    roll_times = timed(rollouts, 3 * args.repeats, 1)
    roll_med, roll_ratios = table("one rollout, forward + backward", roll_times, "fused_states")
    record = {"task": "flipflop", "n_bits": 3, "n_time_steps": args.trial_steps, "n_units": N_UNITS,
              "batch_size": BATCH, "alpha": ALPHA, "optimizer_steps": args.steps, "repeats": args.repeats,
              "seconds_per_step": train_times, "median_seconds_per_step": med, "ratios": ratios,
              "rollout_seconds": roll_times, "rollout_median_seconds": roll_med,
              "rollout_ratios": roll_ratios, "load_average_before": list(load),
              "load_average_after": list(os.getloadavg()), "torch": torch.__version__,
              "threads": torch.get_num_threads(), "machine": platform.machine()}
    write_json(record, args.out)


if __name__ == "__main__":
    main()
