"""Deterministic training: the same weights whatever thread count the caller uses."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
import torch

import neurodyn.training._config
from neurodyn import train
from neurodyn.models import LeakyRNN, ShallowPLRNN
from neurodyn.tasks import FlipFlop
from neurodyn.training import fit_teacher_forcing


@pytest.fixture
def threads():
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


def weights(result):
    return {k: v.detach().clone() for k, v in result.model.state_dict().items()}


def test_train_is_identical_at_one_and_two_threads(threads):
    task = FlipFlop(n_bits=2, n_steps=20)
    model = LeakyRNN(2, 48, 2, seed=0)
    runs = []
    for n in (1, 2):
        torch.set_num_threads(n)
        res = train(model, task, n_iterations=8, batch_size=32, lr=1e-2, seed=3, progress=False,
                    deterministic=True)
        assert torch.get_num_threads() == n  # restored
        runs.append(weights(res))
    for k in runs[0]:
        assert torch.equal(runs[0][k], runs[1][k]), k
    assert not torch.are_deterministic_algorithms_enabled()


def test_fit_is_identical_at_one_and_two_threads(threads):
    t = np.arange(400) * 0.05
    x = np.stack([np.sin(t), np.cos(t), np.sin(2 * t)], 1)
    runs = []
    for n in (2, 1):
        torch.set_num_threads(n)
        model = ShallowPLRNN(0, 3, 3, n_hidden=32, seed=0)
        res = fit_teacher_forcing(model, x, n_epochs=2, batches_per_epoch=3, batch_size=8, seq_len=30, seed=1,
                                  progress=False, deterministic=True)
        runs.append(weights(res))
    for k in runs[0]:
        assert torch.equal(runs[0][k], runs[1][k]), k


def test_deterministic_mode_restores_settings_after_an_error(threads):
    from neurodyn.training._config import deterministic_mode

    torch.set_num_threads(2)
    with pytest.raises(RuntimeError), deterministic_mode():
        assert torch.get_num_threads() == 1 and torch.are_deterministic_algorithms_enabled()
        raise RuntimeError("boom")
    assert torch.get_num_threads() == 2 and not torch.are_deterministic_algorithms_enabled()


def test_deterministic_mode_docstring_example_runs():
    assert doctest.testmod(neurodyn.training._config).failed == 0


def test_cli_deterministic_flag(threads, tmp_path):
    from neurodyn.cli.main import main
    from neurodyn.io import load_checkpoint

    out = []
    for n in (1, 2):
        torch.set_num_threads(n)
        path = tmp_path / f"m{n}.pt"
        assert main(["train", "flipflop", "--n-bits", "2", "--n-steps", "10", "--n-units", "32",
                     "--n-iterations", "4", "--batch-size", "16", "--no-progress", "--deterministic",
                     "--out", str(path)]) == 0
        assert torch.get_num_threads() == n
        out.append(load_checkpoint(path).model.state_dict())
    assert all(torch.equal(out[0][k], out[1][k]) for k in out[0])
