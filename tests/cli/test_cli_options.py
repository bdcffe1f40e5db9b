"""The options that several sub-commands share: one definition, the same flags and help everywhere, and
one range check."""

import argparse
import math

import pytest

from neurodyn.cli._common import check_bounds
from neurodyn.cli.main import build_parser

BOUNDS = (("--lr", "lr", 0.0, False), ("--n-bins", "n_bins", 1, True))


@pytest.mark.parametrize(("lr", "n_bins", "message"), [
    (0.0, 1, "--lr must be > 0.0, got 0.0"),                # an open bound refuses the bound itself
    (math.inf, 1, "--lr must be > 0.0, got inf"),            # and anything not finite
    (math.nan, 1, "--lr must be > 0.0, got nan"),
    (1e-3, 0, "--n-bins must be >= 1, got 0"),
    (None, -2, "--n-bins must be >= 1, got -2"),            # an option not given is not checked
])
def test_check_bounds_names_the_flag_and_the_range(lr, n_bins, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        check_bounds(argparse.Namespace(lr=lr, n_bins=n_bins), BOUNDS)


def test_check_bounds_passes_values_at_a_closed_bound_and_options_not_given():
    check_bounds(argparse.Namespace(lr=1e-9, n_bins=1), BOUNDS)
    check_bounds(argparse.Namespace(lr=None, n_bins=None), BOUNDS)


def _options(command: str, *argv: str) -> dict[str, argparse.Action]:
    parser = build_parser(command)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    if argv:  # `train TASK`: the task's parser, whose options are added when it is first used
        sub = next(a for a in sub._actions if isinstance(a, argparse._SubParsersAction)).choices[argv[0]]
        sub.format_help()
    return {flag: a for a in sub._actions for flag in a.option_strings}


def test_analysis_commands_take_the_same_result_files():
    fixedpoints, manifolds = _options("fixedpoints"), _options("manifolds")
    for flag in ("--out", "--plot", "--overwrite"):
        assert fixedpoints[flag].default == manifolds[flag].default
    overwrite = "replace existing --out/--plot files"
    assert fixedpoints["--overwrite"].help == manifolds["--overwrite"].help == overwrite
    assert fixedpoints["--out"].help == "netCDF file for the results (e.g. fixedpoints.nc)"
    assert manifolds["--plot"].help == "figure file (e.g. manifolds.png)"


def test_training_commands_take_the_same_checkpoint_file():
    fit, train = _options("fit"), _options("train", "flipflop")
    assert (fit["--out"].default, fit["--out"].help) == ("fit.pt", "checkpoint to write (default fit.pt)")
    assert (train["--out"].default, train["--out"].help) == ("model.pt",
                                                             "checkpoint to write (default model.pt)")
    assert fit["--overwrite"].help == train["--overwrite"].help == "replace an existing --out"


@pytest.mark.parametrize("argv", [["fit", "missing.npy"], ["fixedpoints", "missing.pt"],
                                  ["manifolds", "missing.pt"], ["evaluate", "missing.pt"],
                                  ["train", "flipflop"]])
def test_a_negative_seed_is_refused_before_any_file_is_read(argv, tmp_path, capsys, monkeypatch):
    from _cli_errors import one_line_error

    monkeypatch.chdir(tmp_path)
    line = one_line_error(capsys, [*argv, "--seed", "-1"])
    assert line == f"neurodyn {argv[0]}: error: --seed must be >= 0, got -1\n"
    assert list(tmp_path.iterdir()) == []
