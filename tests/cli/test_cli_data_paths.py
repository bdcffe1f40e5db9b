"""``fit``/``evaluate`` with recordings that are easy to misread: orientation, relative paths."""

import numpy as np

from neurodyn.cli.main import main

TINY = ["--epochs", "1", "--batches-per-epoch", "2", "--batch-size", "4", "--seq-len", "20", "--no-progress"]


def sine(n_steps, scale=1.0):
    t = np.arange(n_steps) * 0.1
    return np.stack([np.sin(t), np.cos(2 * t) + 0.3 * np.sin(t)], 1) * scale + 1


def test_fit_of_a_channel_by_time_recording_suggests_transpose(tmp_path, capsys):
    rec = np.random.default_rng(0).normal(size=(4, 300))  # (channel, time): 4 channels, 300 steps
    np.save(tmp_path / "spikes.npy", rec)
    assert main(["fit", str(tmp_path / "spikes.npy"), "--observation", "affine", "--latent", "3",
                 "--out", str(tmp_path / "fit.pt"), *TINY]) == 2
    err = capsys.readouterr().err.strip()
    assert "300 channels but only 4 time points" in err and "add --transpose" in err
    assert len(err.splitlines()) == 1 and not (tmp_path / "fit.pt").exists()


def test_evaluate_resolves_the_training_file_beside_the_checkpoint(tmp_path, monkeypatch, capsys):
    run, elsewhere = tmp_path / "run", tmp_path / "elsewhere"
    run.mkdir()
    elsewhere.mkdir()
    np.save(run / "data.npy", sine(600))
    np.save(elsewhere / "data.npy", sine(1000, scale=5.0))  # same relative name, another recording
    monkeypatch.chdir(run)
    assert main(["fit", "data.npy", "--model", "plrnn", "--out", "fit.pt", *TINY]) == 0
    monkeypatch.chdir(elsewhere)
    capsys.readouterr()
    main(["evaluate", "../run/fit.pt", "--n-transient", "10", "--smoothing", "1", "--no-baselines"])
    out = capsys.readouterr().out
    assert "120 held-out steps" in out  # the last 20 % of the 600 steps fitted, not of the 1000 here
