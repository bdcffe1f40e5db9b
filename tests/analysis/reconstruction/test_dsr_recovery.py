"""Fitting data simulated from a known PLRNN recovers its fixed points (number, type, position)."""

import itertools

import numpy as np
import pytest
import torch

from neurodyn.models import PLRNN, pl_system
from neurodyn.training import fit_teacher_forcing
from neurodyn.training import observation as obs

# Mutual inhibition: two stable nodes (1, -0.6), (-0.6, 1) and a saddle at (5/13, 5/13).
A_TRUE = np.array([0.5, 0.5])
W_TRUE = np.array([[0.0, -0.8], [-0.8, 0.0]])
H_TRUE = np.array([0.5, 0.5])


def fixed_points(system) -> list[tuple[np.ndarray, str]]:
    """All fixed points of a small PL map by enumerating every region (brute force, exact)."""
    out = []
    for code in itertools.product([False, True], repeat=system.n_hyperplanes):
        J, c = system.affine_map(np.array(code))
        z = np.linalg.solve(np.eye(len(c)) - J, c)
        if np.array_equal(system.region_code(z), np.array(code)):
            mods = np.abs(np.linalg.eigvals(J))
            kind = "stable" if mods.max() < 1 else "unstable" if mods.min() > 1 else "saddle"
            out.append((z, kind))
    return sorted(out, key=lambda p: tuple(p[0]))


def simulate(n_trials=128, n_steps=25, noise=0.1, seed=0):
    rng = np.random.default_rng(seed)
    z = rng.uniform(-1.5, 2.0, (n_trials, 2))
    xs = [z]
    for _ in range(n_steps - 1):
        z = A_TRUE * z + np.maximum(z, 0) @ W_TRUE.T + H_TRUE + noise * rng.standard_normal(z.shape)
        xs.append(z)
    return np.stack(xs, 1)


def test_oracle_fixed_points_of_the_generator():
    fps = fixed_points(pl_system(PLRNN.from_arrays(A_TRUE, W_TRUE, H_TRUE)))
    np.testing.assert_allclose([p for p, _ in fps], [[-0.6, 1.0], [5 / 13, 5 / 13], [1.0, -0.6]], atol=1e-12)
    assert [k for _, k in fps] == ["stable", "saddle", "stable"]


@pytest.mark.slow
def test_gtf_fit_recovers_fixed_points_of_the_generator():
    data = simulate()
    model = PLRNN(0, 2, 2, observation="identity", seed=1)
    res = fit_teacher_forcing(model, data, observation="identity", alpha=0.5, n_epochs=40,
                              batches_per_epoch=20, batch_size=32, seq_len=20, lr=0.1, lr_end=0.01,
                              progress=False, seed=0)
    truth = fixed_points(pl_system(PLRNN.from_arrays(A_TRUE, W_TRUE, H_TRUE)))
    fitted = fixed_points(pl_system(res.model))
    assert [k for _, k in fitted] == [k for _, k in truth]
    with torch.no_grad():  # positions in observation space through the fitted readout
        B, b = obs.affine_readout(res.model)
        seen = np.array([B.double().numpy() @ p + b.double().numpy() for p, _ in fitted])
    np.testing.assert_allclose(seen, [p for p, _ in truth], atol=0.05)
