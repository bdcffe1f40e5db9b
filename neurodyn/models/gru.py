"""Gated recurrent unit with the equations of ``torch.nn.GRU`` (Cho et al. 2014)."""

from __future__ import annotations

import torch

from neurodyn._seed import SeedLike
from neurodyn.models import _family as fam
from neurodyn.models._base import init_h0
from neurodyn.models._gated import GatedParams, GatedShell, init_gated
from neurodyn.models._registry import register_model

__all__ = ["GRU", "GRUParams", "gru_step"]


class GRUParams(GatedParams):
    """w_ih (3*unit, input), w_hh (3*unit, unit), b_ih (3*unit,), b_hh (3*unit,),
    w_out (output, unit), b_out (output,); gate order (reset, update, new) as in torch.

    Examples
    --------
    >>> from neurodyn.models import GRU
    >>> p = GRU(2, 4, 1, seed=0).params()
    >>> tuple(p.w_ih.shape), tuple(p.w_hh.shape), tuple(p.w_out.shape)  # gates stacked: 3 * unit rows
    ((12, 2), (12, 4), (1, 4))
    """

    __slots__ = ()


def gru_drive(p: GRUParams, u: torch.Tensor | None) -> torch.Tensor:
    """The input part of the gate pre-activations ``W_ih u + b_ih``; ``u`` (..., input) → (..., 3*unit)."""
    return fam.affine(p.w_ih, u, p.b_ih)


def _gru_gates(p: GRUParams, h: torch.Tensor, u: torch.Tensor | None):
    """``(r, z, n, W_hn h + b_hn)``, each (..., unit)."""
    gh = fam.mm(h, p.w_hh) + p.b_hh
    i_r, i_z, i_n = gru_drive(p, u).chunk(3, dim=-1)
    h_r, h_z, h_n = gh.chunk(3, dim=-1)
    r = torch.sigmoid(i_r + h_r)
    z = torch.sigmoid(i_z + h_z)
    return r, z, torch.tanh(i_n + r * h_n), h_n


def gru_step(p: GRUParams, h: torch.Tensor, u: torch.Tensor | None) -> torch.Tensor:
    """``r = s(Wir u + Whr h)``, ``z = s(Wiz u + Whz h)``, ``n = tanh(Win u + r*(Whn h))``,
    ``h' = (1 - z) n + z h`` (biases included); ``h`` (..., unit).

    Examples
    --------
    One step equals ``torch.nn.GRUCell`` with the same weights:

    >>> import torch
    >>> from neurodyn.models import GRU, gru_step
    >>> p = GRU(2, 4, 1, seed=0).params()
    >>> cell = torch.nn.GRUCell(2, 4)
    >>> with torch.no_grad():
    ...     for mine, torchs in [("w_ih", "weight_ih"), ("w_hh", "weight_hh"), ("b_ih", "bias_ih"),
    ...                          ("b_hh", "bias_hh")]:
    ...         _ = getattr(cell, torchs).copy_(getattr(p, mine))
    >>> h, u = torch.full((3, 4), 0.1), torch.ones(3, 2)
    >>> bool(torch.allclose(gru_step(p, h, u), cell(u, h), atol=1e-6))
    True
    """
    r, z, n, _ = _gru_gates(p, h, u)
    return (1.0 - z) * n + z * h


def _gru_jacobian(p: GRUParams, h: torch.Tensor, u: torch.Tensor | None, wrt_state: bool) -> torch.Tensor:
    """``dh'/dx`` for ``x`` = h (``wrt_state``) or u, from the chain rule through r, z and n."""
    r, z, n, h_n = _gru_gates(p, h, u)
    w_r, w_z, w_n = (p.w_hh if wrt_state else p.w_ih).chunk(3, dim=-2)
    dr = fam.scale_rows(r * (1.0 - r), w_r, h)  # (..., unit, x)
    dz = fam.scale_rows(z * (1.0 - z), w_z, h)
    # n = tanh(i_n + r * h_n): h enters through r and h_n = W_hn h + b_hn, u through r and i_n
    dn_pre = (fam.scale_rows(r, w_n, h) if wrt_state else fam.per_state(w_n, h)) + h_n.unsqueeze(-1) * dr
    dn = (1.0 - n * n).unsqueeze(-1) * dn_pre
    jac = (1.0 - z).unsqueeze(-1) * dn + (h - n).unsqueeze(-1) * dz
    return jac + torch.diag_embed(z) if wrt_state else jac


def gru_jacobian(p: GRUParams, h: torch.Tensor, u: torch.Tensor | None) -> torch.Tensor:
    """``dF/dh`` of :func:`gru_step`; ``h`` (..., unit) → (..., unit, unit)."""
    return _gru_jacobian(p, h, u, True)


def gru_input_jacobian(p: GRUParams, h: torch.Tensor, u: torch.Tensor | None) -> torch.Tensor:
    """``dF/du`` of :func:`gru_step`; ``h`` (..., unit) → (..., unit, input)."""
    return _gru_jacobian(p, h, u, False)


@register_model
class GRU(GatedShell):
    """GRU network with a linear readout; one step equals ``torch.nn.GRUCell``.

    Parameters
    ----------
    n_inputs, n_units, n_outputs : int
    train_h0 : bool
        Learn the initial state.
    seed : int, numpy/torch Generator or None
        Seed of the initialisation (uniform in ±1/sqrt(n_units), as torch does).

    Raises
    ------
    ValueError
        If a size is not an integer (``4.0`` counts as 4), ``n_units < 1``, ``n_inputs`` or
        ``n_outputs`` is negative, or the parameters would not fit in the memory available (lower
        ``n_units``).

    Examples
    --------
    >>> import torch
    >>> from neurodyn.models import GRU
    >>> model = GRU(n_inputs=3, n_units=16, n_outputs=2, seed=0)
    >>> out = model(torch.zeros(4, 10, 3))
    >>> tuple(out.outputs.shape), tuple(out.states.shape)
    ((4, 10, 2), (4, 10, 16))
    >>> bool(torch.equal(GRU(3, 16, 2, seed=0).w_hh, model.w_hh))  # same seed, same weights
    True
    """

    params_type = GRUParams
    config_fields = ("n_inputs", "n_units", "n_outputs", "train_h0", "seed")

    def __init__(
        self, n_inputs: int, n_units: int, n_outputs: int, *, train_h0: bool = False,
        seed: SeedLike = 0,
    ) -> None:
        super().__init__()
        init_gated(self, n_inputs, n_units, n_outputs, 3, seed)
        init_h0(self, train_h0)


fam.FAMILIES[GRUParams] = fam.Family(
    "gru", "w_hh", ("b_ih", "b_hh", "b_out"), gru_step, gru_drive, noise_scale=lambda p: 0.0,
    n_inputs=lambda p: p.w_ih.shape[-1], jacobian=gru_jacobian, input_jacobian=gru_input_jacobian,
)
