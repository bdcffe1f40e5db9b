"""Training throughput on the CPU: ``train`` (fused Numba rollout) against plain torch loops.

The 3-bit flip-flop with a 64-unit network of one family (``--family``: leaky RNN with tanh and
alpha 0.2, GRU, PLRNN, or ALRNN with 16 ReLU units) and batches of 64 trials; every contender
runs the same number of Adam steps (lr 1e-3, gradient-norm clipping at 1, masked MSE)
in this one process, interleaved and repeated, and the median seconds per step are compared:

* ``train_fused``: ``neurodyn.train(..., backend="auto")`` — the whole call, batch sampling included;
* ``train_torch``: ``neurodyn.train(..., backend="torch")`` — the reference path of the same call;
* ``plain_torch``: a hand-written loop over time steps with autograd (written below per family);
* ``nn_rnn``: the same loop on ``torch.nn.RNN`` (leaky: its fused C++ kernel, vanilla tanh RNN,
  alpha 1) or ``torch.nn.GRU`` (GRU); torch has no fused PLRNN or ALRNN, so those have none.

Every contender samples the same batches from the task inside its loop (``task.sample``, as
``train`` does). A second table times the rollout alone, forward plus backward on one fixed batch:
:func:`neurodyn.kernels.fused_states` against the same hand-written torch loop, without sampling
or optimiser; for the batch-blocked families (GRU, PLRNN, ALRNN) also the fused rollout with one
Numba thread per 4-row block (``fused_states_all_threads``) instead of one per 128 rows.

    python benchmarks/bench_training.py                       # leaky, 30 steps x 3 repeats
    python benchmarks/bench_training.py --family gru          # -> results/training_gru.json
    python benchmarks/bench_training.py --steps 10 --repeats 1 --out /dev/null   # quick
    python benchmarks/bench_training.py --parts   # also the parts of one fused train step

``--parts`` times each part of ``train``'s fused step on its own (batch sampling, fused rollout
forward with readout, loss, backward, gradient clipping, optimiser step) and prints their medians
as shares of the ``train_fused`` step; the rest of that step is the engine's bookkeeping.
"""

from __future__ import annotations

import os
import platform
import statistics
import time
from pathlib import Path

import torch
from _record import bench_parser, write_json

from neurodyn.kernels import _fused_autograd as _fa
from neurodyn.kernels import fused_states
from neurodyn.models import ALRNN, GRU, PLRNN, LeakyRNN
from neurodyn.tasks import FlipFlop
from neurodyn.training import train

HERE = Path(__file__).resolve().parent
ALPHA, N_UNITS, BATCH, N_RELU = 0.2, 64, 64, 16


