"""The degeneracy-factors example runs its gallery page at the site's small size: two sweeps (flip-flop ×
complexity, delayed discrimination × size), then the summary, figure and table."""

import json

import numpy as np
import pytest
import xarray as xr
from _example_module import load_example


@pytest.mark.slow
def test_degeneracy_factors_example_tiny(tmp_path):
    mod = load_example("degeneracy_factors")
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
    for (i, j), name in (((0, 0), "flipflop-complexity"), ((2, 2), "romo-size")):
        assert (tmp_path / name / "sweep.nc").exists()
        assert np.isfinite(out["log_ratio"][i, j]).all()  # every level measured
    ran = np.zeros((4, 4), bool)
    ran[0, 0] = ran[2, 2] = True
    assert np.isnan(out["log_ratio"][~ran]).all()  # not run at the small size
    factors = xr.load_dataset(tmp_path / "factors.nc", engine="h5netcdf")
    assert factors["degeneracy"].dims == ("task", "factor", "factor_level", "level")
    assert factors["log_ratio"].shape == (4, 4, 3)
    table = (tmp_path / "table.md").read_text()
    assert table.startswith("Scale: 2 sweeps (2 tasks, 2 factors), 2 levels × 2 seeds = 8 networks")
    assert "| size | weights | ↓ | romo " in table and "| flipflop |" in table
    assert "| feature_learning |" not in table  # a factor without a finished sweep is left out
    assert json.loads((tmp_path / "summary.json").read_text())["n_networks"] == 8
    assert (tmp_path / "factors.png").stat().st_size > 5_000
    again = mod.main(tiny=True, out_dir=str(tmp_path), summarise_only=True)  # from the stored sweeps
    assert np.array_equal(again["log_ratio"], out["log_ratio"], equal_nan=True)


def test_summarise_only_without_a_finished_sweep_says_so(tmp_path):
    mod = load_example("degeneracy_factors")
    with pytest.raises(FileNotFoundError, match=r"nothing to summarise: no finished sweep in .*; run the "
                                                r"sweeps there first \(without --summarise-only\)"):
        mod.main(tiny=True, out_dir=str(tmp_path), summarise_only=True)
    assert list(tmp_path.iterdir()) == []  # no empty table, dataset or figure
