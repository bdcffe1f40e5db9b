"""Ensemble training against one-by-one training, size masks, hyperparameters and saving."""

from __future__ import annotations

import json

import pytest
import torch

from neurodyn.io import load_checkpoint
from neurodyn.models import ALRNN, GRU, LSTM, PLRNN, LeakyRNN, ShallowPLRNN
from neurodyn.tasks import Task
from neurodyn.tasks.flipflop import FlipFlop
from neurodyn.training import train
from neurodyn.training.ensemble import train_ensemble
from neurodyn.training.ensemble_io import load_ensemble, save_ensemble

TASK = FlipFlop(n_bits=2, n_steps=15)
KW = {"n_iterations": 4, "batch_size": 6, "lr": 1e-2, "eval_every": 0, "progress": False}


def _leaky(seed, gain=1.0):
    return LeakyRNN(TASK.n_inputs, 7, TASK.n_outputs, alpha=0.5, noise_std=0.05, gain=gain, seed=seed)


def _max_diff(a, b):
    return max((x - y).abs().max().item() for x, y in zip(a.state_dict().values(), b.state_dict().values()))


#: one small factory per fused family (the leaky RNN with state noise)
FAMILIES = {
    "leaky_noise": _leaky,
    "gru": lambda seed: GRU(TASK.n_inputs, 7, TASK.n_outputs, seed=seed),
    "plrnn": lambda seed: PLRNN(TASK.n_inputs, 7, TASK.n_outputs, seed=seed),
    "alrnn": lambda seed: ALRNN(TASK.n_inputs, 7, TASK.n_outputs, n_relu=3, seed=seed),
    "shplrnn": lambda seed: ShallowPLRNN(TASK.n_inputs, 5, TASK.n_outputs, n_hidden=9, seed=seed),
}


@pytest.mark.parametrize("family", list(FAMILIES))
def test_ensemble_equals_networks_trained_one_by_one(family):
    factory, seeds = FAMILIES[family], [3, 8, 11]
    res = train_ensemble(factory, TASK, seeds=seeds, **KW)
    assert res.config["seeds"] == seeds and len(res.models) == 3
    assert res.config["backend"] == "numba"  # backend "auto": every family here is fused as an ensemble
    for e, s in enumerate(seeds):
        alone = train(factory(s), TASK, seed=s, **KW)  # and fused alone
        assert alone.config["backend"] == "numba"
        assert _max_diff(res.models[e], alone.model) < 1e-6
        assert res.histories[e]["loss"] == pytest.approx(alone.history["loss"], rel=1e-5)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_batches_sampled_in_one_call_train_the_weights_of_per_network_sampling(monkeypatch, dtype):
    calls = []
    vectorised = FlipFlop._sample_networks

    def counted(self, *args):
        calls.append(args)
        return vectorised(self, *args)

    def factory(seed):
        return _leaky(seed).to(dtype)

    kw = {**KW, "n_iterations": 3}
    monkeypatch.setattr(FlipFlop, "_sample_networks", counted)
    one_call = train_ensemble(factory, TASK, seeds=[3, 2**70 + 5, 0], **kw)
    assert len(calls) == 3 and calls[1] == (6, [3, 2**70 + 5, 0], 6)  # (n_trials, seeds, first_trial)
    monkeypatch.setattr(FlipFlop, "_sample_networks", Task._sample_networks)  # one task.sample per network
    per_network = train_ensemble(factory, TASK, seeds=[3, 2**70 + 5, 0], **kw)
    for a, b in zip(one_call.models, per_network.models):
        for x, y in zip(a.state_dict().values(), b.state_dict().values()):
            assert torch.equal(x, y)
    assert one_call.histories == per_network.histories


