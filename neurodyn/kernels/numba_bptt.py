"""Numba kernels for training: the leaky RNN's time loop forward and its BPTT backward.

Arrays are time-major so that every step reads and writes one contiguous ``(batch, unit)``
slab: drive, noise and slopes ``(time, batch, unit)``, states ``(time + 1, batch, unit)`` with
the initial state first. Each step's recurrent product is one ``(batch, unit) @ (unit, unit)``
BLAS GEMM (SciPy's BLAS called from Numba, as in :mod:`~neurodyn.kernels.numba_gemm`), followed
by one fused element-wise pass. The forward stores the states and ``alpha * phi'(pre)``, which
is all the backward needs; the weight gradient, one GEMM over all time steps, is left to the
caller.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from neurodyn.kernels.numba_math import activate_with_slope

__all__ = ["leaky_backward_kernel", "leaky_forward_kernel"]


@njit(fastmath=True, cache=True, error_model="numpy")
def leaky_forward_kernel(wt, drive, noise, states, slopes, alpha, code, exact):
    """``h[t+1] = (1 - alpha) h[t] + alpha phi(h[t] @ wt + d[t]) + noise[t]`` for every step.

    ``wt`` (unit, unit) is ``W_rec.T``; ``states[0]`` holds ``h0`` on entry and ``states[1:]``
    the new states on exit; ``slopes[t] = alpha phi'(pre[t])``; ``noise`` has time 0 when absent.
    """
    n_steps = drive.shape[0]
    one = alpha - alpha + 1
    pre = np.empty_like(states[0])
    n_batch, n = pre.shape
    with_noise = noise.shape[0] > 0
    for t in range(n_steps):
        h = states[t]
        np.dot(h, wt, pre)
        d = drive[t]
        for k in range(n_batch):
            for i in range(n):
                pre[k, i] += d[k, i]
        activate_with_slope(pre, slopes[t], alpha, code, exact)
        nxt = states[t + 1]
        for k in range(n_batch):
            for i in range(n):
                nxt[k, i] = (one - alpha) * h[k, i] + alpha * pre[k, i]
        if with_noise:
            xi = noise[t]
            for k in range(n_batch):
                for i in range(n):
                    nxt[k, i] += xi[k, i]


@njit(fastmath=True, cache=True, error_model="numpy")
def leaky_backward_kernel(w, grad_states, slopes, grad_drive, grad_h, alpha):
    """BPTT of :func:`leaky_forward_kernel`: ``grad_drive[t]`` and, in ``grad_h``, ``dL/dh0``.

    ``grad_states[t]`` is ``dL/dh[t+1]`` from everything but the recurrence (time, batch, unit);
    ``grad_h`` (batch, unit) must be zero on entry. Per step, backwards in time:
    ``g = grad_states[t] + grad_h``, ``grad_drive[t] = slopes[t] * g``,
    ``grad_h = (1 - alpha) g + grad_drive[t] @ w``.
    """
    n_steps = grad_states.shape[0]
    one = alpha - alpha + 1
    n_batch, n = grad_h.shape
    carry = np.empty_like(grad_h)
    for t in range(n_steps - 1, -1, -1):
        gs = grad_states[t]
        s = slopes[t]
        gd = grad_drive[t]
        for k in range(n_batch):
            for i in range(n):
                g = gs[k, i] + grad_h[k, i]
                gd[k, i] = s[k, i] * g
                grad_h[k, i] = (one - alpha) * g
        np.dot(gd, w, carry)
        for k in range(n_batch):
            for i in range(n):
                grad_h[k, i] += carry[k, i]
