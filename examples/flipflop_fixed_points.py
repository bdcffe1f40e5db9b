"""Train a 3-bit flip-flop RNN and analyse its fixed points (Sussillo & Barak 2013).

Usage: python examples/flipflop_fixed_points.py [--tiny] [--out-dir runs/example_flipflop]

A trained network stores each of the 2**3 bit patterns as a stable fixed point; saddles with one
unstable direction sit between neighbouring corners and route the state from one memory to the next.
Uses only the public API.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

import neurodyn  # noqa: E402
from neurodyn.models import LeakyRNN  # noqa: E402
from neurodyn.tasks import FlipFlop  # noqa: E402


def main(tiny: bool = False, out_dir: str = "runs/example_flipflop") -> dict:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    task = FlipFlop(n_bits=3, n_steps=64, p_pulse=0.1)
    model = LeakyRNN(task.n_inputs, 24 if tiny else 64, task.n_outputs, alpha=1.0, seed=0)
    trained = neurodyn.train(
        model, task, n_iterations=150 if tiny else 1500, batch_size=64, lr=1e-2, seed=0,
        target_metric=("accuracy", 0.999), progress=False,
    )
    metrics = neurodyn.training.evaluate(trained.model, task, seed=1)
    print(f"accuracy after {trained.config['iterations_run']} iterations: {metrics['accuracy']:.4f}")

    fps = neurodyn.analysis.find_fixed_points(
        trained.model, task=task, n_inits=128 if tiny else 1024, seed=0
    )
    print(fps.summary())
    fps.to_xarray().to_netcdf(out / "fixedpoints.nc", engine="h5netcdf")

    batch = task.sample(16, seed=2)
    with torch.no_grad():
        states = trained.model(torch.as_tensor(batch.inputs), noise=False).states.numpy()
    title = neurodyn.plotting.condition_title(fps, model=type(trained.model).__name__)
    axes = neurodyn.plotting.plot_fixed_point_figure(fps, trajectories=states, title=title)
    axes[0].figure.savefig(out / "fixedpoints.png", dpi=120)
    plt.close(axes[0].figure)
    ds = fps.to_xarray()
    stable = int(np.sum((ds.stability.values == "stable") & ds.converged.values))
    return {"accuracy": metrics["accuracy"], "n_stable": stable}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="small sizes (for CI)")
    parser.add_argument("--out-dir", default="runs/example_flipflop")
    args = parser.parse_args()
    main(args.tiny, args.out_dir)
