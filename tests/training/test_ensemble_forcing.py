"""Error and teacher forcing in ensemble training against forced single-network training."""

from __future__ import annotations

import pytest
import torch
from test_ensemble import KW, TASK, _assert_same_ensembles, _max_diff

from neurodyn.models import ALRNN, GRU, PLRNN, LeakyRNN, ShallowPLRNN
from neurodyn.tasks import DelayedDiscrimination, FlipFlop
from neurodyn.training import train
from neurodyn.training.ensemble import train_ensemble

FORCED = {"forcing_strength": 0.7, "forcing_anneal": "linear"}


def _leaky(seed, dtype=torch.float64):
    return LeakyRNN(TASK.n_inputs, 7, TASK.n_outputs, alpha=0.5, noise_std=0.05, seed=seed).to(dtype)


@pytest.mark.parametrize("backend", ["torch", "auto"])
@pytest.mark.parametrize("method", ["error", "teacher"])
def test_forced_network_equals_the_same_network_forced_alone(method, backend):
    # the same batches, noise and annealed strength: network e is the network trained alone
    seeds = [3, 8]
    res = train_ensemble(_leaky, TASK, seeds=seeds, forcing=method, backend=backend, **FORCED, **KW)
    assert res.config["backend"] == ("torch" if backend == "torch" else "numba")
    assert res.config["forcing"] == {"method": method, "strength": 0.7, "anneal": "linear", "ridge": 1e-3,
                                     "rule": "bptt"}
    for e, s in enumerate(seeds):
        alone = train(_leaky(s), TASK, seed=s, forcing=method, backend=backend, **FORCED, **KW)
        assert alone.config["backend"] == res.config["backend"]
        for (name, a), b in zip(res.models[e].named_parameters(), alone.model.parameters()):
            torch.testing.assert_close(a, b, rtol=1e-8, atol=1e-10, msg=lambda m, name=name: f"{name}: {m}")
        assert res.histories[e]["loss"] == pytest.approx(alone.history["loss"], rel=1e-8)
        assert res.histories[e]["forcing_strength"] == alone.history["forcing_strength"]
        free = train(_leaky(s), TASK, seed=s, backend=backend, **KW)
        assert _max_diff(free.model, alone.model) > 1e-3  # the forcing acts


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-5), (torch.float64, 1e-10)])
@pytest.mark.parametrize("method", ["error", "teacher"])
def test_fused_forced_ensemble_equals_torch_forced_ensemble(method, dtype, tol):
    # noise, Dale's law, a trained h0 and a size mask, forced: the fused kernel against the torch loop
    def factory(seed):
        return LeakyRNN(TASK.n_inputs, 7, TASK.n_outputs, alpha=0.3, noise_std=0.1, dale=True, train_h0=True,
                        seed=seed).to(dtype)

    kw = {"seeds": [2, 5], "hyperparameters": {"n_active": [7, 5]}, "forcing": method,
          "forcing_strength": 0.8, **KW}
    fused = train_ensemble(factory, TASK, **kw)
    _assert_same_ensembles(fused, train_ensemble(factory, TASK, backend="torch", **kw), tol)


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-5), (torch.float64, 1e-10)])
@pytest.mark.parametrize("family,method", [("plrnn", "error"), ("alrnn", "teacher")])
def test_fused_forced_pl_ensemble_equals_torch_forced_ensemble(family, method, dtype, tol):
    # a PLRNN (trained h0) or ALRNN ensemble with state noise, each network forced through its own
    # readout inside the fused PL kernels, against the torch loop
    def factory(seed):
        if family == "plrnn":
            return PLRNN(TASK.n_inputs, 6, TASK.n_outputs, noise_std=0.1, train_h0=True, seed=seed).to(dtype)
        return ALRNN(TASK.n_inputs, 7, TASK.n_outputs, n_relu=3, noise_std=0.1, seed=seed).to(dtype)

    kw = {"seeds": [2, 5], "forcing": method, "forcing_strength": 0.8, "forcing_anneal": "linear", **KW}
    fused = train_ensemble(factory, TASK, **kw)
    _assert_same_ensembles(fused, train_ensemble(factory, TASK, backend="torch", **kw), tol)


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-5), (torch.float64, 1e-10)])
@pytest.mark.parametrize("clipped,method", [(True, "error"), (False, "teacher")])
def test_fused_forced_shallow_ensemble_equals_torch_forced_ensemble(clipped, method, dtype, tol):
    # a shallow PLRNN ensemble (plain or clipped) with state noise, each network forced through its
    # own readout inside the fused shallow kernels, against the torch loop
    def factory(seed):
        return ShallowPLRNN(TASK.n_inputs, 6, TASK.n_outputs, n_hidden=10, clipped=clipped, noise_std=0.1,
                            seed=seed).to(dtype)

    kw = {"seeds": [2, 5], "forcing": method, "forcing_strength": 0.8, "forcing_anneal": "linear", **KW}
    fused = train_ensemble(factory, TASK, **kw)
    assert fused.config["backend"] == "numba"
    _assert_same_ensembles(fused, train_ensemble(factory, TASK, backend="torch", **kw), tol)


