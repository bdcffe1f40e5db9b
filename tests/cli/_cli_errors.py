"""The CLI's bad-input contract: exit status 2 and exactly one error line on stderr, no traceback (after any
one-line warnings the command printed before it failed, e.g. a recording without a sampling interval)."""

from __future__ import annotations

from neurodyn.cli.main import main


def error_lines(err: str, command: str) -> list[str]:
    """The lines of ``err`` (a command's stderr) other than its one-line warnings."""
    return [line for line in err.splitlines() if not line.startswith(f"neurodyn {command}: warning: ")]


def one_line_error(capsys, argv: list[str]) -> str:
    """Run ``neurodyn ARGV``, expect exit 2 and exactly one error line on stderr; return that line."""
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = error_lines(err, argv[0])
    assert len(lines) == 1 and err.endswith("\n") and "Traceback" not in err, err
    return lines[0] + "\n"
