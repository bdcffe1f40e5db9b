"""``neurodyn fit`` / ``neurodyn evaluate`` end to end at tiny size."""

import numpy as np
import pytest
import xarray as xr

from neurodyn.cli.main import main

TINY = ["--epochs", "2", "--batches-per-epoch", "3", "--batch-size", "4", "--seq-len", "20", "--no-progress"]


@pytest.fixture
def sine_file(tmp_path):
    t = np.arange(600) * 0.1
    np.save(tmp_path / "sine.npy", np.stack([np.sin(t), np.cos(2 * t) + 0.3 * np.sin(t)], 1) * 3 + 1)
    return tmp_path / "sine.npy"


def test_fit_then_evaluate_then_fixedpoints(sine_file, tmp_path, capsys):
    out = tmp_path / "fit.pt"
    rc = main(["fit", str(sine_file), "--model", "clipped-shplrnn", "--latent", "5", "--hidden", "8",
               "--delay-lags", "0,5", "--out", str(out), *TINY])
    assert rc == 0 and out.exists()
    from neurodyn.io import load_model

    loaded = load_model(out)
    extra = loaded.checkpoint.extra
    assert type(loaded.model).__name__ == "ShallowPLRNN" and loaded.model.clipped
    assert [s["step"] for s in extra["preprocessing"]] == ["delay_embed", "time_slice", "standardize"]
    assert extra["channel_names"] == ["ch0", "ch1", "ch0(t-5)", "ch1(t-5)"]
    assert loaded.checkpoint.training["seed"] == 0 and len(extra["history"]["loss"]) == 2
    capsys.readouterr()
    rc = main(["evaluate", str(out), "--n-transient", "50", "--smoothing", "1",
               "--out", str(tmp_path / "ev.nc")])
    text = capsys.readouterr().out
    assert rc in (0, 1) and "D_stsp" in text and "linear" in text and "mean" in text
    ds = xr.open_dataset(tmp_path / "ev.nc", engine="h5netcdf")
    assert list(ds["model"].values) == ["fitted", "linear", "mean"]
    # held-out part: the last 20 % of 595 embedded steps
    assert ds.sizes["time"] == 595 - int(round(595 * 0.8))
    assert main(["fixedpoints", str(out), "--n-inits", "16"]) == 0


def test_evaluate_on_another_file_uses_the_stored_standardisation(sine_file, tmp_path, capsys):
    out = tmp_path / "fit.pt"
    assert main(["fit", str(sine_file), "--model", "plrnn", "--observation", "affine", "--out", str(out),
                 *TINY]) == 0
    other = tmp_path / "other.npy"
    np.save(other, np.load(sine_file)[::-1].copy())
    capsys.readouterr()
    main(["evaluate", str(out), str(other), "--n-transient", "10", "--smoothing", "1", "--no-baselines"])
    text = capsys.readouterr().out
    assert "600 held-out steps" in text and "linear" not in text


