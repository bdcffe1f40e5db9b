"""Exact fixed points and k-cycles of PL models: closed forms, verification, format, invariances."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
import xarray as xr

from neurodyn.analysis import CycleResult, find_cycles
from neurodyn.analysis.plrnn import enumerate_regions
from neurodyn.models import PLRNN, LeakyRNN, ShallowPLRNN, pl_system


def two_cycle_saddle() -> PLRNN:
    """Decoupled 2-D PLRNN with closed-form answers.

    Unit 1 is the 1-D map with slope 0.5 for z < 0 and 0.5 - 2 = -1.5 for z > 0, offset 1: its
    fixed point is z = 1 / 2.5 = 0.4 (slope -1.5, unstable) and its 2-cycle p = 6/7 > 0,
    q = -1.5 p + 1 = -2/7 < 0 has multiplier 0.5 * -1.5 = -0.75. Unit 2 is z' = 0.5 z - 1 with
    the stable fixed point -2. So (0.4, -2) is a saddle (eigenvalues -1.5, 0.5) and
    {(6/7, -2), (-2/7, -2)} a stable 2-cycle (monodromy eigenvalues -0.75, 0.25).
    """
    return PLRNN.from_arrays([0.5, 0.5], [[-2.0, 0.0], [0.0, 0.0]], [1.0, -1.0])


def assert_verified(result: CycleResult, model, tol: float = 1e-10) -> None:
    """Every point is a k-periodic point of the true map, its orbit is the listed one, and it lies
    in (the closure of) the region whose affine map produced it."""
    system = pl_system(model)
    for i in range(result.n_points):
        z, k = result.states[i], int(result.order[i])
        w = z.copy()
        for _ in range(k):
            w = system.step(w)
        assert np.linalg.norm(w - z) <= tol * (1 + np.linalg.norm(z))
        same = (result.cycle_id == result.cycle_id[i])
        nxt = result.states[same][(result.cycle_step[i] + 1) % k]
        np.testing.assert_allclose(system.step(z), nxt, atol=tol * (1 + np.abs(z).max()))
        pre = system.preactivation(z)
        sign = np.where(result.region_code[i], 1.0, -1.0)
        assert np.all(sign * pre >= -1e-9 * (1 + np.abs(z).max()))
        dist = np.abs(pre) / np.linalg.norm(system.normals, axis=1)
        assert result.region_margin[i] == pytest.approx(dist.min(), rel=1e-9, abs=1e-12)
        assert result.converged[i]


@pytest.mark.parametrize("exhaustive", [False, True])
def test_closed_form_two_cycle_and_saddle(exhaustive: bool) -> None:
    model = two_cycle_saddle()
    result = find_cycles(model, max_order=4, exhaustive=exhaustive, seed=0)
    assert list(result.order) == [1, 2, 2]
    np.testing.assert_allclose(result.states[0], [0.4, -2.0], atol=1e-12)
    assert result.stability[0] == "saddle" and result.n_unstable[0] == 1
    np.testing.assert_allclose(result.eigenvalues[0], [-1.5, 0.5], atol=1e-12)
    np.testing.assert_allclose(np.abs(result.leading_mode[0]), [1.0, 0.0], atol=1e-12)
    # canonical start: the region sequence (False, False), (True, False) — the point with z1 < 0
    np.testing.assert_allclose(result.states[1:], [[-2 / 7, -2.0], [6 / 7, -2.0]], atol=1e-12)
    np.testing.assert_array_equal(result.cycle_step[1:], [0, 1])
    assert list(result.stability[1:]) == ["stable", "stable"]
    np.testing.assert_allclose(result.eigenvalues[1], [-0.75, 0.25], atol=1e-12)
    np.testing.assert_allclose(result.region_margin, [0.4, 2 / 7, 6 / 7], atol=1e-12)
    assert_verified(result, model)
    assert bool(result.search["complete"].all()) == exhaustive


def test_unstable_and_marginal_labels() -> None:
    # unit 1: z' = -1 for z < 0 (fixed point -1, slope 0), z' = 2z - 1 for z > 0 (fixed point 1,
    # slope 2); unit 2: z' = -z + 3, slope exactly -1 (marginal), fixed point 1.5
    model = PLRNN.from_arrays([0.0, -1.0], [[2.0, 0.0], [0.0, 0.0]], [-1.0, 3.0])
    result = find_cycles(model, max_order=1, exhaustive=True)
    np.testing.assert_allclose(result.states, [[-1.0, 1.5], [1.0, 1.5]])
    assert list(result.stability) == ["marginal", "marginal"]
    assert list(result.n_unstable) == [0, 1]
    model = PLRNN.from_arrays([0.0, 1.5], [[2.0, 0.0], [0.0, 0.0]], [-1.0, 1.0])
    result = find_cycles(model, max_order=1, exhaustive=True)
    # unit 2 now z' = 1.5 z + 1 (unstable): a saddle at z1 = -1 and a repeller at z1 = 1
    assert list(result.stability) == ["saddle", "unstable"]
    assert list(result.n_unstable) == [1, 2]


def test_ill_conditioned_sequences_are_counted_not_solved() -> None:
    identity = PLRNN.from_arrays([1.0, 1.0], np.zeros((2, 2)), [0.0, 0.0])
    result = find_cycles(identity, max_order=1, exhaustive=True)
    assert result.n_points == 0 and result.search["n_ill_conditioned"][0] == 4
    # a quarter turn in every region: every point is 4-periodic, (I - R^4) = 0
    rot = PLRNN.from_arrays([[0.0, -1.0], [1.0, 0.0]], np.zeros((2, 2)), [0.0, 0.0])
    result = find_cycles(rot, max_order=4, exhaustive=True)
    assert list(result.order) == [1]  # the origin, the only isolated fixed point
    assert result.stability[0] == "marginal"
    assert result.search["n_ill_conditioned"][3] > 0


def test_divisor_orders_are_dropped() -> None:
    result = find_cycles(two_cycle_saddle(), max_order=4, seed=1)
    # no order-2 copy of the fixed point and no order-4 copy of the 2-cycle
    assert [len(result.cycles(k)) for k in (1, 2, 3, 4)] == [1, 1, 0, 0]


def test_input_is_folded_into_the_bias() -> None:
    rng = np.random.default_rng(0)
    A, W, h = rng.uniform(-0.9, 0.9, 3), rng.normal(size=(3, 3)), rng.normal(size=3)
    C = rng.normal(size=(3, 2))
    u = np.array([0.3, -1.2])
    driven = find_cycles(PLRNN.from_arrays(A, W, h, C=C), max_order=2, exhaustive=True, u=u)
    shifted = find_cycles(PLRNN.from_arrays(A, W, h + C @ u), max_order=2, exhaustive=True)
    np.testing.assert_allclose(driven.states, shifted.states, atol=1e-12)
    np.testing.assert_array_equal(driven.stability, shifted.stability)


@pytest.mark.parametrize("seed", [0, 1])
def test_unit_permutation_permutes_the_cycles(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 3
    A, W, h = rng.uniform(-1, 1, n), rng.normal(size=(n, n)) * 1.7, rng.normal(size=n)
    perm = rng.permutation(n)
    base = find_cycles(PLRNN.from_arrays(A, W, h), max_order=3, exhaustive=True)
    permuted = find_cycles(PLRNN.from_arrays(A[perm], W[np.ix_(perm, perm)], h[perm]), max_order=3,
                           exhaustive=True)
    assert base.n_points == permuted.n_points
    key = lambda s: sorted(map(tuple, np.round(s, 9)))  # noqa: E731  (comparison only)
    assert key(base.states[:, perm]) == key(permuted.states)
    np.testing.assert_array_equal(np.sort(base.n_unstable), np.sort(permuted.n_unstable))


def test_same_seed_same_result_and_netcdf_round_trip(tmp_path) -> None:
    model = two_cycle_saddle()
    a = find_cycles(model, max_order=3, seed=5)
    b = find_cycles(model, max_order=3, seed=5)
    np.testing.assert_array_equal(a.states, b.states)
    np.testing.assert_array_equal(a.search["n_solves"], b.search["n_solves"])
    ds = a.to_xarray()
    assert set(ds.dims) >= {"fixed_point", "unit", "eigenvalue"}
    for name in ("state", "q", "eigenvalue_real", "eigenvalue_imag", "stability", "n_unstable",
                 "converged", "order", "cycle_id", "cycle_step", "iterations", "region_margin"):
        assert ds[name].dims[0] == "fixed_point"
    assert ds.attrs["method"] == "exact" and ds.attrs["max_order"] == 3 and ds.attrs["seed"] == 5
    assert "neurodyn_version" in ds.attrs and ds.attrs["tol_residual"] > 0
    np.testing.assert_array_equal(np.abs(ds["eigenvalue_real"] + 1j * ds["eigenvalue_imag"]).values,
                                  np.abs(a.eigenvalues))
    from neurodyn.analysis import FixedPointResult

    shared = FixedPointResult.from_xarray(ds)  # the general finder reads the same names
    np.testing.assert_array_equal(shared.states, a.states)
    np.testing.assert_array_equal(shared.cycle_step, a.cycle_step)
    path = tmp_path / "cycles.nc"
    a.save(path)
    with xr.open_dataset(path, engine="h5netcdf") as loaded:
        back = CycleResult.from_xarray(loaded.load())
    np.testing.assert_array_equal(back.states, a.states)
    np.testing.assert_array_equal(back.stability, a.stability)
    np.testing.assert_array_equal(back.region_code, a.region_code)
    np.testing.assert_array_equal(back.search["complete"], a.search["complete"])


def test_region_count_of_line_arrangements() -> None:
    # L lines in general position in the plane cut it into 1 + L + L(L-1)/2 regions
    rng = np.random.default_rng(2)
    L = 5
    W1, W2, h2 = rng.normal(size=(2, L)), rng.normal(size=(L, 2)), rng.normal(size=L)
    plain = ShallowPLRNN.from_arrays(np.full(2, 0.5), W1, W2, np.zeros(2), h2)
    assert enumerate_regions(pl_system(plain)).shape == (1 + L + math.comb(L, 2), L)
    # clipped: 2L lines, the rows of W2 z = 0 all through the origin, each parallel to one of
    # W2 z + h2 = 0. Regions = 1 + lines + sum over crossing points of (lines through it - 1):
    # the origin gives L - 1, every other non-parallel pair one.
    clipped = ShallowPLRNN.from_arrays(np.full(2, 0.5), W1, W2, np.zeros(2), h2, clipped=True)
    n_regions = 1 + 2 * L + (L - 1) + (math.comb(2 * L, 2) - L - math.comb(L, 2))
    assert enumerate_regions(pl_system(clipped)).shape == (n_regions, 2 * L)


def test_time_budget_and_bad_arguments() -> None:
    rng = np.random.default_rng(3)
    model = PLRNN.from_arrays(rng.uniform(-1, 1, 12), rng.normal(size=(12, 12)), rng.normal(size=12))
    result = find_cycles(model, max_order=3, time_budget=0.05, n_restarts=10**6)
    assert result.attrs["wall_time"] < 5.0
    with pytest.raises(ValueError, match="max_order"):
        find_cycles(model, max_order=0)
    with pytest.raises(TypeError, match="PLRNN"):
        find_cycles(LeakyRNN(0, 3, 1))
    with pytest.raises(ValueError, match="max_regions"):
        find_cycles(model, exhaustive=True, max_regions=1000)
    eight = PLRNN.from_arrays(rng.uniform(-1, 1, 8), rng.normal(size=(8, 8)), rng.normal(size=8))
    with pytest.raises(ValueError, match="lower max_order to 2"):  # 256**3 sequences, 256**2 LPs
        find_cycles(eight, max_order=3, exhaustive=True)
    with pytest.raises(ValueError, match="max_sequences"):
        find_cycles(two_cycle_saddle(), max_order=4, exhaustive=True, max_sequences=10)


def test_time_budget_bounds_a_search_of_a_huge_max_order() -> None:
    one_unit = PLRNN.from_arrays([0.5], [[-2.0]], [1.0])
    start = time.perf_counter()
    result = find_cycles(one_unit, max_order=10**6, time_budget=0.5, n_restarts=2)
    assert time.perf_counter() - start < 3.0  # was minutes: every order past the budget was set up
    solves = result.search["n_solves"]
    assert solves.shape == (10**6,) and solves[0] > 0 and solves[-1] == 0
    assert not result.search["complete"].any()
    last = int(np.flatnonzero(solves).max()) + 1
    left = f"orders {last + 1}-1000000: not searched (the time budget ran out)"
    assert result.summary().splitlines()[-2] == left
