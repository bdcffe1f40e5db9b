"""Training on the fused Numba rollout against the torch reference path."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neurodyn.models import ALRNN, GRU, LSTM, PLRNN, LeakyRNN, ShallowPLRNN
from neurodyn.tasks import FlipFlop
from neurodyn.training import train

pytest.importorskip("numba", reason="the fused kernels need numba (a core dependency)")

#: each dtype and the tolerance its backends must agree to
PRECISIONS = pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-5), (torch.float64, 1e-10)])
KW = dict(n_iterations=4, batch_size=8, lr=1e-2, eval_every=0, progress=False, seed=3)


def assert_backends_agree(fit, tol: float) -> None:
    """``fit(backend)`` on the fused path (``"auto"``) and on the torch reference: the backends are
    recorded, and the losses and weights agree to ``tol``."""
    fused, ref = fit("auto"), fit("torch")
    assert fused.config["backend"] == "numba" and ref.config["backend"] == "torch"
    assert fused.history["loss"] == pytest.approx(ref.history["loss"], rel=tol)
    for (name, a), b in zip(fused.model.named_parameters(), ref.model.parameters()):
        torch.testing.assert_close(a, b, rtol=tol, atol=tol, msg=lambda m, name=name: f"{name}: {m}")


@PRECISIONS
def test_same_seed_same_weights_across_backends(dtype, tol):
    # noise on: both backends must draw the same noise from the same seed
    model = LeakyRNN(2, 12, 2, alpha=0.2, noise_std=0.1, dale=True, train_h0=True, seed=0).to(dtype)
    task = FlipFlop(n_bits=2, n_steps=15)
    assert_backends_agree(lambda backend: train(model, task, backend=backend, **KW), tol)


@PRECISIONS
@pytest.mark.parametrize("forcing,anneal", [("error", "linear"), ("teacher", "none")])
def test_forced_training_same_losses_and_weights_across_backends(forcing, anneal, dtype, tol):
    # error and teacher forcing run inside the fused kernel: same forcing, noise and weights as torch
    model = LeakyRNN(2, 12, 2, alpha=0.2, noise_std=0.1, dale=True, train_h0=True, seed=0).to(dtype)
    task = FlipFlop(n_bits=2, n_steps=15)
    kw = {**KW, "forcing": forcing, "forcing_strength": 0.7, "forcing_anneal": anneal}
    assert_backends_agree(lambda backend: train(model, task, backend=backend, **kw), tol)


@PRECISIONS
@pytest.mark.parametrize("family,forcing,anneal", [
    ("plrnn", "error", "linear"), ("plrnn", "teacher", "none"), ("alrnn", "teacher", "linear"),
    ("alrnn", "error", "none")])
def test_forced_pl_training_same_losses_and_weights_across_backends(family, forcing, anneal, dtype, tol):
    # error and teacher forcing of a PLRNN (trained h0) and an ALRNN through their readouts run inside
    # the fused PL kernels: same forcing, noise and weights as the torch rollout
    model = FAMILIES[family]().to(dtype)
    task = FlipFlop(n_bits=2, n_steps=10)
    kw = {**KW, "n_iterations": 3, "batch_size": 6, "forcing": forcing, "forcing_strength": 0.7,
          "forcing_anneal": anneal}
    assert_backends_agree(lambda backend: train(model, task, backend=backend, **kw), tol)


@PRECISIONS
@pytest.mark.parametrize("clipped,forcing,anneal", [(True, "error", "linear"), (True, "teacher", "none"),
                                                     (False, "teacher", "linear"), (False, "error", "none")])
def test_forced_shallow_training_same_losses_and_weights(clipped, forcing, anneal, dtype, tol):
    # error and teacher forcing of a shallow PLRNN (plain or clipped, with noise) through its readout
    # run inside the fused shallow kernels: same forcing, noise and weights as the torch rollout
    model = ShallowPLRNN(2, 6, 2, n_hidden=12, clipped=clipped, noise_std=0.1, seed=0).to(dtype)
    task = FlipFlop(n_bits=2, n_steps=10)
    kw = {**KW, "n_iterations": 3, "batch_size": 6, "forcing": forcing, "forcing_strength": 0.7,
          "forcing_anneal": anneal}
    assert_backends_agree(lambda backend: train(model, task, backend=backend, **kw), tol)


def test_rflo_stays_on_torch():
    task = FlipFlop(n_bits=1, n_steps=5)
    kw = {**KW, "n_iterations": 1, "forcing": "error", "learning_rule": "rflo"}
    assert train(LeakyRNN(1, 4, 1, seed=0), task, **kw).config["backend"] == "torch"
    with pytest.raises(ValueError, match="learning_rule='rflo' runs on the torch training rollout"):
        train(LeakyRNN(1, 4, 1, seed=0), task, backend="numba", **kw)
    forced_gru = train(GRU(1, 4, 1, seed=0), task, **{**kw, "learning_rule": "bptt"})
    assert forced_gru.config["backend"] == "numba"  # readout forcing is fused for the GRU too
    forced_lstm = train(LSTM(1, 4, 1, seed=0), task, **{**kw, "learning_rule": "bptt"})
    assert forced_lstm.config["backend"] == "torch"


def test_unsupported_model_falls_back_and_explicit_numba_raises():
    task = FlipFlop(n_bits=1, n_steps=5)
    res = train(LSTM(1, 4, 1, seed=0), task, **{**KW, "n_iterations": 1})
    assert res.config["backend"] == "torch"
    hooked = train(LeakyRNN(1, 4, 1, seed=0), task, state_hook=lambda t, h: h, **{**KW, "n_iterations": 1})
    assert hooked.config["backend"] == "torch"
    with pytest.raises(ValueError, match="backend='numba' cannot train this model"):
        train(LSTM(1, 4, 1, seed=0), task, backend="numba", **KW)
    with pytest.raises(ValueError, match="unknown backend 'cuda'"):
        train(LeakyRNN(1, 4, 1, seed=0), task, backend="cuda", **KW)


FAMILIES = {
    "gru": lambda: GRU(2, 10, 2, train_h0=True, seed=0),
    "plrnn": lambda: PLRNN(2, 10, 2, noise_std=0.1, train_h0=True, seed=0),
    "alrnn": lambda: ALRNN(2, 10, 2, n_relu=4, noise_std=0.1, seed=0),
    "shplrnn": lambda: ShallowPLRNN(2, 6, 2, n_hidden=12, clipped=True, noise_std=0.1, seed=0),
}


@PRECISIONS
@pytest.mark.parametrize("family", list(FAMILIES))
def test_fused_families_train_like_torch(family, dtype, tol):
    # the same losses and weights for a few Adam steps; noise on where the family has it
    model = FAMILIES[family]().to(dtype)
    task = FlipFlop(n_bits=2, n_steps=10)
    kw = {**KW, "n_iterations": 3, "batch_size": 4}
    assert_backends_agree(lambda backend: train(model, task, backend=backend, **kw), tol)


#: teacher-forced fits: a model with 5 latent units of which 3 observed, and the forcing method
TF_FITS = {"shplrnn": (lambda: ShallowPLRNN(0, 5, 3, n_hidden=12, clipped=True, seed=0), "gtf"),
           "plrnn": (lambda: PLRNN(0, 5, 3, gain=1.2, seed=0), "gtf"),
           "alrnn": (lambda: ALRNN(0, 5, 3, n_relu=2, gain=1.2, seed=0), "gtf"),
           "alrnn_sparse": (lambda: ALRNN(0, 5, 3, n_relu=2, gain=1.2, seed=0), "sparse"),
           "plrnn_inputs": (lambda: PLRNN(2, 5, 3, gain=1.2, seed=0), "gtf")}


@PRECISIONS
@pytest.mark.parametrize("case", list(TF_FITS))
def test_teacher_forcing_fit_same_losses_across_backends(case, dtype, tol):
    from neurodyn.io import TimeSeries
    from neurodyn.training import fit_teacher_forcing

    t = np.arange(400) * 0.1
    data = np.stack([np.sin(t), np.cos(t), np.sin(2 * t)], 1)
    make, method = TF_FITS[case]
    model = make().to(dtype)
    if model.n_inputs:  # external inputs drive the latent step
        data = TimeSeries.from_arrays(data, inputs=np.stack([np.cos(3 * t), np.sign(np.sin(t / 4))], 1))
    kw = dict(n_epochs=2, batches_per_epoch=3, batch_size=4, seq_len=20, alpha=0.2, process_noise=0.05,
              lr=1e-2, progress=False, seed=1, method=method, tau=5)
    assert_backends_agree(lambda backend: fit_teacher_forcing(model, data, backend=backend, **kw), tol)
