"""Numba kernels for training the GRU: the time loop forward and its BPTT backward.

Time-major arrays as in :mod:`~neurodyn.kernels._numba_bptt`: the input drive
``gi[t] = W_ih u[t] + b_ih`` and its gradient (time, batch, 3 unit), states
``(time + 1, batch, unit)`` with the initial state first. The gate equations are those of
:func:`neurodyn.models.gru_step` (torch's ``GRUCell``, Cho et al. 2014), gate order (r, z, n)::

    gh = W_hh h + b_hh,  r = s(gi_r + gh_r),  z = s(gi_z + gh_z),  c = tanh(gi_n + r gh_n)
    h' = (1 - z) c + z h (+ noise)

Batch rows are independent through time, so one parallel item (``prange``) is one block of
``KB`` rows running the whole time loop, register-blocked as the rollout kernels of
:mod:`~neurodyn.kernels._numba_rnn` (each weight element loaded once serves ``KB`` rows). The
forward stores ``(r, z, c, gh_n)`` per step, all the backward needs; the backward leaves
``dL/dgi`` and ``dL/dgh`` per step, from which the weight and bias gradients are one product over
all steps each (formed in torch by the caller). The ``*_block`` functions are the bodies (one
block's whole time loop); the one-network kernels run the blocks as parallel items, the ``*_stack``
kernels take a leading network dim and run one network per parallel item, its blocks in turn, so
network ``e`` of a stack gets exactly what it gets alone. float32 uses the kernels' rational tanh and
sigmoid (:mod:`~neurodyn.kernels._numba_math`), float64 the exact ones.

Forcing through the readout (error or teacher forcing, :mod:`neurodyn.training.forcing`) runs in the
same loops, with the leaky kernels' :func:`~neurodyn.kernels._numba_bptt.force_states` and
:func:`~neurodyn.kernels._numba_bptt.forcing_gain`: ``method`` (``NO_FORCING``, ``ERROR_FORCING`` or
``TEACHER_FORCING``), ``strength``, the readout ``w_out`` (output, unit), ``b_out`` (output,), its
transposed pseudo-inverse ``pinv_t`` (output, unit), ``target`` (time, batch, output), ``mask``
(time, batch, output or 1) and ``free`` (time, batch, unit), each with a leading network dim in the
``*_stack`` kernels. Unforced, none of these is read (``free``, ``target`` and ``mask`` may have time 0).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from neurodyn.kernels._numba_bptt import NO_FORCING, TEACHER_FORCING, force_states, forcing_gain
from neurodyn.kernels._numba_math import sigmoid, tanh_rational
from neurodyn.kernels._numba_rnn import KB, batch_block, matvec_block, n_blocks

__all__ = ["gru_backward_block", "gru_backward_kernel", "gru_backward_stack", "gru_forward_block",
           "gru_forward_kernel", "gru_forward_stack"]


@njit(parallel=True, fastmath=True, cache=True, error_model="numpy")
def gru_forward_kernel(w_hh, b_hh, gi, noise, states, gates, exact, method, strength, w_out, b_out, pinv_t,
                       target, mask, free):
    """Fill ``states[1:]`` and ``gates`` (time, batch, 4 unit) = ``(r, z, c, gh_n)`` per step.

    ``w_hh`` (3 unit, unit), ``b_hh`` (3 unit,), ``gi`` (time, batch, 3 unit); ``states[0]``
    holds ``h0`` on entry; ``noise`` (time or 0, batch, unit) is added after each step. Under
    forcing (``method`` and the arrays after it, see the module docstring) each new state is copied
    to ``free[t]`` and then forced in ``states[t + 1]``, which the next step reads.
    """
    for blk in prange(n_blocks(gi.shape[1], KB)):
        gru_forward_block(w_hh, b_hh, gi, noise, states, gates, exact, blk, method, strength, w_out, b_out,
                          pinv_t, target, mask, free)


@njit(parallel=True, fastmath=True, cache=True, error_model="numpy")
def gru_forward_stack(w_hh, b_hh, gi, noise, states, gates, exact, method, strength, w_out, b_out, pinv_t,
                      target, mask, free):
    """:func:`gru_forward_kernel` for every network of a stack, one network per parallel item.

    Every array has a leading network dim: ``w_hh`` (network, 3 unit, unit), ``b_hh`` (network,
    3 unit), ``gi`` (network, time, batch, 3 unit), ``noise`` (network, time or 0, batch, unit),
    ``states`` (network, time + 1, batch, unit), ``gates`` (network, time, batch, 4 unit), the
    forcing arrays too (each network forced through its own readout). A network's blocks run one
    after the other on its thread, its weights staying in cache.
    """
    for e in prange(w_hh.shape[0]):
        for blk in range(n_blocks(gi.shape[2], KB)):
            gru_forward_block(w_hh[e], b_hh[e], gi[e], noise[e], states[e], gates[e], exact, blk, method,
                              strength, w_out[e], b_out[e], pinv_t[e], target[e], mask[e], free[e])


@njit(fastmath=True, cache=True, error_model="numpy")
def gru_forward_block(w_hh, b_hh, gi, noise, states, gates, exact, blk, method, strength, w_out, b_out,
                      pinv_t, target, mask, free):
    """The whole time loop of :func:`gru_forward_kernel` for batch block ``blk`` (``KB`` rows): under
    forcing, after each step (and its noise) the block's new states go to ``free[t]`` and are forced in
    ``states[t + 1]`` (:func:`~neurodyn.kernels._numba_bptt.force_states`), the forced ones carried."""
    n_steps, n_batch, n3 = gi.shape
    n = n3 // 3
    with_noise = noise.shape[0] > 0
    b0, nv, zero, one = batch_block(blk, n_batch, states)
    hb = np.empty((KB, n), states.dtype)
    gh = np.empty((KB, n3), states.dtype)
    err = np.empty(w_out.shape[0], states.dtype)
    delta = np.empty(n, states.dtype)
    for k in range(KB):
        hb[k, :] = states[0, b0 + min(k, nv - 1), :]
    for t in range(n_steps):
        matvec_block(w_hh, hb, gh, zero)
        for k in range(nv):
            row = b0 + k
            g_in, g_out, nxt = gi[t, row], gates[t, row], states[t + 1, row]
            for i in range(n):
                hn = gh[k, 2 * n + i] + b_hh[2 * n + i]
                r = sigmoid(g_in[i] + gh[k, i] + b_hh[i], exact)
                z = sigmoid(g_in[n + i] + gh[k, n + i] + b_hh[n + i], exact)
                x = g_in[2 * n + i] + r * hn
                c = math.tanh(x) if exact else tanh_rational(x)
                h = (one - z) * c + z * hb[k, i]
                if with_noise:
                    h += noise[t, row, i]
                g_out[i], g_out[n + i], g_out[2 * n + i], g_out[3 * n + i] = r, z, c, hn
                hb[k, i] = h
                nxt[i] = h
        if method != NO_FORCING:
            forced = states[t + 1, b0:b0 + nv]
            free[t, b0:b0 + nv] = forced
            force_states(forced, w_out, b_out, pinv_t, target[t, b0:b0 + nv], mask[t, b0:b0 + nv], strength,
                         method, err, delta)
            for k in range(nv):
                hb[k, :] = states[t + 1, b0 + k, :]
        for k in range(nv, KB):  # the tail block repeats its last row
            hb[k, :] = hb[nv - 1, :]


@njit(parallel=True, fastmath=True, cache=True, error_model="numpy")
def gru_backward_kernel(w_hh_t, grad_states, states, gates, grad_gi, grad_gh, grad_h0, method, strength,
                        mask):
    """BPTT of :func:`gru_forward_kernel`.

    ``w_hh_t`` is ``W_hh.T`` (unit, 3 unit); ``grad_states[t]`` is ``dL/dh[t+1]`` from everything
    but the recurrence (time, batch, unit). Fills ``grad_gi[t] = dL/dgi[t]`` and
    ``grad_gh[t] = dL/d(W_hh h[t] + b_hh)`` (time, batch, 3 unit) and ``grad_h0 = dL/dh0``
    (batch, unit). Per step, with ``g = dL/dh[t+1]``: ``dc = g (1 - z)``, ``dz = g (h - c)``,
    ``dx = dc (1 - c^2)``, ``dr = dx gh_n``; ``grad_gi = (dr r(1-r), dz z(1-z), dx)``,
    ``grad_gh = (dr r(1-r), dz z(1-z), dx r)``; ``dL/dh[t] = g z + grad_gh @ W_hh``.

    Under forcing (``method``, ``strength`` and ``mask`` as in :func:`gru_forward_kernel`)
    ``grad_states[t]`` is the gradient at the state before forcing and ``states`` holds the forced
    ones; the carried gradient passes the forcing step first, unchanged for error forcing and scaled
    by ``1 -`` :func:`~neurodyn.kernels._numba_bptt.forcing_gain` for teacher forcing.
    """
    for blk in prange(n_blocks(grad_states.shape[1], KB)):
        gru_backward_block(w_hh_t, grad_states, states, gates, grad_gi, grad_gh, grad_h0, blk, method,
                           strength, mask)


@njit(parallel=True, fastmath=True, cache=True, error_model="numpy")
def gru_backward_stack(w_hh_t, grad_states, states, gates, grad_gi, grad_gh, grad_h0, method, strength, mask):
    """:func:`gru_backward_kernel` for every network of a stack, one network per parallel item
    (shapes as in :func:`gru_forward_stack`, ``w_hh_t`` (network, unit, 3 unit), ``grad_h0``
    (network, batch, unit), ``mask`` (network, time or 0, batch, output or 1))."""
    for e in prange(w_hh_t.shape[0]):
        for blk in range(n_blocks(grad_states.shape[2], KB)):
            gru_backward_block(w_hh_t[e], grad_states[e], states[e], gates[e], grad_gi[e], grad_gh[e],
                               grad_h0[e], blk, method, strength, mask[e])


@njit(fastmath=True, cache=True, error_model="numpy")
def gru_backward_block(w_hh_t, grad_states, states, gates, grad_gi, grad_gh, grad_h0, blk, method, strength,
                       mask):
    """The whole backward time loop of :func:`gru_backward_kernel` for batch block ``blk``."""
    n_steps, n_batch, n = grad_states.shape
    b0, nv, zero, one = batch_block(blk, n_batch, states)
    g = np.zeros((KB, n), states.dtype)
    ggh = np.zeros((KB, 3 * n), states.dtype)
    back = np.empty((KB, n), states.dtype)
    teacher = method == TEACHER_FORCING
    for t in range(n_steps - 1, -1, -1):
        for k in range(nv):
            row = b0 + k
            gs, gt, h, gi_out, gh_out = (grad_states[t, row], gates[t, row], states[t, row],
                                         grad_gi[t, row], grad_gh[t, row])
            if teacher:  # the carried gradient through the forcing step (error forcing: unchanged)
                m = forcing_gain(mask[t, row], strength)
                for i in range(n):
                    g[k, i] = g[k, i] - m * g[k, i]
            for i in range(n):
                gk = g[k, i] + gs[i]
                r, z, c, hn = gt[i], gt[n + i], gt[2 * n + i], gt[3 * n + i]
                dx = gk * (one - z) * (one - c * c)
                dpr = dx * hn * r * (one - r)
                dpz = gk * (h[i] - c) * z * (one - z)
                gi_out[i], gi_out[n + i], gi_out[2 * n + i] = dpr, dpz, dx
                gh_out[i], gh_out[n + i], gh_out[2 * n + i] = dpr, dpz, dx * r
                ggh[k, i], ggh[k, n + i], ggh[k, 2 * n + i] = dpr, dpz, dx * r
                g[k, i] = gk * z
        matvec_block(w_hh_t, ggh, back, zero)
        for k in range(nv):
            for i in range(n):
                g[k, i] += back[k, i]
    for k in range(nv):
        grad_h0[b0 + k, :] = g[k, :]