def test_per_network_weight_decay_and_gain_match_single_runs():
    hp = {"gain": [0.5, 1.5], "weight_decay": [0.0, 0.1], "l2_rate": [0.0, 0.01]}
    res = train_ensemble(_leaky, TASK, seeds=[1, 2], hyperparameters=hp, clip_grad_norm=0.5, **KW)
    for e, s in enumerate([1, 2]):
        alone = train(_leaky(s, gain=hp["gain"][e]), TASK, seed=s, weight_decay=hp["weight_decay"][e],
                      regularizers={"l2_rate": hp["l2_rate"][e]}, clip_grad_norm=0.5, **KW)
        assert _max_diff(res.models[e], alone.model) < 1e-6
    assert res.network_config(1)["hyperparameters"] == {"gain": 1.5, "weight_decay": 0.1, "l2_rate": 0.01}


def test_size_mask_makes_inactive_units_silent_to_outputs():
    res = train_ensemble(_leaky, TASK, seeds=[0, 1], hyperparameters={"n_active": [7, 4]}, **KW)
    small = res.models[1]
    assert torch.all(small.w_rec[:, 4:] == 0) and torch.all(small.w_out[:, 4:] == 0)
    assert torch.any(res.models[0].w_rec[:, 4:] != 0)
    x = torch.as_tensor(TASK.sample(3, seed=5).inputs)
    h0 = torch.zeros(3, 7)
    h0_perturbed = h0.clone()
    h0_perturbed[:, 4:] = 5.0  # masked units cannot reach the active ones or the output
    with torch.no_grad():
        a, b = small(x, h0), small(x, h0_perturbed)
    torch.testing.assert_close(a.outputs, b.outputs)
    torch.testing.assert_close(a.states[..., :4], b.states[..., :4])


def test_bad_arguments():
    with pytest.raises(ValueError, match="values for 2 networks"):
        train_ensemble(_leaky, TASK, seeds=[0, 1], hyperparameters={"gain": [1.0]}, **KW)
    with pytest.raises(ValueError, match="need a factory"):
        train_ensemble([_leaky(0), _leaky(1)], TASK, hyperparameters={"gain": 1.0}, **KW)
    with pytest.raises(ValueError, match="same class"):
        train_ensemble([_leaky(0), GRU(TASK.n_inputs, 7, TASK.n_outputs)], TASK, **KW)
    with pytest.raises(TypeError, match="does not know LSTM"):  # a family, but not one stacked training knows
        train_ensemble([LSTM(TASK.n_inputs, 7, TASK.n_outputs)], TASK, **KW)


def test_save_and_load_ensemble(tmp_path):
    res = train_ensemble(_leaky, TASK, seeds=[4, 9], hyperparameters={"gain": [0.8, 1.2]}, **KW)
    index = save_ensemble(res, tmp_path / "ens", task=TASK)
    meta = json.loads(index.read_text())
    assert meta["n_networks"] == 2 and [n["seed"] for n in meta["networks"]] == [4, 9]
    assert meta["networks"][1]["hyperparameters"] == {"gain": 1.2}
    ckpts = load_ensemble(index)
    for e, ck in enumerate(ckpts):
        assert ck.seed == [4, 9][e] and ck.training["ensemble_index"] == e
        assert _max_diff(ck.model, res.models[e]) == 0
    assert load_checkpoint(tmp_path / "ens" / "network_001.pt").task == TASK
    with pytest.raises(FileExistsError, match="overwrite=True"):
        save_ensemble(res, tmp_path / "ens")
    rx = res.to_xarray()
    assert rx.loss.shape == (2, 4) and list(rx.seed.values) == [4, 9]


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-5), (torch.float64, 1e-10)])
def test_fused_leaky_ensemble_equals_torch_ensemble(dtype, tol):
    # noise, a trained h0 and Dale's law: the fused kernel against the batched torch loop
    def factory(seed):
        return LeakyRNN(TASK.n_inputs, 7, TASK.n_outputs, alpha=0.3, noise_std=0.1, dale=True, train_h0=True,
                        seed=seed).to(dtype)

    fused = train_ensemble(factory, TASK, seeds=[2, 5], hyperparameters={"n_active": [7, 5]}, **KW)
    ref = train_ensemble(factory, TASK, seeds=[2, 5], hyperparameters={"n_active": [7, 5]}, backend="torch",
                         **KW)
    _assert_same_ensembles(fused, ref, tol)


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-5), (torch.float64, 1e-10)])
@pytest.mark.parametrize("family", ["gru", "plrnn", "alrnn", "shplrnn"])
def test_fused_family_ensemble_equals_torch_ensemble(family, dtype, tol):
    # a size mask on the outgoing weights: the fused kernels against the batched torch loop
    def factory(seed):
        return FAMILIES[family](seed).to(dtype)

    n = factory(0).state_size
    hp = {"n_active": [n, n - 2]}
    fused = train_ensemble(factory, TASK, seeds=[2, 5], hyperparameters=hp, **KW)
    ref = train_ensemble(factory, TASK, seeds=[2, 5], hyperparameters=hp, backend="torch", **KW)
    _assert_same_ensembles(fused, ref, tol)


