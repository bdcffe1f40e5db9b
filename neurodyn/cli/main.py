"""``neurodyn`` command: one sub-command per module listed in :data:`COMMANDS`.

Each module ``neurodyn.cli.<name>`` defines ``add_parser(subparsers)``, which registers its
sub-command and sets ``func`` (``args -> int`` exit status) as a parser default.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from neurodyn._version import __version__

__all__ = ["CLIError", "build_parser", "main"]

COMMANDS = [
    "tasks",
    "train",
    "fixedpoints",
    "fit",
    "evaluate",
    "manifolds",
    "sweep",
]

# Errors that are the user's input, reported as one line (``--debug`` shows the traceback).
# OSError covers unreadable / unwritable paths (permissions, a full disk).
_USER_ERRORS = (OSError, ValueError, KeyError, ImportError, TypeError)


class CLIError(Exception):
    """An error to report as one line with exit status 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="neurodyn",
        description="Train recurrent networks and analyse their dynamics.",
    )
    parser.add_argument("--version", action="version", version=f"neurodyn {__version__}")
    parser.add_argument("--debug", action="store_true", help="show full tracebacks on errors")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"neurodyn.cli.{name}").add_parser(sub)
    return parser


# Argument names that every sub-command uses for files it reads and files it writes.
_INPUT_ARGS = ("model", "data", "fit", "states", "deflate_against")
_OUTPUT_ARGS = ("out", "plot")


def _check_paths(args: argparse.Namespace) -> None:
    """Before any work: no output may be an input file (even with --overwrite); --plot must be an image."""
    from pathlib import Path

    from neurodyn.cli._common import check_figure_suffix

    inputs = []
    for name in _INPUT_ARGS:
        value = getattr(args, name, None)
        inputs += value if isinstance(value, list) else [value]
    read = {Path(p).resolve() for p in inputs if isinstance(p, str)}
    for name in _OUTPUT_ARGS:
        value = getattr(args, name, None)
        if isinstance(value, str) and Path(value).resolve() in read:
            raise FileExistsError(
                f"--{name} {value} is an input file of this command; choose another output name"
            )
    out, plot = getattr(args, "out", None), getattr(args, "plot", None)
    if isinstance(plot, str):
        if isinstance(out, str) and Path(out).resolve() == Path(plot).resolve():
            raise FileExistsError(f"--out and --plot are the same file {out}; give two names")
        check_figure_suffix(plot)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``neurodyn`` command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        _check_paths(args)
        return int(args.func(args) or 0)
    except (CLIError, *_USER_ERRORS) as err:
        if args.debug:
            raise
        msg = err.args[0] if isinstance(err, KeyError) and err.args else err
        msg = " ".join(str(msg).splitlines())  # always one line
        print(f"neurodyn {args.command}: error: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        if args.debug:
            raise
        print(f"neurodyn {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
