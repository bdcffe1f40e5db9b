"""``neurodyn`` command: one sub-command per module listed in :data:`COMMANDS`.

Each module ``neurodyn.cli.<name>`` defines ``add_parser(subparsers)``, which registers its
sub-command and sets ``func`` (``args -> int`` exit status) as a parser default.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from neurodyn._version import __version__

COMMANDS = [
    "tasks",
    "train",
    "fixedpoints",
    "fit",
    "evaluate",
    "manifolds",
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


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``neurodyn`` command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
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
