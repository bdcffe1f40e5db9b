"""The degeneracy example runs at tiny size and writes its result and figure."""

import importlib.util

import numpy as np
import pytest
import xarray as xr
from _paths import EXAMPLES

EXAMPLE = EXAMPLES / "degeneracy_flipflop.py"


@pytest.mark.slow
def test_degeneracy_example_tiny(tmp_path):
    spec = importlib.util.spec_from_file_location("degeneracy_example", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = mod.main(tiny=True, out_dir=str(tmp_path))
    assert out["n_networks"] == 4
    ds = xr.load_dataset(tmp_path / "degeneracy.nc", engine="h5netcdf")
    D = ds["dynamics_distance"].values
    np.testing.assert_array_equal(D, D.T)
    assert np.all(D[~np.eye(4, dtype=bool)] > 0)
    assert ds.attrs["dynamics_degeneracy"] == pytest.approx(out["dynamics_degeneracy"])
    assert (tmp_path / "degeneracy.png").stat().st_size > 10_000
