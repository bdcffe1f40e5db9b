"""Small contracting networks of every kernel family, shared by the kernel tests."""

from __future__ import annotations

import numpy as np
import torch

from neurodyn.models import ALRNN, GRU, PLRNN, LeakyRNN, ShallowPLRNN

N_IN, N_UNIT = 2, 9  # odd sizes exercise the tails of the register blocks


def make_case(name: str, seed: int = 0):
    """A network whose one-step map is a contraction, so float32 errors stay at rounding level."""
    if name.startswith("leaky"):
        act = name.split("_")[1]
        return LeakyRNN(N_IN, N_UNIT, 1, activation=act, alpha=0.3, gain=0.8, noise_std=0.1, seed=seed)
    if name == "gru":
        return GRU(N_IN, N_UNIT, 1, seed=seed)
    rng = np.random.default_rng(seed)
    n, n_hid = N_UNIT, 13

    def small(*shape: int) -> np.ndarray:  # spectral norm about 0.3
        return 0.3 * rng.standard_normal(shape) / (np.sqrt(shape[0]) + np.sqrt(shape[1]))

    h, c = 0.5 * rng.standard_normal(n), rng.standard_normal((n, N_IN))
    if name == "plrnn":  # a full A (off-diagonal entries) exercises the full-matrix path
        return PLRNN.from_arrays(0.5 * np.eye(n) + small(n, n), small(n, n), h, c)
    if name == "alrnn":
        return ALRNN.from_arrays(rng.uniform(0.3, 0.6, n), small(n, n), h, 4, c)
    if name.startswith("shplrnn"):
        return ShallowPLRNN.from_arrays(
            rng.uniform(0.3, 0.6, n), small(n, n_hid), small(n_hid, n) * 3, h,
            rng.standard_normal(n_hid), name.endswith("clipped"), c,
        )
    raise KeyError(name)


CASES = ["leaky_tanh", "leaky_relu", "leaky_softplus", "leaky_sigmoid", "gru", "plrnn", "alrnn",
         "shplrnn", "shplrnn_clipped"]


def tolerances(dtype: torch.dtype) -> dict[str, float]:
    if dtype == torch.float32:
        return {"rtol": 1e-5, "atol": 1e-6}
    return {"rtol": 1e-12, "atol": 1e-13}
