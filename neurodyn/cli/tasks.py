"""``neurodyn tasks``: list the registered tasks and their options.

List the registered tasks and their options.
"""

from __future__ import annotations

import argparse
import dataclasses

from neurodyn.cli._common import add_command

__all__ = ["run"]

HELP = "list the tasks networks can be trained on"


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``neurodyn tasks`` on ``sub`` (the sub-parsers of the ``neurodyn`` parser)."""
    add_command(sub, __name__)


def run(args: argparse.Namespace) -> int:
    """Print each registered task, its one-line description and its options with their defaults.

    Returns the exit status 0.

    Examples
    --------
    >>> from neurodyn.cli.main import build_parser
    >>> from neurodyn.cli.tasks import run
    >>> run(build_parser().parse_args(["tasks"]))
    continuous_report        Remember one or two ring-coded angles and report the cued one as (cos, sin).
    ...
    flipflop                 N-bit flip-flop: remember the sign of the last pulse on each of n_bits channels.
                             --n-bits=3 --n-steps=64 --p-pulse=0.1 --dt=10.0
    ...
    0
    """
    from neurodyn.cli._flags import task_summary, to_flag
    from neurodyn.tasks import TASKS

    for name in sorted(TASKS):
        cls = TASKS[name]
        print(f"{name:24s} {task_summary(cls)}")
        opts = [
            f"{to_flag(f.name)}={f.default!r}"
            for f in dataclasses.fields(cls)
            if f.default is not dataclasses.MISSING
        ]
        if opts:
            print(" " * 25 + " ".join(opts))
    return 0
