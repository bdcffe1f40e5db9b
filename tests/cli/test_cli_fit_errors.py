"""``neurodyn fit`` / ``neurodyn evaluate``: bad input gives one error line naming the flag and the fix."""

import warnings

import numpy as np
import pytest
import xarray as xr
from _cli_errors import one_line_error

from neurodyn.cli.main import main
from neurodyn.io import TimeSeries

TINY = ["--epochs", "1", "--batches-per-epoch", "2", "--batch-size", "2", "--seq-len", "10", "--no-progress"]


def _three_channels(n=300):
    t = np.arange(n) * 0.1
    return np.stack([np.sin(t), np.cos(t), np.sin(2 * t) + 0.5], 1)


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """A tiny fit on a 3-channel recording: (folder, data path, checkpoint path)."""
    d = tmp_path_factory.mktemp("fit")
    np.save(d / "three.npy", _three_channels())
    assert main(["fit", str(d / "three.npy"), "--model", "plrnn", "--out", str(d / "fit.pt"), *TINY]) == 0
    return d, d / "three.npy", d / "fit.pt"


# -- fit: data files -------------------------------------------------------------------------------
def test_fit_channels_beyond_the_recording_names_the_channel_count(fitted, tmp_path, capsys):
    _, data, _ = fitted
    err = one_line_error(capsys, ["fit", str(data), "--channels", "0,7", "--out", str(tmp_path / "x.pt"),
                                  *TINY])
    assert "--channels 7" in err and "has 3 channels" in err and "0 to 2" in err


def test_text_file_named_npy_is_refused_without_numpy_pickle_advice(tmp_path, capsys):
    p = tmp_path / "table.npy"
    p.write_text("a,b\n1,2\n3,4\n")
    err = one_line_error(capsys, ["fit", str(p), "--out", str(tmp_path / "x.pt"), *TINY])
    assert "not a NumPy .npy file" in err and ".csv" in err
    assert "unsafely" not in err and "pickle" not in err


def test_csv_of_words_gives_one_clean_message(tmp_path, capsys):
    p = tmp_path / "words.csv"
    p.write_text("hello world\nthis is text\n")
    err = one_line_error(capsys, ["fit", str(p), "--out", str(tmp_path / "x.pt"), *TINY])
    assert "words.csv is not a numeric table" in err and "comma-separated numbers" in err


