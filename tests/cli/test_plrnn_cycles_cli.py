"""``neurodyn fixedpoints`` on PLRNN-family array files: the exact cycle search and its netCDF file."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from neurodyn.cli.main import main
from neurodyn.io import load


def write_two_cycle_saddle(path) -> None:
    """The closed-form system of test_plrnn_cycles: saddle (0.4, -2), 2-cycle (6/7, -2), (-2/7, -2)."""
    np.savez(path, A=np.array([0.5, 0.5]), W=np.array([[-2.0, 0.0], [0.0, 0.0]]), h=np.array([1.0, -1.0]))


@pytest.mark.parametrize("exhaustive", [False, True])
def test_fixedpoints_command_runs_the_exact_search(tmp_path, capsys, exhaustive: bool) -> None:
    model, out, plot = tmp_path / "plrnn.npz", tmp_path / "cycles.nc", tmp_path / "cycles.png"
    write_two_cycle_saddle(model)
    argv = ["fixedpoints", str(model), "--arch", "plrnn", "--max-order", "3", "--out", str(out),
            "--plot", str(plot)] + (["--exhaustive"] if exhaustive else [])
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "order" in printed and "saddle" in printed
    with xr.open_dataset(out, engine="h5netcdf") as ds:
        assert ds.attrs["method"] == ("exhaustive" if exhaustive else "exact")
        assert ds.attrs["max_order"] == 3
        np.testing.assert_allclose(ds["state"].values, [[0.4, -2.0], [-2 / 7, -2.0], [6 / 7, -2.0]],
                                   atol=1e-12)
        assert list(ds["order"].values) == [1, 2, 2]
        assert list(ds["stability"].values) == ["saddle", "stable", "stable"]
        assert list(ds["cycle_step"].values) == [0, 0, 1]
        assert ds["q"].values.max() < 1e-24
        assert bool(ds["complete"].values.all()) == exhaustive
    back = load(out)
    assert type(back).__name__ == "CycleResult" and list(back.status) == ["converged"] * 3
    assert plot.stat().st_size > 0


def test_fixedpoints_command_errors(tmp_path, capsys) -> None:
    model = tmp_path / "plrnn.npz"
    write_two_cycle_saddle(model)
    assert main(["fixedpoints", str(model)]) == 2
    assert "--arch" in capsys.readouterr().err
    np.savez(tmp_path / "bad.npz", A=np.ones(2), W=np.ones((2, 2)))
    assert main(["fixedpoints", str(tmp_path / "bad.npz"), "--arch", "plrnn"]) == 2
    assert "missing h" in capsys.readouterr().err


def test_fixedpoints_attractors_finds_only_the_stable_cycle(tmp_path, capsys) -> None:
    model, out = tmp_path / "plrnn.npz", tmp_path / "attractors.nc"
    write_two_cycle_saddle(model)
    argv = ["fixedpoints", str(model), "--arch", "plrnn", "--attractors", "--max-order", "50",
            "--n-inits", "8", "--n-transient", "300", "--out", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "8 closed a cycle" in printed and "orbits per cycle (by cycle_id): 8" in printed
    with xr.open_dataset(out, engine="h5netcdf") as ds:
        assert ds.attrs["method"] == "orbits" and ds.attrs["n_closed"] == 8
        np.testing.assert_allclose(ds["state"].values, [[-2 / 7, -2.0], [6 / 7, -2.0]], atol=1e-12)
        assert list(ds["stability"].values) == ["stable", "stable"]
    assert main(["fixedpoints", str(model), "--arch", "plrnn", "--attractors", "--exhaustive"]) == 2
    assert "exclude each other" in capsys.readouterr().err
    assert main(["fixedpoints", str(model), "--arch", "plrnn", "--attractors", "--noise-scale", "0.1"]) == 2
    assert "--noise-scale has no effect" in capsys.readouterr().err
    assert main(["fixedpoints", str(model), "--arch", "plrnn", "--attractors", "--n-transient", "-1"]) == 2
    assert "--n-transient must be >= 0" in capsys.readouterr().err