def test_ensemble_backend_fallback_and_errors():
    def half(seed):  # a dtype the fused kernels do not run
        return GRU(TASK.n_inputs, 4, TASK.n_outputs, seed=seed).to(torch.bfloat16)

    assert train_ensemble(half, TASK, n_networks=2, **{**KW, "n_iterations": 1}).config["backend"] == "torch"
    with pytest.raises(ValueError, match="backend='numba' cannot train this model: the fused kernel runs"):
        train_ensemble(half, TASK, n_networks=2, backend="numba", **KW)
    with pytest.raises(ValueError, match="unknown backend 'jax'"):
        train_ensemble(_leaky, TASK, n_networks=2, backend="jax", **KW)


def _assert_same_ensembles(fused, ref, tol):
    """The fused ensemble's weights and losses equal the batched torch loop's, network by network."""
    assert fused.config["backend"] == "numba" and ref.config["backend"] == "torch"
    for a, b in zip(fused.models, ref.models):
        for (name, x), y in zip(a.named_parameters(), b.parameters()):
            torch.testing.assert_close(x, y, rtol=tol, atol=tol, msg=lambda m, name=name: f"{name}: {m}")
    for a, b in zip(fused.histories, ref.histories):
        assert a["loss"] == pytest.approx(b["loss"], rel=tol)


def test_stacked_readout_gradients_equal_autograd():
    """The ensemble readout's own backward equals autograd through ``baddbmm`` (float64, gradcheck too),
    inside the training engine's buffer reuse as outside."""
    from neurodyn.kernels._workspace import reuse_buffers
    from neurodyn.training.ensemble_params import _StackedReadout

    g = torch.Generator().manual_seed(3)
    flat = torch.randn(3, 40, 6, dtype=torch.float64, generator=g, requires_grad=True)
    w = torch.randn(3, 2, 6, dtype=torch.float64, generator=g, requires_grad=True)
    b = torch.randn(3, 2, dtype=torch.float64, generator=g, requires_grad=True)
    up = torch.randn(3, 40, 2, dtype=torch.float64, generator=g)
    ref = torch.autograd.grad((torch.baddbmm(b[:, None], flat, w.mT) * up).sum(), (flat, w, b))
    for ctx in (reuse_buffers(), torch.enable_grad()):
        with ctx:
            got = torch.autograd.grad((_StackedReadout.apply(flat, w, b) * up).sum(), (flat, w, b))
        assert all(torch.allclose(r, x, rtol=1e-12, atol=1e-12) for r, x in zip(ref, got))
    assert torch.autograd.gradcheck(_StackedReadout.apply, (flat, w, b))
    assert torch.autograd.gradgradcheck(_StackedReadout.apply, (flat, w, b))


