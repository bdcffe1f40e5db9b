"""The flip-flop's out-of-distribution variant is harder than training for a trained network, so that the
behaviour level of solution degeneracy can separate networks (it was easier before: half the pulse rate)."""

import pytest
import torch

import neurodyn
from neurodyn.models import LeakyRNN
from neurodyn.tasks import FlipFlop
from neurodyn.training import evaluate


@pytest.mark.slow
def test_ood_loss_exceeds_in_distribution_loss():
    torch.set_num_threads(1)
    task = FlipFlop(n_bits=3)
    model = neurodyn.train(LeakyRNN(3, 32, 3, alpha=1.0, seed=0), task, n_iterations=600, lr=1e-2,
                           batch_size=64, eval_every=0, seed=0, progress=False).model
    id_loss = evaluate(model, task, task.sample(256, seed=12345))["loss"]
    ood = task.ood()
    ood_loss = evaluate(model, ood, ood.sample(256, seed=12345))["loss"]
    half_rate = task.replace(n_steps=4 * task.n_steps, p_pulse=task.p_pulse / 2)
    old_loss = evaluate(model, half_rate, half_rate.sample(256, seed=12345))["loss"]
    assert ood_loss > 2 * id_loss > 2 * old_loss  # measured: 1.2e-3, 4.0e-4, 1.4e-4
