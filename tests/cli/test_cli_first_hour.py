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


@pytest.mark.parametrize("argv, alpha", [
    (["train", "romo"], 0.2), (["train", "dms", "--model", "lowrank"], 0.2), (["train", "sine_wave"], 0.1),
    (["train", "flipflop"], 1.0), (["train", "romo", "--alpha", "0.7"], 0.7),
])
def test_tasks_with_delays_train_leaky_units_by_default(argv, alpha):
    # docs/tasks.md trains the delay and slow tasks with alpha 0.2 / 0.1; an explicit --alpha wins
    from neurodyn.cli.train import build_model
    from neurodyn.tasks import make_task

    args = build_parser().parse_args([*argv, "--n-units", "8"])
    assert build_model(args, make_task(argv[1])).alpha == alpha


def test_an_unsolved_task_suggests_leakier_units_when_alpha_is_high(tmp_path, capsys):
    assert main([*TINY, "--target-accuracy", "1.0", "--out", str(tmp_path / "m.pt")]) == 0
    text = capsys.readouterr().out
    assert "on a fresh batch:" in text  # the first line's metrics are labelled apart from the held-out batch
    assert "did not reach the target 1.0" in text and "leakier units (--alpha, now 1)" in text


def test_default_learning_rates_match_the_docs_and_the_api():
    from neurodyn.training import fit_teacher_forcing

    parser = build_parser()
    train = parser.parse_args(["train", "romo"])
    assert train.lr == 3e-3  # docs/tasks.md trains every task with lr 3e-3
    fit = parser.parse_args(["fit", "data.npy"])
    api = inspect.signature(fit_teacher_forcing).parameters
    assert (fit.lr, fit.lr_end) == (api["lr"].default, api["lr_end"].default) == (1e-3, 1e-6)


def _ctrl_c(*args, **kwargs):
    raise KeyboardInterrupt


def test_ctrl_c_during_train_saves_the_model_marked_interrupted(tmp_path, capsys, monkeypatch):
    import importlib

    train_module = importlib.import_module("neurodyn.training.train")
    monkeypatch.setattr(train_module, "evaluate", _ctrl_c)  # at the evaluation after iteration 2
    out = tmp_path / "m.pt"
    assert main([*TINY, "--out", str(out)]) == 130
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "interrupted; saved the weights after 2 iterations" in err
    ckpt = load_checkpoint(out)
    assert ckpt.status == "interrupted" and ckpt.training["iterations_run"] == 2
    monkeypatch.undo()
    assert main(["fixedpoints", str(out), "--n-inits", "4", "--quiet"]) == 0
    assert "training was interrupted (Ctrl-C) after 2 iterations" in capsys.readouterr().err


def test_ctrl_c_during_fit_saves_the_model_marked_interrupted(tmp_path, capsys, monkeypatch):
    import numpy as np

    from neurodyn.training import teacher_forcing

    t = np.arange(300) * 0.1
    np.save(tmp_path / "d.npy", np.stack([np.sin(t), np.cos(t)], 1))
    calls, real = [0], teacher_forcing.forced_rollout

    def rollout(*args, **kwargs):  # Ctrl-C in the second batch of epoch 1
        calls[0] += 1
        if calls[0] == 4:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(teacher_forcing, "forced_rollout", rollout)
    out = tmp_path / "f.pt"
    assert main(["fit", str(tmp_path / "d.npy"), "--model", "plrnn", "--epochs", "3", "--batches-per-epoch",
                 "3", "--batch-size", "4", "--seq-len", "20", "--no-progress", "--out", str(out)]) == 130
    assert "interrupted; saved the weights after 1 epochs" in capsys.readouterr().err
    ckpt = load_checkpoint(out)
    assert ckpt.status == "interrupted" and ckpt.training["epochs_run"] == 1


@pytest.fixture
def flipflop_model(tmp_path):
    out = tmp_path / "ff.pt"
    assert main([*TINY, "--n-iterations", "1", "--out", str(out)]) == 0
    return out


