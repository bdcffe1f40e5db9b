"""Numba kernels for the leaky RNN and the GRU (CPU, float32 or float64).

Layout shared by every Numba kernel: weights ``(network, rows, unit)``, states
``h (network, batch, unit)`` updated in place, the state-independent drive
``(network, batch, time or 1, rows)``, noise ``(network, batch, time, unit)`` (time = 0: none)
and the recorded states ``out (network, batch, record, unit)`` (record = 0: none). One parallel
item is one block of ``KB`` states of one network, items ordered network-major, so the threads
walk through the ensemble network by network and each weight matrix stays in cache while its
blocks run the whole time loop. Inside a block the matrix-vector products are register-blocked:
each weight element loaded once serves ``KB`` states.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from neurodyn.kernels._numba_math import activate, sigmoid, tanh_rational

__all__ = ["gru_kernel", "leaky_kernel"]

KB = 4  # states per register block


@njit(cache=True, inline="always")
def n_blocks(n_batch, kb):
    """How many blocks of ``kb`` states cover ``n_batch`` trials (the last one may be partial)."""
    return (n_batch + kb - 1) // kb


@njit(cache=True, inline="always")
def block_of(item, n_blk, kb):
    """``(network, first trial)`` of parallel item ``item``, items ordered network-major."""
    e = item // n_blk
    return e, (item - e * n_blk) * kb


@njit(cache=True, inline="always")
def batch_block(blk, n_batch, like):
    """Block ``blk`` of ``KB`` batch rows (the training kernels): its first row, its number of real
    rows, and the zero and one of the dtype of the array ``like``."""
    b0 = blk * KB
    zero = np.zeros(1, like.dtype)[0]
    return b0, min(KB, n_batch - b0), zero, zero + 1


@njit(fastmath=True, cache=True, inline="always", error_model="numpy")
def matvec_block(w, hb, pre, zero):
    """``pre[k, i] = sum_j w[i, j] * hb[k, j]`` for the ``KB`` = 4 rows of ``hb``.

    Two weight rows times four states per pass: each loaded ``w`` element feeds four FMAs and
    each loaded state element two, and LLVM vectorises the ``j`` loop (eight SIMD accumulators).
    With an odd number of rows the last pass takes the last row twice.
    """
    m, n = w.shape
    for i in range(0, m, 2):
        i1 = min(i + 1, m - 1)
        a0 = zero
        a1 = zero
        a2 = zero
        a3 = zero
        c0 = zero
        c1 = zero
        c2 = zero
        c3 = zero
        for j in range(n):
            wa = w[i, j]
            wc = w[i1, j]
            x0 = hb[0, j]
            x1 = hb[1, j]
            x2 = hb[2, j]
            x3 = hb[3, j]
            a0 += wa * x0
            a1 += wa * x1
            a2 += wa * x2
            a3 += wa * x3
            c0 += wc * x0
            c1 += wc * x1
            c2 += wc * x2
            c3 += wc * x3
        pre[0, i], pre[1, i], pre[2, i], pre[3, i] = a0, a1, a2, a3
        pre[0, i1], pre[1, i1], pre[2, i1], pre[3, i1] = c0, c1, c2, c3


@njit(cache=True, inline="always")
def n_items(h, kb):
    """The parallel items of states ``h`` (network, batch, unit): every network's blocks of ``kb`` trials."""
    return h.shape[0] * n_blocks(h.shape[1], kb)


@njit(fastmath=True, cache=True, inline="always", error_model="numpy")
def load_block(h, e, b0, hb, rows):
    """Copy the states of block ``b0`` of network ``e`` into ``hb`` (the tail repeats the last row)."""
    n_batch = h.shape[1]
    for k in range(hb.shape[0]):
        rows[k] = min(b0 + k, n_batch - 1)
        hb[k, :] = h[e, rows[k], :]


@njit(fastmath=True, cache=True, inline="always", error_model="numpy")
def start_block(h, item, kb, pad):
    """Parallel item ``item``'s network ``e``, first trial ``b0`` and working copy of its states.

    Returns ``(e, b0, hb, rows, zero)``: the states as a new array ``hb`` (rows, unit)
    (:func:`load_block`), their trial rows and the dtype's zero. With ``pad`` the copy has ``kb``
    rows, the tail repeating the last trial (the register-blocked kernels); else only the block's
    trials (the GEMM kernels).
    """
    e, b0 = block_of(item, n_blocks(h.shape[1], kb), kb)
    n_rows = kb if pad else min(kb, h.shape[1] - b0)
    hb = np.empty((n_rows, h.shape[2]), h.dtype)
    rows = np.empty(n_rows, np.int64)
    load_block(h, e, b0, hb, rows)
    return e, b0, hb, rows, np.zeros(1, h.dtype)[0]


