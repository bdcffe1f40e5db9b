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


def test_fit_stores_content_hashes_of_the_training_data(tmp_path):
    from neurodyn.io import load_checkpoint, load_timeseries
    from neurodyn.io.timeseries import content_hashes

    np.save(tmp_path / "data.npy", sine(300))
    assert main(["fit", str(tmp_path / "data.npy"), "--out", str(tmp_path / "fit.pt"), *TINY]) == 0
    extra = load_checkpoint(tmp_path / "fit.pt").extra
    expected = content_hashes(load_timeseries(tmp_path / "data.npy", dt=1.0))
    assert extra["data_sha256"] == expected["sha256"] and len(extra["data_sha256"]) == 64
    assert extra["data_trial_sha256"] == expected["trial_sha256"]


def test_evaluate_warns_when_the_test_data_are_the_training_data(tmp_path, capsys):
    data = sine(600)
    np.save(tmp_path / "data.npy", data)
    assert main(["fit", str(tmp_path / "data.npy"), "--model", "plrnn", "--out", str(tmp_path / "fit.pt"),
                 *TINY]) == 0
    (tmp_path / "copy.npy").write_bytes((tmp_path / "data.npy").read_bytes())  # byte-identical, other name
    np.savez(tmp_path / "copy.npz", x=data)  # same values, another format
    other = tmp_path / "other.npy"
    np.save(other, sine(600, scale=1.5))  # another recording at a similar scale: no warning at all
    ev = ["--n-transient", "10", "--smoothing", "1", "--no-baselines"]
    for copy in ("copy.npy", "copy.npz"):
        capsys.readouterr()
        main(["evaluate", str(tmp_path / "fit.pt"), str(tmp_path / copy), *ev])
        err = capsys.readouterr().err
        assert "holds the same data as the training file" in err and "not held-out" in err
    main(["evaluate", str(tmp_path / "fit.pt"), str(other), *ev])
    assert "warning" not in capsys.readouterr().err
    np.save(tmp_path / "data.npy", sine(600, scale=3.0))  # the training file is replaced after the fit
    main(["evaluate", str(tmp_path / "fit.pt"), *ev])
    assert "has changed since the fit" in capsys.readouterr().err


def test_evaluate_warns_about_shared_trials(tmp_path, capsys):
    rng = np.random.default_rng(0)
    trials = np.stack([sine(120, scale=s) + 0.1 * rng.normal(size=(120, 2)) for s in (1.0, 1.5, 2.0, 2.5)])
    np.save(tmp_path / "train.npy", trials)
    assert main(["fit", str(tmp_path / "train.npy"), "--model", "plrnn", "--out", str(tmp_path / "fit.pt"),
                 *TINY]) == 0
    np.save(tmp_path / "test.npy", np.stack([trials[2], sine(120, scale=4.0)]))
    capsys.readouterr()
    main(["evaluate", str(tmp_path / "fit.pt"), str(tmp_path / "test.npy"), "--n-transient", "10",
          "--smoothing", "1", "--no-baselines", "--pe-steps", "5"])
    assert "1 of the 2 trials of" in capsys.readouterr().err


def test_constant_channel_error_names_the_flag(tmp_path, capsys):
    x = sine(300)
    x[:, 1] = 2.0
    np.save(tmp_path / "flat.npy", x)
    assert main(["fit", str(tmp_path / "flat.npy"), "--out", str(tmp_path / "fit.pt"), *TINY]) == 2
    err = capsys.readouterr().err
    assert "--drop-constant" in err and "drop_constant=True" not in err and len(err.splitlines()) == 1
    assert main(["fit", str(tmp_path / "flat.npy"), "--drop-constant", "--out", str(tmp_path / "fit.pt"),
                 *TINY]) == 0


def test_evaluate_warns_when_the_replayed_z_score_leaves_the_new_data_far_from_unit_std(tmp_path, capsys):
    np.save(tmp_path / "data.npy", sine(300))
    assert main(["fit", str(tmp_path / "data.npy"), "--model", "plrnn", "--out", str(tmp_path / "fit.pt"),
                 *TINY]) == 0
    np.save(tmp_path / "gain.npy", sine(300, scale=5.0))  # the same signal at another gain
    capsys.readouterr()
    main(["evaluate", str(tmp_path / "fit.pt"), str(tmp_path / "gain.npy"), "--n-transient", "10",
          "--smoothing", "1", "--no-baselines"])
    lines = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert len(lines) == 1 and "gain.npy" in lines[0] and "ch0 (std " in lines[0] and "ch1 (std " in lines[0]
    assert "other units" in lines[0] and "gain" in lines[0]