def test_csv_with_only_a_header_gives_one_clean_message_and_no_warning(tmp_path, capsys):
    p = tmp_path / "header.csv"
    p.write_text("hello world\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        err = one_line_error(capsys, ["fit", str(p), "--out", str(tmp_path / "x.pt"), *TINY])
    assert "no numeric rows after its header" in err and "shape" not in err


# -- fit and evaluate: options ------------------------------------------------------------------------
@pytest.mark.parametrize("command, argv, expected", [
    ("fit", ["--channels", "0,0"], "--channels lists channel 0 more than once"),
    ("fit", ["--delay-lags", "0,-1"], "--delay-lags must be distinct integers >= 0"),
    ("fit", ["--delay-lags", "0,3,3"], "--delay-lags must be distinct integers >= 0"),
    ("fit", ["--lr", "-1"], "--lr must be > 0"),
    ("fit", ["--lr-end", "0"], "--lr-end must be > 0"),
    ("fit", ["--tau", "0"], "--tau must be >= 1"),
    ("fit", ["--epochs", "0"], "--epochs must be >= 1"),
    ("fit", ["--batch-size", "0"], "--batch-size must be >= 1"),
    ("fit", ["--latent", "0"], "--latent must be >= 1"),
    ("fit", ["--hidden", "0"], "--hidden must be >= 1"),
    ("fit", ["--noise-level", "-0.1"], "--noise-level must be >= 0"),
    ("fit", ["--clip-grad-norm", "-1"], "--clip-grad-norm must be >= 0"),
    ("fit", ["--alpha", "1.5"], "--alpha must be in [0, 1]"),
    ("fit", ["--model", "leaky", "--hidden", "5"],
     "--hidden applies to --model shplrnn/clipped-shplrnn only"),
    ("fit", ["--model", "plrnn", "--n-relu", "2"], "--n-relu applies to --model alrnn only"),
    ("fit", ["--model", "alrnn", "--n-relu", "9"], "--n-relu 9 exceeds the latent dimension 3"),
    ("fit", ["--latent", "2"], "--latent 2 is below the 3 data channels"),
    ("evaluate", ["--max-steps", "0"], "--max-steps must be >= 1"),
    ("evaluate", ["--n-transient", "-5"], "--n-transient must be >= 0"),
    ("evaluate", ["--pe-steps", "0"], "--pe-steps must be >= 1"),
    ("evaluate", ["--smoothing", "-1"], "--smoothing must be a finite number >= 0"),
    ("evaluate", ["--max-steps", "5"], "PE(20) needs at least 21 held-out steps, there are 5"),
])
def test_options_are_checked_with_flag_names(fitted, tmp_path, capsys, command, argv, expected):
    """A fit of the 3-channel recording, or an evaluation of its checkpoint, with one bad option."""
    _, data, fit = fitted
    out = tmp_path / "x.pt"
    given = {"fit": ["fit", str(data), "--out", str(out), *TINY], "evaluate": ["evaluate", str(fit)]}
    err = one_line_error(capsys, [*given[command], *argv])
    assert expected in err
    for python_name in ("observation=", "n_epochs", "learning rate", "tau,"):
        assert python_name not in err
    assert not out.exists()


def test_latent_below_channels_points_to_the_observation_flag(fitted, tmp_path, capsys):
    _, data, _ = fitted
    err = one_line_error(capsys, ["fit", str(data), "--latent", "2", "--out", str(tmp_path / "x.pt"), *TINY])
    assert "--observation affine" in err
    assert main(["fit", str(data), "--latent", "2", "--observation", "affine", "--model", "plrnn",
                 "--out", str(tmp_path / "y.pt"), *TINY]) == 0


# -- evaluate ----------------------------------------------------------------------------------------
def test_evaluate_key_is_not_silently_ignored_for_the_training_file(fitted, capsys):
    _, data, fit = fitted
    for argv in (["--key", "other"], [str(data), "--key", "other"]):
        err = one_line_error(capsys, ["evaluate", str(fit), *argv])
        assert "--key other applies to another DATA file" in err


def test_evaluate_refuses_to_write_over_the_training_data(fitted, capsys):
    _, data, fit = fitted
    before = data.read_bytes()
    err = one_line_error(capsys, ["evaluate", str(fit), "--out", str(data), "--overwrite"])
    assert "training data" in err and "choose another output name" in err
    assert data.read_bytes() == before


def test_evaluate_replaces_out_only_after_a_complete_write(fitted, tmp_path, capsys, monkeypatch):
    _, _, fit = fitted
    out = tmp_path / "ev.nc"
    out.write_bytes(b"previous result")

    def broken_write(self, path, *args, **kwargs):
        with open(path, "wb") as f:
            f.write(b"half")
        raise OSError("disk full")

    monkeypatch.setattr(xr.Dataset, "to_netcdf", broken_write)
    assert main(["evaluate", str(fit), "--n-transient", "10", "--smoothing", "1", "--no-baselines",
                 "--out", str(out), "--overwrite"]) == 2
    assert "disk full" in capsys.readouterr().err
    assert out.read_bytes() == b"previous result"
    assert [p.name for p in tmp_path.iterdir()] == ["ev.nc"]


def test_evaluate_on_data_with_other_channel_count_names_the_mismatch(fitted, tmp_path, capsys):
    _, data, fit = fitted
    two = tmp_path / "two.npy"
    np.save(two, _three_channels()[:, :2])
    err = one_line_error(capsys, ["evaluate", str(fit), str(two)])
    assert "two.npy has 2 channels but the model was fitted on 3" in err and "mean and std" not in err


def test_evaluate_with_channel_selection_needs_the_selected_channels(fitted, tmp_path, capsys):
    d, data, _ = fitted
    fit = tmp_path / "sel.pt"
    assert main(["fit", str(data), "--channels", "2", "--model", "plrnn", "--out", str(fit), *TINY]) == 0
    two = tmp_path / "two.npy"
    np.save(two, _three_channels()[:, :2])
    err = one_line_error(capsys, ["evaluate", str(fit), str(two)])
    assert "has 2 channels but the fit used channel 2 (--channels 2)" in err


# -- TimeSeries messages -----------------------------------------------------------------------------
def test_timeseries_channel_selection_and_statistics_mismatch_messages():
    ts = TimeSeries.from_arrays(_three_channels(50))
    with pytest.raises(ValueError, match="channel index 5 does not exist: the data have 3 channels"):
        ts.select_channels([5])
    with pytest.raises(ValueError, match="no channel named 'x'"):
        ts.select_channels(["x"])
    with pytest.raises(ValueError, match="statistics cover 2 channels but the data have 3"):
        ts.standardize([0.0, 0.0], [1.0, 1.0])
    np.testing.assert_array_equal(ts.select_channels([2, 0]).data, ts.data[:, :, [2, 0]])


def test_holdout_too_short_for_the_data_names_both_parts(tmp_path, capsys):
    np.save(tmp_path / "short.npy", _three_channels(4))
    err = one_line_error(capsys, ["fit", str(tmp_path / "short.npy"), "--model", "plrnn", "--out",
                                  str(tmp_path / "o.pt"), *TINY])
    assert "--holdout 0.2 splits the 4 time points (after preprocessing) into 3 for training and 1" in err


def test_evaluate_names_a_checkpoint_not_written_by_fit_and_a_plain_state_dict(tmp_path, capsys):
    import torch

    trained, plain = tmp_path / "ff.pt", tmp_path / "rnn.pt"
    assert main(["train", "flipflop", "--n-bits", "1", "--n-units", "4", "--n-iterations", "1",
                 "--no-progress", "--out", str(trained)]) == 0
    torch.save(torch.nn.RNN(1, 4, batch_first=True).state_dict(), plain)
    err = one_line_error(capsys, ["evaluate", str(trained)])
    assert f"{trained} was not written by 'neurodyn fit'" in err
    err = one_line_error(capsys, ["evaluate", str(plain)])
    assert "holds a plain torch.nn.RNN state_dict; `neurodyn evaluate` needs the .pt file" in err
    assert "--arch" not in err
    err = one_line_error(capsys, ["manifolds", str(plain)])
    assert "`neurodyn manifolds` needs a PLRNN, ShallowPLRNN or ALRNN" in err


def test_sweep_spec_that_is_a_directory(tmp_path, capsys):
    (tmp_path / "spec.toml").mkdir()
    err = one_line_error(capsys, ["sweep", str(tmp_path / "spec.toml"), "--out", str(tmp_path / "runs")])
    assert "spec.toml is a directory, not a sweep spec; give the .toml file" in err
