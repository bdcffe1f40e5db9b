"""Train a leaky RNN to path-integrate velocity in a 2-D box (Cueva & Wei 2018; Sorscher et
al. 2019 trajectories), reading out position or place-cell activity.

Usage: python examples/tasks/path_integration.py [--tiny] [--place-cells]

Prints the mean decoded position error on trained-length paths and on 4x longer paths (OOD).
Uses only the public API.
"""

from __future__ import annotations

import argparse

import neurodyn
from neurodyn.models import LeakyRNN
from neurodyn.tasks import PathIntegration


def main(tiny: bool = False, place_cells: bool = False) -> dict:
    targets = "place_cells" if place_cells else "position"
    task = PathIntegration(n_dims=2, targets=targets, n_place_cells=64 if tiny else 512,
                           duration_ms=200 if tiny else 400)
    model = LeakyRNN(task.n_inputs, 32 if tiny else 128, task.n_outputs, alpha=1.0, seed=0)
    result = neurodyn.train(
        model, task, n_iterations=60 if tiny else 1000, batch_size=64, lr=3e-3, seed=0,
        progress=False,
    )
    metrics = neurodyn.training.evaluate(result.model, task, seed=1)
    ood = neurodyn.training.evaluate(result.model, task.ood(), seed=1)
    print(f"position error {100 * metrics['position_error_m']:.1f} cm (R^2 {metrics['r2']:.3f}); "
          f"4x longer paths {100 * ood['position_error_m']:.1f} cm")
    return {"metrics": metrics, "ood": ood}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="a few seconds, for CI")
    parser.add_argument("--place-cells", action="store_true", help="place-cell targets")
    args = parser.parse_args()
    main(tiny=args.tiny, place_cells=args.place_cells)
