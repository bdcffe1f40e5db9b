"""Train a leaky RNN on Romo's delayed frequency discrimination (Romo et al. 1999).

Runs the gallery page docs/gallery/task_training.py, the example's one source, for this task
(full size, or the site's small size with --tiny).

Usage: python examples/tasks/romo.py [--tiny]

Prints the held-out choice accuracy on the trained task and on its out-of-distribution variant
(pairs twice as close, four times the input noise)."""

from _run import command_line, run_task


def main(tiny: bool = False) -> dict:
    return run_task("romo", tiny=tiny)


if __name__ == "__main__":
    main(**vars(command_line(__doc__).parse_args()))
