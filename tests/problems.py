"""Analytic problems with exact answers, shared by the test files.

Each builder returns the map (a plain batched callable ``F(h, u)`` or a model) together with the
answer computed independently of neurodyn (closed forms, NumPy linear algebra, scalar root solves).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from scipy.optimize import brentq

from neurodyn.models import RecurrentModel


@dataclass(frozen=True)
class LinearMap:
    """``h ↦ A h + b`` with spectral norm ``‖A‖ < 1``: unique fixed point ``(I − A)⁻¹ b``, stable."""

    A: np.ndarray
    b: np.ndarray

    @property
    def fixed_point(self) -> np.ndarray:
        return np.linalg.solve(np.eye(len(self.b)) - self.A, self.b)

    def __call__(self, h: torch.Tensor, u: torch.Tensor | None = None) -> torch.Tensor:
        A = torch.as_tensor(self.A, dtype=h.dtype, device=h.device)
        return h @ A.T + torch.as_tensor(self.b, dtype=h.dtype, device=h.device)


def linear_map(n: int = 5, *, norm: float = 0.6, seed: int = 0) -> LinearMap:
    """A random contracting affine map with ``‖A‖₂ = norm``."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    A *= norm / np.linalg.norm(A, 2)
    return LinearMap(A, rng.standard_normal(n))


def linear_leaky_rnn(n_units: int = 6, n_inputs: int = 2, *, norm: float = 0.6, alpha: float = 1.0,
                     seed: int = 0):
    """A ``LeakyRNN`` with ``activation="linear"``, ``‖W_rec‖₂ = norm`` and a random bias.

    Its map ``h ↦ (1 − α) h + α (W h + W_in u + b)`` has the unique fixed point
    ``(I − W)⁻¹ (W_in u + b)`` for every ``α``; returns ``(model, answer(u))``.
    """
    from neurodyn.models import LeakyRNN

    model = LeakyRNN(n_inputs, n_units, 1, activation="linear", alpha=alpha, seed=seed)
    rng = np.random.default_rng(seed + 1)
    with torch.no_grad():
        model.w_rec.mul_(norm / torch.linalg.matrix_norm(model.w_rec.double(), 2).float())
        model.b.copy_(torch.as_tensor(rng.standard_normal(n_units), dtype=torch.float32))
    W = model.w_rec.detach().double().numpy()
    W_in = model.w_in.detach().double().numpy()
    b = model.b.detach().double().numpy()

    def answer(u: np.ndarray | None = None) -> np.ndarray:
        drive = b if u is None else b + W_in @ np.asarray(u, dtype=float)
        return np.linalg.solve(np.eye(n_units) - W, drive)

    return model, answer


def tanh_root(w: float) -> float:
    """The positive solution of ``h = tanh(w h)`` for ``w > 1`` (scalar root solve)."""
    if not w > 1:
        raise ValueError("h = tanh(w h) has a non-zero root only for w > 1")
    return float(brentq(lambda h: np.tanh(w * h) - h, 1e-9, 1.0, xtol=1e-15))


@dataclass(frozen=True)
class BistableTanh:
    """``h ↦ tanh(w h)``, w > 1: fixed points ``−h*, 0, h*``; 0 unstable (λ = w), ±h* stable
    (λ = w (1 − h*²) < 1)."""

    w: float = 2.0

    @property
    def h_star(self) -> float:
        return tanh_root(self.w)

    def eigenvalue(self, h: float) -> float:
        return self.w * (1.0 - np.tanh(self.w * h) ** 2)

    def __call__(self, h: torch.Tensor, u: torch.Tensor | None = None) -> torch.Tensor:
        return torch.tanh(self.w * h)


@dataclass(frozen=True)
class FlipTanh:
    """``h ↦ −tanh(w h)``, w > 1: one fixed point 0 (λ = −w, unstable) and the exact stable
    2-cycle ``h* → −h* → h*`` with ``h* = tanh(w h*)``; its monodromy eigenvalue is
    ``(w (1 − h*²))² < 1``."""

    w: float = 2.0

    @property
    def h_star(self) -> float:
        return tanh_root(self.w)

    @property
    def monodromy(self) -> float:
        return (self.w * (1.0 - self.h_star**2)) ** 2

    def __call__(self, h: torch.Tensor, u: torch.Tensor | None = None) -> torch.Tensor:
        return -torch.tanh(self.w * h)


@dataclass(frozen=True)
class Rotation:
    """``h ↦ ρ R(θ) h`` in 2-D: one fixed point at 0 with eigenvalues ``ρ e^{±iθ}``."""

    rho: float = 0.9
    theta: float = 0.7

    @property
    def matrix(self) -> np.ndarray:
        c, s = np.cos(self.theta), np.sin(self.theta)
        return self.rho * np.array([[c, -s], [s, c]])

    def __call__(self, h: torch.Tensor, u: torch.Tensor | None = None) -> torch.Tensor:
        return h @ torch.as_tensor(self.matrix, dtype=h.dtype, device=h.device).T


@dataclass(frozen=True)
class SlowDrift:
    """``h ↦ h + ε (1 + h²)``: no fixed point; the speed ``q = ½ ε² (1 + h²)²`` has its minimum
    ``½ ε²`` at ``h = 0``, a slow point (a ghost of the saddle-node at ``ε = 0``)."""

    eps: float = 0.05

    @property
    def q_min(self) -> float:
        return 0.5 * self.eps**2

    def __call__(self, h: torch.Tensor, u: torch.Tensor | None = None) -> torch.Tensor:
        return h + self.eps * (1.0 + h**2)


class RotationModel(RecurrentModel):
    """:class:`Rotation` plus an input, ``h ↦ ρ R(θ) h + 2 u``, as a model whose params type no
    family knows (``params()`` is a plain tuple): Lyapunov exponents ``log ρ`` twice, ``dF/du = 2 I``."""

    n_inputs, n_units, n_outputs = 2, 2, 2

    def __init__(self, rho: float = 0.9, theta: float = 0.7, dtype: torch.dtype = torch.float64):
        super().__init__()
        self.w = torch.nn.Parameter(torch.as_tensor(Rotation(rho, theta).matrix, dtype=dtype))

    def step(self, h: torch.Tensor, u: torch.Tensor | None = None) -> torch.Tensor:
        return h @ self.w.T + (0.0 if u is None else 2.0 * u)

    def readout(self, h: torch.Tensor) -> torch.Tensor:
        return h

    def params(self) -> tuple[torch.Tensor]:
        return (self.w,)
