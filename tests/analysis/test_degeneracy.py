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


@pytest.mark.slow  # 1-5 s per case on the shared machine
@pytest.mark.parametrize("metric, kwargs", [("procrustes", {"alpha": 0.5}),
                                            ("dsa", {"n_delays": 2, "rank": 4, "n_restarts": 4}),
                                            ("cka", {})])
def test_features_then_pairwise_equal_the_per_pair_measures(tmp_path, metric, kwargs):
    """Features computed per network (stored and read back), then only pairwise work: the same matrix
    as the measure's own per-pair function on the raw trajectories (the oracle), to 1e-10."""
    import warnings

    from neurodyn.analysis import DegeneracyFeatures, compute_solution_degeneracy, degeneracy_features
    from neurodyn.analysis.degeneracy import _run
    from neurodyn.analysis.similarity import cka, dsa_distance, procrustes_distance
    from neurodyn.models import LeakyRNN
    from neurodyn.tasks import FlipFlop

    task = FlipFlop(n_bits=1, n_steps=20)
    models = [LeakyRNN(1, 5 + s, 1, seed=s) for s in range(3)]  # different sizes
    opts = {"n_trials": 4, "seed": 3, "dynamics_metric": metric, "dynamics_kwargs": kwargs}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DSA below full rank
        for k, m in enumerate(models):
            degeneracy_features(m, task, **opts).save(tmp_path / f"{k}.nc")
        stored = [DegeneracyFeatures.load(tmp_path / f"{k}.nc") for k in range(3)]
        result = compute_solution_degeneracy(stored, task, **opts)
        states = [_run(m, task.sample(4, seed=3), "cpu")[1] for m in models]
        flat = [s.reshape(-1, s.shape[-1]) for s in states]
        for i in range(3):
            for j in range(i + 1, 3):
                if metric == "procrustes":
                    expected = procrustes_distance(flat[i], flat[j], alpha=0.5)
                elif metric == "dsa":
                    expected = dsa_distance(states[i], states[j], n_delays=2, rank=4, n_restarts=4)
                else:
                    expected = 1.0 - cka(flat[i], flat[j])
                assert result.dynamics[i, j] == pytest.approx(expected, abs=1e-10)
    direct = compute_solution_degeneracy(models, task, **opts)
    assert np.array_equal(result.dynamics, direct.dynamics) and np.array_equal(result.weights, direct.weights)
    assert result.behaviour_degeneracy_ood == direct.behaviour_degeneracy_ood


def test_features_with_other_options_are_refused():
    from neurodyn.analysis import compute_solution_degeneracy, degeneracy_features
    from neurodyn.models import LeakyRNN
    from neurodyn.tasks import FlipFlop

    task = FlipFlop(n_bits=1, n_steps=20)
    feats = [degeneracy_features(LeakyRNN(1, 4, 1, seed=s), task, n_trials=4, dynamics_metric="procrustes")
             for s in range(2)]
    with pytest.raises(ValueError, match=r"other options \(differ in: n_trials\)"):
        compute_solution_degeneracy(feats, task, n_trials=8, dynamics_metric="procrustes")


def test_compare_to_references_refuses_an_empty_reference_list():
    from neurodyn.analysis.degeneracy import compare_to_references

    with pytest.raises(ValueError, match=r"^references is empty; give at least one model$"):
        compare_to_references(_net(0), [], TASK, n_trials=4)


def test_compare_to_references_names_the_model_that_does_not_fit_the_task():
    from neurodyn.analysis.degeneracy import compare_to_references

    task = FlipFlop(n_bits=1, n_steps=10)
    good, bad = LeakyRNN(1, 4, 1, seed=0), LeakyRNN(2, 4, 1, seed=1)
    # the rollout failed with "inputs must have shape (batch, time, 2)", naming neither network
    with pytest.raises(ValueError, match=r"^references\[1\] has 2 inputs / 1 outputs but task"):
        compare_to_references(good, [good, bad], task, n_trials=4)
    with pytest.raises(ValueError, match=r"^model has 2 inputs / 1 outputs but task"):
        compare_to_references(bad, [good], task, n_trials=4)
    # a single model instead of a list failed with "object of type 'LeakyRNN' has no len()"
    with pytest.raises(TypeError, match=r"^references must be a sequence of models, got a LeakyRNN; "):
        compare_to_references(good, good, task, n_trials=4)


def test_similarity_metrics_give_a_distance_matrix_with_a_zero_diagonal():
    # rsa with Kendall's tau-a has self-similarity below 1 for tied RDMs: 1 - s left a non-zero diagonal,
    # which embed_distances refused
    from neurodyn.analysis import embed_distances

    nets = [_net(0), _net(1), _net(2)]
    res = compute_solution_degeneracy(nets, TASK, n_trials=4, dynamics_metric="rsa",
                                      dynamics_kwargs={"compare_method": "kendall_tau_a"})
    np.testing.assert_array_equal(np.diag(res.dynamics), 0.0)
    assert embed_distances(res.dynamics, seed=0).shape == (3, 2)


def test_names_and_networks_are_checked_before_any_rollout():
    nets = (_net(k) for k in range(3))  # any iterable of networks
    assert compute_solution_degeneracy(nets, TASK, n_trials=4, dynamics_metric="cka").names == (
        "net0", "net1", "net2")
    with pytest.raises(ValueError, match=r"^names must be unique; 'a' appears 2 times"):
        compute_solution_degeneracy([_net(0), _net(1)], TASK, names=["a", "a"], dynamics_metric="cka")
    with pytest.raises(ValueError, match=r"^names has 1 entries for 2 networks"):
        compute_solution_degeneracy([_net(0), _net(1)], TASK, names=["a"], dynamics_metric="cka")


def test_names_given_as_one_string_are_refused_not_split_into_characters():
    # names="ab" was read as the labels "a" and "b"
    with pytest.raises(TypeError, match=r"^names must be a list .*not the str 'ab'.*pass a list") as err:
        compute_solution_degeneracy([_net(0), _net(1)], TASK, names="ab", dynamics_metric="cka")
    assert "\n" not in str(err.value)
