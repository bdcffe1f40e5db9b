"""Solution degeneracy of an ensemble of 2-bit flip-flop RNNs varying seed and size (Huang et al. 2025).

Usage: python examples/degeneracy_flipflop.py [--tiny] [--out-dir runs/example_degeneracy]

Trains one ensemble per network size (train_ensemble), then measures degeneracy at three levels:
the spread of task loss in and out of distribution (longer trials, rarer pulses), the mean pairwise
DSA distance of hidden-state trajectories on one shared seeded batch, and the mean permutation-invariant
distance of the recurrent weights. Writes degeneracy.nc and degeneracy.png. Uses only the public API.
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import neurodyn  # noqa: E402
from neurodyn.analysis import compute_solution_degeneracy, embed_distances  # noqa: E402
from neurodyn.models import LeakyRNN  # noqa: E402
from neurodyn.plotting import plot_embedding, plot_solution_degeneracy  # noqa: E402
from neurodyn.tasks import FlipFlop  # noqa: E402
from neurodyn.training import train_ensemble  # noqa: E402


def main(tiny: bool = False, out_dir: str = "runs/example_degeneracy") -> dict:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    task = FlipFlop(n_bits=2, n_steps=40 if tiny else 64, p_pulse=0.1)
    sizes = (8, 12) if tiny else (16, 32)
    n_seeds = 2 if tiny else 10
    models, names, size_of = [], [], []
    for k, n_units in enumerate(sizes):
        seeds = [100 * k + s for s in range(n_seeds)]
        ens = train_ensemble(
            lambda seed, n=n_units: LeakyRNN(task.n_inputs, n, task.n_outputs, alpha=0.5, seed=seed),
            task, seeds=seeds, n_iterations=60 if tiny else 800, batch_size=32 if tiny else 64, lr=1e-2,
            eval_every=0, progress=False,
        )
        models += ens.models
        names += [f"N{n_units}-s{s}" for s in seeds]
        size_of += [n_units] * n_seeds
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # DSA below full rank (rank 10 of units x delays)
        result = compute_solution_degeneracy(
            models, task, n_trials=16 if tiny else 64, seed=0, names=names,
            dynamics_kwargs={"n_delays": 3 if tiny else 5, "rank": 6 if tiny else 10},
        )
    result.to_xarray().to_netcdf(out / "degeneracy.nc", engine="h5netcdf")
    fig = plt.figure(figsize=(15, 3.8), layout="constrained")
    axes = fig.subplots(1, 4)
    plot_solution_degeneracy(result, axes=axes[:3])
    plot_embedding(embed_distances(result.dynamics, seed=0), ax=axes[3], color=np.asarray(size_of),
                   colorbar_label="units")
    axes[3].set_title("DSA embedding (MDS)")
    fig.savefig(out / "degeneracy.png", dpi=110)
    plt.close(fig)
    accuracy = [neurodyn.training.evaluate(m, task, seed=1)["accuracy"] for m in models]
    summary = {
        "n_networks": len(models),
        "mean_accuracy": float(np.mean(accuracy)),
        "behaviour_degeneracy_ood": result.behaviour_degeneracy_ood,
        "dynamics_degeneracy": result.dynamics_degeneracy,
        "weight_degeneracy": result.weight_degeneracy,
    }
    print(summary)
    return summary


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="small sizes (for CI)")
    parser.add_argument("--out-dir", default="runs/example_degeneracy")
    args = parser.parse_args()
    main(tiny=args.tiny, out_dir=args.out_dir)
