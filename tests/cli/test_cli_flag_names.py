"""Errors that the library raises under Python argument names reach the command line user under the
flags they typed (``--n-units``, not ``n_units``), for every sub-command that runs library code."""

from __future__ import annotations

import re

import numpy as np
import pytest
from _cli_errors import error_lines

from neurodyn.cli._flags import name_flags, option_flags
from neurodyn.cli.main import build_parser, main
from neurodyn.io import save_checkpoint
from neurodyn.models import PLRNN, LeakyRNN

TRAIN = ["--n-units", "4", "--n-iterations", "1", "--batch-size", "2", "--no-progress"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("flags")
    save_checkpoint(tmp / "leaky.pt", LeakyRNN(1, 4, 1, seed=0))
    save_checkpoint(tmp / "plrnn.pt", PLRNN(0, 2, 2, seed=0))
    t = np.arange(200) * 0.1
    np.save(tmp / "d.npy", np.stack([np.sin(t), np.cos(t)], 1))
    return tmp


def error_line(capsys, argv) -> str:
    assert main(argv) == 2, argv
    err = error_lines(capsys.readouterr().err, argv[0])
    assert len(err) == 1 and ": error: " in err[0], err
    return err[0]


def python_names_left(line: str, argv: list[str]) -> list[str]:
    """Snake-case words in ``line`` that are options of the command ``argv`` ran (and so have a flag)."""
    parser = build_parser(argv[0])
    flags = option_flags(parser, parser.parse_args(argv))
    return [w for w in re.findall(r"(?<![-'\w])[a-z]\w*_\w+", line) if w in flags]


@pytest.mark.parametrize("argv, expected", [
    (["train", "flipflop", "--n-bits", "0"], "--n-bits must be an integer >= 1, got 0"),
    (["train", "flipflop", "--n-units", "0"], "--n-units must be an integer >= 1, got 0"),
    (["train", "flipflop", "--dale-output"], "--dale-output needs --dale"),
    (["train", "flipflop", "--rec-density", "2"], "--rec-density must be in [0, 1], got 2.0"),
    (["train", "flipflop", "--noise-std", "-1"], "--noise-std must be finite and >= 0"),
    (["train", "flipflop", "--spectral-radius", "0"], "--spectral-radius must be finite and > 0"),
    (["train", "flipflop", "--output-scale", "huge"], "unknown --output-scale 'huge'"),
    (["train", "flipflop", "--batch-size", "0"], "--batch-size must be an integer >= 1"),
    (["train", "flipflop", "--lr", "0"], "--lr must be a finite number > 0"),
    (["train", "flipflop", "--weight-decay", "-1"], "--weight-decay must be a finite number >= 0"),
    (["train", "flipflop", "--l1-rate", "-1"], "--l1-rate strength must be finite and >= 0"),
    (["train", "flipflop", "--eval-every", "-1"], "--eval-every must be an integer >= 0"),
    (["train", "flipflop", "--eval-every", "0", "--early-stopping", "loss:3"],
     "--early-stopping, --curriculum and --target-accuracy need evaluations; set --eval-every > 0"),
    (["train", "flipflop", "--seed", "-1"], "--seed must be >= 0, got -1"),
    (["train", "continuous_report", "--stimulus-ms", "0"],
     "--stimulus-ms, --response-ms must be positive and finite"),
    *[(["train", task, "--dt", value], f"--dt must be a finite number > 0 (ms per time step), got {value}")
      for task in ("flipflop", "romo", "sine_wave", "path_integration") for value in ("nan", "0", "-1")],
    (["train", "continuous_report", "--n-ring", "2"], "--n-ring must be an integer >= 3"),
    (["train", "romo", "--input-noise", "nan"], "--input-noise must be a finite number >= 0, got nan"),
    *[(["train", task, "--delay-max-ms", "inf"],  # was an OverflowError traceback
       "need 0 <= --delay-min-ms <= --delay-max-ms, both finite (ms); got ") for task in ("romo", "dms")],
])
def test_train_errors_name_flags(tmp_path, capsys, argv, expected):
    line = error_line(capsys, [*argv[:2], *TRAIN, *argv[2:], "--out", str(tmp_path / "m.pt")])
    assert expected in line
    assert python_names_left(line, argv) == []
    assert not (tmp_path / "m.pt").exists()


@pytest.mark.parametrize("command, model, extra, expected", [
    ("fixedpoints", "leaky.pt", ["--tol-q", "0"], "--tol-q must be a finite number > 0, got 0.0"),
    ("fixedpoints", "leaky.pt", ["--max-iters", "0"], "--max-iters must be an integer >= 1, got 0"),
    ("fixedpoints", "leaky.pt", ["--tol-unique", "-1"], "--tol-unique must be a finite number > 0"),
    ("fixedpoints", "leaky.pt", ["--method", "newtonish"], "unknown --method 'newtonish'"),
    ("fixedpoints", "plrnn.pt", ["--seed", "-1"], "--seed must be >= 0, got -1"),
    ("manifolds", "plrnn.pt", ["--seed", "-1"], "--seed must be >= 0, got -1"),
    ("fit", "d.npy", ["--dt", "0"], "--dt must be a positive number of seconds"),
    ("fit", "d.npy", ["--key", "foo"], "d.npy holds one array, so a key (--key foo) picks nothing"),
    ("fit", "d.npy", ["--bin-size", "0.1"], "a bin size (--bin-size 0.1) bins the spike times of .nwb units"),
    ("fixedpoints", "leaky.pt", ["--out", "fp.txt"],
     "fp.txt: results are written as netCDF; end the name in .nc"),
    ("manifolds", "plrnn.pt", ["--out", "rec.npy"],
     "rec.npy: results are written as netCDF; end the name in .nc"),
    ("manifolds", "plrnn.pt", ["--dims", "0,0", "--plot", "m.png"], "--dims 0,0 names a dimension twice"),
    ("manifolds", "plrnn.pt", ["--dims", "a,b"], "--dims must be 2 or 3 comma-separated state dimensions"),
    ("fit", "d.npy", ["--seed", "-1", "--epochs", "1", "--batches-per-epoch", "1", "--seq-len", "10",
                      "--no-progress"], "--seed must be >= 0, got -1"),
])
def test_other_commands_name_flags(files, tmp_path, capsys, command, model, extra, expected):
    out = [] if "--out" in extra else ["--out", str(tmp_path / ("out.nc" if command != "fit" else "out.x"))]
    argv = [command, str(files / model), *(str(tmp_path / e) if e in ("fp.txt", "rec.npy", "m.png") else e
                                           for e in extra), *out]
    line = error_line(capsys, argv)
    assert expected in line
    assert python_names_left(line, argv) == []


def test_evaluate_names_flags(files, tmp_path, capsys):
    fit = tmp_path / "fit.pt"
    assert main(["fit", str(files / "d.npy"), "--model", "plrnn", "--epochs", "1", "--batches-per-epoch", "1",
                 "--batch-size", "2", "--seq-len", "10", "--no-progress", "--out", str(fit)]) == 0
    capsys.readouterr()
    assert "--seed must be >= 0, got -1" in error_line(capsys, ["evaluate", str(fit), "--seed", "-1"])


def test_names_that_are_not_options_of_the_command_are_kept():
    parser = build_parser("fixedpoints")
    flags = option_flags(parser, parser.parse_args(["fixedpoints", "m.pt"]))
    message = "n_units must be positive; the state_dict key 'tol_q' and select_channels(...) stay"
    assert name_flags(message, flags) == message  # n_units is no fixedpoints option; quoted; a call
    assert name_flags("max_iters=50 and tol_q=1e-3", flags) == "--max-iters 50 and --tol-q 1e-3"


def test_flag_spelling_and_task_summary_line():
    from neurodyn.cli._flags import task_summary, to_flag
    from neurodyn.tasks import FlipFlop

    assert to_flag("n_units") == "--n-units" and to_flag("lr") == "--lr"
    assert task_summary(FlipFlop).startswith("N-bit flip-flop: remember the sign")
    assert "``" not in task_summary(FlipFlop)
    assert task_summary(type("NoDoc", (), {"__doc__": None}), "nodoc") == "nodoc"
    assert task_summary(type("NoDoc", (), {"__doc__": None})) == ""
