"""Shallow PLRNN (Hess et al., ICML 2023), optionally clipped.

``z[t+1] = diag(a) z + W1 relu(W2 z + h2) + h1 + C s``; the clipped variant replaces
``relu(W2 z + h2)`` by ``relu(W2 z + h2) - relu(W2 z)``, which keeps every trajectory bounded.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import torch
from torch import nn

from neurodyn._checks import check_setting
from neurodyn._seed import SeedLike
from neurodyn.models import _family as fam
from neurodyn.models import _pl_common as plc
from neurodyn.models._base import uniform_weights
from neurodyn.models._registry import register_model

__all__ = ["ShallowPLRNN", "ShallowPLRNNParams", "shplrnn_step"]


class ShallowPLRNNParams(NamedTuple):
    """Effective shallow-PLRNN parameters.

    a (latent,), W1 (latent, hidden), W2 (hidden, latent), h1 (latent,), h2 (hidden,),
    C (latent, input), B (output, latent) or None, b_out (output,) or None, clipped (bool).

    Examples
    --------
    >>> from neurodyn.models import ShallowPLRNN
    >>> p = ShallowPLRNN(1, 3, 2, n_hidden=5, seed=0).params()
    >>> tuple(p.a.shape), tuple(p.W1.shape), tuple(p.W2.shape), tuple(p.h2.shape), p.clipped
    ((3,), (3, 5), (5, 3), (5,), False)
    """

    a: torch.Tensor
    W1: torch.Tensor
    W2: torch.Tensor
    h1: torch.Tensor
    h2: torch.Tensor
    C: torch.Tensor
    B: torch.Tensor | None
    b_out: torch.Tensor | None
    clipped: bool


def shplrnn_drive(p: ShallowPLRNNParams, u: torch.Tensor | None) -> torch.Tensor:
    """The state-independent part ``h1 + C u``; ``u`` (..., input) → (..., latent)."""
    return fam.affine(p.C, u, p.h1)


def shplrnn_step(p: ShallowPLRNNParams, z: torch.Tensor, u: torch.Tensor | None) -> torch.Tensor:
    """One shallow-PLRNN step; ``z`` (..., latent), ``u`` (..., input).

    Examples
    --------
    >>> import torch
    >>> from neurodyn.models import ShallowPLRNN, shplrnn_step
    >>> p = ShallowPLRNN.from_arrays(A=[0.5], W1=[[1.0]], W2=[[1.0]], h1=[0.0], h2=[-1.0]).params()
    >>> z = torch.tensor([[3.0], [0.5]], dtype=torch.float64)
    >>> shplrnn_step(p, z, None).ravel().tolist()  # 0.5 z + relu(z - 1)
    [3.5, 0.25]
    """
    pre = fam.mm(z, p.W2)
    act = torch.relu(pre + p.h2)
    if p.clipped:
        act = act - torch.relu(pre)
    return p.a * z + fam.mm(act, p.W1) + shplrnn_drive(p, u)


def shplrnn_jacobian(p: ShallowPLRNNParams, z: torch.Tensor, u: torch.Tensor | None) -> torch.Tensor:
    """``dF/dz = diag(a) + W1 diag(d) W2`` with ``d = relu'(W2 z + h2) [- relu'(W2 z)]`` (clipped);
    ``z`` (..., latent) → (..., latent, latent)."""
    pre = fam.mm(z, p.W2)
    d = (pre + p.h2 > 0).to(z.dtype)
    if p.clipped:
        d = d - (pre > 0).to(z.dtype)
    return torch.diag_embed(p.a) + fam.scale_cols(p.W1, d, z) @ fam.per_state(p.W2, z)


@register_model
class ShallowPLRNN(plc.PLShell):
    """Shallow PLRNN ``z' = diag(a) z + W1 relu(W2 z + h2) + h1 + C s`` (Hess et al. 2023).

    Parameters
    ----------
    n_inputs, n_latent, n_outputs : int
        Sizes of the input ``s``, the latent state ``z`` and the readout ``y``
        (``n_units`` is a keyword alias of ``n_latent``).
    n_hidden : int
        Width ``L`` of the hidden ReLU layer (default ``2 * n_latent``).
    clipped : bool
        Use the clipped non-linearity ``relu(W2 z + h2) - relu(W2 z)``.
    observation : {"linear", "identity"}
        ``y = B z + b_out`` or ``y = z`` (needs ``n_outputs == n_latent``).
    noise_std : float
        Process-noise standard deviation per step.
    train_h0 : bool
        Learn the initial state.
    seed : int, numpy/torch Generator or None
        Seed of the initialisation (``a`` uniform in [0.5, 0.9], ``W1``, ``W2`` uniform in
        ``±1/sqrt(fan_in)``, ``h2`` uniform in ±1).
    dtype : {"float32", "float64"}
        Parameter dtype (stored in :meth:`config`).

    Raises
    ------
    ValueError
        If a size is not an integer (``4.0`` counts as 4), ``n_latent < 1``, ``n_inputs`` or
        ``n_outputs`` is negative, ``n_hidden`` is not an integer >= 1, the observation is unknown,
        or the parameters would not fit in the memory available (lower ``n_latent`` or ``n_hidden``).

    Examples
    --------
    >>> import torch
    >>> from neurodyn.models import ShallowPLRNN
    >>> model = ShallowPLRNN(n_inputs=1, n_latent=3, n_outputs=2, n_hidden=8, clipped=True, seed=0)
    >>> out = model(torch.zeros(2, 12, 1))
    >>> tuple(out.outputs.shape), tuple(out.states.shape)
    ((2, 12, 2), (2, 12, 3))
    """

    config_fields = ("n_hidden", "clipped")

    def __init__(
        self,
        n_inputs: int,
        n_latent: int | None = None,
        n_outputs: int | None = None,
        *,
        n_units: int | None = None,
        n_hidden: int | None = None,
        clipped: bool = False,
        observation: str = "linear",
        noise_std: float = 0.0,
        train_h0: bool = False,
        seed: SeedLike = 0,
        dtype: str = "float32",
    ) -> None:
        super().__init__()
        n, n_outputs = plc.sizes(n_inputs, n_latent, n_units, n_outputs, observation)
        if n_hidden is not None:
            check_setting("n_hidden", n_hidden, 1, integer=True, hint=" (the width of the hidden ReLU layer)")
        n_hidden = 2 * n if n_hidden is None else int(n_hidden)
        plc.check_pl_memory(self, 2 * n * n_hidden + n_hidden, n, n_inputs, n_outputs, dtype,
                            f"n_latent={n}, n_hidden={n_hidden}", "lower n_latent or n_hidden")
        self.n_hidden, self.clipped = n_hidden, bool(clipped)
        gen = plc.init_common(self, n_inputs, n, n_outputs, observation, noise_std, seed)
        self.a = nn.Parameter(plc.init_decay(n, gen))
        self.W1 = uniform_weights(gen, 1.0 / math.sqrt(n_hidden), n, n_hidden)
        self.W2 = uniform_weights(gen, 1.0 / math.sqrt(n), n_hidden, n)
        self.h1 = nn.Parameter(torch.zeros(n))
        self.h2 = uniform_weights(gen, 1.0, n_hidden)
        plc.init_io(self, gen)
        plc.finish_init(self, train_h0, dtype)

    def params(self) -> ShallowPLRNNParams:
        return ShallowPLRNNParams(
            self.a, self.W1, self.W2, self.h1, self.h2, self.C, self.B, self.b_out, self.clipped
        )

    @classmethod
    def from_arrays(
        cls, A: Any, W1: Any, W2: Any, h1: Any, h2: Any, clipped: bool = False, C: Any = None,
        *, dtype: torch.dtype = torch.float64,
    ) -> ShallowPLRNN:
        """Build a shallow PLRNN from given arrays (identity observation).

        Parameters
        ----------
        A : array, shape (latent,) or diagonal (latent, latent)
        W1 : array, shape (latent, hidden)
        W2 : array, shape (hidden, latent)
        h1 : array, shape (latent,)
        h2 : array, shape (hidden,)
        clipped : bool
        C : array, shape (latent, input), optional
        dtype : torch dtype
            Parameter dtype (float64 by default).

        Raises
        ------
        ValueError
            On shape mismatches, NaN/Inf, or a non-diagonal ``A``.
        """
        a, full = plc.split_A(A)
        if full:
            raise ValueError("the shallow PLRNN needs a diagonal A (vector or diagonal matrix)")
        n = a.shape[0]
        W1_ = plc.check_array("W1", W1, (n, None))
        n_hidden = W1_.shape[1]
        W2_ = plc.check_array("W2", W2, (n_hidden, n))
        h1_ = plc.check_array("h1", h1, (n,))
        h2_ = plc.check_array("h2", h2, (n_hidden,))
        C_ = plc.input_weights(C, n)
        model = cls(
            C_.shape[1], n, n, n_hidden=n_hidden, clipped=clipped, observation="identity",
            dtype=dtype,
        )
        plc.set_params(model, a=a, W1=W1_, W2=W2_, h1=h1_, h2=h2_, C=C_)
        return model


fam.FAMILIES[ShallowPLRNNParams] = plc.family(
    "shplrnn", "W2", ("a", "h1", "h2"), shplrnn_step, shplrnn_drive, shplrnn_jacobian,
)
