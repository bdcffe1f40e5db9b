"""Low-rank leaky RNN (Mastrogiuseppe & Ostojic 2018, Neuron 99(3):609-623)."""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn

from neurodyn._checks import check_setting
from neurodyn._seed import SeedLike
from neurodyn.models import _base as base
from neurodyn.models._base import activation_fn, check_sizes, init_generator
from neurodyn.models._registry import register_model
from neurodyn.models.leaky_rnn import (
    LeakyRNNParams,
    LeakyShell,
    check_nonnegative,
    resolve_alpha,
    resolve_output_scale,
)

__all__ = ["LowRankRNN"]


@register_model
class LowRankRNN(LeakyShell):
    """Leaky rate RNN whose connectivity is ``J = g chi + m n^T / N`` with rank-``R`` ``m n^T``.

    The dynamics are those of :class:`~neurodyn.models.LeakyRNN` (same step, noise and readout),
    with the recurrent matrix built from the trainable connectivity vectors ``m`` and ``n``
    (unit, rank) and an optional fixed random part ``g chi``, ``chi_ij ~ N(0, 1/N)``
    (Mastrogiuseppe & Ostojic 2018; trained low-rank networks as in Dubreuil et al. 2022,
    Nat Neurosci 25:783-794). :meth:`params` returns a :class:`~neurodyn.models.LeakyRNNParams`
    with the effective ``w_rec = g chi + m n^T / N``, so kernels and analyses work unchanged.

    Parameters
    ----------
    n_inputs, n_units, n_outputs : int
    rank : int
        Rank ``R`` of the structured part, 1 <= R <= n_units.
    activation : {"tanh", "relu", "softplus", "sigmoid", "linear"}
    alpha : float, optional
        Euler step dt/tau in (0, 1]; exclusive with (``dt``, ``tau``).
    dt, tau : float, optional
        Time step and time constant in ms.
    noise_std : float
        sigma of the recurrent noise (scaled by ``sqrt(2 alpha)`` per step).
    random_gain : float
        ``g``, strength of the fixed full-rank random part (0: purely low-rank).
    train_h0 : bool
        Learn the initial state.
    output_scale : float or {"rich", "mean_field", "lazy", "ntk"}, optional
        Readout multiplier, as in :class:`~neurodyn.models.LeakyRNN`.
    seed : int, numpy/torch Generator or None
        Seed of the initialisation: ``m``, ``n`` entries ``N(0, 1)``, ``W_in`` ``N(0, 1/input)``.

    Raises
    ------
    ValueError
        For sizes that are not integers or < 1 (``n_inputs``, ``n_outputs``: < 0), ``rank`` not an
        integer in [1, n_units], alpha outside (0, 1], or parameters that would not fit in the memory
        available (lower ``n_units``).

    Examples
    --------
    >>> import torch
    >>> from neurodyn.models import LowRankRNN
    >>> model = LowRankRNN(n_inputs=1, n_units=30, n_outputs=1, rank=2, alpha=0.2, seed=0)
    >>> w = model.params().w_rec  # m n^T / N: a rank-2 matrix
    >>> tuple(w.shape), int(torch.linalg.matrix_rank(w))
    ((30, 30), 2)
    >>> tuple(model(torch.zeros(2, 10, 1)).states.shape)
    (2, 10, 30)
    """

    config_fields = ("n_inputs", "n_units", "n_outputs", "rank", "activation", "alpha", "noise_std",
                     "random_gain", "train_h0", "output_scale", "seed")

    def __init__(
        self, n_inputs: int, n_units: int, n_outputs: int, *, rank: int = 1,
        activation: str = "tanh", alpha: float | None = None, dt: float | None = None,
        tau: float | None = None, noise_std: float = 0.0, random_gain: float = 0.0,
        train_h0: bool = False, output_scale: float | str | None = None, seed: SeedLike = 0,
    ) -> None:
        super().__init__()
        activation_fn(activation)
        n_inputs, n_units, n_outputs = check_sizes(n_inputs, n_units, n_outputs)
        check_setting("rank", rank, 1, integer=True, hint=" (the rank of the structured connectivity)")
        if not 1 <= rank <= n_units:
            raise ValueError(f"rank must be in [1, n_units={n_units}], got {rank}: a rank-R connectivity "
                             f"needs at least R units; lower rank or use more units")
        rank = int(rank)
        chi = n_units * n_units if random_gain != 0.0 else 0
        base.check_param_memory(type(self).__name__,
                                n_units * (2 * rank + n_inputs + n_outputs + 1) + n_outputs + chi,
                                f"n_units={n_units}, rank={rank}", "lower n_units")
        self.n_inputs, self.n_units, self.n_outputs = n_inputs, n_units, n_outputs
        self.rank, self.activation = int(rank), activation
        self.alpha = resolve_alpha(alpha, dt, tau)
        self.noise_std = check_nonnegative("noise_std", noise_std)
        self.random_gain = check_nonnegative("random_gain", random_gain)
        self.output_scale = resolve_output_scale(output_scale, n_units)
        self.seed, gen = init_generator(seed)
        n = self.n_units
        self.m = nn.Parameter(torch.randn(n, rank, generator=gen))
        self.n = nn.Parameter(torch.randn(n, rank, generator=gen))
        self.w_in = nn.Parameter(base.init_input_weights(gen, n, n_inputs))
        self.w_out = nn.Parameter(base.init_readout_weights(gen, n_outputs, n, self.output_scale))
        self.b = nn.Parameter(torch.zeros(n))
        self.b_out = nn.Parameter(torch.zeros(n_outputs))
        if self.random_gain != 0.0:
            self.register_buffer("chi", torch.randn(n, n, generator=gen) / math.sqrt(n))
        base.init_h0(self, train_h0)

    def connectivity(self) -> torch.Tensor:
        """Effective recurrent matrix ``g chi + m n^T / N``, shape (unit, unit)."""
        w = self.m @ self.n.T / self.n_units
        return w + self.random_gain * self.chi if self.random_gain != 0.0 else w

    def params(self) -> LeakyRNNParams:
        scale = 1.0 if self.output_scale is None else self.output_scale
        return LeakyRNNParams(
            self.w_in, self.connectivity(), self.b, self.w_out * scale, self.b_out,
            self.alpha, self.activation, self.noise_std,
        )

    def loading_names(self) -> list[str]:
        """Names of the columns of :meth:`loadings`: ``m0.., n0.., I0.., b``."""
        return loading_names(self.rank, self.n_inputs)

    def loadings(self) -> torch.Tensor:
        """Per-neuron loading vectors ``[m_i, n_i, I_i, b_i]``, shape (unit, loading), detached.

        ``loading = 2 * rank + n_inputs + 1``; column names from :meth:`loading_names`. The latent
        dynamics depend on the network only through these rows (and on ``alpha``, the activation).

        Examples
        --------
        >>> model = LowRankRNN(n_inputs=1, n_units=5, n_outputs=1, rank=2, seed=0)
        >>> tuple(model.loadings().shape), model.loading_names()
        ((5, 6), ['m0', 'm1', 'n0', 'n1', 'I0', 'b'])
        """
        return torch.cat([self.m, self.n, self.w_in, self.b[:, None]], dim=1).detach().clone()

    @classmethod
    def from_loadings(cls, loadings: Any, *, rank: int, n_outputs: int = 0, **kwargs: Any) -> LowRankRNN:
        """A network whose neurons carry the rows of ``loadings`` (unit, loading), as :meth:`loadings`.

        ``n_inputs = loading - 2 rank - 1`` is read from the width; ``kwargs`` (``alpha``,
        ``activation``, ...) go to the constructor; the readout keeps its random initialisation
        (``n_outputs = 0``: none). Raises ``ValueError`` for a width below ``2 rank + 1``, NaNs, or
        ``rank`` outside [1, unit].

        Examples
        --------
        >>> model = LowRankRNN(n_inputs=1, n_units=5, n_outputs=0, rank=2, seed=0)
        >>> twin = LowRankRNN.from_loadings(model.loadings(), rank=2)
        >>> bool(torch.equal(twin.connectivity(), model.connectivity()))
        True
        """
        rows = torch.as_tensor(loadings, dtype=torch.get_default_dtype())
        if rows.ndim != 2 or rows.shape[1] < 2 * rank + 1:
            raise ValueError(f"loadings must have shape (unit, >= 2 rank + 1 = {2 * rank + 1}), "
                             f"got {tuple(rows.shape)}")
        if not bool(torch.isfinite(rows).all()):
            raise ValueError("loadings contain NaN or Inf; drop or repair those neurons first")
        n_units, n_inputs = rows.shape[0], rows.shape[1] - 2 * rank - 1
        model = cls(n_inputs, n_units, n_outputs, rank=rank, **kwargs)
        with torch.no_grad():
            model.m.copy_(rows[:, :rank])
            model.n.copy_(rows[:, rank:2 * rank])
            model.w_in.copy_(rows[:, 2 * rank:2 * rank + n_inputs])
            model.b.copy_(rows[:, -1])
        return model


def loading_names(rank: int, n_inputs: int) -> list[str]:
    """Column names of a loading matrix: ``m0..m{R-1}, n0..n{R-1}, I0..I{K-1}, b``."""
    return ([f"m{r}" for r in range(rank)] + [f"n{r}" for r in range(rank)]
            + [f"I{k}" for k in range(n_inputs)] + ["b"])
