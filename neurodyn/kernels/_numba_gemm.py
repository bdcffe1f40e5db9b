"""Numba kernels for large batches: blocks of states advanced with one BLAS GEMM per step.

For ``kb`` (128) trials of one network the recurrent product is a ``(kb, n) @ (n, m)`` GEMM in
SciPy's BLAS (called from Numba without the GIL, one BLAS thread per Numba thread), followed by one
fused pass for the nonlinearity, leak, noise and recording; the block stays in cache for the whole
time loop. Weights are passed transposed (``(network, n, m)``) so both GEMM operands are
row-major. Used when a network has at least ``GEMM_MIN_BATCH`` trials; smaller batches use the
register-blocked kernels.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from neurodyn.kernels._numba_math import activate, sigmoid, tanh_rational
from neurodyn.kernels._numba_rnn import n_items, start_block, store_block

__all__ = ["gru_gemm_kernel", "leaky_gemm_kernel", "pl_gemm_kernel", "shallow_gemm_kernel"]


@njit(fastmath=True, cache=True, inline="always", error_model="numpy")
def finish_rows(h, hb, noise, noise_std, out, e, b0, t, t0, every):
    """Noise and recording for the rows ``b0 .. b0 + len(hb)`` of network ``e`` after step ``t``."""
    nb, n = hb.shape
    if noise.shape[2] > 0:
        for k in range(nb):
            for i in range(n):
                hb[k, i] += noise_std * noise[e, b0 + k, t, i]
    step = t0 + t + 1
    if out.shape[2] > 0 and step % every == 0:
        r = step // every - 1 - t0 // every
        for k in range(nb):
            out[e, b0 + k, r, :] = hb[k, :]


@njit(parallel=True, fastmath=True, cache=True, error_model="numpy")
def leaky_gemm_kernel(wt, drive, noise, noise_std, h, out, n_steps, t0, every, alpha, code, exact, kb):
    """Leaky RNN; ``wt`` = ``W_rec[e].T`` of shape (network, unit, unit)."""
    n = h.shape[2]
    vary = drive.shape[2] > 1
    one = np.ones(1, h.dtype)[0]
    for item in prange(n_items(h, kb)):
        e, b0, hb, rows, zero = start_block(h, item, kb, False)
        b1 = b0 + hb.shape[0]
        pre = np.empty_like(hb)
        for t in range(n_steps):
            td = t if vary else 0
            np.dot(hb, wt[e], pre)
            for k in range(b1 - b0):
                for i in range(n):
                    pre[k, i] += drive[e, b0 + k, td, i]
            activate(pre, code, exact)
            for k in range(b1 - b0):
                for i in range(n):
                    hb[k, i] = (one - alpha) * hb[k, i] + alpha * pre[k, i]
            finish_rows(h, hb, noise, noise_std, out, e, b0, t, t0, every)
        store_block(h, hb, e, b0)


@njit(parallel=True, fastmath=True, cache=True, error_model="numpy")
def gru_gemm_kernel(wt, b_hh, drive, noise, noise_std, h, out, n_steps, t0, every, exact, kb):
    """GRU; ``wt`` = ``W_hh[e].T`` of shape (network, unit, 3 unit)."""
    n = h.shape[2]
    vary = drive.shape[2] > 1
    one = np.ones(1, h.dtype)[0]
    for item in prange(n_items(h, kb)):
        e, b0, hb, rows, zero = start_block(h, item, kb, False)
        b1 = b0 + hb.shape[0]
        gh = np.empty((b1 - b0, 3 * n), h.dtype)
        for t in range(n_steps):
            td = t if vary else 0
            np.dot(hb, wt[e], gh)
            for k in range(b1 - b0):
                for i in range(3 * n):
                    gh[k, i] += b_hh[e, i]
                for i in range(2 * n):
                    gh[k, i] += drive[e, b0 + k, td, i]
            if exact:  # branch outside the element loops keeps them vectorisable
                for k in range(b1 - b0):
                    for i in range(n):
                        r = sigmoid(gh[k, i], True)
                        z = sigmoid(gh[k, n + i], True)
                        c = np.tanh(drive[e, b0 + k, td, 2 * n + i] + r * gh[k, 2 * n + i])
                        hb[k, i] = (one - z) * c + z * hb[k, i]
            else:
                for k in range(b1 - b0):
                    for i in range(n):
                        r = sigmoid(gh[k, i], False)
                        z = sigmoid(gh[k, n + i], False)
                        c = tanh_rational(drive[e, b0 + k, td, 2 * n + i] + r * gh[k, 2 * n + i])
                        hb[k, i] = (one - z) * c + z * hb[k, i]
            finish_rows(h, hb, noise, noise_std, out, e, b0, t, t0, every)
        store_block(h, hb, e, b0)


@njit(parallel=True, fastmath=True, cache=True, error_model="numpy")
def pl_gemm_kernel(mt, drive, noise, noise_std, h, out, n_steps, t0, every, n_relu, kb):
    """PLRNN / ALRNN; ``mt`` = ``[A | W][e].T`` of shape (network, 2 latent, latent)."""
    n = h.shape[2]
    vary = drive.shape[2] > 1
    for item in prange(n_items(h, kb)):
        e, b0, hb, rows, zero = start_block(h, item, kb, False)
        b1 = b0 + hb.shape[0]
        x = np.empty((b1 - b0, 2 * n), h.dtype)
        for t in range(n_steps):
            td = t if vary else 0
            for k in range(b1 - b0):
                for i in range(n):
                    x[k, i] = hb[k, i]
                    x[k, n + i] = max(hb[k, i], zero) if i >= n - n_relu else hb[k, i]
            np.dot(x, mt[e], hb)
            for k in range(b1 - b0):
                for i in range(n):
                    hb[k, i] += drive[e, b0 + k, td, i]
            finish_rows(h, hb, noise, noise_std, out, e, b0, t, t0, every)
        store_block(h, hb, e, b0)


@njit(parallel=True, fastmath=True, cache=True, error_model="numpy")
def shallow_gemm_kernel(w2t, h2, w1t, a, drive, noise, noise_std, h, out, n_steps, t0, every, clipped, kb):
    """Shallow PLRNN; ``w2t`` = ``W2[e].T`` (network, latent, hidden), ``w1t`` = ``W1[e].T``."""
    n = h.shape[2]
    n_hid = w2t.shape[2]
    vary = drive.shape[2] > 1
    for item in prange(n_items(h, kb)):
        e, b0, hb, rows, zero = start_block(h, item, kb, False)
        b1 = b0 + hb.shape[0]
        hid = np.empty((b1 - b0, n_hid), h.dtype)
        pre = np.empty_like(hb)
        for t in range(n_steps):
            td = t if vary else 0
            np.dot(hb, w2t[e], hid)
            for k in range(b1 - b0):
                for j in range(n_hid):
                    v = hid[k, j]
                    r = max(v + h2[e, j], zero)
                    hid[k, j] = r - max(v, zero) if clipped else r
            np.dot(hid, w1t[e], pre)
            for k in range(b1 - b0):
                for i in range(n):
                    hb[k, i] = a[e, i] * hb[k, i] + pre[k, i] + drive[e, b0 + k, td, i]
            finish_rows(h, hb, noise, noise_std, out, e, b0, t, t0, every)
        store_block(h, hb, e, b0)
