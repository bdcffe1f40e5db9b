"""Ctrl-C (``KeyboardInterrupt``) ends training with status "interrupted" and the weights of the last
finished iteration / epoch, exactly those of a run that stopped there."""

import numpy as np
import pytest
import torch

from neurodyn.models import PLRNN, LeakyRNN
from neurodyn.tasks.flipflop import FlipFlop
from neurodyn.training import fit_teacher_forcing, train

TASK = FlipFlop(n_bits=2, n_steps=6)
SMALL = dict(batch_size=4, eval_every=0, progress=False, seed=0, lr=1e-2)


def _equal(a, b) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))


def _interrupted(fit, *args, **kwargs):
    try:
        return fit(*args, **kwargs)
    except KeyboardInterrupt:  # would end the pytest session
        pytest.fail("KeyboardInterrupt escaped training instead of ending it with status 'interrupted'")


def test_interrupted_train_keeps_the_last_finished_iteration():
    calls = [0]

    def hook(t, h):  # called once per time step of each training rollout (6 per iteration)
        calls[0] += 1
        if calls[0] > 2 * TASK.n_steps:  # during the third iteration
            raise KeyboardInterrupt
        return h

    model = LeakyRNN(2, 8, 2, seed=0)
    res = _interrupted(train, model, TASK, n_iterations=5, state_hook=hook, **SMALL)
    assert res.status == "interrupted" and res.config["stop_reason"] == "interrupted"
    assert res.config["iterations_run"] == 2 and res.history["iteration"] == [0, 1]
    two = train(model, TASK, n_iterations=2, state_hook=lambda t, h: h, **SMALL)
    assert _equal(res.model, two.model)


def test_interrupted_fit_keeps_the_last_finished_epoch():
    t = np.arange(300) * 0.1
    data = np.stack([np.sin(t), np.cos(t)], 1)
    model = PLRNN(n_inputs=0, n_latent=2, n_outputs=2, seed=0)

    def stop_after_second(epoch, m):
        if epoch == 1:
            raise KeyboardInterrupt
        return {}

    kw = dict(n_epochs=4, batches_per_epoch=2, batch_size=4, seq_len=20, lr_end=None, progress=False)
    res = _interrupted(fit_teacher_forcing, model, data, callback=stop_after_second, **kw)
    assert res.status == "interrupted" and res.config["epochs_run"] == 2
    two = fit_teacher_forcing(model, data, **{**kw, "n_epochs": 2})
    assert _equal(res.model, two.model)
