"""PL analyses reject results computed for another model and malformed options."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from neurodyn.analysis import (
    compute_basins,
    find_cycles,
    find_homoclinic_points,
    find_manifolds,
    lyapunov_spectrum,
)
from neurodyn.models import ALRNN, PLRNN, ShallowPLRNN


def _lozi():
    # x' = 1 + y - 1.7|x|, y' = 0.5 x; saddle fixed point at x = 1/2.2
    return PLRNN.from_arrays(np.array([[1.7, 1.0], [0.5, 0.0]]), np.array([[-3.4, 0.0], [0.0, 0.0]]),
                             np.array([1.0, 0.0]))


def _bistable():
    # stable points (4, 1) and (-2, 1), saddle (-1/2, 1)
    normals = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])
    mixing = np.array([[-1.5, 1.5, 0.5], [0.0, 0.0, 0.0]])
    return ShallowPLRNN.from_arrays(np.array([2.0, 0.5]), mixing, normals, np.array([0.0, 0.5]),
                                    np.array([-1.0, -1.0, 0.0]))


def test_find_manifolds_rejects_a_cycle_result_of_another_model():
    lozi_cycles = find_cycles(_lozi(), max_order=1, exhaustive=True)
    with pytest.raises(ValueError, match="not a cycle of the map"):
        find_manifolds(_bistable(), lozi_cycles, box=3.0, max_depth=2)
    own = find_manifolds(_bistable(), find_cycles(_bistable(), max_order=1, exhaustive=True),
                         kind="stable", box=(-4.0, 5.0), max_depth=2)
    assert [s.status for s in own.saddles if s.status == "ok"]


def test_find_homoclinic_points_rejects_manifolds_of_another_model():
    lozi = _lozi()
    manifolds = find_manifolds(lozi, find_cycles(lozi, max_order=1, exhaustive=True), box=3.0, max_depth=3)
    with pytest.raises(ValueError, match="were not computed for this model"):
        find_homoclinic_points(_bistable(), manifolds)
    shifted = PLRNN.from_arrays(np.array([[1.7, 1.0], [0.5, 0.0]]), np.array([[-3.4, 0.0], [0.0, 0.0]]),
                                np.array([1.1, 0.0]))
    with pytest.raises(ValueError, match="not a cycle of the map"):
        find_homoclinic_points(shifted, manifolds)


@pytest.mark.parametrize("kwargs", [{"tol": -1.0}, {"tol": 0.0}, {"diverge_radius": float("nan")},
                                    {"max_steps": 0}])
def test_compute_basins_rejects_impossible_tolerances(kwargs):
    model = _bistable()
    cycles = find_cycles(model, max_order=1, exhaustive=True)
    with pytest.raises(ValueError, match="must be"):
        compute_basins(model, cycles, states=np.zeros((2, 2)), **kwargs)


def test_lyapunov_spectrum_with_fewer_steps_than_checkpoints_has_finite_running_estimates():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = lyapunov_spectrum(_lozi(), h0=[0.1, 0.1], n_steps=10, n_transient=0, seed=0)
    assert np.all(res.steps >= 1) and res.steps[-1] == 10
    assert np.all(np.isfinite(res.running))
    np.testing.assert_allclose(res.running[:, -1], res.exponents, rtol=1e-12)


def test_plot_phase_portrait_rejects_a_base_point_of_the_wrong_dimension():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from neurodyn.plotting import plot_phase_portrait

    with pytest.raises(ValueError, match=r"base must be a finite point of shape \(2,\)"):
        plot_phase_portrait(_lozi(), base=[0.0, 0.0, 0.0])
    plt.close("all")


@pytest.mark.parametrize("kwargs, error", [
    ({"max_order": 2.5}, TypeError), ({"n_restarts": "10"}, TypeError), ({"max_iter": True}, TypeError),
    ({"max_condition": float("nan")}, ValueError), ({"max_condition": 0.5}, ValueError),
    ({"marginal_tol": -1.0}, ValueError), ({"tol_residual": float("nan")}, ValueError),
])
def test_find_cycles_rejects_non_integer_counts_and_impossible_tolerances(kwargs, error):
    model = PLRNN.from_arrays([0.5, 0.5], [[-2.0, 0.0], [0.0, 0.0]], [1.0, -1.0])
    with pytest.raises(error, match=next(iter(kwargs))):
        find_cycles(model, seed=0, **kwargs)


@pytest.mark.parametrize("cls", [PLRNN, ShallowPLRNN, ALRNN])
@pytest.mark.parametrize("noise_std", [-0.1, float("nan")])
def test_pl_models_reject_negative_or_nan_noise(cls, noise_std):
    with pytest.raises(ValueError, match="noise_std must be finite"):
        cls(1, 3, 1, noise_std=noise_std, seed=0)


def test_exhaustive_search_refuses_huge_orders_in_one_line_without_overflow():
    one_unit = PLRNN.from_arrays([0.5], [[-2.0]], [1.0])  # 2 regions, every transition possible
    too_many = r"too many region sequences .* order 26: .*2\^26.*lower max_order to 25"
    with pytest.raises(ValueError, match=too_many):
        find_cycles(one_unit, max_order=10**6, exhaustive=True)


def test_region_iteration_without_a_time_budget_refuses_huge_orders_up_front():
    one_unit = PLRNN.from_arrays([0.5], [[-2.0]], [1.0])
    for order in (10**6, 200):  # 200: just above 2e6 restart steps (100 restarts x 200 x 201 / 2)
        too_long = rf"max_order={order} without a time_budget .* \(to 199 or less\)"
        with pytest.raises(ValueError, match=too_long):
            find_cycles(one_unit, max_order=order)
