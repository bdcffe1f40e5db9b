"""Jacobians against finite differences; the result's netCDF format, summary and selection."""

import numpy as np
import pytest
import torch
import xarray as xr
from problems import BistableTanh, FlipTanh

from neurodyn.analysis import FixedPointResult, find_fixed_points, jacobians, load_fixed_points
from neurodyn.analysis.fixed_points._stability import batch_jacobian, cycle_jacobians, power_jacobian
from neurodyn.models import GRU, LSTM, LeakyRNN


def finite_difference_jacobian(G, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences, one column per state dimension; x (point, state)."""
    xt = torch.as_tensor(x, dtype=torch.float64)
    cols = []
    with torch.no_grad():
        for j in range(x.shape[1]):
            e = torch.zeros_like(xt)
            e[:, j] = eps
            cols.append(((G(xt + e) - G(xt - e)) / (2 * eps)).numpy())
    return np.stack(cols, axis=-1)


@pytest.mark.parametrize("make", [
    lambda: LeakyRNN(2, 7, 1, alpha=0.3, seed=1),
    lambda: GRU(2, 5, 1, seed=2),
    lambda: LSTM(2, 4, 1, seed=3),
])
def test_autograd_jacobians_match_finite_differences(make):
    model = make().double().requires_grad_(False)
    u = torch.tensor([[0.3, -0.7]], dtype=torch.float64)
    x = np.random.default_rng(0).normal(size=(6, model.state_size))

    def G(h):
        return model.step(h, u.expand(h.shape[0], -1))

    J = batch_jacobian(G, torch.as_tensor(x)).numpy()
    np.testing.assert_allclose(J, finite_difference_jacobian(G, x), atol=1e-8)


def test_monodromy_matches_finite_differences_of_the_k_fold_map():
    model = LeakyRNN(0, 5, 1, alpha=0.5, gain=1.5, seed=4).double().requires_grad_(False)

    def G(h):
        return model.step(h, None)

    h0 = torch.as_tensor(np.random.default_rng(1).normal(size=(3, 5)))
    orbit = [h0]
    for _ in range(2):
        orbit.append(G(orbit[-1]))
    monos = cycle_jacobians(G, torch.stack(orbit[:3], dim=1)).numpy()
    np.testing.assert_allclose(monos[:, 0], finite_difference_jacobian(lambda h: G(G(G(h))), h0.numpy()),
                               atol=1e-8)
    # seen from the second point of the orbit (not a cycle here, so only the first is G^3's Jacobian)
    steps = [finite_difference_jacobian(G, o.numpy()) for o in orbit[:3]]
    np.testing.assert_allclose(monos[:, 1], steps[0] @ steps[2] @ steps[1], atol=1e-8)
    jac_3 = power_jacobian(G, 3, lambda h: jacobians(model, h))
    np.testing.assert_allclose(jac_3(h0).numpy(), monos[:, 0], atol=1e-12)


def test_jacobians_stored_at_fixed_points_match_closed_form():
    problem = BistableTanh(2.5)
    res = find_fixed_points(problem, state_size=1, initial_states=np.linspace(-1, 1, 11)[:, None])
    expected = [problem.eigenvalue(h) for h in res.states[:, 0]]
    np.testing.assert_allclose(res.jacobians[:, 0, 0], expected, atol=1e-10)


@pytest.fixture
def cycle_result():
    return find_fixed_points(FlipTanh(2.0), state_size=1, initial_states=np.linspace(-1, 1, 9)[:, None],
                             max_order=2, seed=7)


def test_xarray_has_the_documented_names(cycle_result):
    ds = cycle_result.to_xarray()
    assert set(ds.dims) == {"fixed_point", "unit", "eigenvalue"}
    expected = {"state": ("fixed_point", "unit"), "q": ("fixed_point",),
                "eigenvalue_real": ("fixed_point", "eigenvalue"),
                "eigenvalue_imag": ("fixed_point", "eigenvalue"), "stability": ("fixed_point",),
                "n_unstable": ("fixed_point",), "converged": ("fixed_point",),
                "order": ("fixed_point",), "cycle_id": ("fixed_point",),
                "cycle_step": ("fixed_point",), "iterations": ("fixed_point",), "status": ("fixed_point",)}
    assert {name: ds[name].dims for name in ds.data_vars} == expected
    assert set(ds.stability.values) <= {"stable", "saddle", "unstable", "marginal"}
    assert list(ds.status.values) == ["converged"] * 3  # the fixed point 0 and the 2-cycle
    assert ds.attrs["format"] == "neurodyn.fixed_points" and ds.attrs["format_version"] == 1
    for key in ("input", "tol_q", "tol_dq", "max_iters", "tol_unique", "outlier_distance_scale",
                "marginal_tol", "seed", "method", "neurodyn_version"):
        assert key in ds.attrs
    assert ds.attrs["seed"] == 7 and ds.attrs["method"] == "newton"


def test_netcdf_round_trip(cycle_result, tmp_path):
    path = tmp_path / "fps.nc"
    cycle_result.save(path)
    back = load_fixed_points(path)
    for name in ("states", "q", "eigenvalues", "n_unstable", "converged", "order", "cycle_id",
                 "cycle_step", "iterations"):
        np.testing.assert_array_equal(getattr(back, name), getattr(cycle_result, name))
        assert getattr(back, name).dtype == getattr(cycle_result, name).dtype
    assert list(back.stability) == list(cycle_result.stability)
    assert back.attrs["tol_q"] == cycle_result.attrs["tol_q"]
    assert back.attrs["input"] == [] and back.attrs["method"] == "newton"
    ds = xr.load_dataset(path, engine="h5netcdf")
    assert FixedPointResult.from_xarray(ds).summary() == cycle_result.summary()


def test_from_xarray_reads_files_without_iterations(cycle_result):
    ds = cycle_result.to_xarray().drop_vars("iterations")
    ds["region_margin"] = ("fixed_point", np.zeros(ds.sizes["fixed_point"]))
    back = FixedPointResult.from_xarray(ds)
    assert (back.iterations == -1).all()
    np.testing.assert_array_equal(back.states, cycle_result.states)


def test_from_xarray_rejects_other_datasets():
    with pytest.raises(ValueError, match="missing variables"):
        FixedPointResult.from_xarray(xr.Dataset({"state": (("fixed_point", "unit"), np.zeros((1, 2)))}))


def test_summary_counts_converged_points_by_stability(cycle_result):
    text = cycle_result.summary()
    lines = {line[:28].strip(): line[28:].split() for line in text.splitlines()[1:-1]}
    assert lines["fixed points (converged)"][0] == "1"
    assert lines["unstable"][0] == "1"
    assert lines["period-2 cycles"][0] == "1"
    assert lines["stable"][0] == "0"  # the stable 2-cycle is not a stable fixed point


def test_empty_result_round_trips(tmp_path):
    def drift(h, u):  # no fixed point and a slow point far outside the starts
        return h + 1.0

    res = find_fixed_points(drift, state_size=2, initial_states=np.random.default_rng(0).normal(size=(5, 2)),
                            max_iters=50, outlier_distance_scale=1e-3)
    assert res.n_points == 0 and res.eigenvalues.shape == (0, 2)
    res.save(tmp_path / "e.nc")
    assert load_fixed_points(tmp_path / "e.nc").n_points == 0
    assert "fixed points (converged)" in res.summary()


def _leaky_points():
    X = np.random.default_rng(0).normal(size=(16, 8))
    return find_fixed_points(LeakyRNN(2, 8, 1, seed=0), initial_states=X, inputs=np.array([0.3, -0.2]))


def test_select_takes_integer_rows_or_a_boolean_mask():
    res = _leaky_points()
    assert res.n_points >= 3
    picked = res.select(np.array([2, 0, 1]))
    assert picked.n_points == 3
    np.testing.assert_array_equal(picked.states, res.states[[2, 0, 1]])
    np.testing.assert_array_equal(res.select([0, 0, 0]).states, res.states[[0, 0, 0]])
    np.testing.assert_array_equal(res.select([-1]).states, res.states[-1:])
    mask = np.zeros(res.n_points, dtype=bool)
    mask[1] = True
    np.testing.assert_array_equal(res.select(mask).states, res.states[1:2])
    assert res.select([]).n_points == 0
    with pytest.raises(ValueError, match="out of bounds"):
        res.select([99])
    with pytest.raises(ValueError, match="boolean mask must have shape"):
        res.select(np.ones(res.n_points + 1, dtype=bool))
    with pytest.raises(ValueError, match="integer row"):
        res.select([0.5])


def test_save_refuses_an_existing_file_unless_overwrite(tmp_path):
    res = find_fixed_points(BistableTanh(2.0), state_size=1, initial_states=np.linspace(-2, 2, 8)[:, None])
    path = res.save(tmp_path / "fp.nc")
    before = path.read_bytes()
    with pytest.raises(FileExistsError, match="overwrite=True") as err:
        res.select([0]).save(path)
    assert "\n" not in str(err.value) and path.read_bytes() == before
    res.select([0]).save(path, overwrite=True)
    assert load_fixed_points(path).n_points == 1


def test_from_xarray_checks_format_version_and_eigenvalue_dims(tmp_path):
    res = _leaky_points()
    ds = res.to_xarray()
    for attrs, expected in (({"format_version": 99}, "version 99, newer than this neurodyn reads"),
                            ({"format": "neurodyn.lyapunov"}, "is a neurodyn.lyapunov file")):
        with pytest.raises(ValueError, match=expected) as err:
            FixedPointResult.from_xarray(ds.assign_attrs(attrs))
        assert "\n" not in str(err.value)
    cut = ds.isel(eigenvalue=slice(0, 3))
    with pytest.raises(ValueError, match="3 eigenvalues per point for 8 units"):
        FixedPointResult.from_xarray(cut)
    cut.to_netcdf(tmp_path / "cut.nc", engine="h5netcdf")
    with pytest.raises(ValueError, match="3 eigenvalues per point for 8 units"):
        load_fixed_points(tmp_path / "cut.nc")
    assert FixedPointResult.from_xarray(ds).n_points == res.n_points


def test_xarray_variables_say_what_they_are_and_their_units(cycle_result, tmp_path):
    ds = cycle_result.to_xarray()
    assert ds["q"].attrs["units"] == "state units squared"
    assert "½‖F^k(h) − h‖²" in ds["q"].attrs["description"]
    assert ds["eigenvalue_real"].attrs["units"].startswith("1 (dimensionless")
    assert all("long_name" in ds[name].attrs for name in ds.data_vars)
    cycle_result.save(tmp_path / "points.nc")
    back = load_fixed_points(tmp_path / "points.nc")
    assert back.to_xarray()["q"].attrs == ds["q"].attrs
    with xr.open_dataset(tmp_path / "points.nc", engine="h5netcdf") as on_disk:
        assert on_disk["q"].attrs["units"] == "state units squared"
