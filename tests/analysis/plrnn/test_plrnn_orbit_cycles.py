"""find_attracting_cycles: exact cycles read off settled orbits, against closed forms and SCYFI."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from neurodyn.analysis import find_attracting_cycles, find_cycles
from neurodyn.models import PLRNN, PLSystem


def pulse_ring(k: int) -> PLSystem:
    """k units in a ring, ``z'_{i+1} = s(z_i)`` with the saturating ramp
    ``s(z) = relu(2z - 0.5) - relu(2z - 1.5)`` (0 below 0.25, 1 above 0.75).

    Every binary pattern is a superstable cycle (all monodromy eigenvalues 0) whose order is the
    pattern's smallest rotation period; one pulse ``e_1`` gives the k-cycle ``e_1, e_2, ..., e_k``.
    """
    eye = np.eye(k)
    normals = np.repeat(2.0 * eye, 2, axis=0)  # rows i, i: 2 z_i
    offsets = np.tile([-0.5, -1.5], k)
    shift = np.roll(eye, 1, axis=0)  # unit i feeds unit i + 1
    mixing = np.zeros((k, 2 * k))
    mixing[:, 0::2], mixing[:, 1::2] = shift, -shift
    return PLSystem(normals, offsets, np.zeros((k, k)), np.zeros(k), mixing)


def rotation_period(bits: np.ndarray) -> int:
    return next(d for d in range(1, len(bits) + 1) if np.array_equal(np.roll(bits, d), bits))


def test_a_single_pulse_gives_the_superstable_k_cycle_of_closed_form():
    k = 37  # far beyond what region enumeration can reach (2 hyperplanes per unit)
    start = np.zeros(k)
    start[0], start[5] = 0.9, 0.1
    res = find_attracting_cycles(pulse_ring(k), start, n_transient=3, max_order=60)
    assert res.attrs["n_closed"] == 1 and list(np.unique(res.order)) == [k]
    assert set(res.stability) == {"stable"}
    np.testing.assert_allclose(np.abs(res.eigenvalues), 0.0, atol=1e-12)
    visited = sorted(int(np.argmax(z)) for z in res.states)
    assert visited == list(range(k))
    np.testing.assert_allclose(np.sort(res.states, axis=1)[:, -1], 1.0, atol=1e-12)
    assert res.converged.all() and res.q.max() < 1e-24


@pytest.mark.parametrize("seed", [0, 1])
def test_random_patterns_close_at_their_rotation_period(seed):
    k = 12
    rng = np.random.default_rng(seed)
    bits = rng.random((40, k)) < 0.4
    starts = np.where(bits, 0.8 + 0.2 * rng.random((40, k)), 0.2 * rng.random((40, k)))
    res = find_attracting_cycles(pulse_ring(k), starts, n_transient=2, max_order=k)
    assert res.attrs["n_closed"] == 40
    expected = {}
    for b in bits:  # brute force: distinct patterns up to rotation, with their periods
        key = min(np.roll(b, r).tobytes() for r in range(k))
        expected[key] = rotation_period(b)
    assert res.n_cycles == len(expected)
    orders = [int(res.order[(res.cycle_id == c)][0]) for c in range(res.n_cycles)]
    assert sorted(orders) == sorted(expected.values())
    # orbits per cycle: the starts whose pattern is a rotation of that cycle's pattern (brute force)
    starts_per_class = {}
    for b in bits:
        key = min(np.roll(b, r).tobytes() for r in range(k))
        starts_per_class[key] = starts_per_class.get(key, 0) + 1
    got = {}
    for c in range(res.n_cycles):
        pattern = res.states[res.cycle_id == c][0] > 0.5
        got[min(np.roll(pattern, r).tobytes() for r in range(k))] = res.attrs["orbits_per_cycle"][c]
    assert got == starts_per_class


def test_matches_scyfi_on_the_closed_form_two_cycle():
    model = PLRNN.from_arrays([0.5, 0.5], [[-2.0, 0.0], [0.0, 0.0]], [1.0, -1.0])
    orbits = find_attracting_cycles(model, n_inits=16, n_transient=200, max_order=10, seed=0)
    exact = find_cycles(model, max_order=2, exhaustive=True)
    stable = exact.states[exact.stability == "stable"]
    assert orbits.attrs["n_closed"] == 16 and orbits.n_cycles == 1  # the saddle attracts nothing
    np.testing.assert_allclose(np.sort(orbits.states, axis=0), np.sort(stable, axis=0), atol=1e-12)
    np.testing.assert_allclose(np.sort(orbits.states[:, 0]), [-2 / 7, 6 / 7], atol=1e-12)
    np.testing.assert_allclose(np.sort(np.abs(orbits.eigenvalues[0])), [0.25, 0.75], atol=1e-12)


def test_chaos_and_divergence_close_no_cycle(tmp_path):
    # tent map with slope 1.9 on [0, 0.95]: chaotic, no attracting cycle
    tent_sys = PLSystem(np.array([[1.0]]), np.array([-0.5]), np.array([[1.9]]), np.zeros(1),
                        np.array([[-3.8]]))
    starts = np.random.default_rng(0).uniform(0.05, 0.9, (20, 1))
    res = find_attracting_cycles(tent_sys, starts, n_transient=500, max_order=300)
    assert res.n_points == 0 and res.attrs["n_not_closed"] == 20
    grow = PLRNN.from_arrays([2.0], [[0.0]], [1.0])
    res = find_attracting_cycles(grow, n_inits=5, n_transient=2000, max_order=5)
    assert res.attrs["n_diverged"] == 5 and res.n_points == 0
    assert "5 diverged" in res.summary()
    path = tmp_path / "cycles.nc"
    res.to_xarray().to_netcdf(path, engine="h5netcdf")
    assert xr.open_dataset(path, engine="h5netcdf").attrs["method"] == "orbits"


def test_same_seed_same_result_and_bad_arguments():
    model = PLRNN.from_arrays([0.5, 0.5], [[-2.0, 0.0], [0.0, 0.0]], [1.0, -1.0])
    a = find_attracting_cycles(model, n_inits=8, seed=3, n_transient=100, max_order=4)
    b = find_attracting_cycles(model, n_inits=8, seed=3, n_transient=100, max_order=4)
    np.testing.assert_array_equal(a.states, b.states)
    with pytest.raises(ValueError, match="initial_states must have shape"):
        find_attracting_cycles(model, np.zeros((3, 5)))
    with pytest.raises(ValueError, match="NaN or Inf"):
        find_attracting_cycles(model, np.array([np.nan, 0.0]))
    with pytest.raises(ValueError, match="closure_rtol"):
        find_attracting_cycles(model, closure_rtol=0.0)
    with pytest.raises(ValueError, match="max_order >= 1"):
        find_attracting_cycles(model, max_order=0)
    with pytest.raises(TypeError, match="n_transient must be an int"):
        find_attracting_cycles(model, n_transient=10.5)


def test_non_isolated_cycles_and_slow_divergence_are_not_counted_as_closed():
    th = 2 * np.pi / 5  # a rotation by 72 degrees: every point lies on a (non-isolated) 5-cycle
    rotation = PLRNN.from_arrays([[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]], np.zeros((2, 2)),
                                 np.zeros(2))
    res = find_attracting_cycles(rotation, n_inits=4, n_transient=100, max_order=20)
    assert res.n_points == 0 and res.attrs["n_closed"] == 0 and res.attrs["n_ill_conditioned"] == 4
    assert "no cycle found" in res.summary()
    slow = PLRNN.from_arrays([1.01], [[0.0]], [0.0])  # grows as 1.01^t: finite, but diverging
    res = find_attracting_cycles(slow, n_inits=3, n_transient=5000, max_order=10)
    assert res.attrs["n_diverged"] == 3 and res.attrs["n_not_closed"] == 0
    with pytest.raises(ValueError, match="batch >= 1"):
        find_attracting_cycles(slow, np.zeros((0, 1)))


def test_orbits_that_did_not_return_get_advice():
    # z' = 0.999 z for z < 0 (slow), 0.1 z for z > 0 (fast): one start settles within 50 steps, one does not
    model = PLRNN.from_arrays([0.999], [[-0.899]], [0.0])
    res = find_attracting_cycles(model, np.array([[-1.0], [1.0]]), n_transient=50, max_order=4)
    assert (res.attrs["n_closed"], res.attrs["n_not_closed"]) == (1, 1)
    text = res.summary()
    assert "1 orbits did not return" in text and "--n-transient, now 50, e.g. to 100" in text
    assert "--max-order" in text and "chaotic" in text


@pytest.mark.parametrize("kwargs, match", [
    ({"n_inits": 10**10, "n_transient": 10},
     r"^find_attracting_cycles needs about 4\.6\d*e\+04 GiB "
     r"\(10000000000 orbits x 201 steps x 3 dims, float64\) "
     r"but max_memory is 1 GiB; lower n_inits or max_order, or raise max_memory$"),
    ({"n_inits": 2, "n_transient": 0, "max_order": 3 * 10**7},
     r"needs about 1\.34 GiB \(2 orbits x 30000001 steps x 3 dims, float64\) but max_memory is 1 GiB"),
    ({"n_inits": 8, "max_order": 200, "max_memory": 10_000},
     r"\(8 orbits x 201 steps .* lower n_inits or max_order"),
    ({"n_inits": 10**10, "max_memory": 1e30}, r"GiB are available; lower n_inits or max_order$"),
    ({"max_memory": 0}, r"^max_memory must be a finite number > 0, got 0 \(bytes\)$"),
])
def test_orbits_too_large_for_memory_are_refused_before_any_step(kwargs, match):
    with pytest.raises(ValueError, match=match):
        find_attracting_cycles(PLRNN(0, 3, seed=0), **kwargs)


def test_given_states_too_many_for_max_memory_name_initial_states():
    model = PLRNN.from_arrays([0.5], [[0.0]], [1.0])  # one stable point, z* = 2
    with pytest.raises(ValueError, match=r"\(3 orbits x 201 steps .* pass fewer initial_states or max_order"):
        find_attracting_cycles(model, np.zeros((3, 1)), max_memory=1000)
    fits = find_attracting_cycles(model, np.zeros((3, 1)), n_transient=100, max_order=4, max_memory=1000)
    assert fits.attrs["n_inits"] == 3 and fits.attrs["n_closed"] == 3
    np.testing.assert_allclose(fits.states, [[2.0]])
