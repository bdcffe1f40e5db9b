"""Element-wise maps for the Numba kernels, written so that LLVM vectorises them.

``libm`` ``tanhf`` is a scalar call that blocks SIMD, so float32 kernels use a rational
approximation ``tanh(x) ~ x P(x^2) / Q(x^2)`` (degrees 4/4 in ``x^2``, ``|x|`` clamped to 9 where
``tanh`` rounds to 1 in float32). Its coefficients are a relative-error least-squares fit on
[0, 9] made for this package (Lawson reweighting); evaluated in float32 the absolute error is below
4e-7 on the whole real line. float64 kernels use the exact ``math.tanh``. The sigmoid is
``0.5 + 0.5 tanh(x / 2)``.

Each activation is stated once, per element: :func:`phi` (its value) and :func:`phi_slope` (its
derivative); :func:`activate` and :func:`activate_with_slope` apply them to a block. The activation
code and ``exact`` do not change inside a block, so LLVM hoists their branches out of the loop and
the loop stays vectorised.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["ACTIVATION_CODES", "activate", "activate_with_slope", "sigmoid", "softplus", "tanh_rational"]

TANH, RELU, SOFTPLUS, SIGMOID, LINEAR = 0, 1, 2, 3, 4
ACTIVATION_CODES = {"tanh": TANH, "relu": RELU, "softplus": SOFTPLUS, "sigmoid": SIGMOID, "linear": LINEAR}

# float32 constants keep float32 arithmetic in float32 (Python floats would promote to float64)
_P1, _P2, _P3, _P4 = (np.float32(c) for c in (
    0.13383980119277233, 0.003498995917844075, 2.0661261107994697e-05, 1.3419822499798024e-08))
_Q1, _Q2, _Q3, _Q4 = (np.float32(c) for c in (
    0.4671730160110223, 0.0258902057110279, 0.0003291038159384421, 7.804729044616221e-07))
_ONE, _HALF, _ZERO, _CLAMP, _TWENTY = (np.float32(c) for c in (1.0, 0.5, 0.0, 9.0, 20.0))


@njit(fastmath=True, cache=True, inline="always", error_model="numpy")
def tanh_rational(x):
    """Vectorisable float32 tanh (see the module docstring); keeps the dtype of ``x``."""
    c = min(max(x, -_CLAMP), _CLAMP)
    s = c * c
    p = _ONE + s * (_P1 + s * (_P2 + s * (_P3 + s * _P4)))
    q = _ONE + s * (_Q1 + s * (_Q2 + s * (_Q3 + s * _Q4)))
    return min(max(c * p / q, -_ONE), _ONE)


@njit(fastmath=True, cache=True, inline="always", error_model="numpy")
def softplus(x):
    """``log(1 + exp(x))`` with torch's threshold (``x`` above 20 passes through)."""
    return x if x > _TWENTY else math.log1p(math.exp(x))


@njit(fastmath=True, cache=True, inline="always", error_model="numpy")
def phi(x, code, exact):
    """Activation ``code`` of one element ``x``; ``exact``: libm tanh (and exp in the sigmoid)."""
    if code == TANH:
        return math.tanh(x) if exact else tanh_rational(x)
    if code == RELU:
        return max(x, _ZERO)
    if code == SOFTPLUS:
        return softplus(x)
    if code == SIGMOID:
        return sigmoid(x, exact)
    return x


@njit(fastmath=True, cache=True, error_model="numpy")
def activate(buf, code, exact):
    """Apply activation ``code`` in place to the 2-D array ``buf``; ``exact``: libm tanh."""
    kb, n = buf.shape
    for k in range(kb):
        for i in range(n):
            buf[k, i] = phi(buf[k, i], code, exact)


@njit(fastmath=True, cache=True, inline="always", error_model="numpy")
def phi_slope(x, a, scale, one, code):
    """``scale * phi'(x)`` of activation ``code`` from the element ``x`` and its value ``a = phi(x)``."""
    if code == TANH:
        return scale * (one - a * a)
    if code == RELU:
        return scale if x > _ZERO else _ZERO
    if code == SOFTPLUS:
        return scale if x > _TWENTY else scale / (one + math.exp(-x))
    if code == SIGMOID:
        return scale * a * (one - a)
    return scale


@njit(fastmath=True, cache=True, error_model="numpy")
def activate_with_slope(buf, slope, scale, code, exact):
    """``buf <- phi(buf)`` and ``slope <- scale * phi'(buf)`` (before the update), both 2-D.

    The slopes equal torch autograd's: ``relu'(0) = 0`` and softplus passes ``x > 20`` through
    with slope 1, as ``torch.nn.functional.softplus`` does.
    """
    kb, n = buf.shape
    one = scale - scale + _ONE
    for k in range(kb):
        for i in range(n):
            x = buf[k, i]
            a = phi(x, code, exact)
            buf[k, i] = a
            slope[k, i] = phi_slope(x, a, scale, one, code)


@njit(fastmath=True, cache=True, inline="always", error_model="numpy")
def sigmoid(x, exact):
    """Logistic function; rational-tanh form unless ``exact``."""
    if exact:
        return _ONE / (_ONE + math.exp(-x))
    return _HALF + _HALF * tanh_rational(_HALF * x)


def as_float(x: float, dtype: np.dtype):
    """A Python float as a NumPy scalar of the kernel dtype (keeps float32 arithmetic float32)."""
    return np.dtype(dtype).type(x)
