"""The shared input checks: finite values (NumPy or torch), numeric settings and devices, each a one-line
error naming the offending value and the fix."""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

__all__ = ["all_finite", "check_device", "check_finite", "check_setting"]


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


def check_setting(name: str, value: Any, low: float, *, high: float | None = None, strict: bool = False,
                  integer: bool = False, hint: str = "") -> None:
    """Raise a one-line ``ValueError`` unless ``value`` is a finite number (an integer if ``integer``:
    a whole float such as ``4.0`` passes, bools and strings do not), ``>= low`` (``> low`` if
    ``strict``; ``low=-math.inf`` sets no lower bound) and at most ``high``.

    Examples
    --------
    >>> check_setting("n_bits", 1.5, 1, integer=True)
    Traceback (most recent call last):
    ...
    ValueError: n_bits must be an integer >= 1, got 1.5
    >>> check_setting("n_items", float("nan"), -math.inf, integer=True)
    Traceback (most recent call last):
    ...
    ValueError: n_items must be an integer, got nan
    """
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
    ok = ok and (value > low if strict else value >= low) and (not integer or float(value).is_integer())
    if not ok or (high is not None and value > high):
        kind = "an integer" if integer else "a finite number"
        if high is not None:
            bound = f" in [{low:g}, {high:g}]"
        else:
            bound = f" {'>' if strict else '>='} {low:g}" if low > -math.inf else ""
        raise ValueError(f"{name} must be {kind}{bound}, got {value!r}{hint}")


def check_device(device: Any, *, available: bool = True):
    """``device`` as a ``torch.device``; a clear ``ValueError`` if it is malformed or (unless
    ``available=False``, for code that only reads the device type) unavailable.

    Examples
    --------
    >>> from neurodyn._checks import check_device
    >>> check_device("cpu")
    device(type='cpu')
    >>> check_device("gpu0")
    Traceback (most recent call last):
    ...
    ValueError: device 'gpu0' is not a torch device; use e.g. 'cpu' or 'cuda:0'
    >>> check_device("cuda", available=False)  # parsed only, whether or not CUDA is here
    device(type='cuda')
    """
    import torch

    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as err:
        raise ValueError(f"device {device!r} is not a torch device; use e.g. 'cpu' or 'cuda:0'") from err
    if not available:
        return dev
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} requested but CUDA is not available here; use device='cpu'")
    if dev.type == "mps" and not torch.backends.mps.is_available():
        raise ValueError(f"device {device!r} requested but MPS is not available here; use device='cpu'")
    return dev


def float64_copy(x: Any, name: str) -> np.ndarray:
    """A new float64 NumPy array holding ``x`` (NumPy array, torch tensor, also one that requires grad,
    or nested sequence); never a view of the caller's data.

    Raises
    ------
    TypeError
        For complex values (a cast to float would silently drop the imaginary part).
    ValueError
        For anything non-numeric.
    """
    if type(x).__module__.startswith("torch"):
        if x.is_complex():
            raise TypeError(complex_message(name))
        x = x.detach().cpu().double().numpy()
    try:
        a = np.asarray(x)
        if not np.iscomplexobj(a):
            return np.array(a, dtype=np.float64, copy=True)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be a numeric array or tensor; got {type(x).__name__}") from err
    raise TypeError(complex_message(name))


def complex_message(name: str) -> str:
    """The one-line refusal of complex input named ``name``."""
    return f"{name} is complex; pass real data (e.g. {name}.real or abs({name}))"
