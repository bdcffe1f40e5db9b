"""Train a leaky RNN to path-integrate velocity in a 2-D box (Cueva & Wei 2018; Sorscher et
al. 2019 trajectories), reading out position or place-cell activity.

Usage: python examples/tasks/path_integration.py [--tiny] [--place-cells]

Prints the mean decoded position error on trained-length paths and on 4x longer paths (OOD).
Uses only the public API.
"""

from __future__ import annotations

from _run import command_line, train_and_report

from neurodyn.tasks import PathIntegration


def main(tiny: bool = False, place_cells: bool = False) -> dict:
    targets = "place_cells" if place_cells else "position"
    task = PathIntegration(n_dims=2, targets=targets, n_place_cells=64 if tiny else 512,
                           duration_ms=200 if tiny else 400)
    return train_and_report(
        task, lambda m, ood: f"position error {100 * m['position_error_m']:.1f} cm (R^2 {m['r2']:.3f}); "
                             f"4x longer paths {100 * ood['position_error_m']:.1f} cm",
        n_units=32 if tiny else 128, alpha=1.0, n_iterations=60 if tiny else 1000, lr=3e-3,
        target_metric=None)


if __name__ == "__main__":
    main(**vars(command_line(__doc__, place_cells="place-cell targets").parse_args()))
