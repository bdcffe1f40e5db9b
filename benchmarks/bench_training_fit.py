"""Teacher-forcing fit throughput on the CPU: ``fit_teacher_forcing`` (fused) against plain torch.

A clipped shallow PLRNN (latent 10, hidden ``--hidden``) fitted by generalised teacher forcing
(alpha 0.2, identity observation of 3 channels, RAdam) to a synthetic 3-channel oscillation, in
windows of ``--seq-len`` steps and batches of ``--batch``. Contenders, the same number of
optimiser steps each, interleaved in this one process (median ms per time step of a window):

* ``fit_fused``: ``fit_teacher_forcing(..., backend="auto")`` — the whole call;
* ``fit_torch``: ``fit_teacher_forcing(..., backend="torch")`` — the reference path, whose losses
  the fused fit must reproduce (``max_loss_rel_diff`` in the JSON);
* ``plain_gtf``: a hand-written GTF loop in torch (written below; windows drawn with NumPy).

    python benchmarks/bench_training_fit.py                 # hidden 50, 200 x batch 16, 64
    python benchmarks/bench_training_fit.py --quick --out /dev/null
"""

from __future__ import annotations

import os
import platform
import statistics
import time

import numpy as np
import torch
from _record import bench_parser, oscillation, torch_line, write_json

from neurodyn.models import ShallowPLRNN
from neurodyn.training import fit_teacher_forcing

N_LATENT, N_CH, ALPHA = 10, 3, 0.2


def run_fit(data, n_hidden, batch, seq_len, n_batches, backend) -> list[float]:
    model = ShallowPLRNN(0, N_LATENT, N_CH, n_hidden=n_hidden, clipped=True, seed=0)
    res = fit_teacher_forcing(model, data, observation="identity", alpha=ALPHA, n_epochs=1,
                              batches_per_epoch=n_batches, batch_size=batch, seq_len=seq_len,
                              progress=False, seed=0, backend=backend)
    assert res.config["backend"] == ("numba" if backend == "auto" else "torch")
    return res.history["loss"]


def plain_gtf(data, n_hidden, batch, seq_len, n_batches) -> None:
    """GTF written out in torch: one autograd node per operation and time step."""
    gen = torch.Generator().manual_seed(0)
    a = torch.full((N_LATENT,), 0.9).requires_grad_()
    w1 = (0.1 * torch.randn(N_LATENT, n_hidden, generator=gen)).requires_grad_()
    w2 = (torch.randn(n_hidden, N_LATENT, generator=gen) / N_LATENT ** 0.5).requires_grad_()
    h1, h2 = torch.zeros(N_LATENT, requires_grad=True), torch.randn(n_hidden, generator=gen).requires_grad_()
    opt = torch.optim.RAdam([a, w1, w2, h1, h2], lr=1e-3)
    x = torch.as_tensor(data)
    rng = np.random.default_rng(0)
    for _ in range(n_batches):
        start = rng.integers(0, len(data) - seq_len - 1, batch)
        xb = x[start[:, None] + np.arange(seq_len + 1)]  # (batch, time, channel)
        z = torch.cat([xb[:, 0], torch.zeros(batch, N_LATENT - N_CH)], 1)
        preds = []
        for t in range(seq_len):
            pre = z @ w2.T
            z = a * z + (torch.relu(pre + h2) - torch.relu(pre)) @ w1.T + h1
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
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    grid = [(50, 16)] if args.quick else [(50, 16), (50, 64), (200, 16), (200, 64)]
    repeats = 1 if args.quick else args.repeats
    data = oscillation(5_000, dtype=np.float32)
    rows = []
    load = os.getloadavg()
    print(f"{torch_line()}; latent {N_LATENT}, seq_len {args.seq_len}, {args.batches} steps, "
          f"medians of {repeats}, load {load[0]:.1f}")
    print(f"{'hidden':>6} {'batch':>5} {'fused ms/t':>10} {'torch x':>8} {'plain x':>8} {'loss diff':>9}")
    for n_hidden, batch in grid:
        shape = (n_hidden, batch, args.seq_len, args.batches)
        run_fit(data, *shape[:3], 1, "auto")  # warm-up (Numba cache, imports)
        plain_gtf(data, *shape[:3], 1)
        times = {"fit_fused": [], "fit_torch": [], "plain_gtf": []}
        losses = {}
        for _ in range(repeats):
            for name in times:
                t0 = time.perf_counter()
                if name == "plain_gtf":
                    plain_gtf(data, *shape)
                else:
                    losses[name] = run_fit(data, *shape, "auto" if name == "fit_fused" else "torch")
                times[name].append((time.perf_counter() - t0) / (args.batches * args.seq_len))
        med = {k: statistics.median(v) for k, v in times.items()}
        diff = max(abs(f - r) / abs(r) for f, r in zip(losses["fit_fused"], losses["fit_torch"]))
        row = {"n_latent": N_LATENT, "n_hidden": n_hidden, "batch_size": batch, "seq_len": args.seq_len,
               "optimizer_steps": args.batches, "seconds_per_time_step": times,
               "median_seconds_per_time_step": med,
               "ratios": {f"{k}_over_fit_fused": v / med["fit_fused"] for k, v in med.items()
                          if k != "fit_fused"},
               "max_loss_rel_diff": diff}
        rows.append(row)
        print(f"{n_hidden:>6} {batch:>5} {1000 * med['fit_fused']:>10.3f} "
              f"{med['fit_torch'] / med['fit_fused']:>8.2f} {med['plain_gtf'] / med['fit_fused']:>8.2f} "
              f"{diff:>9.1e}", flush=True)
    record = {"rows": rows, "repeats": repeats, "torch": torch.__version__,
              "threads": torch.get_num_threads(), "machine": platform.machine(),
              "load_average_before": list(load), "load_average_after": list(os.getloadavg())}
    write_json(record, args.out)


if __name__ == "__main__":
    main()
