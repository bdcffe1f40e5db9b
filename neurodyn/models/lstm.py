"""LSTM with the equations of ``torch.nn.LSTM``; the state is ``(h, c)`` joined."""

from __future__ import annotations

import torch

from neurodyn._seed import SeedLike
from neurodyn.models import _family as fam
from neurodyn.models._gated import GatedParams, GatedShell, init_gated
from neurodyn.models._registry import register_model

__all__ = ["LSTM", "LSTMParams", "lstm_step"]


class LSTMParams(GatedParams):
    """w_ih (4*unit, input), w_hh (4*unit, unit), b_ih, b_hh (4*unit,), w_out (output, unit),
    b_out (output,); gate order (input, forget, cell, output) as in torch.

    Examples
    --------
    >>> from neurodyn.models import LSTM
    >>> p = LSTM(2, 4, 1, seed=0).params()
    >>> tuple(p.w_ih.shape), tuple(p.w_hh.shape)  # gates stacked: 4 * unit rows
    ((16, 2), (16, 4))
    """

    __slots__ = ()


def lstm_drive(p: LSTMParams, u: torch.Tensor | None) -> torch.Tensor:
    """The input part of the gate pre-activations ``W_ih u + b_ih + b_hh``; → (..., 4*unit)."""
    return fam.affine(p.w_ih, u, p.b_ih + p.b_hh)


def _lstm_gates(p: LSTMParams, s: torch.Tensor, u: torch.Tensor | None):
    """``(i, f, g, o, c, c')`` on the joined state ``s = [h, c]``, each (..., unit)."""
    h, c = s.chunk(2, dim=-1)
    a_i, a_f, a_g, a_o = (fam.mm(h, p.w_hh) + lstm_drive(p, u)).chunk(4, dim=-1)
    i, f, g, o = torch.sigmoid(a_i), torch.sigmoid(a_f), torch.tanh(a_g), torch.sigmoid(a_o)
    return i, f, g, o, c, f * c + i * g


def lstm_step(p: LSTMParams, s: torch.Tensor, u: torch.Tensor | None) -> torch.Tensor:
    """One step on the joined state ``s = [h, c]`` of shape (..., 2*unit).

    Examples
    --------
    The state joins ``h`` and ``c``; one step equals ``torch.nn.LSTMCell``:

    >>> import torch
    >>> from neurodyn.models import LSTM, lstm_step
    >>> p = LSTM(2, 4, 1, seed=0).params()
    >>> cell = torch.nn.LSTMCell(2, 4)
    >>> with torch.no_grad():
    ...     for mine, torchs in [("w_ih", "weight_ih"), ("w_hh", "weight_hh"), ("b_ih", "bias_ih"),
    ...                          ("b_hh", "bias_hh")]:
    ...         _ = getattr(cell, torchs).copy_(getattr(p, mine))
    >>> h, c, u = torch.full((3, 4), 0.1), torch.full((3, 4), -0.2), torch.ones(3, 2)
    >>> s = lstm_step(p, torch.cat([h, c], dim=-1), u)
    >>> h1, c1 = cell(u, (h, c))
    >>> tuple(s.shape), bool(torch.allclose(s, torch.cat([h1, c1], dim=-1), atol=1e-6))
    ((3, 8), True)
    """
    i, f, g, o, c, c_new = _lstm_gates(p, s, u)
    return torch.cat([o * torch.tanh(c_new), c_new], dim=-1)


def _lstm_jacobian(p: LSTMParams, s: torch.Tensor, u: torch.Tensor | None, wrt_state: bool):
    """``(d[h', c']/dx, dh'/dc, dc'/dc)`` for ``x`` = h (the state's first half) or u; the last two
    are the diagonals of the ``c`` blocks, (..., unit)."""
    i, f, g, o, c, c_new = _lstm_gates(p, s, u)
    w_i, w_f, w_g, w_o = (p.w_hh if wrt_state else p.w_ih).chunk(4, dim=-2)
    t = torch.tanh(c_new)
    dc = (fam.scale_rows(c * f * (1.0 - f), w_f, s) + fam.scale_rows(g * i * (1.0 - i), w_i, s)
          + fam.scale_rows(i * (1.0 - g * g), w_g, s))
    do_dt = o * (1.0 - t * t)  # dh'/dc'
    dh = fam.scale_rows(t * o * (1.0 - o), w_o, s) + do_dt.unsqueeze(-1) * dc
    return torch.cat([dh, dc], dim=-2), do_dt * f, f


def lstm_jacobian(p: LSTMParams, s: torch.Tensor, u: torch.Tensor | None) -> torch.Tensor:
    """``dF/ds`` of :func:`lstm_step` on ``s = [h, c]``; (..., 2*unit) → (..., 2*unit, 2*unit).

    Blocks ``[[dh'/dh, dh'/dc], [dc'/dh, dc'/dc]]`` with ``dc'/dc = diag(f)`` and
    ``dh'/dc = diag(o (1 - tanh(c')^2) f)``.
    """
    d_h, dh_dc, dc_dc = _lstm_jacobian(p, s, u, True)
    d_c = torch.cat([torch.diag_embed(dh_dc), torch.diag_embed(dc_dc)], dim=-2)
    return torch.cat([d_h, d_c], dim=-1)


def lstm_input_jacobian(p: LSTMParams, s: torch.Tensor, u: torch.Tensor | None) -> torch.Tensor:
    """``dF/du`` of :func:`lstm_step`; ``s`` (..., 2*unit) → (..., 2*unit, input)."""
    return _lstm_jacobian(p, s, u, False)[0]


@register_model
class LSTM(GatedShell):
    """LSTM network with a linear readout of ``h``; state ``[h, c]`` of size ``2 * n_units``.

    Raises
    ------
    ValueError
        If a size is not an integer (``4.0`` counts as 4), ``n_units < 1``, ``n_inputs`` or
        ``n_outputs`` is negative, or the parameters would not fit in the memory available (lower
        ``n_units``).

    Examples
    --------
    >>> import torch
    >>> from neurodyn.models import LSTM
    >>> model = LSTM(n_inputs=3, n_units=8, n_outputs=2, seed=0)
    >>> model.state_size  # [h, c]
    16
    >>> out = model(torch.zeros(4, 10, 3))
    >>> tuple(out.outputs.shape), tuple(out.states.shape)
    ((4, 10, 2), (4, 10, 16))
    """

    params_type = LSTMParams
    config_fields = ("n_inputs", "n_units", "n_outputs", "seed")

    def __init__(
        self, n_inputs: int, n_units: int, n_outputs: int, *, seed: SeedLike = 0
    ) -> None:
        super().__init__()
        init_gated(self, n_inputs, n_units, n_outputs, 4, seed)

    @property
    def state_size(self) -> int:
        return 2 * self.n_units


fam.FAMILIES[LSTMParams] = fam.Family(
    "lstm", "w_hh", ("b_ih", "b_hh", "b_out"), lstm_step, lstm_drive, noise_scale=lambda p: 0.0,
    n_inputs=lambda p: p.w_ih.shape[-1], jacobian=lstm_jacobian, input_jacobian=lstm_input_jacobian,
    state_size=lambda p: 2 * p.w_hh.shape[-1],
)
