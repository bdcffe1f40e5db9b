"""Almost-linear RNN (Brenner et al., NeurIPS 2024).

``z[t+1] = A z + W phi*(z) + h + C s`` where ``phi*`` is the identity on the first
``n_latent - n_relu`` units and a ReLU on the last ``n_relu`` units.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import torch

from neurodyn._checks import check_setting
from neurodyn._seed import SeedLike
from neurodyn.models import _family as fam
from neurodyn.models import _pl_common as plc
from neurodyn.models._registry import register_model

__all__ = ["ALRNN", "ALRNNParams", "alrnn_step"]


class ALRNNParams(NamedTuple):
    """Effective ALRNN parameters.

    A (latent, latent) full matrix (diagonal unless built from a full ``A``), W (latent, latent)
    masked, h (latent,), C (latent, input), B / b_out (None for the identity observation),
    n_relu (int): the ReLU acts on the last ``n_relu`` units.

    Examples
    --------
    >>> from neurodyn.models import ALRNN
    >>> p = ALRNN(1, 6, 2, n_relu=2, seed=0).params()
    >>> tuple(p.A.shape), tuple(p.W.shape), tuple(p.C.shape), tuple(p.B.shape), p.n_relu
    ((6, 6), (6, 6), (6, 1), (2, 6), 2)
    """

    A: torch.Tensor
    W: torch.Tensor
    h: torch.Tensor
    C: torch.Tensor
    B: torch.Tensor | None
    b_out: torch.Tensor | None
    n_relu: int


def alrnn_phi(z: torch.Tensor, n_relu: int, *, slope: bool = False) -> torch.Tensor:
    """``phi*(z)``: identity on the first units, ReLU on the last ``n_relu``; ``z`` (..., latent).

    With ``slope=True`` the derivative ``phi*'(z)``: 1, then ``z > 0`` (relu'(0) = 0).
    """
    n_lin = z.shape[-1] - n_relu
    lin, pl = z[..., :n_lin], z[..., n_lin:]
    if slope:
        return torch.cat([torch.ones_like(lin), (pl > 0).to(z.dtype)], dim=-1)
    return z if n_relu == 0 else torch.cat([lin, torch.relu(pl)], dim=-1)


alrnn_drive = plc.drive


def alrnn_step(p: ALRNNParams, z: torch.Tensor, u: torch.Tensor | None) -> torch.Tensor:
    """``A z + W phi*(z) + h (+ C u)``; ``z`` (..., latent).

    Examples
    --------
    With no ReLU units the ALRNN is the linear map ``(A + W) z + h``:

    >>> import torch
    >>> from neurodyn.models import ALRNN, alrnn_step
    >>> model = ALRNN.from_arrays(A=[0.5, 0.5], W=[[0.0, 0.2], [0.1, 0.0]], h=[1.0, 0.0], n_relu=0)
    >>> alrnn_step(model.params(), torch.tensor([[1.0, -1.0]], dtype=torch.float64), None).tolist()
    [[1.3, -0.4]]
    """
    return fam.mm(z, p.A) + fam.mm(alrnn_phi(z, p.n_relu), p.W) + alrnn_drive(p, u)


def alrnn_jacobian(p: ALRNNParams, z: torch.Tensor, u: torch.Tensor | None) -> torch.Tensor:
    """``dF/dz = A + W diag(phi*'(z))``, region-wise; ``z`` (..., latent) → (..., latent, latent)."""
    return fam.per_state(p.A, z) + fam.scale_cols(p.W, alrnn_phi(z, p.n_relu, slope=True), z)


@register_model
class ALRNN(plc.PLShell):
    """Almost-linear RNN ``z' = A z + W phi*(z) + h + C s`` (Brenner et al. 2024).

    Parameters
    ----------
    n_inputs, n_latent, n_outputs : int
        Input, latent and output sizes (``n_units`` is a keyword alias of ``n_latent``).
    n_relu : int
        Number ``P`` of piecewise-linear units (the last ``P`` latent units); ``0 <= P <= n_latent``.
    full_A, w_diagonal : bool
        As in :class:`~neurodyn.models.PLRNN`.
    observation : {"linear", "identity"}
    noise_std : float
        Process-noise standard deviation per step.
    gain : float
        ``W ~ N(0, gain**2 / n_latent)``; ``A`` uniform in [0.5, 0.9].
    train_h0 : bool
    seed : int, numpy/torch Generator or None
    dtype : {"float32", "float64"}
        Parameter dtype (stored in :meth:`config`).

    Raises
    ------
    ValueError
        If a size is not an integer (``4.0`` counts as 4), ``n_latent < 1``, ``n_inputs`` or
        ``n_outputs`` is negative, ``n_relu`` is not an integer in ``[0, n_latent]``, the observation
        is unknown, or the parameters would not fit in the memory available (lower ``n_latent``).

    Examples
    --------
    >>> import torch
    >>> from neurodyn.models import ALRNN
    >>> model = ALRNN(n_inputs=1, n_latent=6, n_outputs=2, n_relu=2, seed=0)
    >>> model.n_latent, model.n_relu
    (6, 2)
    >>> out = model(torch.zeros(3, 20, 1))
    >>> tuple(out.outputs.shape), tuple(out.states.shape)  # (batch, time, output), (batch, time, latent)
    ((3, 20, 2), (3, 20, 6))
    """

    config_fields = ("n_relu", "full_A", "w_diagonal", "gain")

    def __init__(
        self,
        n_inputs: int,
        n_latent: int | None = None,
        n_outputs: int | None = None,
        *,
        n_units: int | None = None,
        n_relu: int | None = None,
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
        if n_relu is not None:
            check_setting("n_relu", n_relu, 0, high=n, integer=True, hint=" (at most n_latent)")
        n_relu = max(1, n // 4) if n_relu is None else int(n_relu)
        plc.check_pl_memory(self, (3 if full_A else 2) * n * n, n, n_inputs, n_outputs, dtype,
                            f"n_latent={n}")
        self.n_relu = n_relu
        gen = plc.init_common(self, n_inputs, n, n_outputs, observation, noise_std, seed)
        plc.init_pl_weights(self, n, full_A, w_diagonal, gain, gen)
        plc.finish_init(self, train_h0, dtype)

    def params(self) -> ALRNNParams:
        A, W = plc.effective_A_W(self)
        return ALRNNParams(A, W, self.h, self.C, self.B, self.b_out, self.n_relu)

    @classmethod
    def from_arrays(
        cls, A: Any, W: Any, h: Any, n_relu: int, C: Any = None, *,
        dtype: torch.dtype = torch.float64,
    ) -> ALRNN:
        """Build an ALRNN from given arrays (identity observation).

        Parameters
        ----------
        A : array, shape (latent,) or (latent, latent)
        W : array, shape (latent, latent); a non-zero diagonal is kept
        h : array, shape (latent,)
        n_relu : int
            Number of ReLU units (the last ``n_relu`` latent units).
        C : array, shape (latent, input), optional
        dtype : torch dtype

        Raises
        ------
        ValueError
            On shape mismatches, NaN/Inf, or ``n_relu`` outside ``[0, latent]``.
        """
        return plc.from_pl_arrays(cls, A, W, h, C, dtype=dtype, n_relu=int(n_relu))


fam.FAMILIES[ALRNNParams] = plc.family("alrnn", "A", ("h",), alrnn_step, alrnn_drive, alrnn_jacobian)
