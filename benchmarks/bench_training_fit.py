"""Teacher-forcing fit throughput on the CPU: ``fit_teacher_forcing`` (fused) against plain torch.

A clipped shallow PLRNN (latent 10, hidden 50 and 200) fitted by generalised teacher forcing
(alpha 0.2, identity observation of 3 channels, RAdam) to a synthetic 3-channel oscillation, in
windows of ``--seq-len`` steps and batches of 16 and 64; with ``--model plrnn`` or ``alrnn`` a PLRNN
or an ALRNN (``n_relu`` half the latents; both with gain 0.2) of ``--latent`` units (default 10)
instead, the same way (no hidden layer). Contenders, the same number of optimiser steps each,
interleaved in this one process (median ms per time step of a window):

* ``fit_fused``: ``fit_teacher_forcing(..., backend="auto")`` — the whole call;
* ``fit_torch``: ``fit_teacher_forcing(..., backend="torch")`` — the reference path, whose losses
  the fused fit must reproduce (``max_loss_rel_diff`` in the JSON);
* ``plain_gtf``: a hand-written GTF loop in torch of the model's step (written below; windows drawn
  with NumPy).

    python benchmarks/bench_training_fit.py                 # hidden 50, 200 x batch 16, 64
    python benchmarks/bench_training_fit.py --quick --out /dev/null
    python benchmarks/bench_training_fit.py --model alrnn --quick --out /tmp/alrnn_fit.json
"""

from __future__ import annotations

import os
import platform
import statistics
import time

import numpy as np
import torch
from _record import bench_parser, oscillation, torch_line, write_json

from neurodyn.models import ALRNN, PLRNN, ShallowPLRNN
from neurodyn.training import fit_teacher_forcing

N_LATENT, N_CH, ALPHA = 10, 3, 0.2


