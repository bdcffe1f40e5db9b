"""How well a flow-matching density keeps a heavy tail: excess kurtosis against training length.

Draws ``m ~ Student t (6 dof)`` scaled to unit variance (population excess kurtosis 3), fits
``neurodyn.training.fit_flow_matching`` (its defaults: 2 x 64 SiLU field, 4 batches of 256 per epoch)
for several epoch counts, and reports the excess kurtosis of 20 000 draws with the default 24 RK4
steps and with 96 (to separate the integrator from the fit), the largest |draw| and the CPU time.

Usage: python benchmarks/bench_flow_tails.py [--n-samples 200,2000] [--epochs 30,100,300,1000] [--quick]
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
from _record import bench_parser


def excess_kurtosis(x: np.ndarray) -> float:
    x = x - x.mean()
    return float((x ** 4).mean() / (x ** 2).mean() ** 2 - 3.0)


def main(n_samples: list[int], epochs: list[int], steps: list[int]) -> None:
    import torch

    from neurodyn.training import fit_flow_matching

    torch.set_num_threads(1)
    for n in n_samples:
        m = np.random.default_rng(0).standard_t(6, (n, 1)) / np.sqrt(6 / 4)
        print(f"{n} samples: excess kurtosis {excess_kurtosis(m[:, 0]):.2f}, max |m| {np.abs(m).max():.1f}")
        for e in epochs:
            t = time.process_time()
            flow = fit_flow_matching(m, n_epochs=e, seed=0)
            for s in steps:
                x = dataclasses.replace(flow, n_steps=s).sample(20000, seed=7).numpy()[:, 0]
                print(f"  {e:5d} epochs, {s:3d} RK4 steps: excess kurtosis {excess_kurtosis(x):.2f}, "
                      f"max |x| {np.abs(x).max():.1f}, {flow.status}, {time.process_time() - t:.1f} s CPU")


if __name__ == "__main__":
    p = bench_parser(__doc__, quick="200 samples, 10 epochs, 24 steps")
    p.add_argument("--n-samples", default="200,2000", help="comma-separated training set sizes")
    p.add_argument("--epochs", default="30,100,300,1000", help="comma-separated epoch counts")
    p.add_argument("--steps", default="24,96", help="comma-separated RK4 step counts for sampling")
    a = p.parse_args()
    if a.quick:
        a.n_samples, a.epochs, a.steps = "200", "10", "24"
    main([int(v) for v in a.n_samples.split(",")], [int(v) for v in a.epochs.split(",")],
         [int(v) for v in a.steps.split(",")])
