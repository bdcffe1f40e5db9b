"""``neurodyn fit --model lowrank --rank R --maxent``: checkpoint plus max-ent law; bad input one line."""

from pathlib import Path

import numpy as np
import pytest
import torch
from _cli_errors import one_line_error

import neurodyn.io
from neurodyn.analysis.low_rank import MaxEntLoadings
from neurodyn.cli.main import main

TINY = ["--epochs", "1", "--batches-per-epoch", "2", "--batch-size", "2", "--seq-len", "10", "--no-progress"]


def _recording(n_steps=200, n_channels=12, seed=0):
    """Channels driven by one slow oscillation, scaled into tanh's range (time, channel)."""
    rng = np.random.default_rng(seed)
    t = np.arange(n_steps) * 0.2
    return 0.4 * np.sin(t)[:, None] * rng.standard_normal(n_channels) + 0.05 * rng.standard_normal(
        (n_steps, n_channels))


@pytest.mark.slow
def test_fit_lowrank_maxent_writes_checkpoint_and_law(tmp_path, capsys):
    np.save(tmp_path / "rec.npy", _recording())
    out = tmp_path / "fit.pt"
    rc = main(["fit", str(tmp_path / "rec.npy"), "--model", "lowrank", "--rank", "2", "--maxent",
               "--no-standardize", "--out", str(out), *TINY])
    text = capsys.readouterr()
    assert rc == 0, text.err
    loaded = neurodyn.io.load_model(out)
    assert type(loaded.model).__name__ == "LowRankRNN" and loaded.model.rank == 2
    assert loaded.model.n_units == 12 and loaded.checkpoint.extra["maxent"]["file"] == "fit.maxent.pt"
    law = neurodyn.io.load(tmp_path / "fit.maxent.pt")
    assert isinstance(law, MaxEntLoadings) and law.rank == 2 and law.n_units == 12
    assert loaded.checkpoint.extra["maxent"]["status"] == law.status
    # the status is always printed: on stdout when completed, as a warning line on stderr otherwise
    shown = text.out if law.status == "completed" else text.err
    assert f"max-ent loadings: {law.status}" in shown
    net = law.sample_network(seed=0)
    assert net.rank == 2 and torch.linalg.matrix_rank(net.connectivity()) == 2


@pytest.mark.parametrize("argv, expected", [
    (["--model", "lowrank", "--rank", "13"], "--rank 13 exceeds the 12 units of the network"),
    (["--model", "lowrank", "--rank", "0"], "--rank must be >= 1"),
    (["--model", "lowrank", "--rank", "2", "--latent", "5", "--observation", "affine", "--maxent"],
     "--maxent fits a flow over 3 loadings per unit and needs at least 8 units"),
    (["--model", "plrnn", "--rank", "2"], "--rank applies to --model lowrank only"),
    (["--model", "lowrank", "--maxent-out", "x.pt"], "add --maxent or drop it"),
    (["--model", "lowrank", "--seq-len", "300"], "a training window needs --seq-len + 1 = 301"),
])
def test_fit_lowrank_bad_options_are_one_line(tmp_path, capsys, argv, expected):
    np.save(tmp_path / "rec.npy", _recording())
    tiny = TINY if "--seq-len" not in argv else TINY[:-3] + ["--no-progress"]
    err = one_line_error(capsys, ["fit", str(tmp_path / "rec.npy"), "--out", str(tmp_path / "x.pt"), *tiny,
                                  *argv])
    assert expected in err
    assert not (tmp_path / "x.pt").exists() and not (tmp_path / "x.maxent.pt").exists()


def test_fit_lowrank_refuses_nan_recordings_and_an_existing_law_file(tmp_path, capsys):
    bad = _recording()
    bad[5, 3] = np.nan
    np.save(tmp_path / "nan.npy", bad)
    err = one_line_error(capsys, ["fit", str(tmp_path / "nan.npy"), "--model", "lowrank", "--maxent",
                          "--out", str(tmp_path / "x.pt"), *TINY])
    assert "NaN" in err and not (tmp_path / "x.pt").exists()
    np.save(tmp_path / "rec.npy", _recording())
    (tmp_path / "x.maxent.pt").write_bytes(b"keep")
    err = one_line_error(capsys, ["fit", str(tmp_path / "rec.npy"), "--model", "lowrank", "--maxent",
                          "--out", str(tmp_path / "x.pt"), *TINY])
    assert "x.maxent.pt" in err and "--overwrite" in err
    assert (tmp_path / "x.maxent.pt").read_bytes() == b"keep" and not (tmp_path / "x.pt").exists()



class _Law:
    """Stands in for the fitted law (its fit is not what is tested): ``save`` writes or fails."""

    status = "completed"

    def __init__(self, fail):
        self.fail = fail

    def save(self, path, *, overwrite=True):
        Path(path).write_bytes(b"new law")
        if self.fail:
            raise OSError("disk full")
        return Path(path)


@pytest.mark.parametrize("fail", [True, False])
def test_fit_lowrank_maxent_pair_is_atomic(tmp_path, capsys, monkeypatch, fail):
    """A failure while the law (the second file) is written leaves the old checkpoint and law intact;
    without one both are replaced."""
    np.save(tmp_path / "rec.npy", _recording())
    out, law = tmp_path / "x.pt", tmp_path / "x.maxent.pt"
    out.write_bytes(b"old checkpoint")
    law.write_bytes(b"old law")
    monkeypatch.setattr("neurodyn.cli.fit._fit_maxent", lambda args, result: _Law(fail))
    argv = ["fit", str(tmp_path / "rec.npy"), "--model", "lowrank", "--rank", "1", "--maxent",
            "--no-standardize", "--overwrite", "--out", str(out), *TINY]
    if fail:
        assert main(argv) != 0
        assert "error: disk full" in capsys.readouterr().err  # one line, as for every failed write
        assert out.read_bytes() == b"old checkpoint" and law.read_bytes() == b"old law"
    else:
        assert main(argv) == 0
        assert law.read_bytes() == b"new law"
        assert neurodyn.io.load_model(out).checkpoint.extra["maxent"]["file"] == "x.maxent.pt"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rec.npy", "x.maxent.pt", "x.pt"]  # no temporaries
