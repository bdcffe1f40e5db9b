"""Basins of attraction: forward-simulation labels and their boundary, the stable manifold."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neurodyn.analysis.plrnn.basins import DIVERGED, UNDECIDED, basin_boundary, compute_basins
from neurodyn.analysis.plrnn.manifolds import find_manifolds
from neurodyn.models import PLSystem, ShallowPLRNN


def bent_bistable():
    """x' = f(x) + relu(y)/2, y' = (y + 1)/2; f slope 2 inside |x| < 1, 1/2 outside.

    Attractors (4, 1) and (-2, 1); saddle (-1/2, 1), whose stable manifold for y > 0, |x| < 1 is the
    line x = -1/2 - (y - 1)/3 and bends where it crosses y = 0 and x = ±1.
    """
    N = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])
    V = np.array([[-1.5, 1.5, 0.5], [0.0, 0.0, 0.0]])
    return ShallowPLRNN.from_arrays(np.array([2.0, 0.5]), V, N, np.array([0.0, 0.5]),
                                    np.array([-1.0, -1.0, 0.0]))


ATTRACTORS = [np.array([4.0, 1.0]), np.array([-2.0, 1.0])]
SADDLE = np.array([-0.5, 1.0])


def brute_force_labels(model, x0, n_steps=200):
    with torch.no_grad():
        z = model.forward(h0=torch.as_tensor(x0), n_steps=n_steps, noise=False).states[:, -1].numpy()
    d = np.stack([np.linalg.norm(z - a, axis=1) for a in ATTRACTORS], 1)
    return np.where(d.min(1) < 1e-6, d.argmin(1), UNDECIDED)


def test_grid_labels_agree_with_forward_simulation():
    model = bent_bistable()
    res = compute_basins(model, ATTRACTORS, grid=([(-4, 4), (-4, 4)], 41), max_steps=200, tol=1e-8)
    assert res.labels_grid().shape == (41, 41)
    np.testing.assert_array_equal(res.labels, brute_force_labels(model, res.states))
    assert set(res.fractions) <= {0, 1, UNDECIDED}
    assert 0.2 < res.fractions[0] < 0.8
    # closed form near the saddle
    x, y = res.states.T
    near = (y > 0) & (np.abs(x) < 1) & (np.abs(x + 0.5 + (y - 1) / 3) > 1e-9)
    np.testing.assert_array_equal(res.labels[near], np.where(x[near] > -0.5 - (y[near] - 1) / 3, 0, 1))


def test_stable_manifold_separates_the_basins():
    model = bent_bistable()
    man = find_manifolds(model, [SADDLE], kind="stable", box=(-4.0, 5.0), max_depth=30)
    boundary = basin_boundary(man)
    assert boundary and all(p.dim == 1 for p in boundary)
    # closed form of the local stable manifold
    pts = np.concatenate([p.samples for p in boundary])
    local = (pts[:, 1] > 0) & (np.abs(pts[:, 0]) < 1)
    assert local.sum() > 5
    np.testing.assert_allclose(pts[local, 0], -0.5 - (pts[local, 1] - 1) / 3, atol=1e-12)
    # points just off each piece, on either side, fall into different basins
    on, plus, minus = [], [], []
    for p in boundary:
        normal = np.array([-p.basis[1, 0], p.basis[0, 0]])
        inner = p.samples[np.all((p.samples > -3.9) & (p.samples < 4.9), axis=1)]
        on.append(inner)
        plus.append(inner + 1e-6 * normal)
        minus.append(inner - 1e-6 * normal)
    on, plus, minus = (np.concatenate(x) for x in (on, plus, minus))
    lp = compute_basins(model, ATTRACTORS, states=plus, max_steps=300, tol=1e-8).labels
    lm = compute_basins(model, ATTRACTORS, states=minus, max_steps=300, tol=1e-8).labels
    assert len(on) > 50
    assert np.all((lp >= 0) & (lm >= 0) & (lp != lm))
    # points on the manifold converge to the saddle, not to an attractor
    lo = compute_basins(model, ATTRACTORS, states=on, max_steps=40, tol=1e-8).labels
    assert np.all(lo == UNDECIDED)


def test_diverged_and_undecided_labels_and_cycles():
    # x' = 2x diverges, y' = -y is a 2-cycle of (0, 1), (0, -1)
    system = PLSystem(np.zeros((0, 2)), np.zeros(0), np.diag([2.0, -1.0]), np.zeros(2), np.zeros((2, 0)))
    res = compute_basins(system, [np.array([[0.0, 1.0], [0.0, -1.0]])],
                         states=np.array([[0.0, -1.0], [1.0, 1.0], [0.0, 0.5]]), max_steps=100,
                         diverge_radius=1e3)
    np.testing.assert_array_equal(res.labels, [0, DIVERGED, UNDECIDED])
    np.testing.assert_array_equal(res.steps, [0, 10, 100])


def test_generic_model_and_cycle_result_input(tmp_path):
    import xarray as xr

    from neurodyn.analysis.plrnn import find_cycles

    model = bent_bistable()
    cycles = find_cycles(model, max_order=1, exhaustive=True)
    res = compute_basins(model, cycles, grid=([(-4, 4), (-1, 1)], (9, 3)), max_steps=100)
    stable = cycles.states[cycles.stability == "stable"]
    assert len(res.attractors) == len(stable) == 2
    path = tmp_path / "b.nc"
    res.to_xarray().to_netcdf(path, engine="h5netcdf")
    back = xr.load_dataset(path, engine="h5netcdf")
    np.testing.assert_array_equal(back["label"].values, res.labels)
    np.testing.assert_array_equal(back["grid_axis_0"].values, np.linspace(-4, 4, 9))
    np.testing.assert_array_equal(back["state"].values, res.states)


def test_bad_inputs():
    model = bent_bistable()
    with pytest.raises(ValueError, match="exactly one"):
        compute_basins(model, ATTRACTORS)
    with pytest.raises(ValueError, match="states must have shape"):
        compute_basins(model, ATTRACTORS, states=np.zeros((3, 3)))
    with pytest.raises(ValueError, match="NaN"):
        compute_basins(model, ATTRACTORS, states=np.full((1, 2), np.nan))
    with pytest.raises(ValueError, match="one \\(low, high\\) per latent"):
        compute_basins(model, ATTRACTORS, grid=([(-1, 1)], 5))


def test_smooth_model_through_the_rollout_kernels():
    from scipy.optimize import brentq

    from neurodyn.models import LeakyRNN

    model = LeakyRNN(0, 1, 1, activation="tanh", alpha=1.0, seed=0).double()
    with torch.no_grad():
        model.w_rec.fill_(2.0)  # h' = tanh(2h): stable points ±h*, unstable 0
    h_star = brentq(lambda h: np.tanh(2 * h) - h, 0.5, 1.0)
    x0 = np.linspace(-2, 2, 41)[:, None]
    res = compute_basins(model, [[h_star], [-h_star]], states=x0, max_steps=200, tol=1e-9,
                         backend="torch")
    assert res.attrs["backend"] == "torch"
    expected = np.where(x0[:, 0] > 0, 0, np.where(x0[:, 0] < 0, 1, UNDECIDED))
    np.testing.assert_array_equal(res.labels, expected)
    with pytest.raises(ValueError, match="numpy"):
        compute_basins(model, [[h_star]], states=x0, backend="numpy")


@pytest.mark.parametrize("kwargs", [{"batch_size": -1}, {"batch_size": 0}, {"batch_size": 2.5},
                                    {"max_steps": -3}, {"max_steps": 1.5}, {"max_steps": True}])
def test_counts_must_be_integers_of_at_least_one(kwargs):
    name, value = next(iter(kwargs.items()))
    with pytest.raises(ValueError, match=rf"^{name} must be an integer >= 1, got {value!r}"):
        compute_basins(bent_bistable(), ATTRACTORS, states=np.zeros((4, 2)), **kwargs)


def test_batch_size_splits_the_work_without_changing_the_labels():
    x0 = np.array([[-3.0, 1.0], [0.0, 1.0], [-1.0, 1.0], [5.0, 0.5], [-0.4, 1.0]])
    whole = compute_basins(bent_bistable(), ATTRACTORS, states=x0, max_steps=300)
    split = compute_basins(bent_bistable(), ATTRACTORS, states=x0, max_steps=300.0, batch_size=2)
    np.testing.assert_array_equal(split.labels, whole.labels)
    np.testing.assert_array_equal(split.steps, whole.steps)
    assert (whole.status == "attracted").all()


@pytest.mark.parametrize("n, match", [(0, r"grid n \(points per dimension\) must be an integer >= 1, got 0"),
                                      (2.5, "must be an integer >= 1, got 2.5"),
                                      ((3, 3, 3), r"one int per latent dimension \(2\), got shape \(3,\)"),
                                      (10**7, r"compute_basins needs about .* GiB \(a grid of 1e\+14 states"
                                              r" of 2 dims\) .*lower the points per dimension")])
def test_grid_counts_are_checked_before_the_grid_is_built(n, match):
    with pytest.raises(ValueError, match=match):
        compute_basins(bent_bistable(), ATTRACTORS, grid=([(-1, 1), (-1, 1)], n))
