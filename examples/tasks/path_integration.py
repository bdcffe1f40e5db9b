"""Train a leaky RNN to path-integrate velocity in a 2-D box (Cueva & Wei 2018; Sorscher et
al. 2019 trajectories), reading out position or place-cell activity.

Runs the gallery page docs/gallery/task_training.py, the example's one source, for this task
(full size, or the site's small size with --tiny).

Usage: python examples/tasks/path_integration.py [--tiny] [--place-cells]

Prints the mean decoded position error on trained-length paths and on 4x longer paths (OOD)."""

from _run import command_line, run_task


def main(tiny: bool = False, place_cells: bool = False) -> dict:
    return run_task("path_integration", tiny=tiny, place_cells=place_cells)


if __name__ == "__main__":
    main(**vars(command_line(__doc__, place_cells="place-cell targets").parse_args()))
