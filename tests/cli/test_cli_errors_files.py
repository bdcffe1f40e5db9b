"""Bad model, state and output files given to ``neurodyn fixedpoints``: one-line errors, exit status 2,
no traceback, and existing files left untouched."""

import builtins
import os
import stat

import numpy as np
import pytest
import torch
import xarray as xr

from neurodyn.cli._common import write_netcdf
from neurodyn.cli.main import main
from neurodyn.io import save_checkpoint
from neurodyn.models import LeakyRNN


class _Lab(torch.nn.Module):
    """What a lab saves: a recurrent layer under ``self.rnn`` and a linear readout."""

    def __init__(self, cell):
        super().__init__()
        self.rnn = cell
        self.readout = torch.nn.Linear(cell.hidden_size, 2)


class _OpensAFile:
    """Unpickling this object would create ``self.path`` (it must never happen)."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return builtins.open, (self.path, "w")


@pytest.fixture
def gru_file(tmp_path):
    torch.manual_seed(0)
    path = tmp_path / "gru.pt"
    torch.save(_Lab(torch.nn.GRU(3, 5)).state_dict(), path)
    return path


def fails(capsys, *args):
    """Run the command, require exit status 2, return its one-line error message."""
    assert main(["fixedpoints", *map(str, args)]) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_pickled_object_is_refused_and_never_run(tmp_path, capsys):
    marker = tmp_path / "created_by_unpickling"
    path = tmp_path / "evil.pt"
    torch.save(_OpensAFile(marker), path)
    msg = fails(capsys, path)
    assert "pickled Python objects" in msg and "state_dict()" in msg
    assert not marker.exists()


@pytest.mark.parametrize("content", [b"", b"not a zip archive\n", b"PK\x03\x04truncated"])
def test_unreadable_npz_gives_one_line(tmp_path, capsys, content):
    path = tmp_path / "model.npz"
    path.write_bytes(content)
    msg = fails(capsys, path, "--arch", "plrnn")
    assert str(path) in msg and "numpy.savez" in msg
    assert "allow_pickle" not in msg  # numpy's advice to load pickles unsafely is not passed on


def test_unreadable_mat_gives_one_line(tmp_path, capsys):
    path = tmp_path / "model.mat"
    path.write_text("hello\n")
    msg = fails(capsys, path, "--arch", "plrnn")
    assert "not a readable MATLAB .mat file" in msg


def test_arch_of_the_wrong_file_kind_names_the_right_ones(tmp_path, gru_file, capsys):
    npz = tmp_path / "pl.npz"
    np.savez(npz, A=np.array([0.5, 0.5]), W=np.zeros((2, 2)), h=np.zeros(2))
    msg = fails(capsys, npz, "--arch", "gru")
    assert "--arch gru is for .pt state_dicts" in msg and "plrnn|shplrnn" in msg
    msg = fails(capsys, gru_file, "--arch", "plrnn")
    assert "--arch plrnn is for .npz/.mat array files" in msg and "rnn_tanh|rnn_relu|gru|lstm" in msg


def test_output_may_not_replace_the_input_model(gru_file, capsys):
    before = gru_file.read_bytes()
    msg = fails(capsys, gru_file, "--out", gru_file, "--overwrite")
    assert "input file" in msg
    assert gru_file.read_bytes() == before


def test_bad_outputs_are_refused_before_the_search(tmp_path, gru_file, capsys):
    out = tmp_path / "fps.nc"
    assert "not an image format" in fails(capsys, gru_file, "--out", out, "--plot", tmp_path / "fig.nc")
    assert not out.exists()  # previously the search ran and --out was written before the plot failed
    assert "same file" in fails(capsys, gru_file, "--out", out, "--plot", out, "--overwrite")
    (tmp_path / "afile").write_text("x")
    assert "is a file, not a folder" in fails(capsys, gru_file, "--out", tmp_path / "afile" / "fps.nc")
    (tmp_path / "adir").mkdir()
    assert "is a directory" in fails(capsys, gru_file, "--out", tmp_path / "adir")
    assert not out.exists()


def test_existing_output_kept_without_overwrite(tmp_path, gru_file, capsys):
    out = tmp_path / "fps.nc"
    out.write_text("keep me")
    assert "--overwrite" in fails(capsys, gru_file, "--n-inits", 4, "--out", out)
    assert out.read_text() == "keep me"


def test_failed_write_leaves_the_old_file(tmp_path):
    out = tmp_path / "fps.nc"
    out.write_text("old result")
    bad = xr.Dataset({"x": ("n", np.array([object(), object()], dtype=object))})
    with pytest.raises(ValueError):
        write_netcdf(bad, out)
    assert out.read_text() == "old result"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fps.nc"]  # no temporary file left


def test_states_file_errors(tmp_path, capsys):
    torch.manual_seed(0)
    lstm = tmp_path / "lstm.pt"
    torch.save(_Lab(torch.nn.LSTM(3, 5)).state_dict(), lstm)
    states = tmp_path / "s.npy"
    np.save(states, np.zeros((4, 5)))
    msg = fails(capsys, lstm, "--states", states)
    assert "(n, 10)" in msg and "h and c joined" in msg
    text = tmp_path / "s2.npy"
    text.write_text("1 2 3")
    msg = fails(capsys, lstm, "--states", text)
    assert "numpy.save" in msg and "allow_pickle" not in msg


def test_nan_weights_and_bad_numbers(tmp_path, gru_file, capsys):
    sd = torch.load(gru_file, weights_only=True)
    sd["rnn.weight_hh_l0"][0, 0] = float("nan")
    nan_file = tmp_path / "nan.pt"
    torch.save(sd, nan_file)
    assert "NaN/Inf in rnn.weight_hh_l0" in fails(capsys, nan_file)
    assert "--n-inits must be >= 1" in fails(capsys, gru_file, "--n-inits", -3)
    assert "--noise-scale must be >= 0" in fails(capsys, gru_file, "--noise-scale", "nan")
    assert "3 comma-separated numbers" in fails(capsys, gru_file, "--input", "1,2")


def test_checkpoints_get_the_usual_file_permissions(tmp_path):
    mask = os.umask(0o022)
    try:
        path = save_checkpoint(tmp_path / "m.pt", LeakyRNN(1, 3, 1, seed=0))
    finally:
        os.umask(mask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644  # readable by collaborators, as torch.save gives


@pytest.mark.parametrize("command", ["fit", "evaluate", "manifolds"])
def test_no_command_overwrites_its_input(tmp_path, capsys, command):
    path = tmp_path / "input.npy"
    np.save(path, np.random.default_rng(0).normal(size=(300, 2)))
    args = [command, path, "--out", path, "--overwrite"]
    if command == "manifolds":
        path = tmp_path / "model.npz"
        np.savez(path, A=np.array([0.5, 0.5]), W=np.zeros((2, 2)), h=np.zeros(2))
        args = [command, path, "--arch", "plrnn", "--out", path, "--overwrite"]
    if command == "fit":  # tiny, so that without the guard the test fails fast
        args += ["--epochs", 1, "--batches-per-epoch", 1, "--seq-len", 10, "--no-progress"]
    if command == "evaluate":  # a fit checkpoint, then the recording to score
        args = [command, tmp_path / "fit.pt", path, "--out", path, "--overwrite"]
    before = path.read_bytes()
    assert main([str(a) for a in args]) == 2
    err = capsys.readouterr().err
    assert "is an input file of this command" in err and len(err.strip().splitlines()) == 1
    assert path.read_bytes() == before


def test_plot_checked_before_any_command_runs(tmp_path, capsys):
    model = tmp_path / "pl.npz"
    np.savez(model, A=np.array([0.5, 0.5]), W=np.zeros((2, 2)), h=np.zeros(2))
    out = tmp_path / "m.nc"
    assert main(["manifolds", str(model), "--arch", "plrnn", "--out", str(out), "--plot", "m.txt"]) == 2
    assert "not an image format" in capsys.readouterr().err
    assert not out.exists()
