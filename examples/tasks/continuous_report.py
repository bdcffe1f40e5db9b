"""Train a leaky RNN on continuous-report working memory, optionally with two items and a
retro-cue (swap errors).

Runs the gallery page docs/gallery/task_training.py, the example's one source, for this task
(full size, or the site's small size with --tiny).

Usage: python examples/tasks/continuous_report.py [--tiny] [--two-items]

Prints the mean absolute report error, the fraction of reports within tolerance and, with two
items, the swap rate."""

from _run import command_line, run_task


def main(tiny: bool = False, two_items: bool = False) -> dict:
    return run_task("continuous_report", tiny=tiny, two_items=two_items)


if __name__ == "__main__":
    main(**vars(command_line(__doc__, two_items="two items and a retro-cue").parse_args()))
