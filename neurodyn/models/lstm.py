"""LSTM with the equations of ``torch.nn.LSTM``; the state is ``(h, c)`` joined."""

from __future__ import annotations

from typing import Any, NamedTuple

import torch

from neurodyn._seed import SeedLike
from neurodyn.models._base import RecurrentModel
from neurodyn.models._gated import init_gated
from neurodyn.models._registry import register_model

__all__ = ["LSTM", "LSTMParams", "lstm_step"]


class LSTMParams(NamedTuple):
    """w_ih (4*unit, input), w_hh (4*unit, unit), b_ih, b_hh (4*unit,), w_out (output, unit),
    b_out (output,); gate order (input, forget, cell, output) as in torch."""

    w_ih: torch.Tensor
    w_hh: torch.Tensor
    b_ih: torch.Tensor
    b_hh: torch.Tensor
    w_out: torch.Tensor
    b_out: torch.Tensor


def lstm_step(p: LSTMParams, s: torch.Tensor, u: torch.Tensor | None) -> torch.Tensor:
    """One step on the joined state ``s = [h, c]`` of shape (..., 2*unit)."""
    h, c = s.chunk(2, dim=-1)
    gates = h @ p.w_hh.T + p.b_hh + p.b_ih
    if u is not None and p.w_ih.shape[-1] > 0:
        gates = gates + u @ p.w_ih.T
    i, f, g, o = gates.chunk(4, dim=-1)
    c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    h_new = torch.sigmoid(o) * torch.tanh(c_new)
    return torch.cat([h_new, c_new], dim=-1)


@register_model
class LSTM(RecurrentModel):
    """LSTM network with a linear readout of ``h``; state ``[h, c]`` of size ``2 * n_units``."""

    def __init__(
        self, n_inputs: int, n_units: int, n_outputs: int, *, seed: SeedLike = 0
    ) -> None:
        super().__init__()
        init_gated(self, n_inputs, n_units, n_outputs, 4, seed)

    @property
    def state_size(self) -> int:
        return 2 * self.n_units

    def params(self) -> LSTMParams:
        return LSTMParams(self.w_ih, self.w_hh, self.b_ih, self.b_hh, self.w_out, self.b_out)

    def step(self, h: torch.Tensor, u: torch.Tensor | None = None) -> torch.Tensor:
        return lstm_step(self.params(), h, u)

    def readout(self, h: torch.Tensor) -> torch.Tensor:
        return h[..., : self.n_units] @ self.w_out.T + self.b_out

    def config(self) -> dict[str, Any]:
        return {
            "n_inputs": self.n_inputs, "n_units": self.n_units, "n_outputs": self.n_outputs,
            "seed": self.seed,
        }
