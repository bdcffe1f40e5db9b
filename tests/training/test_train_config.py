"""TrainConfig: settings that would fail or silently stop learning are refused, with one-line errors;
``clip_grad_norm`` 0 and None both mean no clipping, in the API as on the command line."""

import numpy as np
import pytest
import torch

from neurodyn.models import LeakyRNN
from neurodyn.tasks import HMMEmulation
from neurodyn.tasks.flipflop import FlipFlop
from neurodyn.training import TrainConfig, fit_teacher_forcing, train, train_deflated, train_ensemble
from neurodyn.training.distribution import train_distribution

TASK = FlipFlop(n_bits=2, n_steps=8)
FAST = {"n_iterations": 4, "batch_size": 8, "progress": False, "eval_every": 0, "lr": 0.05}
TINY_FIT = dict(n_epochs=2, batches_per_epoch=3, batch_size=4, seq_len=10, progress=False)


def sine(n=300):
    t = np.arange(n) * 0.1
    return np.stack([np.sin(t), np.cos(t)], 1)


def same(a, b):
    return all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))


def test_clip_zero_means_no_clipping_for_every_trainer():
    m = LeakyRNN(2, 6, 2, seed=0)
    off, zero = train(m, TASK, clip_grad_norm=None, **FAST), train(m, TASK, clip_grad_norm=0, **FAST)
    tight = train(m, TASK, clip_grad_norm=1e-3, **FAST)
    assert same(off.model, zero.model) and zero.config["clip_grad_norm"] is None
    assert not same(off.model, m) and not same(tight.model, off.model)  # it learns, and clipping matters
    ens = [train_ensemble([m], TASK, seeds=[0], clip_grad_norm=c, **FAST) for c in (None, 0.0)]
    assert same(ens[0].models[0], ens[1].models[0]) and not same(ens[1].models[0], m)
    fits = [fit_teacher_forcing(LeakyRNN(0, 3, 2, seed=0), sine(), clip_grad_norm=c, **TINY_FIT)
            for c in (None, 0)]
    assert same(fits[0].model, fits[1].model) and fits[1].config["clip_grad_norm"] is None


@pytest.mark.parametrize("kw, message", [
    ({"n_iterations": 0}, "n_iterations must be an integer >= 1, got 0"),
    ({"n_iterations": 2.5}, "n_iterations must be an integer >= 1, got 2.5"),
    ({"batch_size": 0}, "batch_size must be an integer >= 1"),
    ({"eval_every": -1}, "eval_every must be an integer >= 0"),
    ({"lr": 0.0}, "lr must be a finite number > 0"),
    ({"lr": -1e-3}, "lr must be a finite number > 0"),
    ({"lr": float("inf")}, "lr must be a finite number > 0"),
    ({"weight_decay": -0.1}, "weight_decay must be a finite number >= 0"),
    ({"clip_grad_norm": -1.0}, r"clip_grad_norm must be a finite number >= 0, got -1.0 \(0 or None: no clip"),
    ({"clip_grad_norm": float("nan")}, "clip_grad_norm must be a finite number >= 0"),
    ({"seed": -1}, "seed must be non-negative"),
])
def test_train_refuses_settings_that_fail_or_stop_learning(kw, message):
    with pytest.raises(ValueError, match=message):
        train(LeakyRNN(2, 4, 2), TASK, **{**FAST, **kw})


@pytest.mark.parametrize("kw, message", [
    ({"n_epochs": 0}, "n_epochs must be an integer >= 1"),
    ({"batches_per_epoch": 0}, "batches_per_epoch must be an integer >= 1"),
    ({"lr_end": 0.0}, "lr_end must be a finite number > 0.*lr_end=None for a constant rate"),
    ({"alpha": 1.5}, r"alpha must be a finite number in \[0, 1\]"),
    ({"alpha_decay": -0.1}, "alpha_decay must be"),
    ({"noise_level": float("nan")}, "noise_level must be a finite number >= 0"),
    ({"lambda_latent": -1.0}, "lambda_latent must be"),
    ({"seq_len": 0}, "seq_len must be an integer >= 1"),
    ({"tau": 0}, "tau must be an integer >= 1"),
])
def test_fit_refuses_settings_that_fail_or_stop_learning(kw, message):
    with pytest.raises(ValueError, match=message):
        fit_teacher_forcing(LeakyRNN(0, 3, 2), sine(), **{**TINY_FIT, **kw})


def test_fit_lr_end_none_keeps_the_rate_and_a_value_decays_it():
    const = fit_teacher_forcing(LeakyRNN(0, 3, 2, seed=0), sine(), lr_end=None, **TINY_FIT)
    decay = fit_teacher_forcing(LeakyRNN(0, 3, 2, seed=0), sine(), lr=1e-2, lr_end=1e-4, **TINY_FIT)
    assert const.history["lr"] == [1e-3, 1e-3]
    assert decay.history["lr"] == pytest.approx([1e-3, 1e-4])  # 1e-2 * 0.1 per epoch over 2 epochs


def test_other_trainers_refuse_degenerate_settings():
    task = HMMEmulation(n_states=2, n_steps=5, n_noise=2)
    net = LeakyRNN(task.n_inputs, 4, task.n_outputs)
    for kw, message in (({"epsilon": 0.0}, "epsilon must be a finite number > 0"),
                        ({"tau": 0.0}, "tau must be a finite number > 0"),
                        ({"n_sinkhorn_iter": 0}, "n_sinkhorn_iter must be an integer >= 1"),
                        ({"lr": 0.0}, "lr must be a finite number > 0")):
        with pytest.raises(ValueError, match=message):
            train_distribution(net, task, n_iterations=1, progress=False, **kw)
    with pytest.raises(ValueError, match="lam must be a finite number >= 0"):
        train_deflated(LeakyRNN(2, 4, 2), TASK, reference_models=[LeakyRNN(2, 4, 2)], lam=float("nan"))
    with pytest.raises(ValueError, match="n_iterations must be an integer >= 1"):
        train_ensemble([LeakyRNN(2, 4, 2)], TASK, n_iterations=0, progress=False)


def test_config_records_the_resolved_settings():
    cfg = TrainConfig(n_epochs=3, clip_grad_norm=0, seed=np.random.default_rng(0), device="cpu")
    assert cfg.clip_grad_norm is None and isinstance(cfg.seed, int) and cfg.device == torch.device("cpu")
    assert cfg.record()["n_iterations"] == 3 and "batches_per_epoch" not in cfg.record()
    fit = TrainConfig(n_epochs=4, batches_per_epoch=2, epoch_name="epoch", lr=1.0, lr_end=1e-4)
    assert fit.record()["n_epochs"] == 4 and fit.lr_decay == pytest.approx(0.1)
    with pytest.raises(ValueError, match="unknown optimizer 'sgd'"):
        TrainConfig(optimizer="sgd")
