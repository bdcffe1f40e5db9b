"""``neurodyn`` command: one sub-command per module listed in :data:`COMMANDS`.

Each module ``neurodyn.cli.<name>`` defines ``HELP``, its one-line summary, ``add_parser(subparsers)``,
which registers its sub-command (through ``_common.add_command``: the description is the
second paragraph of the module docstring), and ``run`` (``args -> int`` exit status), which
:func:`build_parser` sets as the sub-command's ``func`` default. The modules import
NumPy, torch and the rest of neurodyn only inside their functions, and :func:`main` builds only the
sub-command it runs (the others from ``HELP``), so ``neurodyn --help`` and a mistyped option answer
without loading them.
"""

from __future__ import annotations

import argparse
import copy
import importlib
import sys
import warnings
from pathlib import Path

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
    """An error to report as one line with exit status 2.

    Examples
    --------
    A sub-command raises it for a problem with the user's input; :func:`main` prints it as one line:

    >>> import contextlib
    >>> import io
    >>> from unittest import mock
    >>> from neurodyn.cli.main import CLIError, main
    >>> def refuse(args):
    ...     raise CLIError("nothing to list with these options")
    >>> err = io.StringIO()
    >>> with mock.patch("neurodyn.cli.tasks.run", refuse), contextlib.redirect_stderr(err):
    ...     status = main(["tasks"])
    >>> status, err.getvalue().strip()
    (2, 'neurodyn tasks: error: nothing to list with these options')
    """


class HelpFormatter(argparse.HelpFormatter):
    """Appends ``(default: …)`` to every option whose help does not already name its default."""

    def add_argument(self, action: argparse.Action) -> None:
        if action.help is None and _default_text(action) is not None:  # an option without help text
            action = copy.copy(action)
            action.help = ""
            action.help = self._get_help_string(action)
        super().add_argument(action)

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text, shown = action.help or "", _default_text(action)
        if shown is None or "default" in text:
            return text
        return f"{text} (default: {shown})".lstrip()


def _default_text(action: argparse.Action) -> str | None:
    """How to show an option's default in its help, or None when there is nothing to show."""
    if not action.option_strings or action.default in (None, False, argparse.SUPPRESS):
        return None
    if isinstance(action.default, tuple):
        return ",".join(map(str, action.default))
    return "%(default)s"


class _Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose help (and sub-commands' help) shows the defaults."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``neurodyn`` parser; with ``command``, only that sub-command is built in full.

    The other sub-commands are listed from their module's ``HELP`` (modules without one are built in
    full), so parsing one command imports no other command's dependencies.

    Examples
    --------
    >>> from neurodyn.cli.main import build_parser
    >>> from neurodyn.cli import fixedpoints
    >>> args = build_parser().parse_args(["fixedpoints", "model.pt", "--n-inits", "8"])
    >>> args.command, args.model, args.n_inits, args.func is fixedpoints.run
    ('fixedpoints', 'model.pt', 8, True)
    """
    parser = _Parser(prog="neurodyn", description="Train recurrent networks and analyse their dynamics.")
    parser.add_argument("--version", action="version", version=f"neurodyn {__version__}")
    parser.add_argument("--debug", action="store_true", help="show full tracebacks on errors")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        module = importlib.import_module(f"neurodyn.cli.{name}")
        if command is None or name == command or not hasattr(module, "HELP"):
            module.add_parser(sub)
            sub.choices[name].set_defaults(func=module.run)
        else:
            sub.add_parser(name, help=module.HELP)
    return parser


def _command(argv: list[str]) -> str | None:
    """The sub-command named in ``argv`` (the first word that is not an option), if any."""
    for word in argv:
        if not word.startswith("-"):
            return word if word in COMMANDS else None
    return None


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
    """Entry point of the ``neurodyn`` command; returns the exit status.

    Examples
    --------
    User errors (bad options or files, :class:`CLIError`) are reported as one line on stderr with
    exit status 2; ``--debug`` shows the traceback instead.

    >>> import contextlib
    >>> import io
    >>> from neurodyn.cli.main import main
    >>> main(["tasks"])
    continuous_report ...
    0
    >>> err = io.StringIO()
    >>> with contextlib.redirect_stderr(err):
    ...     status = main(["fixedpoints", "no-such-model.pt"])
    >>> status, err.getvalue().startswith("neurodyn fixedpoints: error:"), len(err.getvalue().splitlines())
    (2, True, 1)
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(_command(argv) or "")
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():  # restores the caller's warning display afterwards
            if not args.debug:
                warnings.showwarning = _warning_line(parser, args)
            _check_paths(args)
            return int(args.func(args) or 0)
    except (CLIError, *_USER_ERRORS) as err:
        if args.debug:
            raise
        from neurodyn.cli._flags import name_flags, option_flags

        msg = err.args[0] if isinstance(err, KeyError) and err.args else err
        msg = " ".join(str(msg).splitlines())  # always one line
        msg = name_flags(msg, option_flags(parser, args))  # the flags the user typed, not Python names
        print(f"neurodyn {args.command}: error: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        if args.debug:
            raise
        print(f"neurodyn {args.command}: interrupted", file=sys.stderr)
        return 130


def _warning_line(parser: argparse.ArgumentParser, args: argparse.Namespace):
    """A ``warnings.showwarning`` that prints a warning raised in neurodyn's code as one line on stderr,
    ``neurodyn <command>: warning: <message>`` with the flags the user typed for the Python names it
    gives (as errors are reported); other warnings keep Python's format (with ``--debug``, all do)."""
    default = warnings.showwarning
    package = str(Path(__file__).resolve().parents[1])

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        if not str(Path(filename).resolve()).startswith(package):
            default(message, category, filename, lineno, file, line)
            return
        from neurodyn.cli._flags import name_flags, option_flags

        msg = name_flags(" ".join(str(message).splitlines()), option_flags(parser, args))
        print(f"neurodyn {args.command}: warning: {msg}", file=sys.stderr if file is None else file)

    return show


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
