"""The CLI's bad-input contract: exit status 2 and exactly one line on stderr, no traceback."""

from __future__ import annotations

from neurodyn.cli.main import main


def one_line_error(capsys, argv: list[str]) -> str:
    """Run ``neurodyn ARGV``, expect exit 2 and exactly one line on stderr; return that line."""
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err
