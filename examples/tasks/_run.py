"""What the task examples share: run the gallery page docs/gallery/task_training.py (their one source) for
one task and print its report, and read the examples' command lines."""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
from pathlib import Path

if str(Path(__file__).resolve().parents[1]) not in sys.path:  # examples/, for the gallery runner
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _gallery import page_parser, run_page  # noqa: E402
from matplotlib import pyplot as plt  # noqa: E402


def run_task(name: str, *, tiny: bool, **variant: bool | str) -> dict:
    """Train the page's network on task ``name`` (the site's size if ``tiny``, else full size), print its
    report and return ``{"metrics": ..., "ood": ...}``, its metrics on fresh trials of the task and of its
    out-of-distribution variant.

    Each keyword of ``variant`` sets ``NEURODYN_<KEYWORD>`` for the page (``True`` → ``1``).
    """
    settings = {key: int(value) if isinstance(value, bool) else value for key, value in variant.items()}
    with contextlib.redirect_stdout(io.StringIO()):  # the page's report of every task it trained
        page = run_page("task_training", tiny=tiny, task=name, **settings)
    plt.close(page["fig"])
    print("\n".join(page["reports"][name]))
    return page["results"][name]


def command_line(doc: str, **switches: str) -> argparse.ArgumentParser:
    """The parser of an example whose docstring is ``doc``: ``--tiny`` and one on/off flag per ``switches``
    (keyword ``two_items`` → flag ``--two-items``, with the value as its help)."""
    parser = page_parser(doc, None)
    for name, help_text in switches.items():
        parser.add_argument(f"--{name.replace('_', '-')}", action="store_true", help=help_text)
    return parser
