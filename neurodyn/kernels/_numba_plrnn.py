"""Numba kernels for the piecewise-linear family: PLRNN, ALRNN and (clipped) shallow PLRNN.

Same layout and blocking as :mod:`neurodyn.kernels._numba_rnn`. PLRNN and ALRNN share one kernel:
``z' = [A | W] [z; phi*(z)] + d_t`` with ``phi*`` the ReLU on the last ``n_relu`` units (all units
for the PLRNN), so one register-blocked product with the joined ``(latent, 2 latent)`` matrix
does both terms. The shallow PLRNN runs two products per step through its hidden layer.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from neurodyn.kernels._numba_rnn import KB, finish_block, matvec_block, n_items, start_block, store_block

__all__ = ["pl_kernel", "shallow_kernel"]


@njit(parallel=True, fastmath=True, cache=True, error_model="numpy")
def pl_kernel(m, drive, noise, noise_std, h, out, n_steps, t0, every, n_relu):
    """``z' = A z + W phi*(z) + d_t`` with ``m = [A | W]`` of shape (network, latent, 2 latent)."""
    n = h.shape[2]
    vary = drive.shape[2] > 1
    for item in prange(n_items(h, KB)):
        e, b0, hb, rows, zero = start_block(h, item, KB, True)
        x = np.empty((KB, 2 * n), h.dtype)
        pre = np.empty((KB, n), h.dtype)
        me = m[e]
        for t in range(n_steps):
            td = t if vary else 0
            for k in range(KB):
                for i in range(n):
                    x[k, i] = hb[k, i]
                    x[k, n + i] = max(hb[k, i], zero) if i >= n - n_relu else hb[k, i]
            matvec_block(me, x, pre, zero)
            for k in range(KB):
                for i in range(n):
                    hb[k, i] = pre[k, i] + drive[e, rows[k], td, i]
            finish_block(h, hb, noise, noise_std, out, e, b0, rows, t, t0, every)
        store_block(h, hb, e, b0)


@njit(parallel=True, fastmath=True, cache=True, error_model="numpy")
def shallow_kernel(w2, h2, w1, a, drive, noise, noise_std, h, out, n_steps, t0, every, clipped):
    """``z' = a z + W1 [relu(W2 z + h2) (- relu(W2 z))] + d_t``; ``w2`` (network, hidden, latent)."""
    n = h.shape[2]
    n_hid = w2.shape[1]
    vary = drive.shape[2] > 1
    for item in prange(n_items(h, KB)):
        e, b0, hb, rows, zero = start_block(h, item, KB, True)
        hid = np.empty((KB, n_hid), h.dtype)
        pre = np.empty((KB, n), h.dtype)
        w2e = w2[e]
        w1e = w1[e]
        for t in range(n_steps):
            td = t if vary else 0
            matvec_block(w2e, hb, hid, zero)
            for k in range(KB):
                for j in range(n_hid):
                    v = hid[k, j]
                    r = max(v + h2[e, j], zero)
                    hid[k, j] = r - max(v, zero) if clipped else r
            matvec_block(w1e, hid, pre, zero)
            for k in range(KB):
                for i in range(n):
                    hb[k, i] = a[e, i] * hb[k, i] + pre[k, i] + drive[e, rows[k], td, i]
            finish_block(h, hb, noise, noise_std, out, e, b0, rows, t, t0, every)
        store_block(h, hb, e, b0)
