"""A new user's first commands: ``train`` stops when the task is solved, defaults agree with the API."""

import inspect

import pytest

from neurodyn.cli.main import build_parser, main
from neurodyn.io import load_checkpoint
from neurodyn.tasks import FlipFlop

TINY = ["train", "flipflop", "--n-bits", "2", "--n-steps", "6", "--n-units", "8", "--n-iterations", "6",
        "--batch-size", "4", "--eval-every", "2", "--no-progress"]


@pytest.fixture
def solved(monkeypatch):
    """Every held-out evaluation of the flip-flop task reports it solved."""
    real = FlipFlop.evaluate
    monkeypatch.setattr(FlipFlop, "evaluate", lambda self, out, b: {**real(self, out, b), "accuracy": 1.0})


def test_train_stops_by_default_when_the_held_out_batch_is_solved(tmp_path, capsys, solved):
    out = tmp_path / "m.pt"
    assert main([*TINY, "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "stopped at iteration 2 of 6" in text and "solved" in text and "--no-target" in text
    training = load_checkpoint(out).training
    assert training["iterations_run"] == 2 and training["status"] == "target_reached"
    assert training["target_metric"] == ["accuracy", 1.0]


def test_no_target_trains_all_iterations(tmp_path, capsys, solved):
    out = tmp_path / "m.pt"
    assert main([*TINY, "--no-target", "--out", str(out)]) == 0
    assert "ran all 6 iterations (--no-target)" in capsys.readouterr().out
    assert load_checkpoint(out).training["iterations_run"] == 6
    assert main([*TINY, "--no-target", "--target-accuracy", "0.9", "--out", str(tmp_path / "x.pt")]) == 2
    assert "exclude each other" in capsys.readouterr().err


def test_explicit_target_and_other_tasks_default(tmp_path, capsys):
    out = tmp_path / "m.pt"
    assert main([*TINY, "--target-accuracy", "0.5", "--out", str(out)]) == 0
    assert load_checkpoint(out).training["target_metric"] == ["accuracy", 0.5]
    args = build_parser().parse_args(["train", "romo", "--out", "r.pt"])
    from neurodyn.cli.train import stopping_target
    from neurodyn.tasks import make_task

    assert stopping_target(args, make_task("romo")) == ("accuracy", 0.99)
    assert stopping_target(args, make_task("hmm")) is None  # sequence distributions: no accuracy rule


def test_default_learning_rates_match_the_docs_and_the_api():
    from neurodyn.training import fit_teacher_forcing

    parser = build_parser()
    train = parser.parse_args(["train", "romo"])
    assert train.lr == 3e-3  # docs/tasks.md trains every task with lr 3e-3
    fit = parser.parse_args(["fit", "data.npy"])
    api = inspect.signature(fit_teacher_forcing).parameters
    assert (fit.lr, fit.lr_end) == (api["lr"].default, api["lr_end"].default) == (1e-3, 1e-6)