def masked_mse(out: torch.Tensor, y: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
    return ((out - y) ** 2 * m).sum() / m.sum().clamp(min=1)


def batches(task: FlipFlop, n_steps: int):
    """The batches ``train(seed=0)`` trains on, sampled one by one."""
    for i in range(n_steps):
        yield task.sample(BATCH, seed=0, first_trial=i * BATCH).to_torch("cpu", torch.float32)


def adam_steps(params, batches, forward, sync=None) -> None:
    """The reference optimisation loop shared by the torch baselines (``sync``: called at the end,
    e.g. ``torch.cuda.synchronize`` so a GPU timing covers the queued work)."""
    opt = torch.optim.Adam(params, lr=1e-3)
    for x, y, m in batches:
        loss = masked_mse(forward(x), y, m)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
    if sync is not None:
        sync()


def _param(*shape: int, gen: torch.Generator, scale: float) -> torch.Tensor:
    return (scale * torch.randn(*shape, generator=gen)).requires_grad_()


def plain_weights(task: FlipFlop, family: str) -> list[torch.Tensor]:
    """Trainable tensors of the hand-written loop: recurrent weights first, readout last."""
    gen = torch.Generator().manual_seed(0)
    n, n_in, n_out = N_UNITS, task.n_inputs, task.n_outputs
    if family == "gru":
        k = n ** -0.5
        rec = [_param(3 * n, n_in, gen=gen, scale=k), _param(3 * n, n, gen=gen, scale=k),
               _param(3 * n, gen=gen, scale=k), _param(3 * n, gen=gen, scale=k)]
    elif family == "leaky":
        rec = [_param(n, n_in, gen=gen, scale=n_in ** -0.5), _param(n, n, gen=gen, scale=n ** -0.5),
               torch.zeros(n, requires_grad=True)]
    else:  # plrnn, alrnn: a (diagonal of A), W, h, C
        a = (0.5 + 0.4 * torch.rand(n, generator=gen)).requires_grad_()
        rec = [a, _param(n, n, gen=gen, scale=0.5 / n ** 0.5), torch.zeros(n, requires_grad=True),
               _param(n, n_in, gen=gen, scale=n_in ** -0.5)]
    return [*rec, _param(n_out, n, gen=gen, scale=n ** -0.5), torch.zeros(n_out, requires_grad=True)]


def plain_step(family: str, rec: list[torch.Tensor], h: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """One step of ``family`` written out in torch (one autograd graph node per operation)."""
    if family == "leaky":
        w_in, w_rec, b = rec
        return (1 - ALPHA) * h + ALPHA * torch.tanh(h @ w_rec.T + u @ w_in.T + b)
    if family == "gru":
        w_ih, w_hh, b_ih, b_hh = rec
        i_r, i_z, i_n = (u @ w_ih.T + b_ih).chunk(3, dim=-1)
        h_r, h_z, h_n = (h @ w_hh.T + b_hh).chunk(3, dim=-1)
        r, z = torch.sigmoid(i_r + h_r), torch.sigmoid(i_z + h_z)
        return (1 - z) * torch.tanh(i_n + r * h_n) + z * h
    a, w, b, c = rec
    w = w * (1 - torch.eye(N_UNITS, device=w.device))  # off-diagonal W, as the models train it
    phi = torch.relu(h) if family == "plrnn" else torch.cat([h[:, :-N_RELU], torch.relu(h[:, -N_RELU:])], -1)
    return a * h + phi @ w.T + b + u @ c.T


def plain_forward(family: str, weights: list[torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    """The network of ``family`` written out in torch, one step at a time."""
    *rec, w_out, b_out = weights
    h, states = torch.zeros(x.shape[0], N_UNITS), []
    for t in range(x.shape[1]):
        h = plain_step(family, rec, h, x[:, t])
        states.append(h)
    return torch.stack(states, 1) @ w_out.T + b_out


def plain_torch(task: FlipFlop, n_steps: int, family: str) -> None:
    weights = plain_weights(task, family)
    adam_steps(weights, batches(task, n_steps), lambda x: plain_forward(family, weights, x))


def nn_rnn(task: FlipFlop, n_steps: int, family: str) -> None:
    torch.manual_seed(0)  # nn.Module init draws from the global generator; benchmark only
    rnn = (torch.nn.GRU if family == "gru" else torch.nn.RNN)(task.n_inputs, N_UNITS, batch_first=True)
    out = torch.nn.Linear(N_UNITS, task.n_outputs)
    adam_steps([*rnn.parameters(), *out.parameters()], batches(task, n_steps), lambda x: out(rnn(x)[0]))


def make_model(task: FlipFlop, family: str):
    sizes = (task.n_inputs, N_UNITS, task.n_outputs)
    makers = {"leaky": lambda: LeakyRNN(*sizes, alpha=ALPHA, seed=0), "gru": lambda: GRU(*sizes, seed=0),
              "plrnn": lambda: PLRNN(*sizes, seed=0), "alrnn": lambda: ALRNN(*sizes, n_relu=N_RELU, seed=0)}
    return makers[family]()


def rollout_contenders(task: FlipFlop, family: str) -> dict:
    """Forward + backward of one batch's rollout: fused kernel against the plain torch loop."""
    model = make_model(task, family)
    weights = plain_weights(task, family)
    x = next(batches(task, 1))[0]

    def fused():
        states = fused_states(model.params(), model.initial_state(BATCH), x)
        model.readout(states).square().sum().backward()

    def plain():
        plain_forward(family, weights, x).square().sum().backward()

    contenders = {"fused_states": fused, "plain_torch": plain}
    if family != "leaky":  # the batch-blocked kernels on every Numba thread, however small the batch
        def all_threads():
            rows, _fa.ROWS_PER_THREAD = _fa.ROWS_PER_THREAD, 1
            try:
                fused()
            finally:
                _fa.ROWS_PER_THREAD = rows

        contenders["fused_states_all_threads"] = all_threads
    return contenders


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
    print(f"{title}\n{'contender':>24} {'ms':>9} {'x ' + ref:>16}")
    for k, v in med.items():
        print(f"{k:>24} {1000 * v:>9.2f} {v / med[ref]:>16.2f}")
    return med, {f"{k}_over_{ref}": v / med[ref] for k, v in med.items() if k != ref}


def run_train(task: FlipFlop, n_steps: int, backend: str, family: str) -> None:
    model = make_model(task, family)
    res = train(model, task, n_iterations=n_steps, batch_size=BATCH, lr=1e-3, eval_every=0,
                progress=False, seed=0, backend=backend)
    assert res.config["backend"] == ("numba" if backend == "auto" else "torch"), res.config["backend"]


def step_parts(task: FlipFlop, family: str, n_steps: int) -> dict[str, list[float]]:
    """Seconds of each part of ``train``'s fused optimiser step, timed one by one with the pieces
    ``train`` runs (its batch sampling, fused rollout and readout, loss, backward, clipping and
    optimiser); what the sum leaves of a ``train_fused`` step is the engine's own bookkeeping."""
    from neurodyn.training import TrainConfig
    from neurodyn.training._engine import make_optimizer
    from neurodyn.training._fused_rollout import fused_rollout
    from neurodyn.training.losses import masked_mse as loss_fn

    model = make_model(task, family).train()
    params = list(model.parameters())
    opt = make_optimizer(params, TrainConfig(n_epochs=1, lr=1e-3), weight_decay=0.0)
    gen = torch.Generator().manual_seed(0)
    parts: dict[str, list[float]] = {k: [] for k in ("sample", "rollout_forward", "loss", "backward",
                                                       "clip", "optimizer")}
    for i in range(n_steps):
        t = [time.perf_counter()]
        x, y, m = task.sample(BATCH, seed=0, first_trial=i * BATCH).to_torch("cpu", torch.float32)
        t.append(time.perf_counter())
        out = fused_rollout(model, x, generator=gen).outputs
        t.append(time.perf_counter())
        loss = loss_fn(out, y, m)
        t.append(time.perf_counter())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        t.append(time.perf_counter())
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        t.append(time.perf_counter())
        opt.step()
        t.append(time.perf_counter())
        for k, a, b in zip(parts, t, t[1:]):
            parts[k].append(b - a)
    return parts


def numba_threads() -> int:
    import numba

    return numba.get_num_threads()


def main() -> None:
    p = bench_parser(__doc__, repeats=(3, "interleaved repeats (median; default 3)"))
    p.add_argument("--steps", type=int, default=30, help="optimiser steps per contender (default 30)")
    p.add_argument("--trial-steps", type=int, default=64, help="time steps per trial (default 64)")
    p.add_argument("--threads", type=int, default=1,
                   help="torch intra-op threads (default 1: on a shared 2-core machine more threads "
                        "spin-wait and the baselines slow down by an order of magnitude)")
    p.add_argument("--numba-threads", type=int, default=None,
                   help="Numba threads of the fused kernels (default: Numba's default, the core count)")
    p.add_argument("--family", choices=("leaky", "gru", "plrnn", "alrnn"), default="leaky",
                   help="model family (default leaky)")
    p.add_argument("--parts", action="store_true",
                   help="also time each part of the fused train step (sampling, rollout, loss, ...)")
    p.add_argument("--out", default=None,
                   help="JSON path (default results/training.json for leaky, training_<family>.json else)")
    args = p.parse_args()
    fam = args.family
    out = args.out or str(HERE / "results" / ("training.json" if fam == "leaky" else f"training_{fam}.json"))
    torch.set_num_threads(args.threads)
    if args.numba_threads:
        import numba

        numba.set_num_threads(args.numba_threads)
    task = FlipFlop(n_bits=3, n_steps=args.trial_steps)
    contenders = {
        "train_fused": lambda n=args.steps: run_train(task, n, "auto", fam),
        "train_torch": lambda n=args.steps: run_train(task, n, "torch", fam),
        "plain_torch": lambda n=args.steps: plain_torch(task, n, fam),
    }
    if fam in ("leaky", "gru"):
        contenders["nn_rnn"] = lambda n=args.steps: nn_rnn(task, n, fam)
    rollouts = rollout_contenders(task, fam)
    for fn in contenders.values():  # warm-up: imports, Numba cache, allocator
        fn(2)
    for fn in rollouts.values():
        fn()
    load = os.getloadavg()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} intra-op thread(s), load {load[0]:.1f}; "
          f"flip-flop 3 bits, {args.trial_steps} time steps, {fam} {N_UNITS} units, batch {BATCH}; "
          f"medians of {args.repeats}")
    train_times = timed(contenders, args.repeats, args.steps)
    med, ratios = table(f"seconds per optimiser step ({args.steps} steps)", train_times, "train_fused")
    roll_times = timed(rollouts, 3 * args.repeats, 1)
    roll_med, roll_ratios = table("one rollout, forward + backward", roll_times, "fused_states")
    parts = {}
    if args.parts:
        step_parts(task, fam, 3)  # warm-up
        n_parts = args.steps * args.repeats
        parts = {k: statistics.median(v) for k, v in step_parts(task, fam, n_parts).items()}
        print(f"parts of one fused train step (medians of {n_parts})\n{'part':>24} {'ms':>9} "
              f"{'share of train_fused':>22}")
        for k, v in {**parts, "sum": sum(parts.values())}.items():
            print(f"{k:>24} {1000 * v:>9.2f} {v / med['train_fused']:>22.2f}")
    record = {"task": "flipflop", "family": fam, "n_relu": N_RELU if fam == "alrnn" else None,
              "n_bits": 3, "n_time_steps": args.trial_steps, "n_units": N_UNITS,
              "batch_size": BATCH, "alpha": ALPHA, "optimizer_steps": args.steps, "repeats": args.repeats,
              "seconds_per_step": train_times, "median_seconds_per_step": med, "ratios": ratios,
              "rollout_seconds": roll_times, "rollout_median_seconds": roll_med,
              "rollout_ratios": roll_ratios, "step_parts_median_seconds": parts,
              "load_average_before": list(load),
              "load_average_after": list(os.getloadavg()), "torch": torch.__version__,
              "threads": torch.get_num_threads(), "numba_threads": numba_threads(),
              "machine": platform.machine()}
    write_json(record, out)


if __name__ == "__main__":
    main()