def test_fit_errors_are_one_line(sine_file, tmp_path, capsys):
    out = tmp_path / "fit.pt"
    out.write_text("x")
    assert main(["fit", str(sine_file), "--out", str(out), *TINY]) == 2
    assert "exists; pass --overwrite" in capsys.readouterr().err
    bad = tmp_path / "bad.npy"
    x = np.random.default_rng(0).standard_normal((100, 2))
    x[7, 1] = np.nan
    np.save(bad, x)
    assert main(["fit", str(bad), "--out", str(tmp_path / "b.pt"), *TINY]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "NaN/Inf" in err and "time 7, channel 1" in err
    assert main(["fit", str(sine_file), "--seq-len", "1000", "--out", str(tmp_path / "c.pt")]) == 2
    assert "--seq-len + 1 = 1001" in capsys.readouterr().err


def test_evaluate_drives_an_input_model_with_the_held_out_inputs(tmp_path, capsys):
    rng = np.random.default_rng(0)
    u = rng.standard_normal((500, 1))
    x = np.zeros((500, 2))
    for t in range(1, 500):
        x[t] = np.array([0.6, 0.7]) * x[t - 1] + np.array([[0.0, 0.2], [-0.3, 0.0]]) @ np.maximum(
            x[t - 1], 0) + np.array([1.0, -0.5]) * u[t, 0]
    data = tmp_path / "driven.npz"
    np.savez(data, x=x, u=u)
    out = tmp_path / "fit.pt"
    assert main(["fit", str(data), "--key", "x", "--input-key", "u", "--model", "plrnn", "--out", str(out),
                 *TINY]) == 0
    capsys.readouterr()
    rc = main(["evaluate", str(out), "--n-transient", "10", "--pe-steps", "3", "--smoothing", "1",
               "--out", str(tmp_path / "ev.nc")])
    assert rc == 0, capsys.readouterr().err
    ds = xr.open_dataset(tmp_path / "ev.nc", engine="h5netcdf")
    assert ds.attrs["n_inputs"] == 1 and list(ds["model"].values) == ["fitted", "linear", "mean"]
    assert ds.sizes["time"] == 100 - 1 - 10  # held-out 20 %, driven from its first step, transient dropped
    # the ARX baseline sees the inputs: its PE(3) is far below that of the training mean
    assert float(ds["pe"].sel(model="linear")) < 0.5 * float(ds["pe"].sel(model="mean"))
    assert main(["evaluate", str(out), "--pe-steps", "3", "--smoothing", "1"]) == 0  # default: a tenth
    assert "n_transient" not in capsys.readouterr().err
    assert main(["evaluate", str(out), "--n-transient", "95"]) == 2
    assert "give at most 89" in capsys.readouterr().err


def test_fit_lowpass_and_downsample_are_recorded_and_replayed(sine_file, tmp_path, capsys):
    out = tmp_path / "fit.pt"
    assert main(["fit", str(sine_file), "--dt", "0.01", "--lowpass", "5", "--delay-lags", "0,4",
                 "--downsample", "2", "--latent", "4", "--out", str(out), *TINY]) == 0
    from neurodyn.io import load_model

    extra = load_model(out).checkpoint.extra
    steps = [s["step"] for s in extra["preprocessing"]]
    assert steps == ["lowpass", "delay_embed", "downsample", "time_slice", "standardize"]
    assert extra["dt"] == pytest.approx(0.02)
    capsys.readouterr()
    argv = ["evaluate", str(out), "--n-transient", "10", "--pe-steps", "2", "--smoothing", "1"]
    assert main(argv) in (0, 1)
    n = (600 - 4 + 1) // 2  # embedded, then every 2nd point
    assert f"{n - int(round(n * 0.8))} held-out steps" in capsys.readouterr().out
    assert main(["fit", str(sine_file), "--lowpass", "5", "--out", str(tmp_path / "b.pt"), *TINY]) == 2
    assert "give --dt in seconds" in capsys.readouterr().err
    assert main(["fit", str(sine_file), "--dt", "1", "--lowpass", "5", "--out", str(tmp_path / "b.pt"),
                 *TINY]) == 2
    assert "Nyquist" in capsys.readouterr().err  # 5 Hz is above the 0.5 Hz Nyquist frequency of dt = 1 s
    assert main(["fit", str(sine_file), "--dt", "0.01", "--lowpass", "5", "--no-standardize",
                 "--out", str(tmp_path / "raw.pt"), *TINY]) == 0  # the filtered array is contiguous
    assert main(["fit", str(sine_file), "--dt", "0.01", "--lowpass", "5", "--observation", "poisson",
                 "--out", str(tmp_path / "p.pt"), *TINY]) == 2
    assert "spike counts" in capsys.readouterr().err
    assert main(["fit", str(sine_file), "--downsample", "0", "--out", str(tmp_path / "c.pt"), *TINY]) == 2
    assert "--downsample must be >= 1" in capsys.readouterr().err


def test_evaluate_scores_poisson_fits_on_counts_unless_asked_for_rates(tmp_path, capsys):
    counts = np.random.default_rng(0).poisson([1.0, 3.0], (400, 2)).astype(float)
    np.save(tmp_path / "counts.npy", counts)
    out = tmp_path / "fit.pt"
    assert main(["fit", str(tmp_path / "counts.npy"), "--model", "plrnn", "--observation", "poisson",
                 "--out", str(out), *TINY]) == 0
    sampled = {}
    for flag in ([], ["--score-rates"]):
        nc = tmp_path / f"ev{len(flag)}.nc"
        main(["evaluate", str(out), "--n-transient", "10", "--pe-steps", "2", "--smoothing", "1",
              "--n-bins", "8", "--out", str(nc), *flag])
        with xr.open_dataset(nc, engine="h5netcdf") as ds:
            sampled[bool(flag)] = (int(ds.attrs["sample_counts"]), float(ds["d_stsp"].sel(model="mean")))
    assert sampled[False][0] == 1 and sampled[True][0] == 0
    # the mean baseline as counts (homogeneous Poisson) is far closer to the data than its constant rate
    assert sampled[False][1] < 0.5 * sampled[True][1]


def test_reading_guide_warns_when_the_floor_is_near_d_stsp_saturation():
    from types import SimpleNamespace

    from neurodyn.cli.evaluate import reading_guide

    result = SimpleNamespace(settings={"pe_steps": 5, "n_bins": 30, "d_stsp_max": 8.2305},
                             models=("fitted", "linear", "mean"))
    near = reading_guide(result, (7.2297, 0.0012), True)  # 5 channels, 3,000 points: 88 % of saturation
    assert "caution: the floor is 88 % of D_stsp's saturation (8.2305)" in near and "--method gmm" in near
    assert "caution" not in reading_guide(result, (0.9, 0.0012), True)
    assert "caution" not in reading_guide(result, None, False)


def test_a_missing_sampling_interval_is_one_warning_line_and_evaluate_reuses_the_fits_dt(
        sine_file, tmp_path, capsys):
    out = tmp_path / "fit.pt"
    capsys.readouterr()
    assert main(["fit", str(sine_file), "--model", "plrnn", "--out", str(out), *TINY]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("neurodyn fit: warning: ") and "--dt" in err[0], err
    assert "Traceback" not in err[0] and "UserWarning" not in err[0]
    assert main(["evaluate", str(out), "--n-transient", "10", "--smoothing", "1", "--no-baselines"]) in (0, 1)
    assert "sampling interval" not in capsys.readouterr().err
