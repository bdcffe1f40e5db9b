"""``neurodyn tasks``: list the registered tasks and their options."""

from __future__ import annotations

import argparse
import dataclasses

__all__ = ["add_parser", "run"]

HELP = "list the tasks networks can be trained on"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tasks", help=HELP, description="List the registered tasks and their options.")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from neurodyn.tasks import TASKS

    for name in sorted(TASKS):
        cls = TASKS[name]
        doc = (cls.__doc__ or "").strip().splitlines()[0].replace("``", "") if cls.__doc__ else ""
        print(f"{name:24s} {doc}")
        opts = [
            f"--{f.name.replace('_', '-')}={f.default!r}"
            for f in dataclasses.fields(cls)
            if f.default is not dataclasses.MISSING
        ]
        if opts:
            print(" " * 25 + " ".join(opts))
    return 0
