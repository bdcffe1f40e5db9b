"""A diverged training never replaces a checkpoint; reading a diverged or untrained one warns;
``--clip-grad-norm 0`` means no clipping, as ``clip_grad_norm=0`` or ``None`` does in the API."""

import numpy as np
import pytest
import torch
from _cli_errors import error_lines

import neurodyn
from neurodyn.cli.main import main
from neurodyn.io import load_checkpoint, save_checkpoint
from neurodyn.models import PLRNN, make_model
from neurodyn.tasks import make_task

TRAIN = ["train", "flipflop", "--n-bits", "2", "--n-steps", "6", "--n-units", "8", "--n-iterations", "3",
         "--batch-size", "4", "--eval-every", "2", "--no-progress"]
EXPLODE = ["--activation", "relu", "--gain", "3", "--lr", "1e3", "--clip-grad-norm", "0"]
FIT = ["--model", "plrnn", "--epochs", "3", "--batches-per-epoch", "3", "--batch-size", "4",
       "--seq-len", "20", "--no-progress"]


@pytest.fixture
def sine_file(tmp_path):
    t = np.arange(600) * 0.1
    np.save(tmp_path / "sine.npy", np.stack([np.sin(t), np.cos(2 * t) + 0.3 * np.sin(t)], 1) * 3 + 1)
    return tmp_path / "sine.npy"


def test_diverged_training_keeps_the_good_checkpoint_even_with_overwrite(tmp_path, capsys):
    out = tmp_path / "m.pt"
    assert main([*TRAIN, "--out", str(out)]) == 0
    good = out.read_bytes()
    capsys.readouterr()
    assert main([*TRAIN, *EXPLODE, "--out", str(out), "--overwrite"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "training diverged at iteration 1" in err and "--lr (now 1000.0)" in err
    assert f"{out} was not written" in err and "m.diverged.pt" in err
    assert out.read_bytes() == good and load_checkpoint(out).status == "completed"
    side = load_checkpoint(tmp_path / "m.diverged.pt")
    assert side.status == "diverged" and side.training["iterations_run"] == 1
    assert main(["fixedpoints", str(tmp_path / "m.diverged.pt"), "--n-inits", "4"]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "warning:" in err and "holds a diverged model" in err
    assert main(["fixedpoints", str(out), "--n-inits", "4"]) == 0
    assert "warning" not in capsys.readouterr().err


def test_diverged_fit_keeps_the_good_checkpoint_and_evaluate_warns(sine_file, tmp_path, capsys):
    out = tmp_path / "fit.pt"
    assert main(["fit", str(sine_file), *FIT, "--lr", "0.3", "--out", str(out)]) == 0
    good = out.read_bytes()
    assert load_checkpoint(out).training["status"] == "completed"
    capsys.readouterr()
    assert main(["fit", str(sine_file), *FIT, "--lr", "1", "--out", str(out), "--overwrite"]) == 1
    captured = capsys.readouterr()
    assert len(error_lines(captured.err, "fit")) == 1 and "diverged at epoch 1" in captured.err
    assert "RuntimeWarning" not in captured.err and "saved" not in captured.out
    assert out.read_bytes() == good
    side = tmp_path / "fit.diverged.pt"
    assert load_checkpoint(side).extra["status"] == "diverged"
    main(["evaluate", str(side), "--n-transient", "10", "--smoothing", "1", "--no-baselines"])
    err = capsys.readouterr().err
    assert "warning:" in err and "holds a diverged model (training diverged at epoch 1" in err


def test_a_fit_diverging_in_its_first_epoch_writes_nothing(sine_file, tmp_path, capsys):
    assert main(["fit", str(sine_file), *FIT, "--lr", "3", "--out", str(tmp_path / "f.pt")]) == 1
    assert "no epoch finished, nothing was saved" in capsys.readouterr().err
    assert list(tmp_path.glob("f*.pt")) == []


@pytest.mark.parametrize("training, message", [
    ({"status": "diverged", "divergence": {"message": "training diverged at iteration 3: x; y"}},
     "holds a diverged model (training diverged at iteration 3: x)"),
    ({"status": "completed", "iterations_run": 0}, "holds an untrained model"),
    ({"status": "completed", "epochs_run": 0}, "holds an untrained model"),
])
def test_manifolds_warns_about_diverged_or_untrained_checkpoints(tmp_path, capsys, training, message):
    lozi = PLRNN.from_arrays(np.array([[1.7, 1.0], [0.5, 0.0]]), np.array([[-3.4, 0.0], [0.0, 0.0]]),
                             np.array([1.0, 0.0]))
    path = save_checkpoint(tmp_path / "lozi.pt", lozi, training=training)
    assert main(["manifolds", str(path), "--max-depth", "1"]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_clip_zero_agrees_between_command_line_and_api(tmp_path, capsys):
    out = tmp_path / "c.pt"
    assert main([*TRAIN, "--clip-grad-norm", "0", "--out", str(out)]) == 0
    ckpt = load_checkpoint(out)
    assert ckpt.training["clip_grad_norm"] is None
    task = make_task("flipflop", n_bits=2, n_steps=6)
    model = make_model("LeakyRNN", n_inputs=task.n_inputs, n_units=8, n_outputs=task.n_outputs, seed=0)
    api = neurodyn.train(model, task, n_iterations=3, batch_size=4, lr=3e-3, eval_every=2, clip_grad_norm=0,
                         progress=False, seed=0)
    assert all(torch.equal(a, b) for a, b in zip(api.model.state_dict().values(),
                                                 ckpt.model.state_dict().values()))
    assert main([*TRAIN, "--clip-grad-norm", "-1", "--out", str(tmp_path / "d.pt")]) == 2
    assert "--clip-grad-norm must be >= 0 (0: no clipping), got -1.0" in capsys.readouterr().err


def test_fit_accepts_clip_zero_as_no_clipping(sine_file, tmp_path):
    out = tmp_path / "z.pt"
    assert main(["fit", str(sine_file), *FIT, "--clip-grad-norm", "0", "--out", str(out)]) == 0
    assert load_checkpoint(out).training["clip_grad_norm"] is None
