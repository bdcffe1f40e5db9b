"""Leaky (continuous-time, Euler-discretised) rate RNN."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import torch
from torch import nn

from neurodyn._seed import SeedLike
from neurodyn.models._base import RecurrentModel, activation_fn, init_generator
from neurodyn.models._registry import register_model


class LeakyRNNParams(NamedTuple):
    """Effective parameters of a leaky RNN (what kernels and analyses consume).

    w_in (unit, input), w_rec (unit, unit), b (unit,), w_out (output, unit), b_out (output,),
    alpha (float, dt/tau), activation (str), noise_std (float, sigma of the rate noise).
    """

    w_in: torch.Tensor
    w_rec: torch.Tensor
    b: torch.Tensor
    w_out: torch.Tensor
    b_out: torch.Tensor
    alpha: float
    activation: str
    noise_std: float


def leaky_rnn_step(p: LeakyRNNParams, h: torch.Tensor, u: torch.Tensor | None) -> torch.Tensor:
    """One Euler step ``h + alpha * (-h + phi(W_rec h + W_in u + b))``; ``h`` (..., unit)."""
    pre = h @ p.w_rec.T + p.b
    if u is not None and p.w_in.shape[-1] > 0:
        pre = pre + u @ p.w_in.T
    return (1.0 - p.alpha) * h + p.alpha * activation_fn(p.activation)(pre)


@register_model
class LeakyRNN(RecurrentModel):
    """Leaky rate RNN: ``tau dh/dt = -h + phi(W_rec h + W_in u + b)``, Euler step ``alpha = dt/tau``.

    One step is ``h[t+1] = (1 - alpha) h[t] + alpha phi(W_rec h[t] + W_in u[t] + b)
    + sqrt(2 alpha) sigma xi[t]`` with ``xi ~ N(0, I)`` (noise only during training or when asked),
    and the readout is ``y = W_out h + b_out``. ``alpha = 1`` is the vanilla discrete-time RNN.

    Parameters
    ----------
    n_inputs, n_units, n_outputs : int
    activation : {"tanh", "relu", "softplus", "sigmoid", "linear"}
    alpha : float, optional
        Euler step dt/tau in (0, 1]; exclusive with (``dt``, ``tau``).
    dt, tau : float, optional
        Time step and time constant in ms; ``alpha = dt / tau``.
    noise_std : float
        sigma of the recurrent noise (scaled by ``sqrt(2 alpha)`` per step).
    gain : float
        Recurrent init ``W_rec ~ N(0, gain**2 / n_units)``.
    train_h0 : bool
        Learn the initial state.
    seed : int, numpy/torch Generator or None
        Seed of the weight initialisation (stored in :meth:`config`).
    """

    def __init__(
        self,
        n_inputs: int,
        n_units: int,
        n_outputs: int,
        *,
        activation: str = "tanh",
        alpha: float | None = None,
        dt: float | None = None,
        tau: float | None = None,
        noise_std: float = 0.0,
        gain: float = 1.0,
        train_h0: bool = False,
        seed: SeedLike = 0,
    ) -> None:
        super().__init__()
        activation_fn(activation)
        if alpha is None:
            alpha = 1.0 if dt is None or tau is None else dt / tau
        elif dt is not None or tau is not None:
            raise ValueError("give either alpha or (dt, tau), not both")
        if not 0.0 < alpha <= 1.0:
            raise ValueError(f"alpha = dt/tau must be in (0, 1], got {alpha}")
        for name, n in (("n_inputs", n_inputs), ("n_units", n_units), ("n_outputs", n_outputs)):
            if n < 0 or (name == "n_units" and n < 1):
                raise ValueError(f"{name} must be positive, got {n}")
        self.n_inputs, self.n_units, self.n_outputs = int(n_inputs), int(n_units), int(n_outputs)
        self.activation = activation
        self.alpha = float(alpha)
        self.noise_std = float(noise_std)
        self.gain = float(gain)
        self.seed, gen = init_generator(seed)
        n = self.n_units
        self.w_in = nn.Parameter(torch.randn(n, n_inputs, generator=gen) / math.sqrt(max(n_inputs, 1)))
        self.w_rec = nn.Parameter(torch.randn(n, n, generator=gen) * gain / math.sqrt(n))
        self.b = nn.Parameter(torch.zeros(n))
        self.w_out = nn.Parameter(torch.randn(n_outputs, n, generator=gen) / math.sqrt(n))
        self.b_out = nn.Parameter(torch.zeros(n_outputs))
        self.h0 = nn.Parameter(torch.zeros(n)) if train_h0 else None
        self.train_h0 = bool(train_h0)

    @property
    def noise_scale(self) -> float:
        return math.sqrt(2.0 * self.alpha) * self.noise_std

    def params(self) -> LeakyRNNParams:
        return LeakyRNNParams(
            self.w_in, self.w_rec, self.b, self.w_out, self.b_out,
            self.alpha, self.activation, self.noise_std,
        )

    def step(self, h: torch.Tensor, u: torch.Tensor | None = None) -> torch.Tensor:
        return leaky_rnn_step(self.params(), h, u)

    def readout(self, h: torch.Tensor) -> torch.Tensor:
        return h @ self.w_out.T + self.b_out

    def config(self) -> dict[str, Any]:
        return {
            "n_inputs": self.n_inputs,
            "n_units": self.n_units,
            "n_outputs": self.n_outputs,
            "activation": self.activation,
            "alpha": self.alpha,
            "noise_std": self.noise_std,
            "gain": self.gain,
            "train_h0": self.train_h0,
            "seed": self.seed,
        }
