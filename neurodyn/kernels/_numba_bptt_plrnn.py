"""Numba kernels for training the piecewise-linear family: forward and BPTT backward.

Layout as in :mod:`~neurodyn.kernels._numba_bptt` (time-major, register-blocked products).

PLRNN and ALRNN (:func:`pl_forward_kernel`, :func:`pl_backward_kernel`) share one kernel, as their
rollout kernel :func:`~neurodyn.kernels._numba_plrnn.pl_kernel` does: the step of
:func:`neurodyn.models.alrnn_step` (Brenner et al., NeurIPS 2024), ``z' = A z + W phi*(z) + d[t]``
with ``phi*`` the ReLU on the last ``n_relu`` units and the identity on the others; the PLRNN
(Durstewitz 2017; Koppe et al. 2019) is ``n_relu = latent``. One register-blocked product with the
joined matrix ``[A | W]`` (latent, 2 latent) does both terms forward, and one with its transpose
both terms of the adjoint; one parallel item is one block of ``KB`` batch rows running the whole
time loop (rows are independent through time). The states are all the backward needs. The
``*_block`` functions are the bodies (one block's time loop); the ``*_stack`` kernels take a leading
network dim and run one network per parallel item (its blocks in turn), as the shallow PLRNN's
``*_stack`` kernels do with its serial kernels, so network ``e`` of a stack gets what it gets alone.

The same kernels run the PLRNN / ALRNN under (generalised) teacher forcing, the rule written out
for the shallow PLRNN below with ``p[t] = A c[t] + W phi*(c[t]) + d[t]``: given forcing arrays
(``target`` (time, batch, latent), ``alphas`` (time,), ``mask`` (latent,), ``preds`` (time, batch,
latent)), the forward writes the predictions ``p[t]`` to ``preds`` and carries the forced states
``c[t+1]`` in ``states``; the backward passes ``dL/dc[t+1]`` through the forcing with the factor
``1 - alphas[t] mask``. Unforced, those arrays are empty (time 0), as the leaky kernels' forcing
arrays are.

They also force the state through the affine readout (error or teacher forcing during task
training, :mod:`neurodyn.training.forcing`) as the leaky kernels do: given ``method``
(:data:`~neurodyn.kernels._numba_bptt.ERROR_FORCING` or ``TEACHER_FORCING``), ``strength``, the
readout ``w_out`` (output, latent), ``b_out`` (output,), its transposed pseudo-inverse ``pinv_t``
(output, latent), ``rtarget`` (time, batch, output) and ``rmask`` (time, batch, output or 1), the
forward copies each new state (after its noise) to ``free[t]`` (time, batch, latent; what the loss
sees), forces the block's rows with :func:`~neurodyn.kernels._numba_bptt.force_states` and carries
the forced state in ``states[t+1]``; the backward passes the carried gradient through the forcing
unchanged (error forcing) or scaled by ``1 - forcing_gain(rmask[t, row])`` (teacher forcing). With
``method`` :data:`~neurodyn.kernels._numba_bptt.NO_FORCING` those arrays are not read (``free``,
``rtarget`` and ``rmask`` may have time 0).

One step of the (clipped) shallow PLRNN (Hess et al., ICML 2023) followed by (generalised) teacher
forcing (Mikhaeil, Monfared & Durstewitz, NeurIPS 2022; Hess et al. 2023):

    p[t] = a * c[t] + W1 act[t] + d[t],   act[t] = relu(W2 c[t] + h2) [- relu(W2 c[t])]
    c[t+1] = z + f[t] * (target[t] - z),  z = p[t] + noise[t],  f[t] = alphas[t] * mask

``p`` are the predictions (what the loss sees), ``c`` the forced states carried on, ``c[0] = z0``.
Forced through the readout instead (the same ``method`` to ``free`` arrays as the PL kernels, zero
``alphas``), ``free[t]`` gets ``z`` and ``c[t+1]`` is ``z`` forced by
:func:`~neurodyn.kernels._numba_bptt.force_states`, the whole batch at once (these kernels are not
batch-blocked); the backward scales the carried gradient by ``1 - forcing_gain(rmask[t, row])``
under teacher forcing and leaves it unchanged under error forcing.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from neurodyn.kernels._numba_bptt import (
    NO_FORCING,
    TEACHER_FORCING,
    force_states,
    forcing_gain,
    input_product,
    recurrent_product,
    transposed,
)
from neurodyn.kernels._numba_rnn import KB, batch_block, matvec_block, n_blocks

__all__ = ["pl_backward_block", "pl_backward_kernel", "pl_backward_stack", "pl_forward_block",
           "pl_forward_kernel", "pl_forward_stack", "shallow_forced_backward",
           "shallow_forced_backward_stack",
           "shallow_forced_forward", "shallow_forced_forward_stack"]


@njit(parallel=True, fastmath=True, cache=True, error_model="numpy")
def pl_forward_kernel(m, drive, noise, states, n_relu, target, alphas, mask, preds, method, strength, w_out,
                      b_out, pinv_t, rtarget, rmask, free):
    """Fill ``states[1:]`` (time + 1, batch, latent) with ``z' = [A | W] [z; phi*(z)] + d[t] + noise[t]``.

    ``m`` = ``[A | W]`` (latent, 2 latent); ``drive`` (time, batch, latent); ``states[0]`` holds
    ``z0`` on entry; ``noise`` (time or 0, batch, latent). With forcing (``alphas`` of time
    entries; see the module docstring) ``preds`` gets ``z' - noise[t]`` before forcing and
    ``states[t+1]`` the forced state; unforced, ``target``, ``alphas``, ``mask`` and ``preds`` are
    empty. ``method`` to ``free``: forcing through the readout (see the module docstring).
    """
    for blk in prange(n_blocks(drive.shape[1], KB)):
        pl_forward_block(m, drive, noise, states, n_relu, blk, target, alphas, mask, preds, method, strength,
                         w_out, b_out, pinv_t, rtarget, rmask, free)


@njit(parallel=True, fastmath=True, cache=True, error_model="numpy")
def pl_forward_stack(m, drive, noise, states, n_relu, target, alphas, mask, preds, method, strength, w_out,
                     b_out, pinv_t, rtarget, rmask, free):
    """:func:`pl_forward_kernel` for every network of a stack, one network per parallel item (its
    blocks in turn); every array but the shared ``alphas`` and ``mask`` has a leading network dim:
    ``m`` (network, latent, 2 latent), ``drive`` (network, time, batch, latent), ``noise`` (network,
    time or 0, batch, latent), ``states`` (network, time + 1, batch, latent), ``target`` and
    ``preds`` (network, time or 0, batch, latent); so do the readout-forcing arrays ``w_out`` to
    ``free`` (each network forced through its own readout, at the one ``strength``)."""
    for e in prange(m.shape[0]):
        for blk in range(n_blocks(drive.shape[2], KB)):
            pl_forward_block(m[e], drive[e], noise[e], states[e], n_relu, blk, target[e], alphas, mask,
                             preds[e], method, strength, w_out[e], b_out[e], pinv_t[e], rtarget[e], rmask[e],
                             free[e])


@njit(fastmath=True, cache=True, error_model="numpy")
def pl_forward_block(m, drive, noise, states, n_relu, blk, target, alphas, mask, preds, method, strength,
                     w_out, b_out, pinv_t, rtarget, rmask, free):
    """The whole time loop of :func:`pl_forward_kernel` for batch block ``blk`` (``KB`` rows)."""
    n_steps, n_batch, n = drive.shape
    with_noise = noise.shape[0] > 0
    forced = alphas.shape[0] > 0
    readout = method != NO_FORCING
    n_lin = n - n_relu
    b0, nv, zero, _ = batch_block(blk, n_batch, states)
    x = np.empty((KB, 2 * n), states.dtype)
    pre = np.empty((KB, n), states.dtype)
    err = np.empty(w_out.shape[0], states.dtype)
    delta = np.empty(n, states.dtype)
    for k in range(KB):
        x[k, :n] = states[0, b0 + min(k, nv - 1), :]
    for t in range(n_steps):
        for k in range(KB):
            for i in range(n):
                v = x[k, i]
                x[k, n + i] = v if i < n_lin else max(v, zero)
        matvec_block(m, x, pre, zero)
        for k in range(nv):
            row = b0 + k
            d, nxt = drive[t, row], states[t + 1, row]
            for i in range(n):
                v = pre[k, i] + d[i]
                if forced:
                    preds[t, row, i] = v
                if with_noise:
                    v += noise[t, row, i]
                if forced:
                    v += (alphas[t] * mask[i]) * (target[t, row, i] - v)
                nxt[i] = v
                x[k, i] = v
        if readout:  # the block's rows: the state the loss sees, then the forced one carried on
            rows = states[t + 1, b0:b0 + nv]
            free[t, b0:b0 + nv] = rows
            force_states(rows, w_out, b_out, pinv_t, rtarget[t, b0:b0 + nv], rmask[t, b0:b0 + nv], strength,
                         method, err, delta)
            x[:nv, :n] = rows
        for k in range(nv, KB):  # the tail block repeats its last row
            x[k, :n] = x[nv - 1, :n]


@njit(parallel=True, fastmath=True, cache=True, error_model="numpy")
def pl_backward_kernel(mt, grad_states, states, grad_drive, grad_z0, n_relu, alphas, mask, method, strength,
                       rmask):
    """BPTT of :func:`pl_forward_kernel`.

    ``mt`` = ``[A | W].T`` (2 latent, latent); ``grad_states[t]`` is ``dL/dz[t+1]`` from everything
    but the recurrence. Fills ``grad_drive[t] = dL/dz[t+1]`` (time, batch, latent; also the
    gradient of the pre-noise state) and ``grad_z0`` (batch, latent); per step backwards,
    ``dL/dz[t] = g A + (g W) * phi*'(z[t])`` with ``relu'(0) = 0`` as in torch. With forcing
    (``alphas`` (time,), ``mask`` (latent,); empty unforced) ``grad_states[t]`` is ``dL/dp[t]``,
    ``grad_drive[t]`` gets ``dL/dp[t] + (1 - alphas[t] mask) dL/dc[t+1]`` and ``states`` are the
    carried (forced) states. Under forcing through the readout (``method``, ``strength`` and
    ``rmask`` as in :func:`pl_forward_kernel`) ``grad_states[t]`` is the gradient at the state
    before forcing and the carried gradient passes the forcing step first, as in
    :func:`~neurodyn.kernels._numba_bptt.leaky_backward_kernel`.
    """
    for blk in prange(n_blocks(grad_states.shape[1], KB)):
        pl_backward_block(mt, grad_states, states, grad_drive, grad_z0, n_relu, blk, alphas, mask, method,
                          strength, rmask)


@njit(parallel=True, fastmath=True, cache=True, error_model="numpy")
def pl_backward_stack(mt, grad_states, states, grad_drive, grad_z0, n_relu, alphas, mask, method, strength,
                      rmask):
    """:func:`pl_backward_kernel` for every network of a stack, one network per parallel item
    (shapes as in :func:`pl_forward_stack`, ``mt`` (network, 2 latent, latent), ``grad_z0``
    (network, batch, latent); ``alphas`` and ``mask`` shared, ``rmask`` per network)."""
    for e in prange(mt.shape[0]):
        for blk in range(n_blocks(grad_states.shape[2], KB)):
            pl_backward_block(mt[e], grad_states[e], states[e], grad_drive[e], grad_z0[e], n_relu, blk,
                              alphas, mask, method, strength, rmask[e])


@njit(fastmath=True, cache=True, error_model="numpy")
def pl_backward_block(mt, grad_states, states, grad_drive, grad_z0, n_relu, blk, alphas, mask, method,
                      strength, rmask):
    """The whole backward time loop of :func:`pl_backward_kernel` for batch block ``blk``."""
    n_steps, n_batch, n = grad_states.shape
    n_lin = n - n_relu
    b0, nv, zero, one = batch_block(blk, n_batch, states)
    forced = alphas.shape[0] > 0
    teacher = method == TEACHER_FORCING
    g = np.zeros((KB, n), states.dtype)
    back = np.empty((KB, 2 * n), states.dtype)
    for t in range(n_steps - 1, -1, -1):
        if teacher:  # the carried gradient through teacher forcing's step: scaled by 1 - c m
            for k in range(nv):
                c = forcing_gain(rmask[t, b0 + k], strength)
                for i in range(n):
                    g[k, i] = g[k, i] - c * g[k, i]
        for k in range(nv):
            row = b0 + k
            gs, gd = grad_states[t, row], grad_drive[t, row]
            for i in range(n):
                v = (g[k, i] * (one - alphas[t] * mask[i]) if forced else g[k, i]) + gs[i]
                g[k, i] = v
                gd[i] = v
        matvec_block(mt, g, back, zero)
        for k in range(nv):
            z = states[t, b0 + k]
            for i in range(n):
                on = i < n_lin or z[i] > zero
                g[k, i] = back[k, i] + (back[k, n + i] if on else zero)
    for k in range(nv):
        grad_z0[b0 + k, :] = g[k, :]


@njit(fastmath=True, cache=True, error_model="numpy")
def shallow_forced_forward(w1, w2t, h2, a, drive, target, alphas, mask, noise, carried, preds, acts,
                           s1, s2, clipped, method, strength, w_out, b_out, pinv_t, rtarget, rmask, free):
    """Fill ``preds`` (time, batch, latent), ``carried[1:]``, ``acts`` and the ReLU slopes
    ``s1 = [W2 c + h2 > 0]``, ``s2 = [W2 c > 0]`` (time, batch, hidden; bool: a quarter of the
    memory traffic of float slopes); ``carried[0]`` is ``z0``;
    ``w1`` is ``W1`` (latent, hidden), ``w2t`` is ``W2.T`` (latent, hidden). ``method`` to ``free``:
    forcing through the readout (see the module docstring) after the step, its noise and its
    state forcing: ``free[t]`` gets the state before it, ``carried[t + 1]`` the forced one."""
    n_steps, n_batch, n = preds.shape
    n_hid = w2t.shape[1]
    zero = a[0] - a[0]
    pre = np.empty((n_batch, n_hid), a.dtype)
    tin_h = np.empty((KB, n_hid), a.dtype)
    tout_l = np.empty((KB, n), a.dtype)
    err = np.empty(w_out.shape[0], a.dtype)
    delta = np.empty(n, a.dtype)
    with_noise = noise.shape[0] > 0
    readout = method != NO_FORCING
    w1_t = transposed(w1)
    for t in range(n_steps):
        c = carried[t]
        input_product(w2t, c, pre)  # inner dim: latent (short)
        act, u1, u2 = acts[t], s1[t], s2[t]
        for k in range(n_batch):
            for j in range(n_hid):
                v = pre[k, j]
                r = v + h2[j]
                u1[k, j] = r > zero
                u2[k, j] = v > zero
                act[k, j] = max(r, zero) - (max(v, zero) if clipped else zero)
        p = preds[t]
        recurrent_product(w1, w1_t, act, p, tin_h, tout_l)
        nxt, d, y = carried[t + 1], drive[t], target[t]
        for k in range(n_batch):
            for i in range(n):
                p[k, i] += a[i] * c[k, i] + d[k, i]
                z = p[k, i] + noise[t, k, i] if with_noise else p[k, i]
                nxt[k, i] = z + (alphas[t] * mask[i]) * (y[k, i] - z)
        if readout:  # the state the loss sees, then the forced one carried on
            free[t] = nxt
            force_states(nxt, w_out, b_out, pinv_t, rtarget[t], rmask[t], strength, method, err, delta)


@njit(fastmath=True, cache=True, error_model="numpy")
def shallow_forced_backward(w1, w2t, a, alphas, mask, grad_preds, s1, s2, grad_p, grad_pre, grad_h2,
                            grad_c, clipped, method, strength, rmask):
    """BPTT of :func:`shallow_forced_forward`.

    Fills ``grad_p[t] = dL/dp[t]`` (also the drive's gradient), ``grad_pre[t] = dL/d(W2 c[t])``,
    adds ``dL/dh2`` to ``grad_h2`` and leaves ``dL/dz0`` in ``grad_c`` (zero on entry); ``w1`` is
    ``W1`` (latent, hidden), ``w2t`` is ``W2.T`` (latent, hidden). Under forcing through the
    readout (``method``, ``strength`` and ``rmask`` as in :func:`shallow_forced_forward`)
    ``grad_preds[t]`` is the gradient at the state before that forcing and the carried gradient
    passes the forcing step first: unchanged (error forcing) or scaled by
    ``1 - forcing_gain(rmask[t, row])`` (teacher forcing).
    """
    n_steps, n_batch, n = grad_preds.shape
    n_hid = w1.shape[1]
    zero = a[0] - a[0]
    one = zero + 1
    teacher = method == TEACHER_FORCING
    gact = np.empty((n_batch, n_hid), a.dtype)
    carry = np.empty((n_batch, n), a.dtype)
    tin_h = np.empty((KB, n_hid), a.dtype)
    tout_l = np.empty((KB, n), a.dtype)
    w2 = transposed(w2t)
    for t in range(n_steps - 1, -1, -1):
        gp, g = grad_p[t], grad_preds[t]
        if teacher:  # the carried gradient through teacher forcing's step: scaled by 1 - c m
            for k in range(n_batch):
                cm = forcing_gain(rmask[t, k], strength)
                for i in range(n):
                    grad_c[k, i] = grad_c[k, i] - cm * grad_c[k, i]
        for k in range(n_batch):
            for i in range(n):
                gp[k, i] = g[k, i] + (one - alphas[t] * mask[i]) * grad_c[k, i]
        input_product(w1, gp, gact)  # inner dim: latent (short)
        gq, u1, u2 = grad_pre[t], s1[t], s2[t]
        for k in range(n_batch):
            for j in range(n_hid):
                g = gact[k, j]
                v = g if u1[k, j] else zero
                grad_h2[j] += v
                gq[k, j] = v - (g if u2[k, j] else zero) if clipped else v
        recurrent_product(w2t, w2, gq, carry, tin_h, tout_l)
        for k in range(n_batch):
            for i in range(n):
                grad_c[k, i] = a[i] * gp[k, i] + carry[k, i]


@njit(parallel=True, fastmath=True, cache=True, error_model="numpy")
def shallow_forced_forward_stack(w1, w2t, h2, a, drive, target, alphas, mask, noise, carried, preds, acts,
                                 s1, s2, clipped, method, strength, w_out, b_out, pinv_t, rtarget, rmask,
                                 free):
    """:func:`shallow_forced_forward` for every network of a stack, one network per parallel item.

    Every array but the shared ``alphas`` (time,) and ``mask`` (latent,) has a leading network dim
    (``noise`` (network, time or 0, batch, latent)); so do the readout-forcing arrays ``w_out`` to
    ``free`` (each network forced through its own readout, at the one ``strength``).
    """
    for e in prange(w1.shape[0]):
        shallow_forced_forward(w1[e], w2t[e], h2[e], a[e], drive[e], target[e], alphas, mask, noise[e],
                               carried[e], preds[e], acts[e], s1[e], s2[e], clipped, method, strength,
                               w_out[e], b_out[e], pinv_t[e], rtarget[e], rmask[e], free[e])


@njit(parallel=True, fastmath=True, cache=True, error_model="numpy")
def shallow_forced_backward_stack(w1, w2t, a, alphas, mask, grad_preds, s1, s2, grad_p, grad_pre, grad_h2,
                                  grad_c, clipped, method, strength, rmask):
    """:func:`shallow_forced_backward` for every network of a stack, one network per parallel item
    (shapes as in :func:`shallow_forced_forward_stack`, ``rmask`` per network)."""
    for e in prange(w1.shape[0]):
        shallow_forced_backward(w1[e], w2t[e], a[e], alphas, mask, grad_preds[e], s1[e], s2[e], grad_p[e],
                                grad_pre[e], grad_h2[e], grad_c[e], clipped, method, strength, rmask[e])
