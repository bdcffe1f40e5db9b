"""The degeneracy-factors example at tiny size: four sweeps (one factor per task), summary, figure, table."""

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
    assert out["tasks"] == ["flipflop", "sine_wave", "romo", "path_integration"]
    sweep = xr.load_dataset(tmp_path / "romo-size" / "sweep.nc", engine="h5netcdf")
    assert (sweep["status"].values == "ok").all() and list(sweep["n_units"].values) == [4, 8]
    # the summary is the log ratio of the sweep's per-cell degeneracy, high level over low, and the same
    # ratio of the untrained networks is what the "vs untrained" column takes away
    w, w0 = sweep["weight_degeneracy"].values, sweep["baseline_weight_degeneracy"].values
    assert out["log_ratio"][2, 2, 2] == pytest.approx(np.log(w[1] / w[0]))
    relative = np.log(w[1] / w[0]) - np.log(w0[1] / w0[0])
    assert out["log_ratio_vs_untrained"][2, 2, 2] == pytest.approx(relative)
    for i, name in enumerate(["flipflop-complexity", "sine_wave-feature_learning", "romo-size",
                              "path_integration-regularisation"]):
        assert (tmp_path / name / "sweep.nc").exists()
        assert np.isfinite(out["log_ratio"][i, i]).all()  # one factor per task, every level measured
    assert np.isnan(out["log_ratio"][0, 1]).all()  # not run at tiny size
    factors = xr.load_dataset(tmp_path / "factors.nc", engine="h5netcdf")
    assert factors["degeneracy"].dims == ("task", "factor", "factor_level", "level")
    assert factors["log_ratio"].shape == (4, 4, 3)
    table = (tmp_path / "table.md").read_text()
    assert table.startswith("Scale: 4 sweeps (4 tasks, 4 factors), 2 levels × 2 seeds = 16 networks")
    assert "| size | weights | ↓ | romo " in table and "| flipflop |" in table
    assert (tmp_path / "factors.png").stat().st_size > 5_000
    again = mod.main(tiny=True, out_dir=str(tmp_path), summarise_only=True)  # from the stored sweeps
    assert np.array_equal(again["log_ratio"], out["log_ratio"], equal_nan=True)
