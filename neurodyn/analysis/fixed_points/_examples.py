"""The small network that the fixed-point docstrings' examples share."""

from __future__ import annotations

import torch

from neurodyn.models import LeakyRNN


def bistable_unit(self_weight: float = 2.0) -> LeakyRNN:
    """One tanh unit ``h ↦ tanh(w h)`` (``LeakyRNN(0, 1, 1)``, alpha 1, no bias, float32).

    With ``w = 2`` it is bistable: stable points ±0.9575 and the unstable point 0.

    Examples
    --------
    >>> model = bistable_unit()
    >>> model.w_rec.detach().flatten().tolist(), model.b.detach().tolist()
    ([2.0], [0.0])
    """
    model = LeakyRNN(0, 1, 1, alpha=1.0, seed=0)
    with torch.no_grad():
        model.w_rec.fill_(float(self_weight))
        model.b.zero_()
    return model
