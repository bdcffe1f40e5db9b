"""Solution degeneracy: identical networks are fully degenerate-free; settings and netCDF round trip."""

import copy
import json
import warnings

import numpy as np
import pytest

from neurodyn.analysis.degeneracy import compute_solution_degeneracy
from neurodyn.models import LeakyRNN
from neurodyn.tasks.flipflop import FlipFlop

TASK = FlipFlop(n_bits=2, n_steps=30)


def _net(seed, n_units=8):
    return LeakyRNN(2, n_units, 2, alpha=0.5, gain=1.2, seed=seed)


def test_identical_networks_have_zero_dynamics_and_weight_degeneracy():
    net = _net(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = compute_solution_degeneracy([net, copy.deepcopy(net), copy.deepcopy(net)], TASK, n_trials=16)
    assert res.dynamics_degeneracy == pytest.approx(0.0, abs=1e-6)
    assert res.weight_degeneracy == pytest.approx(0.0, abs=1e-12)
    assert res.behaviour_degeneracy_id == 0.0 and res.behaviour_degeneracy_ood == 0.0
    assert res.status == ("ok",) * 3


def test_relabelled_network_has_zero_weight_and_dynamics_distance():
    net = _net(1)
    perm = np.random.default_rng(0).permutation(8)
    other = copy.deepcopy(net)
    sd = other.state_dict()
    for key, value in sd.items():
        if value.ndim >= 1 and value.shape[0] == 8:
            value = value[perm]
        if value.ndim == 2 and value.shape[1] == 8:
            value = value[:, perm]
        sd[key] = value
    other.load_state_dict(sd)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = compute_solution_degeneracy([net, other], TASK, n_trials=16)
    assert res.weights[0, 1] == pytest.approx(0.0, abs=1e-9)
    assert res.dynamics[0, 1] == pytest.approx(0.0, abs=1e-5)
    np.testing.assert_allclose(res.behaviour_ood[0], res.behaviour_ood[1], rtol=1e-5)


def test_different_networks_and_round_trip(tmp_path):
    import xarray as xr

    nets = [_net(0), _net(1, 10), _net(2, 6)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = compute_solution_degeneracy(nets, TASK, n_trials=16, seed=3, names=["a", "b", "c"])
        again = compute_solution_degeneracy(nets, TASK, n_trials=16, seed=3, names=["a", "b", "c"])
    assert res.dynamics_degeneracy > 0.05 and res.weight_degeneracy > 0.05
    assert res.behaviour_degeneracy_ood > 0
    np.testing.assert_array_equal(res.dynamics, again.dynamics)
    np.testing.assert_array_equal(res.dynamics, res.dynamics.T)
    assert res.settings["seed"] == 3 and res.settings["dynamics_kwargs"]["rank"] == 10
    ds = res.to_xarray()
    ds.to_netcdf(tmp_path / "deg.nc", engine="h5netcdf")
    back = xr.open_dataset(tmp_path / "deg.nc", engine="h5netcdf")
    np.testing.assert_array_equal(back["dynamics_distance"].values, res.dynamics)
    assert json.loads(back.attrs["settings"])["task"] == "flipflop"
    assert list(back.network.values) == ["a", "b", "c"]


def test_other_dynamics_metric_and_errors():
    nets = [_net(0), _net(1)]
    res = compute_solution_degeneracy(nets, TASK, n_trials=8, dynamics_metric="cka")
    assert 0 < res.dynamics[0, 1] < 1 and res.dynamics[0, 0] == 0.0
    with pytest.raises(ValueError, match="at least 2"):
        compute_solution_degeneracy(nets[:1], TASK)
    with pytest.raises(ValueError, match="behaviour_metric"):
        compute_solution_degeneracy(nets, TASK, n_trials=8, behaviour_metric="nope")
    with pytest.raises(ValueError, match="inputs"):
        compute_solution_degeneracy([LeakyRNN(3, 4, 3), LeakyRNN(3, 4, 3)], TASK)
