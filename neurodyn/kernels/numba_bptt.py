"""Numba kernels for training: the leaky RNN's time loop forward and its BPTT backward.

Arrays are time-major so that every step reads and writes one contiguous ``(batch, unit)``
slab: drive, noise and slopes ``(time, batch, unit)``, states ``(time + 1, batch, unit)`` with
the initial state first. The per-network kernels are the bodies of the ``*_stack`` kernels, which
take a leading network dim and run one network per parallel item (``prange``): each network's
weights stay in cache for its whole time loop, and a single network is a stack of one. Each
step's recurrent product ``(batch, unit) @ (unit, unit)`` runs register-blocked
(:func:`~neurodyn.kernels.numba_rnn.matvec_block`, four states per weight load), which for the
small matrices of training beats a BLAS call per step (1.3-2x at 64-128 units, batch 64, measured
in one process), followed by one fused element-wise pass. The forward stores the states and
``alpha * phi'(pre)``, which is all the backward needs; the weight gradient is one product over all
time steps (:func:`matmul_tn`, inside the network's item: BLAS called from a Numba OpenMP thread
competes with its own threads).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from neurodyn.kernels.numba_math import activate_with_slope
from neurodyn.kernels.numba_rnn import KB, matvec_block

__all__ = ["leaky_backward_kernel", "leaky_backward_stack", "leaky_forward_kernel", "leaky_forward_stack",
           "matmul_rows", "matmul_rows_axpy", "matmul_tn"]


@njit(fastmath=True, cache=True, error_model="numpy")
def matmul_rows_axpy(wt, x, out):
    """``out = x @ wt`` for ``x`` (rows, n) and ``wt`` (n, m) as ``n`` row updates per state.

    For a short inner dim ``n`` (a shallow PLRNN's latent size, about 10) the register-blocked
    :func:`matmul_rows` cannot fill its SIMD lanes; running the vector loop over the ``m`` outputs
    instead was 1.4-1.7x faster at n = 10, m = 50-200 (batch 64, measured in one process).
    """
    zero = x[0, 0] - x[0, 0]
    n_rows, n = x.shape
    m = wt.shape[1]
    for k in range(n_rows):
        for i in range(m):
            out[k, i] = zero
        for j in range(n):
            v = x[k, j]
            for i in range(m):
                out[k, i] += v * wt[j, i]


@njit(fastmath=True, cache=True, error_model="numpy")
def matmul_rows(w, x, out, tail_in, tail_out):
    """``out = x @ w.T`` for ``x`` (rows, n) and ``w`` (m, n), ``KB`` rows at a time.

    ``tail_in`` (KB, n) and ``tail_out`` (KB, m) are scratch blocks for the last rows when
    ``rows`` is not a multiple of ``KB``.
    """
    zero = x[0, 0] - x[0, 0]
    n_rows = x.shape[0]
    full = n_rows - n_rows % KB
    for b in range(0, full, KB):
        matvec_block(w, x[b:b + KB], out[b:b + KB], zero)
    if full < n_rows:
        for k in range(KB):
            tail_in[k, :] = x[min(full + k, n_rows - 1), :]
        matvec_block(w, tail_in, tail_out, zero)
        for k in range(n_rows - full):
            out[full + k, :] = tail_out[k, :]


@njit(fastmath=True, cache=True, error_model="numpy")
def leaky_forward_kernel(w, drive, noise, states, slopes, alpha, code, exact):
    """``h[t+1] = (1 - alpha) h[t] + alpha phi(h[t] @ w.T + d[t]) + noise[t]`` for every step.

    ``w`` (unit, unit) is ``W_rec``; ``states[0]`` holds ``h0`` on entry and ``states[1:]``
    the new states on exit; ``slopes[t] = alpha phi'(pre[t])``; ``noise`` has time 0 when absent.
    """
    n_steps = drive.shape[0]
    one = alpha - alpha + 1
    pre = np.empty_like(states[0])
    n_batch, n = pre.shape
    tail_in = np.empty((KB, n), pre.dtype)
    tail_out = np.empty((KB, n), pre.dtype)
    with_noise = noise.shape[0] > 0
    for t in range(n_steps):
        h = states[t]
        matmul_rows(w, h, pre, tail_in, tail_out)
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
def leaky_backward_kernel(wt, grad_states, slopes, grad_drive, grad_h, alpha):
    """BPTT of :func:`leaky_forward_kernel`: ``grad_drive[t]`` and, in ``grad_h``, ``dL/dh0``.

    ``grad_states[t]`` is ``dL/dh[t+1]`` from everything but the recurrence (time, batch, unit);
    ``grad_h`` (batch, unit) must be zero on entry. Per step, backwards in time:
    ``g = grad_states[t] + grad_h``, ``grad_drive[t] = slopes[t] * g``,
    ``grad_h = (1 - alpha) g + grad_drive[t] @ W_rec``; ``wt`` is ``W_rec.T``.
    """
    n_steps = grad_states.shape[0]
    one = alpha - alpha + 1
    n_batch, n = grad_h.shape
    carry = np.empty_like(grad_h)
    tail_in = np.empty((KB, n), carry.dtype)
    tail_out = np.empty((KB, n), carry.dtype)
    for t in range(n_steps - 1, -1, -1):
        gs = grad_states[t]
        s = slopes[t]
        gd = grad_drive[t]
        for k in range(n_batch):
            for i in range(n):
                g = gs[k, i] + grad_h[k, i]
                gd[k, i] = s[k, i] * g
                grad_h[k, i] = (one - alpha) * g
        matmul_rows(wt, gd, carry, tail_in, tail_out)
        for k in range(n_batch):
            for i in range(n):
                grad_h[k, i] += carry[k, i]


@njit(parallel=True, fastmath=True, cache=True, error_model="numpy")
def leaky_forward_stack(w, drive, noise, states, slopes, alpha, code, exact):
    """:func:`leaky_forward_kernel` for every network of a stack, one network per parallel item.

    ``w`` (network, unit, unit); ``drive``, ``slopes`` (network, time, batch, unit); ``states``
    (network, time + 1, batch, unit); ``noise`` (network, time or 0, batch, unit).
    """
    for e in prange(w.shape[0]):
        leaky_forward_kernel(w[e], drive[e], noise[e], states[e], slopes[e], alpha, code, exact)


@njit(parallel=True, fastmath=True, cache=True, error_model="numpy")
def leaky_backward_stack(wt, grad_states, slopes, states, grad_drive, grad_h, grad_w, alpha):
    """:func:`leaky_backward_kernel` and ``dL/dW_rec`` for every network, one per parallel item.

    Shapes as in :func:`leaky_forward_stack`, ``wt`` = ``W_rec.T`` per network, ``grad_h``
    (network, batch, unit) zero on entry; ``grad_w`` (network, unit, unit) receives
    ``sum_t grad_drive[t].T @ states[t]`` (the states before each step).
    """
    for e in prange(wt.shape[0]):
        leaky_backward_kernel(wt[e], grad_states[e], slopes[e], grad_drive[e], grad_h[e], alpha)
        gd = grad_drive[e]
        h = states[e, :-1]
        matmul_tn(gd.reshape(-1, gd.shape[-1]), h.reshape(-1, h.shape[-1]), grad_w[e])


@njit(fastmath=True, cache=True, error_model="numpy")
def matmul_tn(a, b, out):
    """``out = a.T @ b`` for ``a`` (rows, m) and ``b`` (rows, n), eight rows per pass.

    Each pass adds eight rank-one updates to ``out`` (m, n), which stays in cache, with the ``n``
    loop vectorised; for 4096 x 64 operands (float32) it matched ``torch.mm`` on one thread
    (1.5 vs 1.7 ms, one process).
    """
    rows, m = a.shape
    n = b.shape[1]
    zero = a[0, 0] - a[0, 0]
    for i in range(m):
        for j in range(n):
            out[i, j] = zero
    full = rows - rows % 8
    for r in range(0, full, 8):
        for i in range(m):
            a0, a1, a2, a3 = a[r, i], a[r + 1, i], a[r + 2, i], a[r + 3, i]
            a4, a5, a6, a7 = a[r + 4, i], a[r + 5, i], a[r + 6, i], a[r + 7, i]
            for j in range(n):
                out[i, j] += (a0 * b[r, j] + a1 * b[r + 1, j] + a2 * b[r + 2, j] + a3 * b[r + 3, j]
                              + a4 * b[r + 4, j] + a5 * b[r + 5, j] + a6 * b[r + 6, j] + a7 * b[r + 7, j])
    for r in range(full, rows):
        for i in range(m):
            v = a[r, i]
            for j in range(n):
                out[i, j] += v * b[r, j]
