"""Files in the layouts written before the shared format attributes still load (tests/reference/results_v0).

They were written by tests/reference/make_result_references.py at the commit before the change; the
oracle is the same computation run now (the algorithms did not change), or the closed forms of the
problems they come from.
"""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from _paths import REFERENCE
from problems import FlipTanh, SlowDrift

from neurodyn.analysis import (
    BasinResult,
    CycleResult,
    DegeneracyResult,
    FixedPointResult,
    HomoclinicResult,
    LyapunovResult,
    ManifoldResult,
    ReconstructionResult,
    find_cycles,
    find_fixed_points,
    load_fixed_points,
)
from neurodyn.io import load
from neurodyn.kernels import RolloutResult
from neurodyn.models import PLRNN

OLD = REFERENCE / "results_v0"


@pytest.mark.parametrize("name, cls", [
    ("fixed_points", FixedPointResult), ("slow_point", FixedPointResult), ("cycles", CycleResult),
    ("manifolds", ManifoldResult), ("homoclinic", HomoclinicResult), ("basins", BasinResult),
    ("lyapunov", LyapunovResult), ("reconstruction", ReconstructionResult),
    ("degeneracy", DegeneracyResult), ("rollout", RolloutResult),
])
def test_every_old_file_loads_as_its_type_and_saves_in_the_current_layout(name, cls, tmp_path):
    old = load(OLD / f"{name}.nc")
    assert type(old) is cls
    old.save(tmp_path / "new.nc")
    again = load(tmp_path / "new.nc")
    xr.testing.assert_identical(again.to_xarray(), old.to_xarray())


def test_old_fixed_point_files_match_the_search_and_get_a_status():
    old = load_fixed_points(OLD / "fixed_points.nc")
    now = find_fixed_points(FlipTanh(2.0), state_size=1, initial_states=np.linspace(-1, 1, 9)[:, None],
                            max_order=2, seed=7)
    np.testing.assert_allclose(old.states, now.states, atol=1e-12)
    assert list(old.stability) == list(now.stability) and list(old.status) == list(now.status)
    assert old.attrs["input"] == [] and old.attrs["seed"] == 7
    slow = load(OLD / "slow_point.nc")  # status derived: stopped before max_iters above tol_q
    assert list(slow.status) == ["slow_point"] and slow.q[0] == pytest.approx(SlowDrift(0.05).q_min)


def test_old_cycle_file_written_under_the_fixed_point_format_is_read_as_cycles():
    with xr.open_dataset(OLD / "cycles.nc", engine="h5netcdf") as ds:
        assert ds.attrs["format"] == "neurodyn.fixed_points"
    old = load(OLD / "cycles.nc")
    two_cycle = PLRNN.from_arrays([0.5, 0.5], [[-2.0, 0.0], [0.0, 0.0]], [1.0, -1.0])
    now = find_cycles(two_cycle, max_order=2, seed=5)
    np.testing.assert_allclose(old.states, now.states, atol=1e-12)
    np.testing.assert_array_equal(old.region_code, now.region_code)
    assert list(old.status) == list(now.status) == ["converged"] * 3
    assert load_fixed_points(OLD / "cycles.nc").n_points == 3  # as the fixed-point reader did


def test_old_files_without_format_attribute_keep_their_contents():
    rec = load(OLD / "reconstruction.nc")
    assert rec.models == ("fitted", "linear", "mean") and rec.settings["fit_file"] == "fit.pt"
    basins = load(OLD / "basins.nc")
    assert set(basins.status) == {"attracted"} and basins.labels_grid().shape == (3, 3)
    np.testing.assert_allclose(basins.attractors[0], [[-2 / 7, -2.0], [6 / 7, -2.0]], atol=1e-9)
    lyap = load(OLD / "lyapunov.nc")
    assert list(lyap.status) == ["finite"] and lyap.max_exponent[0] > 0  # the Lozi map is chaotic
    roll = load(OLD / "rollout.nc")
    assert roll.states.shape == (2, 4, 3) and list(roll.status) == ["finite", "finite"]
    assert load(OLD / "homoclinic.nc").proves_chaos
    deg = load(OLD / "degeneracy.nc")
    assert deg.names == ("net0", "net1") and deg.settings["dynamics_metric"] == "cka"
