"""The input checks shared by :func:`prediction_error` and :func:`evaluate_reconstruction`: integer counts
and external inputs, each a one-line error naming the fix."""

from __future__ import annotations

from typing import Any

import numpy as np

from neurodyn._checks import check_finite, check_setting, float64_copy


def check_count(name: str, value: Any, low: int, high: int | None = None, hint: str = "") -> int:
    """``value`` as an ``int`` after :func:`~neurodyn._checks.check_setting` (bools, non-integers refused)."""
    check_setting(name, value, low, high=high, integer=True, hint=hint)
    return int(value)


def check_inputs(model: Any, series: Any, required: tuple[str, ...]) -> list[np.ndarray | None]:
    """Validated external inputs, float64 arrays (or ``None`` where not given and not needed).

    ``series`` holds ``(name, inputs, x, x_name)`` per input sequence; ``inputs`` must have shape
    ``(len(x), model.n_inputs)`` and be finite, those named in ``required`` must be given for a model with
    inputs, and none may be given to a model without.
    """
    n_in = int(getattr(model, "n_inputs", 0))
    names = " / ".join(name for name, *_ in series)
    if n_in == 0:
        if any(u is not None for _, u, _, _ in series):
            raise ValueError(f"inputs were given but the model takes no external inputs (n_inputs = 0); "
                             f"drop {names}")
        return [None] * len(series)
    out = []
    for name, u, x, x_name in series:
        if u is None:
            if name in required:
                raise ValueError(f"the model takes {n_in} external inputs; pass {name} (time, input) aligned "
                                 f"with {x_name}")
            out.append(None)
            continue
        u = float64_copy(u, name)
        if u.ndim != 2 or u.shape != (len(x), n_in):
            raise ValueError(f"{name} must have shape (time, input) = ({len(x)}, {n_in}), got {u.shape}")
        check_finite(u, name, "clean or interpolate the inputs first")
        out.append(u)
    return out
