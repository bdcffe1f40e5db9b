"""Write the result files of ``tests/reference/results_v0/`` (files in the layouts before the shared format).

They were written with neurodyn at commit 98a2159, the last one before every result type carried a
``format`` attribute: fixed points and exact PLRNN cycles (both then ``format = neurodyn.fixed_points``),
manifolds (``neurodyn.manifolds``), and the other results as their ``to_xarray()`` dataset written with
``to_netcdf`` (no format attribute; the reconstruction file as ``neurodyn evaluate --out`` wrote it).
``tests/io/test_load_legacy.py`` checks that :func:`neurodyn.io.load` still reads every one of them.
Run from the repository root (of that commit): ``python tests/reference/make_result_references.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from problems import FlipTanh  # noqa: E402

import neurodyn.analysis as nda  # noqa: E402
from neurodyn.kernels import rollout  # noqa: E402
from neurodyn.models import PLRNN, LeakyRNN  # noqa: E402
from neurodyn.tasks import FlipFlop  # noqa: E402


def lozi() -> PLRNN:
    return PLRNN.from_arrays(np.array([[1.7, 1.0], [0.5, 0.0]]), np.array([[-3.4, 0.0], [0.0, 0.0]]),
                             np.array([1.0, 0.0]))


def write(ds, name: str, out: Path) -> None:
    ds.to_netcdf(out / name, engine="h5netcdf")


def main(out: Path = HERE / "results_v0") -> None:
    out.mkdir(exist_ok=True)
    fps = nda.find_fixed_points(FlipTanh(2.0), state_size=1, initial_states=np.linspace(-1, 1, 9)[:, None],
                                max_order=2, seed=7)
    fps.save(out / "fixed_points.nc", overwrite=True)
    slow = nda.find_fixed_points(lambda h, u: h + 0.05 * (1.0 + h**2), state_size=1,  # one slow point at 0
                                 initial_states=np.linspace(-1, 1, 5)[:, None], max_iters=2000)
    slow.save(out / "slow_point.nc", overwrite=True)
    two_cycle = PLRNN.from_arrays([0.5, 0.5], [[-2.0, 0.0], [0.0, 0.0]], [1.0, -1.0])
    cycles = nda.find_cycles(two_cycle, max_order=2, seed=5)
    cycles.save(out / "cycles.nc")
    saddle = np.array([1 / 2.2, 0.5 / 2.2])
    manifolds = nda.find_manifolds(lozi(), [saddle], box=3.0, max_depth=5, max_pieces=40, n_samples=2)
    manifolds.save(out / "manifolds.nc")
    write(nda.find_homoclinic_points(lozi(), manifolds).to_xarray(), "homoclinic.nc", out)
    basins = nda.compute_basins(two_cycle, cycles, grid=([(-1.0, 1.0), (-3.0, -1.0)], 3), max_steps=400)
    write(basins.to_xarray(), "basins.nc", out)
    write(nda.lyapunov_spectrum(lozi(), n_steps=200, n_transient=20, seed=3).to_xarray(), "lyapunov.nc", out)
    t = np.arange(120) * 0.3
    x = np.stack([np.sin(t), np.cos(t)], axis=1)
    model = PLRNN.from_arrays([0.9, 0.9], [[0.0, -0.3], [0.3, 0.0]], [0.0, 0.0])
    rec = nda.evaluate_reconstruction(model, x[:60], x[60:], observation="identity", n_transient=5,
                                      pe_steps=2, n_bins=4, seed=1).to_xarray()
    rec.attrs["fit_file"] = "fit.pt"  # as `neurodyn evaluate --out` wrote it
    write(rec, "reconstruction.nc", out)
    task = FlipFlop(n_bits=1, n_steps=20)
    nets = [LeakyRNN(1, 4, 1, seed=s) for s in (0, 1)]
    deg = nda.compute_solution_degeneracy(nets, task, n_trials=4, seed=2, dynamics_metric="cka")
    write(deg.to_xarray(), "degeneracy.nc", out)
    net = LeakyRNN(0, 3, 1, seed=4).double()
    roll = rollout(net, h0=torch.ones(2, 3, dtype=torch.float64), n_steps=4, backend="torch")
    write(roll.to_xarray(), "rollout.nc", out)


if __name__ == "__main__":
    main()