@njit(fastmath=True, cache=True, inline="always", error_model="numpy")
def finish_block(h, hb, noise, noise_std, out, e, b0, rows, t, t0, every):
    """Add the step's noise, then record the block if step ``t0 + t + 1`` is a multiple of ``every``."""
    n_batch = h.shape[1]
    if noise.shape[2] > 0:
        for k in range(KB):
            for i in range(hb.shape[1]):
                hb[k, i] += noise_std * noise[e, rows[k], t, i]
    step = t0 + t + 1
    if out.shape[2] > 0 and step % every == 0:
        r = step // every - 1 - t0 // every
        for k in range(min(KB, n_batch - b0)):
            out[e, b0 + k, r, :] = hb[k, :]


@njit(fastmath=True, cache=True, inline="always", error_model="numpy")
def store_block(h, hb, e, b0):
    """Write a block's final states back into ``h`` (a padded tail is dropped)."""
    for k in range(min(hb.shape[0], h.shape[1] - b0)):
        h[e, b0 + k, :] = hb[k, :]


@njit(parallel=True, fastmath=True, cache=True, error_model="numpy")
def leaky_kernel(w, drive, noise, noise_std, h, out, n_steps, t0, every, alpha, code, exact):
    """Leaky RNN ``h <- (1 - alpha) h + alpha phi(W h + d_t)`` (+ noise) for ``n_steps`` steps."""
    n = h.shape[2]
    vary = drive.shape[2] > 1
    one = np.ones(1, h.dtype)[0]
    for item in prange(n_items(h, KB)):
        e, b0, hb, rows, zero = start_block(h, item, KB, True)
        pre = np.empty((KB, n), h.dtype)
        we = w[e]
        for t in range(n_steps):
            td = t if vary else 0
            matvec_block(we, hb, pre, zero)
            for k in range(KB):
                for i in range(n):
                    pre[k, i] += drive[e, rows[k], td, i]
            activate(pre, code, exact)
            for k in range(KB):
                for i in range(n):
                    hb[k, i] = (one - alpha) * hb[k, i] + alpha * pre[k, i]
            finish_block(h, hb, noise, noise_std, out, e, b0, rows, t, t0, every)
        store_block(h, hb, e, b0)


@njit(parallel=True, fastmath=True, cache=True, error_model="numpy")
def gru_kernel(w_hh, b_hh, drive, noise, noise_std, h, out, n_steps, t0, every, exact):
    """GRU (torch gate order r, z, n) with input drive ``d_t = W_ih u_t + b_ih`` of size 3 unit."""
    n = h.shape[2]
    vary = drive.shape[2] > 1
    for item in prange(n_items(h, KB)):
        e, b0, hb, rows, zero = start_block(h, item, KB, True)
        gh = np.empty((KB, 3 * n), h.dtype)
        one = zero + 1
        we = w_hh[e]
        for t in range(n_steps):
            td = t if vary else 0
            matvec_block(we, hb, gh, zero)
            for k in range(KB):
                for i in range(3 * n):
                    gh[k, i] += b_hh[e, i]
                for i in range(2 * n):
                    gh[k, i] += drive[e, rows[k], td, i]
            if exact:  # branch outside the element loops keeps them vectorisable
                for k in range(KB):
                    for i in range(n):
                        r = sigmoid(gh[k, i], True)
                        z = sigmoid(gh[k, n + i], True)
                        c = np.tanh(drive[e, rows[k], td, 2 * n + i] + r * gh[k, 2 * n + i])
                        hb[k, i] = (one - z) * c + z * hb[k, i]
            else:
                for k in range(KB):
                    for i in range(n):
                        r = sigmoid(gh[k, i], False)
                        z = sigmoid(gh[k, n + i], False)
                        c = tanh_rational(drive[e, rows[k], td, 2 * n + i] + r * gh[k, 2 * n + i])
                        hb[k, i] = (one - z) * c + z * hb[k, i]
            finish_block(h, hb, noise, noise_std, out, e, b0, rows, t, t0, every)
        store_block(h, hb, e, b0)
