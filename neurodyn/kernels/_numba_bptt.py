"""Numba kernels for training: the leaky RNN's time loop forward and its BPTT backward.

Arrays are time-major so that every step reads and writes one contiguous ``(batch, unit)``
slab: inputs ``(time, batch, input)``, noise and slopes ``(time, batch, unit)``, states
``(time + 1, batch, unit)`` with the initial state first. The per-network kernels are the bodies of
the ``*_stack`` kernels, which take a leading network dim and run one network per parallel item
(``prange``): each network's weights stay in cache for its whole time loop, and a single network is
a stack of one. Each step's recurrent product ``(batch, unit) @ (unit, unit)`` is one
single-threaded BLAS GEMM, or register-blocked for the smallest blocks
(:func:`recurrent_product`), and the input drive ``u[t] @ W_in.T + b`` is added in the same
step, so no (time, batch, unit) drive array is formed. The forward stores the states and
``alpha * phi'(pre)``, which is all the backward needs; the backward writes the gradient of
each step's pre-activation, from which the caller forms the weight, input-weight, bias and input
gradients over all steps as one GEMM each, outside the Numba threads (adding each step's share
inside the loop was 2-2.5x slower than one BLAS GEMM at 64 units, batch 64, 64 steps).

Forcing through the readout (error or teacher forcing, :mod:`neurodyn.training.forcing`) runs in the
same loops: after each step the forward records the state as it came out of the step (what the loss
sees) and carries the forced state on (:func:`force_states`); the backward scales the gradient
arriving at a forced state by the forcing's Jacobian (:func:`forcing_gain`: 1 for error forcing,
whose correction is detached, ``1 - c m`` for teacher forcing).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from neurodyn.kernels._numba_math import activate_with_slope
from neurodyn.kernels._numba_rnn import KB, matvec_block

__all__ = ["ERROR_FORCING", "NO_FORCING", "TEACHER_FORCING", "add_rows_axpy", "force_states",
           "forcing_gain", "leaky_backward_kernel", "leaky_backward_stack", "leaky_forward_kernel",
           "input_product", "leaky_forward_stack", "matmul_rows", "matmul_rows_axpy", "readout_rows",
           "readout_rows_backward", "recurrent_product", "transposed"]

#: the ``method`` codes of the leaky kernels: no forcing, error forcing, teacher forcing
NO_FORCING, ERROR_FORCING, TEACHER_FORCING = 0, 1, 2

#: a step's recurrent product runs as a BLAS GEMM when its block (batch × unit) has more entries
#: than this, else register-blocked (:func:`matmul_rows`); see :func:`recurrent_product`
BLAS_MIN_ELEMENTS = 128


@njit(fastmath=True, cache=True, error_model="numpy")
def add_rows_axpy(wt, x, out):
    """``out += x @ wt`` for ``x`` (rows, n) and ``wt`` (n, m) as ``n`` row updates per state.

    For a short inner dim ``n`` (a shallow PLRNN's latent size, about 10; a task's few inputs) the
    register-blocked :func:`matmul_rows` cannot fill its SIMD lanes; running the vector loop over
    the ``m`` outputs instead was 1.4-1.7x faster at n = 10, m = 50-200 (batch 64, measured in one
    process).
    """
    n_rows, n = x.shape
    m = wt.shape[1]
    for k in range(n_rows):
        for j in range(n):
            v = x[k, j]
            for i in range(m):
                out[k, i] += v * wt[j, i]


@njit(fastmath=True, cache=True, error_model="numpy")
def matmul_rows_axpy(wt, x, out):
    """``out = x @ wt`` (:func:`add_rows_axpy` into a zeroed ``out``)."""
    out[:] = 0
    add_rows_axpy(wt, x, out)


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


@njit(fastmath=True, cache=True, inline="always", error_model="numpy")
def recurrent_product(w, w_t, x, out, tail_in, tail_out):
    """``out = x @ w.T`` for one step's block ``x`` (batch, n) and ``w`` (m, n); ``w_t`` is ``w.T``
    as its own C-contiguous array (made once per time loop, see :func:`transposed`).

    Above ``BLAS_MIN_ELEMENTS`` entries in ``x`` the product is one BLAS GEMM of ``x`` and ``w_t``
    (SciPy's BLAS, called from Numba; the caller holds BLAS to one thread per Numba thread); a
    single-threaded GEMM ran 1.4-3.9x faster than the register-blocked loop at 32-128 units and
    batch 16-64, measured in one process. Both operands are C-contiguous: Numba's ``np.dot`` with
    the transposed view ``w.T`` instead took 1.8x as long (32 networks x 64 steps of
    ``(64, 64) @ (64, 64)`` in float32 on two threads: 9.3 against 5.1 ms). Smaller blocks (16
    units with at most 8 trials) stay register-blocked (:func:`matmul_rows`, with its scratch
    blocks ``tail_in`` and ``tail_out``), where the call overhead of a GEMM is larger than its work.
    """
    if x.shape[0] * x.shape[1] > BLAS_MIN_ELEMENTS:
        np.dot(x, w_t, out)
    else:
        matmul_rows(w, x, out, tail_in, tail_out)


@njit(fastmath=True, cache=True, inline="always", error_model="numpy")
def transposed(w):
    """``w.T`` (cols, rows) as a new C-contiguous array, the second operand of :func:`recurrent_product`."""
    return np.ascontiguousarray(w.T)


@njit(fastmath=True, cache=True, inline="always", error_model="numpy")
def input_product(wt, x, out):
    """``out = x @ wt`` for ``x`` (batch, n) and ``wt`` (n, m) with a short inner dim ``n`` (a
    shallow PLRNN's latents): one BLAS GEMM above ``BLAS_MIN_ELEMENTS`` entries in ``x`` (1.3-8x
    faster than :func:`matmul_rows_axpy` at 10 latents, 50-200 hidden units, batch 16-64, measured
    in one process), else :func:`matmul_rows_axpy`."""
    if x.shape[0] * x.shape[1] > BLAS_MIN_ELEMENTS:
        np.dot(x, wt, out)
    else:
        matmul_rows_axpy(wt, x, out)


@njit(fastmath=True, cache=True, error_model="numpy")
def leaky_forward_kernel(w, w_int, b, u, noise, states, slopes, alpha, code, exact, method, strength, w_out,
                        b_out, pinv_t, target, mask, free, ro_w, ro_b, y):
    """``h[t+1] = (1 - alpha) h[t] + alpha phi(h[t] @ w.T + u[t] @ w_int + b) + noise[t]`` for every step.

    ``w`` (unit, unit) is ``W_rec``, ``w_int`` (input, unit) is ``W_in.T`` and ``b`` (unit,) the
    bias, so the input drive is formed inside the step instead of as a (time, batch, unit) array;
    ``u`` (time, batch, input); ``states[0]`` holds ``h0`` on entry and ``states[1:]`` the new
    states on exit; ``slopes[t] = alpha phi'(pre[t])``; ``noise`` has time 0 when absent.

    With ``method`` :data:`ERROR_FORCING` or :data:`TEACHER_FORCING` each new state is copied to
    ``free[t]`` (time, batch, unit) and then forced in ``states[t + 1]`` by :func:`force_states`
    with ``strength``, the readout ``w_out`` (output, unit), ``b_out`` (output,), its transposed
    pseudo-inverse ``pinv_t`` (output, unit), ``target[t]`` (batch, output) and ``mask[t]`` (batch,
    output or 1); with :data:`NO_FORCING` these are not read (``free`` and ``target`` may have time 0).

    With ``y`` (time, batch, output) of more than 0 steps the readout ``y[t] = h[t+1] @ ro_w.T + ro_b``
    (``ro_w`` (output, unit), ``ro_b`` (output,)) of each new state (after its noise, before any
    forcing: the state ``free[t]`` holds) is formed in the step, while the state is in cache.
    """
    n_steps = u.shape[0]
    one = alpha - alpha + 1
    pre = np.empty_like(states[0])
    n_batch, n = pre.shape
    tail_in = np.empty((KB, n), pre.dtype)
    tail_out = np.empty((KB, n), pre.dtype)
    with_noise = noise.shape[0] > 0
    err = np.empty(w_out.shape[0], pre.dtype)
    delta = np.empty(n, pre.dtype)
    w_t = transposed(w)
    with_y = y.shape[0] > 0
    for t in range(n_steps):
        h = states[t]
        recurrent_product(w, w_t, h, pre, tail_in, tail_out)
        add_rows_axpy(w_int, u[t], pre)
        for k in range(n_batch):
            for i in range(n):
                pre[k, i] += b[i]
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
        if with_y:
            readout_rows(nxt, ro_w, ro_b, y[t])
        if method != NO_FORCING:
            free[t, :, :] = nxt
            force_states(nxt, w_out, b_out, pinv_t, target[t], mask[t], strength, method, err, delta)


@njit(fastmath=True, cache=True, error_model="numpy")
def leaky_backward_kernel(wt, grad_states, slopes, grad_h, grad_pre, alpha, method, strength, mask, grad_y,
                          ro_w, states, free, grad_ro_w, grad_ro_b, u, grad_w_int, grad_b):
    """BPTT of :func:`leaky_forward_kernel`: ``dL/dh0`` and the gradient of every pre-activation.

    ``grad_states[t]`` is ``dL/dh[t+1]`` from everything but the recurrence and the readout (time,
    batch, unit; time 0 when no such gradient arrives); ``wt`` is ``W_rec.T``. With ``grad_y``
    (time, batch, output) of more than 0 steps, the gradient of the readout ``y[t] = seen[t] @
    ro_w.T + ro_b`` that the forward formed, ``grad_y[t] @ ro_w`` joins ``grad_states[t]`` and
    ``grad_y[t].T @ seen[t]`` and ``grad_y[t]`` summed over the batch are added to ``grad_ro_w``
    (output, unit) and ``grad_ro_b`` (output,), both zero on entry; ``seen[t]`` is the state the
    readout saw: ``states[t + 1]`` (``states`` (time + 1, batch, unit) as the forward left them), or
    ``free[t]`` under forcing. Per step, backwards in
    time: ``g = (grad_states[t] + grad_y[t] @ ro_w) + grad_h``, ``grad_pre[t] = slopes[t] * g`` (the
    gradient of the step's pre-activation ``h[t] @ W_rec.T + u[t] @ W_in.T + b``), ``grad_h = (1 -
    alpha) g + grad_pre[t] @ W_rec``. ``grad_h`` (batch, unit) must be zero on entry and holds
    ``dL/dh0`` on exit; ``grad_pre`` (time, batch, unit) is written. The input-weight and bias
    gradients are summed here while each step's ``grad_pre[t]`` is in cache: ``grad_w_int`` (input,
    unit; ``W_in``'s gradient transposed) ``+= u[t].T @ grad_pre[t]`` with the inputs ``u`` (time,
    batch, input) and ``grad_b`` (unit,) ``+=`` its batch sum, both zero on entry (a task's few inputs:
    two passes over the whole ``grad_pre`` array saved). The recurrent weight and input gradients are
    products of ``grad_pre`` with the states and weights over all steps at once, which the caller
    forms as one GEMM each (at BLAS speed, 2-2.5x faster than adding each step's share here).

    Under forcing (``method``, ``strength`` and ``mask`` as in :func:`leaky_forward_kernel`)
    ``grad_states[t]`` is the gradient at the state before forcing, and the carried gradient
    passes the forcing step first: ``g = grad_states[t] + grad_h - forcing_gain(...) * grad_h``.
    """
    n_steps = grad_pre.shape[0]
    one = alpha - alpha + 1
    n_batch, n = grad_h.shape
    carry = np.empty_like(grad_h)
    ext = np.empty_like(grad_h)  # the step's gradient from outside the recurrence
    tail_in = np.empty((KB, n), carry.dtype)
    tail_out = np.empty((KB, n), carry.dtype)
    teacher, forced = method == TEACHER_FORCING, method != NO_FORCING
    with_states, with_y = grad_states.shape[0] > 0, grad_y.shape[0] > 0
    w = transposed(wt)
    for t in range(n_steps - 1, -1, -1):
        if with_states:
            ext[:, :] = grad_states[t]
        else:
            ext[:, :] = 0
        if with_y:
            seen = free[t] if forced else states[t + 1]
            readout_rows_backward(grad_y[t], ro_w, seen, ext, grad_ro_w, grad_ro_b)
        s = slopes[t]
        gd = grad_pre[t]
        ut = u[t]
        for k in range(n_batch):
            m = forcing_gain(mask[t, k], strength) if teacher else one - one
            for i in range(n):
                g = ext[k, i] + (grad_h[k, i] - m * grad_h[k, i])
                gd[k, i] = s[k, i] * g
                grad_h[k, i] = (one - alpha) * g
            for i in range(n):
                grad_b[i] += gd[k, i]
            for j in range(ut.shape[1]):
                v = ut[k, j]
                for i in range(n):
                    grad_w_int[j, i] += v * gd[k, i]
        recurrent_product(wt, w, gd, carry, tail_in, tail_out)
        for k in range(n_batch):
            for i in range(n):
                grad_h[k, i] += carry[k, i]


@njit(fastmath=True, cache=True, inline="always", error_model="numpy")
def readout_rows(h, w, b, out):
    """``out = h @ w.T + b`` for one step's states ``h`` (batch, unit), ``w`` (output, unit), ``b``
    (output,): a few outputs, each a dot product along the contiguous unit rows."""
    n_batch, n = h.shape
    for k in range(n_batch):
        for o in range(w.shape[0]):
            acc = b[o]
            for i in range(n):
                acc += h[k, i] * w[o, i]
            out[k, o] = acc


@njit(fastmath=True, cache=True, inline="always", error_model="numpy")
def readout_rows_backward(grad_y, w, h, grad_h, grad_w, grad_b):
    """The gradients of :func:`readout_rows` for one step: ``grad_h += grad_y @ w``, ``grad_w +=
    grad_y.T @ h`` and ``grad_b += grad_y`` summed over the batch (``grad_y`` (batch, output))."""
    n_batch, n = h.shape
    for k in range(n_batch):
        for o in range(w.shape[0]):
            v = grad_y[k, o]
            grad_b[o] += v
            for i in range(n):
                grad_h[k, i] += v * w[o, i]
                grad_w[o, i] += v * h[k, i]


@njit(parallel=True, fastmath=True, cache=True, error_model="numpy")
def leaky_forward_stack(w, w_int, b, u, noise, states, slopes, alpha, code, exact, method, strength, w_out,
                        b_out, pinv_t, target, mask, free, ro_w, ro_b, y):
    """:func:`leaky_forward_kernel` for every network of a stack, one network per parallel item.

    ``w`` (network, unit, unit); ``w_int`` (network, input, unit); ``b`` (network, unit); ``u``
    (network, time, batch, input); ``slopes`` (network, time, batch, unit); ``states``
    (network, time + 1, batch, unit); ``noise`` (network, time or 0, batch, unit); the forcing
    arrays with a leading network dim too: ``w_out`` (network, output, unit), ``b_out`` (network,
    output), ``pinv_t`` (network, output, unit), ``target`` (network, time or 0, batch, output),
    ``mask`` (network, time or 0, batch, output or 1), ``free`` (network, time or 0, batch, unit); the
    readout's ``ro_w`` (network, output, unit), ``ro_b`` (network, output) and ``y`` (network, time or 0,
    batch, output).
    """
    for e in prange(w.shape[0]):
        leaky_forward_kernel(w[e], w_int[e], b[e], u[e], noise[e], states[e], slopes[e], alpha, code, exact,
                             method, strength, w_out[e], b_out[e], pinv_t[e], target[e], mask[e], free[e],
                             ro_w[e], ro_b[e], y[e])


@njit(parallel=True, fastmath=True, cache=True, error_model="numpy")
def leaky_backward_stack(wt, grad_states, slopes, grad_h, grad_pre, alpha, method, strength, mask, grad_y,
                         ro_w, states, free, grad_ro_w, grad_ro_b, u, grad_w_int, grad_b):
    """:func:`leaky_backward_kernel` for every network, one per parallel item.

    Shapes as in :func:`leaky_forward_stack` with ``wt`` = ``W_rec.T`` (network, unit, unit);
    ``grad_h`` (network, batch, unit) zero on entry; ``grad_pre`` (network, time, batch, unit); the
    readout's ``grad_y`` (network, time or 0, batch, output), ``ro_w`` (network, output, unit),
    ``states`` (network, time + 1, batch, unit), ``free`` (network, time or 0, batch, unit),
    ``grad_ro_w`` (network, output, unit) and ``grad_ro_b``
    (network, output), the last two zero on entry; ``u`` (network, time, batch, input), ``grad_w_int``
    (network, input, unit) and ``grad_b`` (network, unit), the last two zero on entry.
    """
    for e in prange(wt.shape[0]):
        leaky_backward_kernel(wt[e], grad_states[e], slopes[e], grad_h[e], grad_pre[e], alpha, method,
                              strength, mask[e], grad_y[e], ro_w[e], states[e], free[e], grad_ro_w[e],
                              grad_ro_b[e], u[e], grad_w_int[e], grad_b[e])


@njit(fastmath=True, cache=True, error_model="numpy")
def force_states(h, w_out, b_out, pinv_t, target, mask, strength, method, err, delta):
    """Force the states ``h`` (batch, unit) in place through the readout ``y = h @ w_out.T + b_out``.

    :data:`ERROR_FORCING`: ``h += (strength * (mask * (target - y))) @ pinv_t``;
    :data:`TEACHER_FORCING`: ``h += m (hhat - h)`` with ``m`` = :func:`forcing_gain` and
    ``hhat = (target - b_out) @ pinv_t``, the two rules of
    :func:`neurodyn.training.forcing.forcing_step`. ``w_out`` (output, unit), ``b_out``
    (output,), ``pinv_t`` (output, unit) the transposed pseudo-inverse, ``target`` (batch,
    output), ``mask`` (batch, output) or (batch, 1); ``err`` (output,) and ``delta`` (unit,) are
    scratch. The unit loops run along contiguous rows (vectorised).
    """
    n_batch, n = h.shape
    n_out = target.shape[1]
    per_output = mask.shape[1] > 1
    zero = strength - strength
    teacher = method == TEACHER_FORCING
    for k in range(n_batch):
        for o in range(n_out):
            if teacher:
                err[o] = target[k, o] - b_out[o]
            else:
                y = zero
                for i in range(n):
                    y += h[k, i] * w_out[o, i]
                err[o] = strength * (mask[k, o if per_output else 0] * (target[k, o] - (y + b_out[o])))
        delta[:] = zero
        for o in range(n_out):
            e = err[o]
            for i in range(n):
                delta[i] += e * pinv_t[o, i]
        if teacher:
            m = forcing_gain(mask[k], strength)
            for i in range(n):
                h[k, i] = h[k, i] + m * (delta[i] - h[k, i])
        else:
            for i in range(n):
                h[k, i] += delta[i]


@njit(fastmath=True, cache=True, inline="always", error_model="numpy")
def forcing_gain(mask_row, strength):
    """Teacher forcing's ``c m`` of one batch row: ``strength`` times the largest entry of ``mask_row``
    (a step where any output counts is forced); the gradient through the state is ``1 - c m``."""
    m = mask_row[0]
    for o in range(1, mask_row.shape[0]):
        m = max(m, mask_row[o])
    return strength * m
