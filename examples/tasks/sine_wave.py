"""Train a leaky RNN to generate sine waves whose frequency a static input selects
(Sussillo & Barak 2013).

Runs the gallery page docs/gallery/task_training.py, the example's one source, for this task
(full size, or the site's small size with --tiny).

Usage: python examples/tasks/sine_wave.py [--tiny]

Prints R^2 on the trained frequencies and on frequencies between and beyond them (OOD)."""

from _run import command_line, run_task


def main(tiny: bool = False) -> dict:
    return run_task("sine_wave", tiny=tiny)


if __name__ == "__main__":
    main(**vars(command_line(__doc__).parse_args()))
