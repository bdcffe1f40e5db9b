"""The degeneracy-factors example runs at tiny size: one sweep, its dataset, the figure and the table."""

import importlib.util

import numpy as np
import pytest
import xarray as xr
from _paths import EXAMPLES

EXAMPLE = EXAMPLES / "degeneracy_factors.py"


@pytest.mark.slow
def test_degeneracy_factors_example_tiny(tmp_path):
    spec = importlib.util.spec_from_file_location("degeneracy_factors_example", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = mod.main(tiny=True, out_dir=str(tmp_path))
    sweep = xr.load_dataset(tmp_path / "flipflop-size" / "sweep.nc", engine="h5netcdf")
    assert (sweep["status"].values == "ok").all() and list(sweep["n_units"].values) == [8, 16]
    # the summary is the log ratio of the sweep's per-cell degeneracy, high level over low
    w = sweep["weight_degeneracy"].values
    assert out["log_ratio"][0, 0, 2] == pytest.approx(np.log(w[1] / w[0]))
    factors = xr.load_dataset(tmp_path / "factors.nc", engine="h5netcdf")
    assert factors["log_ratio"].shape == (1, 1, 3)
    table = (tmp_path / "table.md").read_text()
    assert "| size | weight_degeneracy | ↓ |" in table and table.startswith("Scale: 1 task(s)")
    assert (tmp_path / "factors.png").stat().st_size > 5_000
