"""A trained 3-bit flip-flop network stores its 2**3 memories as 8 stable fixed points
(Sussillo & Barak 2013), one per corner of the output cube, separated by saddles."""

import itertools

import numpy as np
import pytest
import torch

from neurodyn import train
from neurodyn.analysis import find_fixed_points
from neurodyn.models import LeakyRNN
from neurodyn.tasks import FlipFlop
from neurodyn.training import evaluate

pytestmark = pytest.mark.slow  # training takes 15-60 s on a shared 2-core machine


@pytest.fixture(scope="module", params=[1.0, 0.2], ids=["alpha1", "alpha0.2"])
def flipflop_network(request):
    task = FlipFlop(n_bits=3, n_steps=64, p_pulse=0.1)
    model = LeakyRNN(3, 32, 3, alpha=request.param, seed=0)
    # reaches accuracy 1.0 on the held-out batch after ~225 (alpha 1) or ~350 (alpha 0.2)
    # iterations; an early stop at 0.99 can leave one memory as a slow point (a ghost with
    # |λ| ≈ 1) rather than a fixed point
    result = train(model, task, n_iterations=500, batch_size=64, lr=1e-2, eval_every=25,
                   target_metric=("accuracy", 1.0), progress=False, seed=0)
    return result.model, task


def test_network_solves_the_task(flipflop_network):
    model, task = flipflop_network
    assert evaluate(model, task, n_trials=256, seed=99)["accuracy"] > 0.95


def test_eight_stable_fixed_points_one_per_corner(flipflop_network):
    model, task = flipflop_network
    res = find_fixed_points(model, task=task, n_inits=256, noise_scale=0.05, seed=0)
    good = res.fixed_points()
    stable = good.select(good.stability == "stable")
    assert stable.n_points == 8
    with torch.no_grad():
        out = model.readout(torch.as_tensor(stable.states, dtype=torch.float32)).numpy()
    corners = {tuple(int(s) for s in np.sign(row)) for row in out}
    assert corners == set(itertools.product((-1, 1), repeat=3))
    assert np.all(np.abs(out) > 0.5)  # memories sit near the ±1 targets
    saddles = good.select(good.stability == "saddle")
    assert saddles.n_points >= 1 and (saddles.n_unstable >= 1).all()
    assert (np.abs(stable.eigenvalues).max(axis=1) < 1.0).all()
    assert (good.q < res.attrs["tol_q"]).all()
