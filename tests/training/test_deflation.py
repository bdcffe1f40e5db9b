"""Similarity deflation: closed-form ridge predictivity and a tiny deflated flip-flop network."""

import copy

import numpy as np
import pytest
import torch

from neurodyn.analysis.degeneracy import compare_to_references
from neurodyn.models import LeakyRNN
from neurodyn.tasks.flipflop import FlipFlop
from neurodyn.training import train
from neurodyn.training.deflation import ridge_predictivity, train_deflated


def test_ridge_predictivity_matches_sklearn_ridge():
    from sklearn.linear_model import Ridge

    rng = np.random.default_rng(0)
    S = rng.standard_normal((200, 5))
    T = S @ rng.standard_normal((5, 3)) + 0.5 * rng.standard_normal((200, 3)) + 2.0
    ridge = 0.3
    Sc = S - S.mean(0)
    alpha = 200 * ridge * np.trace(Sc.T @ Sc / 200) / 5
    pred = Ridge(alpha=alpha).fit(S, T).predict(S)
    expected = 1 - np.sum((T - pred) ** 2) / np.sum((T - T.mean(0)) ** 2)
    got = ridge_predictivity(torch.as_tensor(S), torch.as_tensor(T), ridge).item()
    assert got == pytest.approx(expected, rel=1e-8)


def test_ridge_predictivity_bounds_and_gradient():
    rng = np.random.default_rng(1)
    S = torch.as_tensor(rng.standard_normal((100, 4)))
    M = torch.as_tensor(rng.standard_normal((4, 2)))
    assert ridge_predictivity(S, S @ M, 0.0).item() == pytest.approx(1.0)
    T = torch.tensor(rng.standard_normal((100, 3)), requires_grad=True)
    r2 = ridge_predictivity(S, T, 0.1)
    assert 0.0 <= r2.item() < 0.2
    r2.backward()
    assert torch.all(torch.isfinite(T.grad)) and T.grad.abs().sum() > 0


def test_errors_and_inputs_untouched():
    task = FlipFlop(n_bits=2, n_steps=10)
    net, ref = LeakyRNN(2, 6, 2, seed=0), LeakyRNN(2, 6, 2, seed=1)
    before = copy.deepcopy(net.state_dict())
    with pytest.raises(ValueError, match="reference_models is empty"):
        train_deflated(net, task, reference_models=[])
    with pytest.raises(ValueError, match="lam"):
        train_deflated(net, task, reference_models=[ref], lam=-1)
    with pytest.raises(ValueError, match="inputs"):
        train_deflated(net, task, reference_models=[LeakyRNN(3, 6, 3)])
    res = train_deflated(net, task, reference_models=[ref], n_iterations=3, batch_size=4, progress=False,
                         eval_every=0)
    again = train_deflated(net, task, reference_models=[ref], n_iterations=3, batch_size=4, progress=False,
                           eval_every=0)
    assert all(torch.equal(v, before[k]) for k, v in net.state_dict().items())
    assert res.history["predictivity"] == again.history["predictivity"]
    assert res.config["deflation"]["n_references"] == 1


@pytest.mark.slow
def test_deflation_reduces_predictivity_against_a_standard_network():
    torch.set_num_threads(1)
    task = FlipFlop(n_bits=2, n_steps=30)
    kw = {"n_iterations": 150, "batch_size": 32, "lr": 1e-2, "progress": False, "eval_every": 0}
    net0 = train(LeakyRNN(2, 10, 2, alpha=0.5, seed=0), task, seed=0, **kw).model
    standard = train(LeakyRNN(2, 10, 2, alpha=0.5, seed=2), task, seed=2, **kw).model
    deflated = train_deflated(LeakyRNN(2, 10, 2, alpha=0.5, seed=1), task, reference_models=[net0], lam=1.0,
                              seed=1, **kw).model
    s = compare_to_references(standard, [net0], task, n_trials=32)
    d = compare_to_references(deflated, [net0], task, n_trials=32)
    assert d["predictivity"] < s["predictivity"] - 0.2
    assert d["task_accuracy"] > 0.85
    assert d["activity"] < 5 * s["activity"]  # no runaway task-irrelevant variance


