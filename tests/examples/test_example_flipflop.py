"""The flip-flop example script runs its gallery page at the site's small size and writes its outputs."""

import xarray as xr
from _example_module import load_example


def test_flipflop_example_tiny(tmp_path):
    out = load_example("flipflop_fixed_points").main(tiny=True, out_dir=str(tmp_path))
    assert out["accuracy"] > 0.9
    assert out["n_stable"] >= 1
    ds = xr.load_dataset(tmp_path / "fixedpoints.nc", engine="h5netcdf")
    assert ds.sizes["unit"] == 32  # the gallery page's small size
    assert (tmp_path / "fixedpoints.png").stat().st_size > 10_000
