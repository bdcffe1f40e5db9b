"""The one finite-value check: a one-line error naming the offending array (NumPy or torch)."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["all_finite", "check_finite"]


def all_finite(values: Any) -> bool:
    """Whether every value of an array, tensor (any device) or number is finite (no NaN or Inf)."""
    if type(values).__module__.startswith("torch"):
        import torch

        return bool(torch.isfinite(values).all())
    return bool(np.all(np.isfinite(values)))


def check_finite(values: Any, name: str, fix: str = "", *, error: type[Exception] = ValueError) -> None:
    """Raise ``error("<name> contains NaN or Inf[; <fix>]")`` unless every value is finite.

    Examples
    --------
    >>> check_finite([1.0, float("nan")], "x_train", "clean or interpolate the data first")
    Traceback (most recent call last):
    ...
    ValueError: x_train contains NaN or Inf; clean or interpolate the data first
    """
    if not all_finite(values):
        raise error(f"{name} contains NaN or Inf" + (f"; {fix}" if fix else ""))