@pytest.mark.parametrize("backend", ["torch", "auto"])
def test_zero_strength_is_no_forcing(backend):
    forced = train_ensemble(_leaky, TASK, seeds=[1, 4], forcing="teacher", forcing_strength=0.0,
                            backend=backend, **KW)
    free = train_ensemble(_leaky, TASK, seeds=[1, 4], backend=backend, **KW)
    for a, b in zip(forced.models, free.models):
        assert _max_diff(a, b) == 0
    assert forced.histories[0]["forcing_strength"] == [0.0] * KW["n_iterations"]


@pytest.mark.parametrize("method", ["error", "teacher"])
def test_gru_ensemble_is_forced_fused_as_on_torch_and_as_each_gru_alone(method):
    def gru(seed):
        return GRU(TASK.n_inputs, 5, TASK.n_outputs, seed=seed).double()

    res = train_ensemble(gru, TASK, seeds=[0, 6], forcing=method, **FORCED, **KW)
    assert res.config["backend"] == "numba" and res.config["forcing"]["method"] == method
    _assert_same_ensembles(res, train_ensemble(gru, TASK, seeds=[0, 6], forcing=method, backend="torch",
                                               **FORCED, **KW), 1e-10)
    for e, s in enumerate([0, 6]):
        alone = train(gru(s), TASK, seed=s, forcing=method, **FORCED, **KW)
        assert alone.config["backend"] == "numba"
        assert _max_diff(res.models[e], alone.model) < 1e-8
    with pytest.raises(ValueError, match="fused for the leaky RNN only, not 'gru', in Triton"):
        train_ensemble(gru, TASK, n_networks=2, forcing="error", backend="triton", **KW)


@pytest.mark.parametrize("bad", [{"forcing": "errors"}, {"forcing": "teacher", "forcing_strength": 1.5},
                                 {"forcing": "error", "forcing_anneal": "exponential"},
                                 {"forcing": "error", "forcing_ridge": -1.0}, {"task": "cross_entropy"}])
def test_bad_forcing_arguments_raise_the_errors_train_raises(bad):
    bad = dict(bad)
    task = DelayedDiscrimination() if bad.pop("task", None) else FlipFlop(n_bits=1, n_steps=8)
    bad.setdefault("forcing", "error")
    with pytest.raises(ValueError) as alone:
        train(LeakyRNN(task.n_inputs, 4, task.n_outputs), task, **bad, **KW)
    with pytest.raises(ValueError) as ensemble:
        train_ensemble(lambda seed: LeakyRNN(task.n_inputs, 4, task.n_outputs, seed=seed), task, n_networks=2,
                       **bad, **KW)
    assert str(ensemble.value) == str(alone.value) and "\n" not in str(alone.value)


def test_an_ill_conditioned_readout_in_the_ensemble_warns():
    bad = LeakyRNN(TASK.n_inputs, 4, TASK.n_outputs, seed=1)
    with torch.no_grad():
        bad.w_out.copy_(torch.tensor([[1.0, 0.0, 0.0, 0.0], [1.0, 1e-6, 0.0, 0.0]]))
    models = [LeakyRNN(TASK.n_inputs, 4, TASK.n_outputs, seed=0), bad]
    with pytest.warns(RuntimeWarning, match=r"a network.s readout is ill-conditioned \(condition number 2e"):
        train_ensemble(models, TASK, forcing="error", **{**KW, "n_iterations": 1})
