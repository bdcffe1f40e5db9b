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

from neurodyn.kernels.numba_math import activate, sigmoid, tanh_rational

KB = 4  # states per register block


@njit(fastmath=True, cache=True, inline="always")
def matvec_block(w, hb, pre, zero):
    """``pre[k, i] = sum_j w[i, j] * hb[k, j]`` for the ``KB`` = 4 rows of ``hb``."""
    m, n = w.shape
    for i in range(m):
        a0 = zero
        a1 = zero
        a2 = zero
        a3 = zero
        for j in range(n):
            wij = w[i, j]
            a0 += wij * hb[0, j]
            a1 += wij * hb[1, j]
            a2 += wij * hb[2, j]
            a3 += wij * hb[3, j]
        pre[0, i] = a0
        pre[1, i] = a1
        pre[2, i] = a2
        pre[3, i] = a3


@njit(fastmath=True, cache=True, inline="always")
def load_block(h, e, b0, hb, rows):
    """Copy the states of block ``b0`` of network ``e`` into ``hb`` (the tail repeats the last row)."""
    n_batch = h.shape[1]
    for k in range(KB):
        rows[k] = min(b0 + k, n_batch - 1)
        hb[k, :] = h[e, rows[k], :]


@njit(fastmath=True, cache=True, inline="always")
def finish_step(h, hb, noise, noise_std, out, e, b0, rows, t, t0, every):
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


@njit(parallel=True, fastmath=True, cache=True)
def leaky_kernel(w, drive, noise, noise_std, h, out, n_steps, t0, every, alpha, code, exact):
    """Leaky RNN ``h <- (1 - alpha) h + alpha phi(W h + d_t)`` (+ noise) for ``n_steps`` steps."""
    n_net, n_batch, n = h.shape
    n_blk = (n_batch + KB - 1) // KB
    vary = drive.shape[2] > 1
    one = alpha - alpha + 1
    for item in prange(n_net * n_blk):
        e = item // n_blk
        b0 = (item - e * n_blk) * KB
        hb = np.empty((KB, n), h.dtype)
        pre = np.empty((KB, n), h.dtype)
        rows = np.empty(KB, np.int64)
        zero = np.zeros(1, h.dtype)[0]
        load_block(h, e, b0, hb, rows)
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
            finish_step(h, hb, noise, noise_std, out, e, b0, rows, t, t0, every)
        for k in range(min(KB, n_batch - b0)):
            h[e, b0 + k, :] = hb[k, :]


@njit(parallel=True, fastmath=True, cache=True)
def gru_kernel(w_hh, b_hh, drive, noise, noise_std, h, out, n_steps, t0, every, exact):
    """GRU (torch gate order r, z, n) with input drive ``d_t = W_ih u_t + b_ih`` of size 3 unit."""
    n_net, n_batch, n = h.shape
    n_blk = (n_batch + KB - 1) // KB
    vary = drive.shape[2] > 1
    for item in prange(n_net * n_blk):
        e = item // n_blk
        b0 = (item - e * n_blk) * KB
        hb = np.empty((KB, n), h.dtype)
        gh = np.empty((KB, 3 * n), h.dtype)
        rows = np.empty(KB, np.int64)
        zero = np.zeros(1, h.dtype)[0]
        one = zero + 1
        load_block(h, e, b0, hb, rows)
        we = w_hh[e]
        for t in range(n_steps):
            td = t if vary else 0
            matvec_block(we, hb, gh, zero)
            for k in range(KB):
                d = drive[e, rows[k], td]
                for i in range(n):
                    r = sigmoid(d[i] + gh[k, i] + b_hh[e, i], exact)
                    z = sigmoid(d[n + i] + gh[k, n + i] + b_hh[e, n + i], exact)
                    a = d[2 * n + i] + r * (gh[k, 2 * n + i] + b_hh[e, 2 * n + i])
                    c = np.tanh(a) if exact else tanh_rational(a)
                    hb[k, i] = (one - z) * c + z * hb[k, i]
            finish_step(h, hb, noise, noise_std, out, e, b0, rows, t, t0, every)
        for k in range(min(KB, n_batch - b0)):
            h[e, b0 + k, :] = hb[k, :]