def make_model(kind: str, size: int):
    """The fitted model: a clipped shallow PLRNN of ``size`` hidden units, or a PLRNN / ALRNN of
    ``size`` latents (the ALRNN's ReLU on the last half of them)."""
    if kind == "shplrnn":
        return ShallowPLRNN(0, N_LATENT, N_CH, n_hidden=size, clipped=True, seed=0)
    # gain 0.2: at the default 0.5 this ALRNN's linear units, and a PLRNN of 50 latents, diverge in the
    # first windows, on torch too
    if kind == "plrnn":
        return PLRNN(0, size, N_CH, gain=0.2, seed=0)
    return ALRNN(0, size, N_CH, n_relu=size // 2, gain=0.2, seed=0)


def run_fit(data, size, batch, seq_len, n_batches, backend, kind="shplrnn") -> list[float]:
    model = make_model(kind, size)
    res = fit_teacher_forcing(model, data, observation="identity", alpha=ALPHA, n_epochs=1,
                              batches_per_epoch=n_batches, batch_size=batch, seq_len=seq_len,
                              progress=False, seed=0, backend=backend)
    assert res.config["backend"] == ("numba" if backend == "auto" else "torch")
    return res.history["loss"]


def plain_gtf(data, n_hidden, batch, seq_len, n_batches) -> None:
    """GTF of the clipped shallow PLRNN written out in torch: one autograd node per operation and step."""
    gen = torch.Generator().manual_seed(0)
    a = torch.full((N_LATENT,), 0.9).requires_grad_()
    w1 = (0.1 * torch.randn(N_LATENT, n_hidden, generator=gen)).requires_grad_()
    w2 = (torch.randn(n_hidden, N_LATENT, generator=gen) / N_LATENT ** 0.5).requires_grad_()
    h1, h2 = torch.zeros(N_LATENT, requires_grad=True), torch.randn(n_hidden, generator=gen).requires_grad_()

    def step(z):
        pre = z @ w2.T
        return a * z + (torch.relu(pre + h2) - torch.relu(pre)) @ w1.T + h1

    _plain_loop(step, [a, w1, w2, h1, h2], N_LATENT, data, batch, seq_len, n_batches)


def plain_pl_gtf(data, n_latent, batch, seq_len, n_batches, n_relu) -> None:
    """GTF of a PLRNN / ALRNN step ``z' = a z + W phi*(z) + h`` (``phi*``: ReLU on the last ``n_relu``
    latents) written out in torch, the first ``N_CH`` latents forced: one autograd node per operation
    and time step."""
    gen = torch.Generator().manual_seed(0)
    a = torch.full((n_latent,), 0.9).requires_grad_()
    w = (0.1 * torch.randn(n_latent, n_latent, generator=gen)).requires_grad_()
    h = torch.zeros(n_latent, requires_grad=True)
    n_lin = n_latent - n_relu

    def step(z):
        return a * z + torch.cat([z[:, :n_lin], torch.relu(z[:, n_lin:])], 1) @ w.T + h

    _plain_loop(step, [a, w, h], n_latent, data, batch, seq_len, n_batches)


def _plain_loop(step, params, n_latent, data, batch, seq_len, n_batches) -> None:
    """RAdam on the GTF loss of ``step`` (latent -> latent), the first ``N_CH`` latents observed and
    forced with ``ALPHA``, windows drawn with NumPy."""
    opt = torch.optim.RAdam(params, lr=1e-3)
    x = torch.as_tensor(data)
    rng = np.random.default_rng(0)
    for _ in range(n_batches):
        start = rng.integers(0, len(data) - seq_len - 1, batch)
        xb = x[start[:, None] + np.arange(seq_len + 1)]  # (batch, time, channel)
        z = torch.cat([xb[:, 0], torch.zeros(batch, n_latent - N_CH)], 1)
        preds = []
        for t in range(seq_len):
            z = step(z)
            preds.append(z[:, :N_CH])
            z = torch.cat([z[:, :N_CH] + ALPHA * (xb[:, t + 1] - z[:, :N_CH]), z[:, N_CH:]], 1)
        loss = ((torch.stack(preds, 1) - xb[:, 1:]) ** 2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()


def main() -> None:
    p = bench_parser(__doc__, quick="hidden 50, batch 16, one repeat",
                     repeats=(3, "interleaved repeats (median; default 3)"), out="training_fit.json")
    p.add_argument("--seq-len", type=int, default=100, help="time steps per window (default 100)")
    p.add_argument("--batches", type=int, default=5, help="optimiser steps per contender (default 5)")
    p.add_argument("--threads", type=int, default=1, help="torch intra-op threads (default 1)")
    p.add_argument("--model", choices=("shplrnn", "plrnn", "alrnn"), default="shplrnn",
                   help="the fitted model (default shplrnn: a clipped shallow PLRNN)")
    p.add_argument("--latent", type=int, default=N_LATENT,
                   help=f"latents of a PLRNN / ALRNN (default {N_LATENT}; the shallow PLRNN has {N_LATENT})")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    kind = args.model
    if kind == "shplrnn":
        grid = [(50, 16)] if args.quick else [(50, 16), (50, 64), (200, 16), (200, 64)]
    else:  # the size is the latent count
        grid = [(args.latent, 16)] if args.quick else [(args.latent, 16), (args.latent, 64)]
    repeats = 1 if args.quick else args.repeats
    data = oscillation(5_000, dtype=np.float32)
    rows = []
    load = os.getloadavg()
    size_name = "hidden" if kind == "shplrnn" else "latent"
    what = f"latent {N_LATENT}" if kind == "shplrnn" else kind
    print(f"{torch_line()}; {what}, seq_len {args.seq_len}, {args.batches} steps, "
          f"medians of {repeats}, load {load[0]:.1f}")
    print(f"{size_name:>6} {'batch':>5} {'fused ms/t':>10} {'torch x':>8} {'plain x':>8} {'loss diff':>9}")

    def plain(*shape):
        if kind == "shplrnn":
            return plain_gtf(data, *shape)
        return plain_pl_gtf(data, *shape, shape[0] if kind == "plrnn" else shape[0] // 2)

    for size, batch in grid:
        shape = (size, batch, args.seq_len, args.batches)
        run_fit(data, *shape[:3], 1, "auto", kind)  # warm-up (Numba cache, imports)
        plain(*shape[:3], 1)
        times = {"fit_fused": [], "fit_torch": [], "plain_gtf": []}
        losses = {}
        for _ in range(repeats):
            for name in times:
                t0 = time.perf_counter()
                if name == "plain_gtf":
                    plain(*shape)
                else:
                    losses[name] = run_fit(data, *shape, "auto" if name == "fit_fused" else "torch", kind)
                times[name].append((time.perf_counter() - t0) / (args.batches * args.seq_len))
        med = {k: statistics.median(v) for k, v in times.items()}
        if not losses["fit_fused"] or not losses["fit_torch"]:
            raise SystemExit(f"the fit diverged at size {size}, batch {batch} (no loss recorded); "
                             "a smaller model or another --model's settings run")
        diff = max(abs(f - r) / abs(r) for f, r in zip(losses["fit_fused"], losses["fit_torch"]))
        sizes = ({"n_latent": N_LATENT, "n_hidden": size} if kind == "shplrnn" else
                 {"model": kind, "n_latent": size})
        row = {**sizes, "batch_size": batch, "seq_len": args.seq_len,
               "optimizer_steps": args.batches, "seconds_per_time_step": times,
               "median_seconds_per_time_step": med,
               "ratios": {f"{k}_over_fit_fused": v / med["fit_fused"] for k, v in med.items()
                          if k != "fit_fused"},
               "max_loss_rel_diff": diff}
        rows.append(row)
        print(f"{size:>6} {batch:>5} {1000 * med['fit_fused']:>10.3f} "
              f"{med['fit_torch'] / med['fit_fused']:>8.2f} {med['plain_gtf'] / med['fit_fused']:>8.2f} "
              f"{diff:>9.1e}", flush=True)
    record = {"rows": rows, **({} if kind == "shplrnn" else {"model": kind}), "repeats": repeats,
              "torch": torch.__version__,
              "threads": torch.get_num_threads(), "machine": platform.machine(),
              "load_average_before": list(load), "load_average_after": list(os.getloadavg())}
    write_json(record, args.out)


if __name__ == "__main__":
    main()