def test_fixedpoints_shows_a_progress_bar_on_a_terminal_unless_quiet(flipflop_model, capsys, monkeypatch):
    import sys

    args = ["fixedpoints", str(flipflop_model), "--n-inits", "4"]
    assert main(args) == 0
    assert "fixed points (" not in capsys.readouterr().err  # not a terminal: no bar
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert main(args) == 0
    assert "fixed points (Newton)" in capsys.readouterr().err
    assert main([*args, "--quiet"]) == 0
    assert "fixed points (" not in capsys.readouterr().err


def _parsers(parser, path=("neurodyn",)):
    """Every (command path, parser) below ``parser``, sub-commands and train tasks included."""
    import argparse

    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                sub.format_help()  # a train TASK parser adds its options when first used
                yield from _parsers(sub, (*path, name))


def test_help_shows_the_default_of_every_option():
    from neurodyn.cli.main import _default_text

    missing = []
    for path, parser in _parsers(build_parser()):
        for action in parser._actions:
            if _default_text(action) is None:
                continue
            formatter = parser._get_formatter()
            formatter.add_argument(action)
            if "default" not in formatter.format_help():
                missing.append(f"{' '.join(path)} {action.option_strings[0]}")
    assert missing == []


def test_help_texts_point_to_task_options_and_hold_no_markup(capsys):
    for args in (["train", "--help"], ["evaluate", "--help"], ["train", "romo", "--help"], ["--help"]):
        with pytest.raises(SystemExit):
            main(args)
        text = capsys.readouterr().out
        assert "``" not in text and ":func:" not in text and ":class:" not in text
        if args[:2] == ["train", "--help"]:
            assert "neurodyn train TASK --help" in text
        if args[:2] == ["train", "romo"]:
            assert "--n-units N_UNITS     (default: 64)" in text and "(default: 0.003)" in text


def _modules_after(code: str) -> set[str]:
    import subprocess
    import sys

    probe = f"import sys\n{code}\nprint(' '.join(m for m in ('numpy', 'torch') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(out.stdout.splitlines()[-1].split())


