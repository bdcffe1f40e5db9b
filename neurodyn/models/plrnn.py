"""Piecewise-linear RNN (Durstewitz 2017; Koppe et al. 2019).

``z[t+1] = A z[t] + W relu(z[t]) + h + C s[t]`` with ``A`` diagonal and ``W`` off-diagonal when
trained; :meth:`PLRNN.from_arrays` also accepts a full ``A`` and a ``W`` with a non-zero diagonal.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import torch

from neurodyn._seed import SeedLike
from neurodyn.models import _family as fam
from neurodyn.models import _pl_common as plc
from neurodyn.models._registry import register_model

__all__ = ["PLRNN", "PLRNNParams", "plrnn_step"]


class PLRNNParams(NamedTuple):
    """Effective PLRNN parameters.

    A (latent, latent) — the full matrix (diagonal unless built from a full ``A``),
    W (latent, latent) — the masked connectivity, h (latent,), C (latent, input),
    B (output, latent) or None, b_out (output,) or None (``None`` for the identity observation).

    Examples
    --------
    >>> from neurodyn.models import PLRNN
    >>> p = PLRNN(1, 5, 2, seed=0).params()
    >>> tuple(p.A.shape), tuple(p.W.shape), tuple(p.h.shape), tuple(p.C.shape), tuple(p.B.shape)
    ((5, 5), (5, 5), (5,), (5, 1), (2, 5))
    """

    A: torch.Tensor
    W: torch.Tensor
    h: torch.Tensor
    C: torch.Tensor
    B: torch.Tensor | None
    b_out: torch.Tensor | None


plrnn_drive = plc.drive


def plrnn_step(p: PLRNNParams, z: torch.Tensor, u: torch.Tensor | None) -> torch.Tensor:
    """``A z + W relu(z) + h (+ C u)``; ``z`` (..., latent), ``u`` (..., input).

    Examples
    --------
    >>> import torch
    >>> from neurodyn.models import PLRNN, plrnn_step
    >>> p = PLRNN.from_arrays(A=[0.5], W=[[0.2]], h=[0.1]).params()
    >>> z = torch.tensor([[1.0], [-1.0]], dtype=torch.float64)
    >>> plrnn_step(p, z, None).ravel().round(decimals=6).tolist()  # 0.5 z + 0.2 relu(z) + 0.1
    [0.8, -0.4]
    """
    return fam.mm(z, p.A) + fam.mm(torch.relu(z), p.W) + plrnn_drive(p, u)


def plrnn_jacobian(p: PLRNNParams, z: torch.Tensor, u: torch.Tensor | None) -> torch.Tensor:
    """``dF/dz = A + W diag(relu'(z))`` (relu'(0) = 0); ``z`` (..., latent) → (..., latent, latent)."""
    return fam.per_state(p.A, z) + fam.scale_cols(p.W, (z > 0).to(z.dtype), z)


@register_model
class PLRNN(plc.PLShell):
    """Piecewise-linear recurrent network ``z' = A z + W relu(z) + h + C s``.

    Parameters
    ----------
    n_inputs, n_latent, n_outputs : int
        Sizes of the external input ``s``, the latent state ``z`` and the readout ``y``.
        ``n_units`` is accepted as a keyword alias of ``n_latent``.
    full_A : bool
        Learn a full matrix ``A`` instead of a diagonal (default False, the standard PLRNN).
    w_diagonal : bool
        Keep the diagonal of ``W`` (default False: ``W`` is masked to be off-diagonal).
    observation : {"linear", "identity"}
        ``y = B z + b_out`` or ``y = z`` (needs ``n_outputs == n_latent``).
    noise_std : float
        Standard deviation of the process noise per step (training only unless asked).
    gain : float
        ``W`` is initialised ``N(0, gain**2 / n_latent)``; ``A`` uniform in [0.5, 0.9].
    train_h0 : bool
        Learn the initial state.
    seed : int, numpy/torch Generator or None
        Seed of the initialisation (stored in :meth:`config`).
    dtype : {"float32", "float64"}
        Parameter dtype (stored in :meth:`config`, so checkpoints keep float64 models exact).

    Raises
    ------
    ValueError
        If a size is not an integer (``4.0`` counts as 4), ``n_latent < 1``, ``n_inputs`` or
        ``n_outputs`` is negative, the observation is unknown, or the parameters would not fit
        in the memory available (lower ``n_latent``).

    Notes
    -----
    The piecewise-affine structure used by exact analyses is given by
    :func:`neurodyn.models.piecewise.pl_system` (region code bit ``i`` = ``z_i > 0``).

    Examples
    --------
    >>> import torch
    >>> from neurodyn.models import PLRNN
    >>> model = PLRNN(n_inputs=1, n_latent=4, n_outputs=2, seed=0)
    >>> out = model(torch.zeros(3, 15, 1))
    >>> tuple(out.outputs.shape), tuple(out.states.shape)  # (batch, time, output), (batch, time, latent)
    ((3, 15, 2), (3, 15, 4))
    >>> fixed = PLRNN.from_arrays(A=[0.5], W=[[0.0]], h=[1.0])  # z* = h / (1 - a) = 2
    >>> fixed.step(torch.tensor([[2.0]], dtype=torch.float64)).item()
    2.0
    """

    config_fields = ("full_A", "w_diagonal", "gain")

    def __init__(
        self,
        n_inputs: int,
        n_latent: int | None = None,
        n_outputs: int | None = None,
        *,
        n_units: int | None = None,
        full_A: bool = False,
        w_diagonal: bool = False,
        observation: str = "linear",
        noise_std: float = 0.0,
        gain: float = 0.5,
        train_h0: bool = False,
        seed: SeedLike = 0,
        dtype: str = "float32",
    ) -> None:
        super().__init__()
        n, n_outputs = plc.sizes(n_inputs, n_latent, n_units, n_outputs, observation)
        plc.check_pl_memory(self, (3 if full_A else 2) * n * n, n, n_inputs, n_outputs, dtype,
                            f"n_latent={n}")
        gen = plc.init_common(self, n_inputs, n, n_outputs, observation, noise_std, seed)
        plc.init_pl_weights(self, n, full_A, w_diagonal, gain, gen)
        plc.finish_init(self, train_h0, dtype)

    def params(self) -> PLRNNParams:
        A, W = plc.effective_A_W(self)
        return PLRNNParams(A, W, self.h, self.C, self.B, self.b_out)

    @classmethod
    def from_arrays(
        cls, A: Any, W: Any, h: Any, C: Any = None, *, dtype: torch.dtype = torch.float64
    ) -> PLRNN:
        """Build an autonomous-or-driven PLRNN from given arrays (identity observation).

        Parameters
        ----------
        A : array, shape (latent,) or (latent, latent)
            Vector of the diagonal, a diagonal matrix, or a full matrix.
        W : array, shape (latent, latent)
            Connectivity; a non-zero diagonal is kept.
        h : array, shape (latent,)
        C : array, shape (latent, input), optional
        dtype : torch dtype
            Parameter dtype (float64 by default so that exact analyses see the given numbers).

        Raises
        ------
        ValueError
            On shape mismatches or NaN/Inf entries.
        """
        return plc.from_pl_arrays(cls, A, W, h, C, dtype=dtype)


fam.FAMILIES[PLRNNParams] = plc.family("plrnn", "A", ("h",), plrnn_step, plrnn_drive, plrnn_jacobian)
