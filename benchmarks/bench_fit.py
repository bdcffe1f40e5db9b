"""Wall time of teacher-forcing fits on CPU versus sequence length and model size.

Fits a clipped shallow PLRNN (GTF, identity observation) to a synthetic 3-channel oscillation and
reports seconds per epoch (``--batches`` batches of 16 windows) after one warm-up epoch.

    OMP_NUM_THREADS=1 python benchmarks/bench_fit.py            # full grid
    OMP_NUM_THREADS=1 python benchmarks/bench_fit.py --quick    # 2 x 2 grid
"""

from __future__ import annotations

import time

import numpy as np
from _record import bench_parser, oscillation, torch_line, write_json

from neurodyn.models import ShallowPLRNN
from neurodyn.training import fit_teacher_forcing


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
    p = bench_parser(__doc__, quick="2 x 2 grid", json_file=True)
    p.add_argument("--batches", type=int, default=10, help="batches per epoch (default 10)")
    args = p.parse_args()
    sizes = [(3, 50), (10, 200)] if args.quick else [(3, 50), (10, 200), (20, 500)]
    seq_lens = [50, 200] if args.quick else [50, 100, 200, 400]
    data = oscillation(20_000)
    rows = []
    print(f"{torch_line()}; {args.batches} batches of 16 windows per epoch")
    print(f"{'latent':>6} {'hidden':>6} {'seq_len':>7} {'s/epoch':>8} {'ms/step':>8}")
    for n_latent, n_hidden in sizes:
        for seq_len in seq_lens:
            s = time_epoch(n_latent, n_hidden, seq_len, args.batches, data)
            per_step = 1000 * s / (args.batches * seq_len)
            rows.append({"n_latent": n_latent, "n_hidden": n_hidden, "seq_len": seq_len,
                         "seconds_per_epoch": s, "ms_per_time_step": per_step})
            print(f"{n_latent:>6} {n_hidden:>6} {seq_len:>7} {s:>8.3f} {per_step:>8.3f}", flush=True)
    if args.json:
        write_json(rows, args.json)


if __name__ == "__main__":
    main()
