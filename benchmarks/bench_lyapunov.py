"""Benchmark of the Lyapunov spectrum of large networks: Jacobians formed per chunk vs tangent products.

Network: ``LeakyRNN(0, n, 1, gain=1.5)`` (tanh, alpha 1), two exponents (``n_exponents=2``) of one
trajectory, ``--n-steps`` steps after 10 transient steps, float64. Compared side by side in one process:

* ``jacobian`` — ``jacobian="analytic"``: the closed-form Jacobians (state x state) of a chunk of steps,
  then the QR steps (the path every size took before the product path existed);
* ``jvp`` — ``jacobian="jvp"``: the products ``J Q`` with the two tangent vectors by automatic
  differentiation of the step, one step at a time; no Jacobian is formed.

Reported: wall time per step, the ratio jacobian / jvp, the largest block each path holds (the plan's
estimate, bytes) and the largest difference of the exponents. Run from the repository root:

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_lyapunov.py [--quick]

Writes a JSON file (``--out``, default ``benchmarks/results/lyapunov.json``).
"""

from __future__ import annotations

import os
import platform
import time

import numpy as np
import torch
from _record import bench_parser, write_json

from neurodyn import __version__
from neurodyn.analysis.lyapunov import lyapunov_spectrum
from neurodyn.analysis.lyapunov._spectrum import MAX_MEMORY, _plan
from neurodyn.models import LeakyRNN


def timed(model, n_steps: int, jacobian: str):
    t0 = time.perf_counter()
    res = lyapunov_spectrum(model, n_exponents=2, n_steps=n_steps, n_transient=10, jacobian=jacobian, seed=0)
    return res, (time.perf_counter() - t0) / (n_steps + 10)


def main() -> int:
    parser = bench_parser(__doc__, quick="sizes 64,256 and 50 steps", out="lyapunov.json")
    parser.add_argument("--sizes", default="64,256,512,1024", help="comma-separated numbers of units")
    parser.add_argument("--n-steps", type=int, default=200)
    args = parser.parse_args()
    sizes = [64, 256] if args.quick else [int(v) for v in args.sizes.split(",")]
    n_steps = 50 if args.quick else args.n_steps
    threads = torch.get_num_threads()
    lyapunov_spectrum(LeakyRNN(0, 8, 1, seed=0), n_steps=5, n_transient=0)  # compile the QR kernel
    torch.set_num_threads(threads)  # Numba's first parallel launch resets the OpenMP thread count
    rows = []
    print(f"{'units':>6} {'jacobian ms/step':>17} {'jvp ms/step':>12} {'ratio':>6} {'jacobian block':>15} "
          f"{'jvp block':>10} {'max |diff|':>10}")
    for n in sizes:
        model = LeakyRNN(0, n, 1, gain=1.5, seed=0)
        full, t_full = timed(model, n_steps, "analytic")
        prod, t_prod = timed(model, n_steps, "jvp")
        blocks = [_plan(1, n, 2, j, True, MAX_MEMORY).n_bytes for j in ("analytic", "jvp")]
        diff = float(np.max(np.abs(full.exponents - prod.exponents)))
        rows.append({"n_units": n, "jacobian_s_per_step": t_full, "jvp_s_per_step": t_prod,
                     "ratio": t_full / t_prod, "jacobian_block_bytes": blocks[0],
                     "jvp_block_bytes": blocks[1], "max_abs_diff": diff})
        print(f"{n:>6} {1e3 * t_full:>17.2f} {1e3 * t_prod:>12.2f} {t_full / t_prod:>6.1f} "
              f"{blocks[0] / 2**20:>12.1f} MiB {blocks[1] / 2**20:>6.2f} MiB {diff:>10.1e}")
    meta = {"neurodyn": str(__version__), "machine": platform.machine(), "processor": platform.processor(),
            "omp_num_threads": os.environ.get("OMP_NUM_THREADS"), "n_steps": n_steps}
    write_json({"meta": meta, "rows": rows}, args.out, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