def test_the_command_line_imports_numpy_and_torch_only_to_run_a_command():
    assert "torch" not in _modules_after("import neurodyn.cli.main")
    calls = (["--help"], ["nosuchcommand"], ["fixedpoints", "m.pt", "--n-inits", "x"], ["train", "--help"],
             ["train", "flipflop", "--n-units", "x"], ["train", "romo", "--help"])
    # all calls in one interpreter: none of them may load NumPy or torch (tasks import NumPy on first use)
    code = "from neurodyn.cli.main import main\n" + "".join(
        f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n" for argv in calls)
    assert _modules_after(code) == set()


class _Net(__import__("torch").nn.Module):
    """A lab's own module: one torch.nn.RNN and a linear readout (3 inputs and 3 outputs, as Romo)."""

    def __init__(self):
        import torch

        super().__init__()
        torch.manual_seed(0)
        self.rnn = torch.nn.RNN(3, 8, batch_first=True)
        self.readout = torch.nn.Linear(8, 3)


@pytest.fixture
def foreign_rnn(tmp_path):
    import torch

    path = tmp_path / "lab_rnn.pt"
    torch.save(_Net().state_dict(), path)
    return path


def test_foreign_rnn_is_named_by_what_was_loaded_and_searched_from_task_states(foreign_rnn, tmp_path, capsys,
                                                                                monkeypatch):
    import xarray as xr

    from neurodyn.cli import _common

    titles, letters, legends = [], [], []
    write = _common.write_result_and_figure

    def spy(ds, out, fig, plot):
        titles.append(fig._suptitle.get_text())
        letters.append([t.get_text() for ax in fig.axes for t in ax.texts])
        legends.append(len(fig.legends) + sum(ax.get_legend() is not None for ax in fig.axes))
        write(ds, out, fig, plot)

    monkeypatch.setattr(_common, "write_result_and_figure", spy)
    out = tmp_path / "fps.nc"
    assert main(["fixedpoints", str(foreign_rnn), "--arch", "rnn_tanh", "--task", "romo", "--n-inits", "16",
                 "--out", str(out), "--plot", str(tmp_path / "fps.png")]) == 0
    text = capsys.readouterr().out
    assert "torch.nn.RNN (tanh), 8 units, input u* = [1.0, 0.0, 0.0] (romo's delay period)" in text
    assert "LeakyRNN" not in text and "LeakyRNN" not in titles[0]
    assert titles[0].startswith("torch.nn.RNN (tanh), 8 units: input u* = [1.0, 0.0, 0.0]")
    assert letters == [["a", "b"]] and legends == [1]  # the paper figure: lettered panels, one legend
    attrs = xr.load_dataset(out, engine="h5netcdf").attrs
    assert attrs["initial_state_source"] == "task" and list(attrs["input"]) == [1.0, 0.0, 0.0]
    assert main(["fixedpoints", str(foreign_rnn), "--arch", "rnn_tanh", "--task", "dms"]) == 2
    assert "--task dms has 5 inputs / 3 outputs but the model has 3 / 3" in capsys.readouterr().err


def test_fixedpointfinder_flags_reach_the_search(foreign_rnn, tmp_path, capsys):
    import xarray as xr

    out = tmp_path / "fps.nc"
    base = ["fixedpoints", str(foreign_rnn), "--arch", "rnn_tanh", "--n-inits", "8", "--quiet"]
    flags = ["--method", "gradient", "--tol-q", "1e-10", "--max-iters", "50", "--tol-unique", "0.01"]
    assert main([*base, *flags, "--out", str(out)]) == 0
    attrs = xr.load_dataset(out, engine="h5netcdf").attrs
    settings = (attrs["method"], attrs["tol_q"], attrs["max_iters"], attrs["tol_unique"])
    assert settings == ("gradient", 1e-10, 50, 0.01)
    assert attrs["initial_state_source"] == "free_rollouts" and list(attrs["input"]) == [0.0, 0.0, 0.0]
    assert main([*base, "--method", "newtonish"]) == 2
    assert "unknown --method 'newtonish'" in capsys.readouterr().err


def test_evaluate_says_which_way_is_better_and_prints_a_floor(tmp_path, capsys):
    import numpy as np
    import xarray as xr

    from neurodyn.analysis.reconstruction import power_spectrum_distance, state_space_divergence
    from neurodyn.cli.evaluate import held_out_data

    t = np.arange(600) * 0.1
    np.save(tmp_path / "sine.npy", np.stack([np.sin(t), np.cos(2 * t)], 1))
    fit = tmp_path / "fit.pt"
    tiny = ["--epochs", "1", "--batches-per-epoch", "2", "--batch-size", "4", "--seq-len", "20"]
    data = str(tmp_path / "sine.npy")
    assert main(["fit", data, "--model", "plrnn", *tiny, "--no-progress", "--out", str(fit)]) == 0
    capsys.readouterr()
    main(["evaluate", str(fit), "--n-transient", "10", "--smoothing", "1", "--out", str(tmp_path / "ev.nc")])
    text = capsys.readouterr().out
    assert "lower is better: D_stsp" in text and "a useful fit scores below both" in text
    (train, _), (test, _) = held_out_data(load_checkpoint(fit).extra, None, None, fit)
    floor = (state_space_divergence(test, train, method="binned", n_bins=30, seed=0),
             power_spectrum_distance(test, train, smoothing=1.0))
    assert f"floor    {floor[0]:>10.4f} {floor[1]:>8.4f}" in text
    ds = xr.load_dataset(tmp_path / "ev.nc", engine="h5netcdf")
    np.testing.assert_allclose([ds.attrs["floor_d_stsp"], ds.attrs["floor_d_h"]], floor)
    assert floor[0] < ds["d_stsp"].sel(model="mean").item()  # a periodic signal: both halves look alike


def test_train_without_evaluations_runs_all_iterations_instead_of_failing(tmp_path, capsys):
    out = tmp_path / "ff.pt"
    assert main(["train", "flipflop", "--n-bits", "1", "--n-steps", "6", "--n-units", "4",
                 "--n-iterations", "2", "--batch-size", "2", "--eval-every", "0", "--no-progress",
                 "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "ran all 2 iterations (--eval-every 0: no held-out evaluation to stop on)" in text
