"""Gated recurrent unit with the equations of ``torch.nn.GRU`` (Cho et al. 2014)."""

from __future__ import annotations

from typing import Any, NamedTuple

import torch
from torch import nn

from neurodyn._seed import SeedLike
from neurodyn.models._base import RecurrentModel
from neurodyn.models._gated import init_gated
from neurodyn.models._registry import register_model

__all__ = ["GRU", "GRUParams", "gru_step"]


class GRUParams(NamedTuple):
    """w_ih (3*unit, input), w_hh (3*unit, unit), b_ih (3*unit,), b_hh (3*unit,),
    w_out (output, unit), b_out (output,); gate order (reset, update, new) as in torch."""

    w_ih: torch.Tensor
    w_hh: torch.Tensor
    b_ih: torch.Tensor
    b_hh: torch.Tensor
    w_out: torch.Tensor
    b_out: torch.Tensor


def gru_step(p: GRUParams, h: torch.Tensor, u: torch.Tensor | None) -> torch.Tensor:
    """``r = s(Wir u + Whr h)``, ``z = s(Wiz u + Whz h)``, ``n = tanh(Win u + r*(Whn h))``,
    ``h' = (1 - z) n + z h`` (biases included); ``h`` (..., unit)."""
    gi = p.b_ih if u is None or p.w_ih.shape[-1] == 0 else u @ p.w_ih.T + p.b_ih
    gh = h @ p.w_hh.T + p.b_hh
    gi = gi.expand_as(gh) if gi.ndim < gh.ndim else gi
    i_r, i_z, i_n = gi.chunk(3, dim=-1)
    h_r, h_z, h_n = gh.chunk(3, dim=-1)
    r = torch.sigmoid(i_r + h_r)
    z = torch.sigmoid(i_z + h_z)
    n = torch.tanh(i_n + r * h_n)
    return (1.0 - z) * n + z * h


@register_model
class GRU(RecurrentModel):
    """GRU network with a linear readout; one step equals ``torch.nn.GRUCell``.

    Parameters
    ----------
    n_inputs, n_units, n_outputs : int
    train_h0 : bool
        Learn the initial state.
    seed : int, numpy/torch Generator or None
        Seed of the initialisation (uniform in ±1/sqrt(n_units), as torch does).
    """

    def __init__(
        self, n_inputs: int, n_units: int, n_outputs: int, *, train_h0: bool = False,
        seed: SeedLike = 0,
    ) -> None:
        super().__init__()
        init_gated(self, n_inputs, n_units, n_outputs, 3, seed)
        self.h0 = nn.Parameter(torch.zeros(n_units)) if train_h0 else None
        self.train_h0 = bool(train_h0)

    def params(self) -> GRUParams:
        return GRUParams(self.w_ih, self.w_hh, self.b_ih, self.b_hh, self.w_out, self.b_out)

    def step(self, h: torch.Tensor, u: torch.Tensor | None = None) -> torch.Tensor:
        return gru_step(self.params(), h, u)

    def readout(self, h: torch.Tensor) -> torch.Tensor:
        return h @ self.w_out.T + self.b_out

    def config(self) -> dict[str, Any]:
        return {
            "n_inputs": self.n_inputs, "n_units": self.n_units, "n_outputs": self.n_outputs,
            "train_h0": self.train_h0, "seed": self.seed,
        }
