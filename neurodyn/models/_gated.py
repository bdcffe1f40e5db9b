"""Initialisation shared by the gated models (GRU, LSTM).

Both use torch's layout: stacked gate weights ``w_ih`` (gates*unit, input), ``w_hh``
(gates*unit, unit), biases ``b_ih``, ``b_hh`` (gates*unit,), and a linear readout
``w_out`` (output, unit), ``b_out`` (output,).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import nn

from neurodyn._seed import SeedLike
from neurodyn.models._base import (
    RecurrentModel,
    check_param_memory,
    check_sizes,
    init_generator,
    uniform_weights,
)


class GatedParams(NamedTuple):
    """The fields of :class:`~neurodyn.models.GRUParams` and :class:`~neurodyn.models.LSTMParams`."""

    w_ih: torch.Tensor
    w_hh: torch.Tensor
    b_ih: torch.Tensor
    b_hh: torch.Tensor
    w_out: torch.Tensor
    b_out: torch.Tensor


class GatedShell(RecurrentModel):
    """:meth:`params` and the readout of the first ``n_units`` state entries, for the GRU and the LSTM."""

    #: the family's params type, a subclass of :class:`GatedParams`
    params_type: type[GatedParams]

    def params(self) -> GatedParams:
        return self.params_type(self.w_ih, self.w_hh, self.b_ih, self.b_hh, self.w_out, self.b_out)

    def readout(self, h: torch.Tensor) -> torch.Tensor:
        return h[..., : self.n_units] @ self.w_out.T + self.b_out


def init_gated(
    module: nn.Module, n_inputs: int, n_units: int, n_outputs: int, n_gates: int, seed: SeedLike
) -> None:
    """Check the sizes, store them and the seed, and create the gate and readout parameters.

    Gate weights and biases and ``w_out`` are uniform in ``±1/sqrt(n_units)`` (as torch does),
    drawn in the order ``w_ih, w_hh, b_ih, b_hh, w_out``; ``b_out`` starts at zero.

    Raises
    ------
    ValueError
        If a size is not an integer, ``n_units < 1`` or ``n_inputs`` or ``n_outputs`` is negative, or
        the parameters would not fit in the memory available (lower ``n_units``).
    """
    n_inputs, n_units, n_outputs = check_sizes(n_inputs, n_units, n_outputs)
    check_param_memory(type(module).__name__, n_gates * n_units * (n_inputs + n_units + 2)
                       + n_outputs * (n_units + 1), f"n_units={n_units}, n_inputs={n_inputs}",
                       "lower n_units")
    module.n_inputs, module.n_units, module.n_outputs = n_inputs, n_units, n_outputs
    module.seed, gen = init_generator(seed)
    k = 1.0 / math.sqrt(n_units)
    module.w_ih = uniform_weights(gen, k, n_gates * n_units, n_inputs)
    module.w_hh = uniform_weights(gen, k, n_gates * n_units, n_units)
    module.b_ih = uniform_weights(gen, k, n_gates * n_units)
    module.b_hh = uniform_weights(gen, k, n_gates * n_units)
    module.w_out = uniform_weights(gen, k, n_outputs, n_units)
    module.b_out = nn.Parameter(torch.zeros(n_outputs))
