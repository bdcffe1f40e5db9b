"""Numba kernels for teacher-forced training of the shallow PLRNN: forward and BPTT backward.

Layout as in :mod:`~neurodyn.kernels.numba_bptt` (time-major, register-blocked products). One
step of the (clipped) shallow PLRNN (Hess et al., ICML 2023) followed by (generalised) teacher
forcing (Mikhaeil, Monfared & Durstewitz, NeurIPS 2022; Hess et al. 2023):

    p[t] = a * c[t] + W1 act[t] + d[t],   act[t] = relu(W2 c[t] + h2) [- relu(W2 c[t])]
    c[t+1] = z + f[t] * (target[t] - z),  z = p[t] + noise[t],  f[t] = alphas[t] * mask

``p`` are the predictions (what the loss sees), ``c`` the forced states carried on, ``c[0] = z0``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from neurodyn.kernels.numba_bptt import matmul_rows, matmul_rows_axpy
from neurodyn.kernels.numba_rnn import KB

__all__ = ["shallow_forced_backward", "shallow_forced_forward"]


@njit(fastmath=True, cache=True, error_model="numpy")
def shallow_forced_forward(w1, w2t, h2, a, drive, target, alphas, mask, noise, carried, preds, acts,
                           s1, s2, clipped):
    """Fill ``preds`` (time, batch, latent), ``carried[1:]``, ``acts`` and the ReLU slopes
    ``s1 = [W2 c + h2 > 0]``, ``s2 = [W2 c > 0]`` (time, batch, hidden); ``carried[0]`` is ``z0``;
    ``w1`` is ``W1`` (latent, hidden), ``w2t`` is ``W2.T`` (latent, hidden)."""
    n_steps, n_batch, n = preds.shape
    n_hid = w2t.shape[1]
    zero = a[0] - a[0]
    one = zero + 1
    pre = np.empty((n_batch, n_hid), a.dtype)
    tin_h = np.empty((KB, n_hid), a.dtype)
    tout_l = np.empty((KB, n), a.dtype)
    with_noise = noise.shape[0] > 0
    for t in range(n_steps):
        c = carried[t]
        matmul_rows_axpy(w2t, c, pre)  # inner dim: latent (short)
        act, u1, u2 = acts[t], s1[t], s2[t]
        for k in range(n_batch):
            for j in range(n_hid):
                v = pre[k, j]
                r = v + h2[j]
                u1[k, j] = one if r > zero else zero
                u2[k, j] = one if v > zero else zero
                act[k, j] = max(r, zero) - (max(v, zero) if clipped else zero)
        p = preds[t]
        matmul_rows(w1, act, p, tin_h, tout_l)
        nxt, d, y = carried[t + 1], drive[t], target[t]
        for k in range(n_batch):
            for i in range(n):
                p[k, i] += a[i] * c[k, i] + d[k, i]
                z = p[k, i] + noise[t, k, i] if with_noise else p[k, i]
                nxt[k, i] = z + (alphas[t] * mask[i]) * (y[k, i] - z)


@njit(fastmath=True, cache=True, error_model="numpy")
def shallow_forced_backward(w1, w2t, a, alphas, mask, grad_preds, s1, s2, grad_p, grad_pre, grad_h2,
                            grad_c, clipped):
    """BPTT of :func:`shallow_forced_forward`.

    Fills ``grad_p[t] = dL/dp[t]`` (also the drive's gradient), ``grad_pre[t] = dL/d(W2 c[t])``,
    adds ``dL/dh2`` to ``grad_h2`` and leaves ``dL/dz0`` in ``grad_c`` (zero on entry); ``w1`` is
    ``W1`` (latent, hidden), ``w2t`` is ``W2.T`` (latent, hidden).
    """
    n_steps, n_batch, n = grad_preds.shape
    n_hid = w1.shape[1]
    one = a[0] - a[0] + 1
    gact = np.empty((n_batch, n_hid), a.dtype)
    carry = np.empty((n_batch, n), a.dtype)
    tin_h = np.empty((KB, n_hid), a.dtype)
    tout_l = np.empty((KB, n), a.dtype)
    for t in range(n_steps - 1, -1, -1):
        gp, g = grad_p[t], grad_preds[t]
        for k in range(n_batch):
            for i in range(n):
                gp[k, i] = g[k, i] + (one - alphas[t] * mask[i]) * grad_c[k, i]
        matmul_rows_axpy(w1, gp, gact)  # inner dim: latent (short)
        gq, u1, u2 = grad_pre[t], s1[t], s2[t]
        for k in range(n_batch):
            for j in range(n_hid):
                v = gact[k, j] * u1[k, j]
                grad_h2[j] += v
                gq[k, j] = v - gact[k, j] * u2[k, j] if clipped else v
        matmul_rows(w2t, gq, carry, tin_h, tout_l)
        for k in range(n_batch):
            for i in range(n):
                grad_c[k, i] = a[i] * gp[k, i] + carry[k, i]