def test_deflation_sequence_deflates_each_network_against_all_earlier_ones():
    from neurodyn.training import train_deflation_sequence

    task = FlipFlop(n_bits=1, n_steps=12)
    runs = train_deflation_sequence(lambda s: LeakyRNN(1, 5, 1, seed=s), task, n_networks=3, lam=2.0,
                                    n_iterations=3, batch_size=4, eval_every=0, progress=False, seed=7)
    assert [r.config.get("deflation", {}).get("n_references", 0) for r in runs] == [0, 1, 2]
    assert [r.config["seed"] for r in runs] == [7, 8, 9]
    # network 2 is the network train_deflated builds against networks 0 and 1, bit for bit
    again = train_deflated(LeakyRNN(1, 5, 1, seed=9), task, reference_models=[runs[0].model, runs[1].model],
                           lam=2.0, n_iterations=3, batch_size=4, eval_every=0, progress=False, seed=9)
    assert torch.equal(again.model.w_rec, runs[2].model.w_rec)
    with pytest.raises(ValueError, match="n_networks"):
        train_deflation_sequence(lambda s: LeakyRNN(1, 5, 1, seed=s), task, n_networks=1)


@pytest.mark.parametrize("source, target", [
    (torch.zeros(20, 3), torch.zeros(19, 3)),  # a torch matmul error before
    (torch.zeros(20), torch.zeros(20)),  # "not enough values to unpack" before
    (torch.zeros(0, 3), torch.zeros(0, 3)),  # R^2 = 1 from no samples before
    (torch.zeros(1, 3), torch.zeros(1, 3)),  # R^2 = 1 from one sample before
])
def test_ridge_predictivity_refuses_bad_shapes(source, target):
    with pytest.raises(ValueError, match=r"source and target must be \(sample, unit\) with the same number"):
        ridge_predictivity(source, target, 0.1)


@pytest.mark.parametrize("ridge", [-5.0, float("nan"), float("inf")])
def test_ridge_predictivity_refuses_bad_ridge(ridge):
    # a negative ridge gave a negative, meaningless R^2 without a word
    s = torch.randn(20, 3, generator=torch.Generator().manual_seed(0))
    with pytest.raises(ValueError, match="ridge must be a finite number >= 0"):
        ridge_predictivity(s, s, ridge)


def test_ridge_predictivity_mixed_precision_is_the_float64_value():
    g = torch.Generator().manual_seed(0)
    s = torch.randn(30, 3, generator=g, dtype=torch.float64)
    t = torch.randn(30, 2, generator=g, dtype=torch.float64)
    mixed = ridge_predictivity(s.float(), t, 0.1)
    assert mixed.dtype == torch.float64
    assert mixed.item() == pytest.approx(ridge_predictivity(s.float().double(), t, 0.1).item(), rel=1e-12)


def test_deflation_settings_are_checked():
    from neurodyn.training import train_deflation_sequence

    task = FlipFlop(n_bits=1, n_steps=6)
    ref = LeakyRNN(1, 4, 1, seed=0)
    with pytest.raises(ValueError, match="lam must be a finite number >= 0, got '1'"):
        train_deflated(LeakyRNN(1, 4, 1, seed=1), task, reference_models=[ref], lam="1")
    with pytest.raises(ValueError, match=r"wrap one in a list: reference_models=\[model\]"):
        train_deflated(LeakyRNN(1, 4, 1, seed=1), task, reference_models=ref)
    for n in (1, 2.5, "3"):  # 2.5 trained 2 networks silently before
        with pytest.raises(ValueError, match="n_networks must be an integer >= 2"):
            train_deflation_sequence(lambda s: LeakyRNN(1, 4, 1, seed=s), task, n_networks=n)


def test_sequence_refuses_unknown_options_before_training_network_0():
    # regularizers= trained network 0 with train, then failed in train_deflated with a TypeError
    from neurodyn.training import train_deflation_sequence

    built = []
    with pytest.raises(ValueError, match="train_deflation_sequence does not take regularizers; its training"):
        train_deflation_sequence(lambda s: built.append(s) or LeakyRNN(1, 4, 1, seed=s),
                                 FlipFlop(n_bits=1, n_steps=6), n_iterations=2, regularizers={"l2_rate": 0.1})
    assert built == []  # no network was built, let alone trained
