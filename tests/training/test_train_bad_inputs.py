"""Bad inputs of the training entry points: one-line errors before any work."""

import numpy as np
import pytest
import torch

import neurodyn._guard
from neurodyn.models import PLRNN, LeakyRNN
from neurodyn.tasks import FlipFlop
from neurodyn.training import evaluate, fit_teacher_forcing, train, train_ensemble


def _little_memory(monkeypatch, nbytes):
    monkeypatch.setattr(neurodyn._guard, "available_memory", lambda: nbytes)


def test_evaluate_estimates_the_rollout_before_running_it(monkeypatch):
    model, task = LeakyRNN(1, 64, 1, seed=0), FlipFlop(n_bits=1, n_steps=50)
    batch = task.sample(20)  # 20 x 50 x 64 x 4 bytes x 2 copies = 512000 bytes of states
    _little_memory(monkeypatch, 400_000)
    with pytest.raises(ValueError, match=r"^evaluate needs .*20 trials x 50 steps x 64 units.*lower n_tri"):
        evaluate(model, task, batch)
    _little_memory(monkeypatch, 10**9)
    assert set(evaluate(model, task, batch)) == {"accuracy", "loss", "mse"}


def test_train_estimates_the_rollout_before_training(monkeypatch):
    model, task = LeakyRNN(1, 64, 1, seed=0), FlipFlop(n_bits=1, n_steps=50)
    # batch 100: 100 x 50 x 64 x 4 bytes x 6 copies = 7.7 MB, more than the 4 MB allowed; sampling fits
    _little_memory(monkeypatch, 4_000_000)
    with pytest.raises(ValueError, match=r"^train needs about .*100 trials x 50 steps.*lower batch_size"):
        train(model, task, n_iterations=1, batch_size=100, eval_every=0, progress=False)


def test_fit_teacher_forcing_estimates_the_windows_before_drawing_them():
    data = np.random.default_rng(0).standard_normal((100, 2)).astype("f4")
    with pytest.raises(ValueError, match=r"^fit_teacher_forcing needs about .*lower batch_size or seq_len"):
        fit_teacher_forcing(PLRNN(0, 4, 2, seed=0), data, n_epochs=1, batches_per_epoch=1, seq_len=10,
                            batch_size=10**10, progress=False)


@pytest.mark.parametrize("call, match", [
    (lambda: evaluate(LeakyRNN(1, 4, 1), FlipFlop(n_bits=1, n_steps=10), batch="x"), "^batch must be a Task"),
    (lambda: fit_teacher_forcing("m", np.zeros((50, 2))), "^model must be a RecurrentModel.*got str"),
])
def test_wrong_object_types_are_named(call, match):
    with pytest.raises(TypeError, match=match):
        call()


@pytest.mark.parametrize("hp", [np.array(0.1), torch.tensor(0.1)])
def test_zero_dimensional_hyperparameters_are_scalars(hp):
    result = train_ensemble(lambda seed: LeakyRNN(1, 4, 1, seed=seed), FlipFlop(n_bits=1, n_steps=10),
                            n_networks=2, n_iterations=1, batch_size=2, eval_every=0, progress=False,
                            hyperparameters={"weight_decay": hp})
    assert result.config["hyperparameters"]["weight_decay"] == pytest.approx([0.1, 0.1])


@pytest.mark.parametrize("hp", [np.zeros((2, 2)), [np.zeros(2), 0.1]])
def test_hyperparameters_must_be_scalars_or_one_per_network(hp):
    with pytest.raises(ValueError, match="^hyperparameter 'weight_decay' must be a scalar or one value"):
        train_ensemble(lambda seed: LeakyRNN(1, 4, 1, seed=seed), FlipFlop(n_bits=1, n_steps=10),
                       n_networks=2, n_iterations=1, batch_size=2, eval_every=0, progress=False,
                       hyperparameters={"weight_decay": hp})


def test_train_ensemble_estimates_all_networks_rollouts(monkeypatch):
    # 3 networks x batch 40: 120 x 50 x 64 x 4 bytes x 6 copies = 9.2 MB, more than the 4 MB allowed
    _little_memory(monkeypatch, 4_000_000)
    with pytest.raises(ValueError, match=r"^train_ensemble of 3 networks needs .*120 trials x 50 st.*n_net"):
        train_ensemble(lambda seed: LeakyRNN(1, 64, 1, seed=seed), FlipFlop(n_bits=1, n_steps=50),
                       n_networks=3, n_iterations=1, batch_size=40, eval_every=0, progress=False)


def test_train_estimates_its_evaluations_too(monkeypatch):
    # batch 2 trains in 2 x 50 x 64 x 4 x 6 = 154 kB; the 128 held-out trials need 128 x 50 x 64 x 4 x 2
    # = 3.3 MB
    model, task = LeakyRNN(1, 64, 1, seed=0), FlipFlop(n_bits=1, n_steps=50)
    _little_memory(monkeypatch, 2_000_000)
    with pytest.raises(ValueError, match=r"^train needs .*128 trials x 50 steps"):
        train(model, task, n_iterations=1, batch_size=2, eval_every=1, progress=False)
