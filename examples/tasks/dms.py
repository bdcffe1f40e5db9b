"""Train a leaky RNN on delayed match-to-sample.

Runs the gallery page docs/gallery/task_training.py, the example's one source, for this task
(full size, or the site's small size with --tiny).

Usage: python examples/tasks/dms.py [--tiny]

Prints the held-out match / non-match accuracy on the trained delays and on longer
out-of-distribution delays."""

from _run import command_line, run_task


def main(tiny: bool = False) -> dict:
    return run_task("dms", tiny=tiny)


if __name__ == "__main__":
    main(**vars(command_line(__doc__).parse_args()))
