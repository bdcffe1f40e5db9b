"""The flip-flop example script runs its gallery page at the site's small size and writes its outputs."""

import importlib.util

import xarray as xr
from _paths import EXAMPLES

EXAMPLE = EXAMPLES / "flipflop_fixed_points.py"


def test_flipflop_example_tiny(tmp_path):
    spec = importlib.util.spec_from_file_location("flipflop_example", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = mod.main(tiny=True, out_dir=str(tmp_path))
    assert out["accuracy"] > 0.9
    assert out["n_stable"] >= 1
    ds = xr.load_dataset(tmp_path / "fixedpoints.nc", engine="h5netcdf")
    assert ds.sizes["unit"] == 32  # the gallery page's small size
    assert (tmp_path / "fixedpoints.png").stat().st_size > 10_000
