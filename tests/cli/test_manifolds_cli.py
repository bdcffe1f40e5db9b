"""The ``neurodyn manifolds`` sub-command, called through its entry point."""

import numpy as np
import pytest
import xarray as xr

from neurodyn.cli.main import main
from neurodyn.io import load
from neurodyn.models import LeakyRNN


@pytest.fixture
def lozi_npz(tmp_path):
    """The Lozi map (a = 1.7, b = 0.5) as PLRNN arrays."""
    path = tmp_path / "lozi.npz"
    np.savez(path, A=np.array([[1.7, 1.0], [0.5, 0.0]]), W=np.array([[-3.4, 0.0], [0.0, 0.0]]),
             h=np.array([1.0, 0.0]))
    return path


def run_cli(*args):
    return main(["manifolds", *map(str, args)])


def test_writes_manifolds_and_figure_and_reports_chaos(lozi_npz, tmp_path, capsys):
    out, fig = tmp_path / "m.nc", tmp_path / "m.png"
    assert run_cli(lozi_npz, "--arch", "plrnn", "--exhaustive", "--max-depth", 5, "--box", 3,
                   "--out", out, "--plot", fig) == 0
    printed = capsys.readouterr().out
    assert "Smale-Birkhoff" in printed and "saddle 0 (period 1): ok" in printed
    ds = xr.load_dataset(out, engine="h5netcdf")
    assert ds.attrs["format"] == "neurodyn.manifolds"
    assert set(ds["kind"].values) == {"stable", "unstable"}
    # the two fixed points of the Lozi map, x = 1 / (1 ± a - b), both saddles
    got = np.sort(ds["saddle_state"].values[:, 0, 0])
    np.testing.assert_allclose(got, [1 / (1 - 1.7 - 0.5), 1 / (1 + 1.7 - 0.5)], atol=1e-12)
    np.testing.assert_array_equal(ds["saddle_status"].values, ["ok", "ok"])
    assert fig.stat().st_size > 1000
    assert list(load(out).saddle_status) == ["ok", "ok"]


def test_refuses_to_overwrite(lozi_npz, tmp_path, capsys):
    out = tmp_path / "m.nc"
    out.write_text("keep")
    assert run_cli(lozi_npz, "--arch", "plrnn", "--out", out) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert out.read_text() == "keep"


def test_rejects_smooth_models(tmp_path, capsys):
    from neurodyn.io import save_checkpoint

    path = tmp_path / "rnn.pt"
    save_checkpoint(path, LeakyRNN(1, 3, 1))
    assert run_cli(path) == 2
    assert "PLRNN" in capsys.readouterr().err


def test_max_seconds_cap_is_recorded_as_truncated(lozi_npz, tmp_path, capsys):
    out = tmp_path / "m.nc"
    assert run_cli(lozi_npz, "--arch", "plrnn", "--max-depth", 30, "--box", 3, "--max-seconds", 1e-9,
                   "--out", out) == 0
    printed = capsys.readouterr().out
    assert "(truncated: stable, unstable)" in printed
    ds = xr.load_dataset(out, engine="h5netcdf")
    assert ds.attrs["max_seconds"] == 1e-9
    result = load(out)
    assert result.truncated and all(result.truncated.values())
    # without the cap, a shallow search is not cut
    assert run_cli(lozi_npz, "--arch", "plrnn", "--max-depth", 3, "--box", 3) == 0
    assert "(truncated:" not in capsys.readouterr().out


@pytest.mark.parametrize("bad", ["0", "-2", "inf", "nan"])
def test_max_seconds_must_be_positive(lozi_npz, capsys, bad):
    assert run_cli(lozi_npz, "--arch", "plrnn", "--max-seconds", bad) == 2
    assert "--max-seconds" in capsys.readouterr().err


def test_one_dimensional_model_runs_without_plot_and_dims_are_checked_only_for_a_plot(tmp_path, capsys):
    model, out = tmp_path / "one.npz", tmp_path / "mf.nc"
    np.savez(model, A=[0.5], W=[[-2.0]], h=[1.0])  # z' = z / 2 - 2 relu(z) + 1: one unit
    assert run_cli(model, "--arch", "plrnn", "--max-order", 2, "--out", out) == 0
    assert xr.load_dataset(out, engine="h5netcdf").attrs["format"] == "neurodyn.manifolds"
    capsys.readouterr()
    assert run_cli(model, "--arch", "plrnn", "--plot", tmp_path / "mf.png") == 2
    assert "--dims must name 2 or 3 of the 1 state dimensions" in capsys.readouterr().err
    assert not (tmp_path / "mf.png").exists()
