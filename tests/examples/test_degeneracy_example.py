"""The degeneracy example runs its gallery page at the site's small size and writes its result and figure."""

import numpy as np
import pytest
import xarray as xr
from _example_module import load_example


@pytest.mark.slow
def test_degeneracy_example_tiny(tmp_path):
    out = load_example("degeneracy_flipflop").main(tiny=True, out_dir=str(tmp_path))
    assert out["n_networks"] == 4
    ds = xr.load_dataset(tmp_path / "degeneracy.nc", engine="h5netcdf")
    D = ds["dynamics_distance"].values
    np.testing.assert_array_equal(D, D.T)
    assert np.all(D[~np.eye(4, dtype=bool)] > 0)
    assert ds.attrs["dynamics_degeneracy"] == pytest.approx(out["dynamics_degeneracy"])
    assert (tmp_path / "degeneracy.png").stat().st_size > 10_000
