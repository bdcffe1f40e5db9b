"""Error messages in the command line's words: Python argument names become the flags that set them.

The library validates its arguments under their Python names (``n_units must be an integer >= 1``); a
command line user typed ``--n-units``. :func:`main <neurodyn.cli.main.main>` passes every one-line error
through :func:`name_flags` with the flags of the command that ran (:func:`option_flags`), so the message
names what the user can change.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Mapping

#: Python names whose flag is not their own name spelled with dashes, per command
ALIASES: dict[str, dict[str, str]] = {
    "train": {"density": "--rec-density", "target_metric": "--target-accuracy"},
}

_ASSIGNED = re.compile(r"(?<![\w.'\"-])([a-z]\w*)=('[^']*'|\"[^\"]*\"|[^\s,;)]*)")
_SNAKE = re.compile(r"(?<![\w.'\"-])([a-z][a-z0-9]*(?:_[a-z0-9]+)+)(?![\w'\"(=-])")
_LEADING = re.compile(r"^([a-z]\w*)(?= must | = | strength )")
_UNKNOWN = re.compile(r"(?<=unknown )([a-z]\w*)(?= ')")
_LISTED = re.compile(r"(?<=--[a-z])([\w-]*(?:, | and ))([a-z]\w*)(?![\w'\"(=-])")  # "--a, b": b too


def to_flag(name: str) -> str:
    """The command-line flag of the Python argument ``name``: ``n_units`` → ``--n-units``."""
    return "--" + name.replace("_", "-")


def task_summary(cls: type, default: str = "") -> str:
    """The first line of a task class's docstring, as the command line shows it (no ``rst`` quotes);
    ``default`` when the class has no docstring."""
    text = cls.__doc__ or default
    return text.strip().splitlines()[0].replace("``", "") if text else ""


def option_flags(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict[str, str]:
    """Python name → flag for every option of the (sub-)command that ``args`` was parsed into.

    An option is known under the name its flag spells (``--tol-q``: ``tol_q``) and under its ``dest``;
    the command's :data:`ALIASES` are added.

    Examples
    --------
    >>> from neurodyn.cli._flags import option_flags
    >>> from neurodyn.cli.main import build_parser
    >>> parser = build_parser("fixedpoints")
    >>> flags = option_flags(parser, parser.parse_args(["fixedpoints", "m.pt"]))
    >>> flags["tol_q"], flags["n_inits"], "help" in flags
    ('--tol-q', '--n-inits', False)
    """
    flags: dict[str, str] = dict(ALIASES.get(getattr(args, "command", None) or "", {}))
    while parser is not None:
        sub = None
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                sub = action
            elif action.option_strings and action.dest != "help":
                flag = max(action.option_strings, key=len)
                flags.setdefault(flag.lstrip("-").replace("-", "_"), flag)
                flags.setdefault(action.dest, flag)
        parser = None if sub is None else sub.choices.get(getattr(args, sub.dest, None))
    return flags


def name_flags(message: str, flags: Mapping[str, str]) -> str:
    """``message`` with the Python argument names in ``flags`` replaced by their flags.

    Replaced: ``name=value`` (``--name value``; ``name=True`` becomes ``--name``), names with an
    underscore anywhere (``n_units``), and a one-word name that starts the message before ``must``,
    ``=`` or ``strength`` (``lr must be > 0``), follows ``unknown`` (``unknown method 'x'``) or stands
    in a list after a flag (``--stimulus-ms, --response-ms and dt must be positive``). Quoted
    words, method calls (``name(``) and words already spelled as flags are left alone, as are names
    that are not options of the command.

    Examples
    --------
    >>> from neurodyn.cli._flags import name_flags
    >>> flags = {"n_units": "--n-units", "dale": "--dale", "dale_output": "--dale-output", "lr": "--lr",
    ...          "observation": "--observation"}
    >>> name_flags("n_units must be an integer >= 1, got 0", flags)
    '--n-units must be an integer >= 1, got 0'
    >>> name_flags("dale_output=True needs dale=True", flags)
    '--dale-output needs --dale'
    >>> name_flags("lr must be a finite number > 0; use observation='affine'", flags)
    '--lr must be a finite number > 0; use --observation affine'
    >>> name_flags("n_units, dale and lr must be set", flags)
    '--n-units, --dale and --lr must be set'
    >>> name_flags("the model has 3 units; state_dict key 'n_units' (see --n-units)", flags)
    "the model has 3 units; state_dict key 'n_units' (see --n-units)"
    """

    def assigned(match: re.Match) -> str:
        flag = flags.get(match.group(1))
        if flag is None:
            return match.group(0)
        value = match.group(2).strip("'\"")
        return flag if value in ("True", "") else f"{flag} {value}"

    def named(match: re.Match) -> str:
        return flags.get(match.group(1), match.group(0))

    def listed(match: re.Match) -> str:
        return match.group(1) + flags.get(match.group(2), match.group(2))

    message = _ASSIGNED.sub(assigned, message)
    for pattern in (_SNAKE, _LEADING, _UNKNOWN):
        message = pattern.sub(named, message)
    while (named_list := _LISTED.sub(listed, message)) != message:  # one more list item per pass
        message = named_list
    return message
