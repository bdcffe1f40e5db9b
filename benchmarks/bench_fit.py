"""Wall time of teacher-forcing fits on CPU versus sequence length and model size.

Fits a clipped shallow PLRNN (GTF, identity observation) to a synthetic 3-channel oscillation and
reports seconds per epoch (``--batches`` batches of 16 windows) after one warm-up epoch.

    OMP_NUM_THREADS=1 python benchmarks/bench_fit.py            # full grid
    OMP_NUM_THREADS=1 python benchmarks/bench_fit.py --quick    # 2 x 2 grid
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

from neurodyn.models import ShallowPLRNN
from neurodyn.training import fit_teacher_forcing


def synthetic(n: int = 20_000, seed: int = 0) -> np.ndarray:
    t = np.arange(n) * 0.05
    rng = np.random.default_rng(seed)
    x = np.stack([np.sin(t), np.sin(2.1 * t) * np.cos(0.3 * t), np.cos(t + 0.5 * np.sin(0.7 * t))], 1)
    return x + 0.05 * rng.standard_normal(x.shape)


def time_epoch(n_latent: int, n_hidden: int, seq_len: int, n_batches: int, data: np.ndarray) -> float:
    model = ShallowPLRNN(0, n_latent, 3, n_hidden=n_hidden, clipped=True, seed=0)
    kwargs = dict(observation="identity", alpha=0.2, batches_per_epoch=n_batches, batch_size=16,
                  seq_len=seq_len, progress=False, seed=0)
    fit_teacher_forcing(model, data, n_epochs=1, **kwargs)  # warm-up (imports, allocator)
    t0 = time.perf_counter()
    res = fit_teacher_forcing(model, data, n_epochs=2, **kwargs)
    assert res.status == "completed"
    return (time.perf_counter() - t0) / 2


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--batches", type=int, default=10, help="batches per epoch (default 10)")
    p.add_argument("--json", default=None, help="also write the results to this file")
    args = p.parse_args()
    sizes = [(3, 50), (10, 200)] if args.quick else [(3, 50), (10, 200), (20, 500)]
    seq_lens = [50, 200] if args.quick else [50, 100, 200, 400]
    data = synthetic()
    rows = []
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s); "
          f"{args.batches} batches of 16 windows per epoch")
    print(f"{'latent':>6} {'hidden':>6} {'seq_len':>7} {'s/epoch':>8} {'ms/step':>8}")
    for n_latent, n_hidden in sizes:
        for seq_len in seq_lens:
            s = time_epoch(n_latent, n_hidden, seq_len, args.batches, data)
            per_step = 1000 * s / (args.batches * seq_len)
            rows.append({"n_latent": n_latent, "n_hidden": n_hidden, "seq_len": seq_len,
                         "seconds_per_epoch": s, "ms_per_time_step": per_step})
            print(f"{n_latent:>6} {n_hidden:>6} {seq_len:>7} {s:>8.3f} {per_step:>8.3f}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