@pytest.mark.parametrize("backend", ["auto", "torch"])
@pytest.mark.parametrize("field, pair", [
    ("alpha", [LeakyRNN(2, 6, 2, alpha=0.5, seed=0), LeakyRNN(2, 6, 2, alpha=1.0, seed=1)]),
    ("activation", [LeakyRNN(2, 6, 2, seed=0), LeakyRNN(2, 6, 2, activation="relu", seed=1)]),
    ("noise_std", [LeakyRNN(2, 6, 2, seed=0), LeakyRNN(2, 6, 2, noise_std=0.1, seed=1)]),
    ("noise_std", [ALRNN(2, 6, 2, n_relu=2, seed=0), ALRNN(2, 6, 2, n_relu=2, noise_std=0.1, seed=1)]),
    ("n_relu", [ALRNN(2, 6, 2, n_relu=2, seed=0), ALRNN(2, 6, 2, n_relu=4, seed=1)]),
])
def test_networks_with_different_settings_are_refused(field, pair, backend):
    with pytest.raises(ValueError, match=rf"^train_ensemble: field '{field}' differs between networks "
                                         r"\(network 0: .*, network 1: .*\); ensembles share it") as err:
        train_ensemble(pair, TASK, seeds=[0, 1], backend=backend, **KW)
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match=f"train_ensemble: field '{field}' differs"):  # from a factory too
        train_ensemble(lambda seed: pair[seed], TASK, seeds=[0, 1], backend=backend, **KW)


def test_malformed_arguments_raise_one_line_type_errors():
    cases = [
        (dict(models_or_factory=_leaky, seeds=3), r"^seeds must be a sequence of seeds, one per network"),
        (dict(models_or_factory=_leaky, seeds=(s for s in [1, 2])), r"^seeds must be a sequence of seeds"),
        (dict(models_or_factory=_leaky, n_networks=2.0), r"^n_networks must be an int, got float 2.0"),
        (dict(models_or_factory=lambda seed: 5, n_networks=2),
         r"^network 0: the factory returned an object of type int, not a RecurrentModel"),
        (dict(models_or_factory=[_leaky(0), "net"]),
         r"^network 1: models_or_factory holds an object of type str, not a RecurrentModel"),
        (dict(models_or_factory=_leaky, n_networks=2, task="flipflop"),
         r"^task must be a neurodyn Task, .*got str \(make one with .*make_task"),
    ]
    for kwargs, match in cases:
        kwargs = {"task": TASK, **kwargs}
        with pytest.raises(TypeError, match=match) as err:
            train_ensemble(kwargs.pop("models_or_factory"), kwargs.pop("task"), **kwargs, **KW)
        assert "\n" not in str(err.value)
    with pytest.raises(TypeError, match=r"^task must be a neurodyn Task"):
        train(_leaky(0), "flipflop", **KW)
    with pytest.raises(TypeError, match=r"^model must be a RecurrentModel"):
        train("net", TASK, **KW)


@pytest.mark.parametrize("options", [{}, {"dale": True}, {"output_scale": 0.5}, {"train_h0": True}])
def test_effective_params_equal_each_models_params_with_or_without_the_vmap(options):
    # a plain model's params() are its own tensors, taken stacked without torch.func; with Dale's law or
    # an output scale they go through the vmap of params(); both equal each model's params() alone
    from neurodyn.kernels import FAMILIES
    from neurodyn.models import LeakyRNNParams
    from neurodyn.training.ensemble_params import _own_tensors, effective, stack_raw

    models = [LeakyRNN(2, 5, 3, seed=s, **options) for s in range(3)]
    raw, bufs = stack_raw(models, "cpu")
    params, _ = effective(models[0], raw, bufs, None, FAMILIES[LeakyRNNParams])
    constrained = bool({"dale", "output_scale"} & set(options))
    assert (_own_tensors(models[0], models[0].params()) is None) == constrained
    for e, model in enumerate(models):
        for got, want in zip(params, model.params()):
            if isinstance(want, torch.Tensor):
                torch.testing.assert_close(got[e], want, rtol=0, atol=0)
    params.w_rec.sum().backward()  # gradients reach the stacked raw leaves on either path
    assert raw["w_rec"].grad is not None and bool((raw["w_rec"].grad != 0).any())
