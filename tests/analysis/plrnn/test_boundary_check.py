"""Traced basin boundaries against simulation, on bistable maps whose boundary is known in closed form."""

import dataclasses

import numpy as np
import pytest

from neurodyn.analysis import compute_basins, find_cycles, find_manifolds
from neurodyn.analysis.plrnn import basin_boundary, compute_boundary_agreement
from neurodyn.models import PLRNN, ShallowPLRNN

BOX = (-4.0, 5.0)
NORMALS = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])


def bistable(coupling: float) -> ShallowPLRNN:
    """x' = f(x) + coupling relu(y), y' = (y + 1)/2; f has slope 2 for |x| < 1, 1/2 outside.

    With coupling 1/2: stable points (4, 1) and (-2, 1), saddle (-1/2, 1), whose stable manifold is
    x = -1/2 - (y - 1)/3 near the saddle. Without coupling: stable points (±3, 1), saddle (0, 1), and
    the stable manifold is the whole line x = 0.
    """
    mixing = np.array([[-1.5, 1.5, coupling], [0.0, 0.0, 0.0]])
    return ShallowPLRNN.from_arrays([2.0, 0.5], mixing, NORMALS, [0.0, 0.5], [-1.0, -1.0, 0.0])


def traced(model, n_grid=31):
    cycles = find_cycles(model, max_order=1, exhaustive=True)
    basins = compute_basins(model, cycles, grid=([BOX, BOX], n_grid), max_steps=300)
    return basins, find_manifolds(model, cycles, kind="stable", box=BOX)


@pytest.mark.parametrize("coupling", [0.0, 0.5])
def test_traced_boundary_splits_basins_and_explains_every_switch(coupling):
    model = bistable(coupling)
    basins, stable = traced(model)
    pts = np.concatenate([p.samples for p in basin_boundary(stable)])
    if coupling == 0.0:  # closed form: the line x = 0 across the whole box
        assert np.allclose(pts[:, 0], 0.0) and pts[:, 1].min() < -3.5 and pts[:, 1].max() > 4.5
    check = compute_boundary_agreement(model, stable, basins)
    assert check.attrs["split_fraction"] == 1.0
    assert check.attrs["misassigned_fraction"] == 0.0
    assert check.attrs["n_switch"] > 20 and np.all(check.switch_distance <= check.attrs["tol"])
    labels = check.across_labels.values
    assert set(np.unique(labels)) == {0, 1}


def test_a_displaced_boundary_is_caught():
    model = bistable(0.0)
    basins, stable = traced(model)
    shift = np.array([1.0, 0.0])
    wrong = [dataclasses.replace(p, base=p.base + shift, samples=p.samples + shift)
             for p in basin_boundary(stable)]
    check = compute_boundary_agreement(model, wrong, basins)
    assert check.attrs["split_fraction"] == 0.0
    # the true switch, x = 0 between grid columns -0.1 and 0.2, lies about 1 away: both grid columns
    # next to it are misassigned
    assert check.attrs["misassigned_fraction"] == pytest.approx(2 / 31)


def test_bad_inputs():
    model = bistable(0.0)
    basins, stable = traced(model, n_grid=5)
    on_states = compute_basins(model, list(basins.attractors), states=basins.states, max_steps=50)
    with pytest.raises(ValueError, match="on a grid"):
        compute_boundary_agreement(model, stable, on_states)
    with pytest.raises(ValueError, match="codimension 1"):
        compute_boundary_agreement(model, [], basins)


def winner_take_all():
    """z1' = z1/2 - relu(z2) + 1, z2' = z2/2 - relu(z1) + 1: stable (2, -2), (-2, 2), saddle (2/3, 2/3).

    The map commutes with swapping the units, so the diagonal is invariant and, by symmetry, the
    basin boundary: the stable manifold of the saddle is the whole line z1 = z2.
    """
    return PLRNN.from_arrays(A=[0.5, 0.5], W=[[0.0, -1.0], [-1.0, 0.0]], h=[1.0, 1.0])


def test_winner_take_all_boundary_is_the_diagonal():
    model = winner_take_all()
    cycles = find_cycles(model, max_order=1, exhaustive=True)
    order = np.argsort(cycles.stability != "saddle")
    assert np.allclose(cycles.states[order[0]], [2 / 3, 2 / 3])
    basins = compute_basins(model, cycles, grid=([(-4, 4), (-4, 4)], 20), max_steps=200)
    stable = find_manifolds(model, cycles, kind="stable", box=(-4.0, 4.0))
    pts = np.concatenate([p.samples for p in basin_boundary(stable)])
    assert np.allclose(pts[:, 0], pts[:, 1]) and np.ptp(pts[:, 0]) > 7.0
    check = compute_boundary_agreement(model, stable, basins)
    assert check.attrs["split_fraction"] == 1.0 and check.attrs["misassigned_fraction"] == 0.0

