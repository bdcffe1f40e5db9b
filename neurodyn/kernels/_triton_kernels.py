"""Triton kernels: the whole time loop in one launch, weights held on chip.

Grid ``(network, batch blocks)``. A program loads its network's (transposed, zero-padded) weight
tiles once, keeps a ``(BLOCK_B, BLOCK_N)`` block of states in registers, and runs every time step
with ``tl.dot`` in IEEE fp32 (no TF32, so results match the CPU reference to rounding). Padded
units have zero weights, so whatever they hold never reaches the real units. ``tanh`` is written
with the sigmoid (``2 sigmoid(2x) - 1``), which also runs under ``TRITON_INTERPRET=1``.

Tensor layouts are those of the Numba kernels: drive ``(network, batch, d_time, rows)`` with
``d_step`` 0 (constant) or 1, noise and records ``(network, batch, time, unit)``.
``leaky_tiled_kernel`` is the fallback when a weight matrix does not fit: states go through a
global ping-pong buffer and the product runs over ``BLOCK_N``-wide tiles every step.

``leaky_train_forward_kernel`` and ``leaky_train_backward_kernel`` are the leaky RNN's training pair
(forward storing states and ``alpha phi'(pre)``, then BPTT; optionally with error or teacher forcing
through the readout after every step), ``pl_train_forward_kernel`` and
``pl_train_backward_kernel`` the PLRNN's and ALRNN's (forward storing the states, then BPTT writing
the drive's gradient), ``gru_train_forward_kernel`` and ``gru_train_backward_kernel`` the GRU's
(forward storing the states and the gates ``(r, z, c, gh_n)``, then BPTT writing the gradients of the
input and hidden gate pre-activations), ``shallow_train_forward_kernel`` and
``shallow_train_backward_kernel`` the shallow PLRNN's under state forcing (forward storing the
predictions, forced states, hidden activations and ``W2 c``, then BPTT writing the gradients of the
predictions and of ``W2 c``); they use the time-major layouts of the Numba training kernels.
"""

from __future__ import annotations

import triton
import triton.language as tl

__all__ = ["gru_kernel", "gru_train_backward_kernel", "gru_train_forward_kernel", "leaky_kernel",
           "leaky_tiled_kernel", "leaky_train_backward_kernel", "leaky_train_forward_kernel", "pl_kernel",
           "pl_train_backward_kernel", "pl_train_forward_kernel", "shallow_kernel",
           "shallow_train_backward_kernel", "shallow_train_forward_kernel"]


@triton.jit
def _tanh(x):
    return 2.0 * tl.sigmoid(2.0 * x) - 1.0


@triton.jit
def _act(x, ACT: tl.constexpr):
    if ACT == 0:
        y = _tanh(x)
    elif ACT == 1:
        y = tl.maximum(x, 0.0)
    elif ACT == 2:
        y = tl.where(x > 20.0, x, tl.log(1.0 + tl.exp(tl.minimum(x, 20.0))))
    elif ACT == 3:
        y = tl.sigmoid(x)
    else:
        y = x
    return y


@triton.jit
def _load_t(ptr, rows, cols, n_rows, n_cols, stride):
    """Transposed tile: ``out[j, i] = M[i, j]`` of a row-major (n_rows, n_cols) matrix."""
    mask = (cols[:, None] < n_cols) & (rows[None, :] < n_rows)
    return tl.load(ptr + rows[None, :] * stride + cols[:, None], mask=mask, other=0.0)


@triton.jit
def _block(n_batch, n_unit, BLOCK_B: tl.constexpr, BLOCK_N: tl.constexpr):
    """This program's network ``e``, unit offsets ``rn`` (BLOCK_N,), flat state rows ``row``
    (BLOCK_B,) and the (BLOCK_B, BLOCK_N) mask of real trials and units."""
    e = tl.program_id(0)
    rb = tl.program_id(1) * BLOCK_B + tl.arange(0, BLOCK_B)
    rn = tl.arange(0, BLOCK_N)
    return e, rn, e * n_batch + rb, (rb[:, None] < n_batch) & (rn[None, :] < n_unit)


@triton.jit
def _tile(ptr, row, cols, width):
    """Pointers to the (rows, cols) tile of a row-major array with ``width`` columns."""
    return ptr + row[:, None] * width + cols[None, :]


@triton.jit
def _drive(d_ptr, row, cols, t, d_time, d_step, width, mask):
    """The drive tile of step ``t`` (``d_step`` 0: a constant drive); drive rows have ``width`` entries."""
    return tl.load(d_ptr + (row[:, None] * d_time + t * d_step) * width + cols[None, :], mask=mask, other=0.0)


@triton.jit
def _finish(h, noise_ptr, out_ptr, row, rn, m2, t, t0, n_steps, n_unit, every, n_rec, noise_std,
            HAS_NOISE: tl.constexpr, RECORD: tl.constexpr):
    if HAS_NOISE:
        xi = tl.load(noise_ptr + (row[:, None] * n_steps + t) * n_unit + rn[None, :], mask=m2, other=0.0)
        h = h + noise_std * xi
    if RECORD:
        step = t0 + t + 1
        if step % every == 0:
            r = step // every - 1 - t0 // every
            tl.store(out_ptr + (row[:, None] * n_rec + r) * n_unit + rn[None, :], h, mask=m2)
    return h


@triton.jit
def leaky_kernel(w_ptr, d_ptr, noise_ptr, h_ptr, out_ptr, n_batch, n_unit, n_steps, t0, every, n_rec,
                 d_time, d_step, alpha, noise_std, ACT: tl.constexpr, HAS_NOISE: tl.constexpr,
                 RECORD: tl.constexpr, BLOCK_B: tl.constexpr, BLOCK_N: tl.constexpr):
    e, rn, row, m2 = _block(n_batch, n_unit, BLOCK_B, BLOCK_N)
    wt = _load_t(w_ptr + e * n_unit * n_unit, rn, rn, n_unit, n_unit, n_unit)
    h = tl.load(_tile(h_ptr, row, rn, n_unit), mask=m2, other=0.0)
    for t in range(n_steps):
        d = _drive(d_ptr, row, rn, t, d_time, d_step, n_unit, m2)
        pre = tl.dot(h, wt, input_precision="ieee") + d
        h = (1.0 - alpha) * h + alpha * _act(pre, ACT)
        h = _finish(h, noise_ptr, out_ptr, row, rn, m2, t, t0, n_steps, n_unit, every, n_rec,
                    noise_std, HAS_NOISE, RECORD)
    tl.store(_tile(h_ptr, row, rn, n_unit), h, mask=m2)


@triton.jit
def _gru_weights(w_ptr, bh_ptr, e, rn, mn, n_unit):
    """Network ``e``'s ``W_hh`` blocks transposed (r, z, n; (unit, unit) each, padded to the tile) and
    ``b_hh`` blocks ((1, unit) each), for ``h @ W.T`` products."""
    base = w_ptr + e * 3 * n_unit * n_unit
    wr = _load_t(base, rn, rn, n_unit, n_unit, n_unit)
    wz = _load_t(base + n_unit * n_unit, rn, rn, n_unit, n_unit, n_unit)
    wn = _load_t(base + 2 * n_unit * n_unit, rn, rn, n_unit, n_unit, n_unit)
    bb = bh_ptr + e * 3 * n_unit
    br = tl.load(bb + rn, mask=mn, other=0.0)[None, :]
    bz = tl.load(bb + n_unit + rn, mask=mn, other=0.0)[None, :]
    bn = tl.load(bb + 2 * n_unit + rn, mask=mn, other=0.0)[None, :]
    return wr, wz, wn, br, bz, bn


@triton.jit
def gru_kernel(w_ptr, bh_ptr, d_ptr, noise_ptr, h_ptr, out_ptr, n_batch, n_unit, n_steps, t0, every,
               n_rec, d_time, d_step, noise_std, HAS_NOISE: tl.constexpr, RECORD: tl.constexpr,
               BLOCK_B: tl.constexpr, BLOCK_N: tl.constexpr):
    e, rn, row, m2 = _block(n_batch, n_unit, BLOCK_B, BLOCK_N)
    mn = rn < n_unit
    wr, wz, wn, br, bz, bn = _gru_weights(w_ptr, bh_ptr, e, rn, mn, n_unit)
    h = tl.load(_tile(h_ptr, row, rn, n_unit), mask=m2, other=0.0)
    for t in range(n_steps):
        r = tl.sigmoid(_drive(d_ptr, row, rn, t, d_time, d_step, 3 * n_unit, m2)
                       + tl.dot(h, wr, input_precision="ieee") + br)
        z = tl.sigmoid(_drive(d_ptr + n_unit, row, rn, t, d_time, d_step, 3 * n_unit, m2)
                       + tl.dot(h, wz, input_precision="ieee") + bz)
        gn = tl.dot(h, wn, input_precision="ieee") + bn
        c = _tanh(_drive(d_ptr + 2 * n_unit, row, rn, t, d_time, d_step, 3 * n_unit, m2) + r * gn)
        h = (1.0 - z) * c + z * h
        h = _finish(h, noise_ptr, out_ptr, row, rn, m2, t, t0, n_steps, n_unit, every, n_rec,
                    noise_std, HAS_NOISE, RECORD)
    tl.store(_tile(h_ptr, row, rn, n_unit), h, mask=m2)


@triton.jit
def pl_kernel(a_ptr, w_ptr, d_ptr, noise_ptr, h_ptr, out_ptr, n_batch, n_unit, n_steps, t0, every,
              n_rec, d_time, d_step, n_relu, noise_std, HAS_NOISE: tl.constexpr, RECORD: tl.constexpr,
              BLOCK_B: tl.constexpr, BLOCK_N: tl.constexpr):
    """PLRNN / ALRNN: ``z' = A z + W phi*(z) + d`` with ReLU on the last ``n_relu`` units."""
    e, rn, row, m2 = _block(n_batch, n_unit, BLOCK_B, BLOCK_N)
    at = _load_t(a_ptr + e * n_unit * n_unit, rn, rn, n_unit, n_unit, n_unit)
    wt = _load_t(w_ptr + e * n_unit * n_unit, rn, rn, n_unit, n_unit, n_unit)
    relu_unit = (rn >= n_unit - n_relu)[None, :]
    h = tl.load(_tile(h_ptr, row, rn, n_unit), mask=m2, other=0.0)
    for t in range(n_steps):
        d = _drive(d_ptr, row, rn, t, d_time, d_step, n_unit, m2)
        phi = tl.where(relu_unit, tl.maximum(h, 0.0), h)
        h = tl.dot(h, at, input_precision="ieee") + tl.dot(phi, wt, input_precision="ieee") + d
        h = _finish(h, noise_ptr, out_ptr, row, rn, m2, t, t0, n_steps, n_unit, every, n_rec,
                    noise_std, HAS_NOISE, RECORD)
    tl.store(_tile(h_ptr, row, rn, n_unit), h, mask=m2)


@triton.jit
def shallow_kernel(w2_ptr, h2_ptr, w1_ptr, a_ptr, d_ptr, noise_ptr, h_ptr, out_ptr, n_batch, n_unit,
                   n_hid, n_steps, t0, every, n_rec, d_time, d_step, noise_std, CLIPPED: tl.constexpr,
                   HAS_NOISE: tl.constexpr, RECORD: tl.constexpr, BLOCK_B: tl.constexpr,
                   BLOCK_N: tl.constexpr, BLOCK_L: tl.constexpr):
    """Shallow PLRNN ``z' = a z + W1 [relu(W2 z + h2) (- relu(W2 z))] + d``."""
    e, rn, row, m2 = _block(n_batch, n_unit, BLOCK_B, BLOCK_N)
    rl = tl.arange(0, BLOCK_L)
    w2t = _load_t(w2_ptr + e * n_hid * n_unit, rl, rn, n_hid, n_unit, n_unit)
    w1t = _load_t(w1_ptr + e * n_unit * n_hid, rn, rl, n_unit, n_hid, n_hid)
    h2 = tl.load(h2_ptr + e * n_hid + rl, mask=rl < n_hid, other=0.0)[None, :]
    a = tl.load(a_ptr + e * n_unit + rn, mask=rn < n_unit, other=0.0)[None, :]
    h = tl.load(_tile(h_ptr, row, rn, n_unit), mask=m2, other=0.0)
    for t in range(n_steps):
        d = _drive(d_ptr, row, rn, t, d_time, d_step, n_unit, m2)
        pre = tl.dot(h, w2t, input_precision="ieee")
        hid = tl.maximum(pre + h2, 0.0)
        if CLIPPED:
            hid = hid - tl.maximum(pre, 0.0)
        h = a * h + tl.dot(hid, w1t, input_precision="ieee") + d
        h = _finish(h, noise_ptr, out_ptr, row, rn, m2, t, t0, n_steps, n_unit, every, n_rec,
                    noise_std, HAS_NOISE, RECORD)
    tl.store(_tile(h_ptr, row, rn, n_unit), h, mask=m2)


@triton.jit
def leaky_tiled_kernel(w_ptr, d_ptr, noise_ptr, h_ptr, buf_ptr, out_ptr, n_batch, n_unit, n_steps, t0,
                       every, n_rec, d_time, d_step, alpha, noise_std, ACT: tl.constexpr,
                       HAS_NOISE: tl.constexpr, RECORD: tl.constexpr, BLOCK_B: tl.constexpr,
                       BLOCK_N: tl.constexpr):
    """Leaky RNN for weights too large to keep on chip; ``buf`` is a (2, network, batch, unit) scratch."""
    e = tl.program_id(0)
    rb = tl.program_id(1) * BLOCK_B + tl.arange(0, BLOCK_B)
    rt = tl.arange(0, BLOCK_N)
    row = e * n_batch + rb
    mb = rb[:, None] < n_batch
    plane = n_batch * tl.num_programs(0) * n_unit
    w_base = w_ptr + e * n_unit * n_unit
    for i0 in range(0, n_unit, BLOCK_N):
        ri = i0 + rt
        m2 = mb & (ri[None, :] < n_unit)
        tl.store(_tile(buf_ptr, row, ri, n_unit), tl.load(_tile(h_ptr, row, ri, n_unit), mask=m2, other=0.0),
                 mask=m2)
    tl.debug_barrier()
    for t in range(n_steps):
        src = buf_ptr + (t % 2) * plane
        dst = buf_ptr + ((t + 1) % 2) * plane
        for i0 in range(0, n_unit, BLOCK_N):
            ri = i0 + rt
            m2 = mb & (ri[None, :] < n_unit)
            acc = tl.zeros((BLOCK_B, BLOCK_N), dtype=tl.float32)
            for k0 in range(0, n_unit, BLOCK_N):
                rk = k0 + rt
                hk = tl.load(_tile(src, row, rk, n_unit), mask=mb & (rk[None, :] < n_unit), other=0.0)
                wt = tl.load(w_base + ri[None, :] * n_unit + rk[:, None],
                             mask=(rk[:, None] < n_unit) & (ri[None, :] < n_unit), other=0.0)
                acc += tl.dot(hk, wt, input_precision="ieee")
            d = _drive(d_ptr, row, ri, t, d_time, d_step, n_unit, m2)
            h_old = tl.load(_tile(src, row, ri, n_unit), mask=m2, other=0.0)
            h = (1.0 - alpha) * h_old + alpha * _act(acc + d, ACT)
            h = _finish(h, noise_ptr, out_ptr, row, ri, m2, t, t0, n_steps, n_unit, every, n_rec,
                        noise_std, HAS_NOISE, RECORD)
            tl.store(_tile(dst, row, ri, n_unit), h, mask=m2)
        tl.debug_barrier()
    fin = buf_ptr + (n_steps % 2) * plane
    for i0 in range(0, n_unit, BLOCK_N):
        ri = i0 + rt
        m2 = mb & (ri[None, :] < n_unit)
        tl.store(_tile(h_ptr, row, ri, n_unit), tl.load(_tile(fin, row, ri, n_unit), mask=m2, other=0.0),
                 mask=m2)


# ---- training: forwards storing what BPTT needs (leaky RNN, PLRNN / ALRNN, GRU), and their backwards ----
# Time-major layouts of the Numba training kernels: drive, noise, slopes and grad_pre
# (network, time, batch, unit), states (network, time + 1, batch, unit) with h0 first.


@triton.jit
def _act_slope(x, ACT: tl.constexpr):
    """``phi(x)`` and ``phi'(x)`` with torch autograd's conventions (``relu'(0) = 0``; softplus
    passes ``x > 20`` through with slope 1)."""
    if ACT == 0:
        y = _tanh(x)
        s = 1.0 - y * y
    elif ACT == 1:
        y = tl.maximum(x, 0.0)
        s = tl.where(x > 0.0, 1.0, 0.0)
    elif ACT == 2:
        y = tl.where(x > 20.0, x, tl.log(1.0 + tl.exp(tl.minimum(x, 20.0))))
        s = tl.where(x > 20.0, 1.0, tl.sigmoid(x))
    elif ACT == 3:
        y = tl.sigmoid(x)
        s = y * (1.0 - y)
    else:
        y = x
        s = x * 0.0 + 1.0
    return y, s


@triton.jit
def _slab(ptr, e, t, n_time, n_batch, rb, rn, n_unit):
    """Pointers to the (batch rows ``rb``, units ``rn``) tile of step ``t`` of network ``e`` in a
    time-major (network, n_time, batch, unit) array."""
    return ptr + ((e * n_time + t) * n_batch + rb[:, None]) * n_unit + rn[None, :]


@triton.jit
def _forcing_gain(mask_ptr, e, t, n_steps, n_batch, rb, ro, n_out, n_mask, strength):
    """Teacher forcing's ``c m`` (BLOCK_B,) of step ``t``: ``strength`` times the largest mask entry of
    each batch row; ``mask`` (network, time, batch, ``n_mask``) with ``n_mask`` 1 (shared) or ``n_out``."""
    mo = (rb[:, None] < n_batch) & (ro[None, :] < n_out)
    mk = tl.load(_slab(mask_ptr, e, t, n_steps, n_batch, rb, ro % n_mask, n_mask), mask=mo, other=0.0)
    return strength * tl.max(tl.where(ro[None, :] < n_out, mk, -float("inf")), axis=1)


@triton.jit
def _force(h, w_out_t, b_out, pinv_t, tgt_ptr, mask_ptr, e, t, n_steps, n_batch, rb, ro, n_out, n_mask,
           strength, FORCE: tl.constexpr):
    """The states ``h`` (BLOCK_B, BLOCK_N) of step ``t`` forced through the readout ``y = h @ w_out.T +
    b_out`` (``w_out_t`` (BLOCK_N, BLOCK_O), ``b_out`` (1, BLOCK_O), ``pinv_t`` (BLOCK_O, BLOCK_N) the
    transposed pseudo-inverse): ``FORCE`` 1 (error) ``h + (strength mask (target - y)) @ pinv_t``, 2
    (teacher) ``h + c m ((target - b_out) @ pinv_t - h)`` (:func:`_forcing_gain`); ``target``
    (network, time, batch, output), ``mask`` (network, time, batch, ``n_mask``)."""
    mo = (rb[:, None] < n_batch) & (ro[None, :] < n_out)
    target = tl.load(_slab(tgt_ptr, e, t, n_steps, n_batch, rb, ro, n_out), mask=mo, other=0.0)
    if FORCE == 1:
        mk = tl.load(_slab(mask_ptr, e, t, n_steps, n_batch, rb, ro % n_mask, n_mask), mask=mo, other=0.0)
        y = tl.dot(h, w_out_t, input_precision="ieee") + b_out
        h = h + tl.dot(strength * (mk * (target - y)), pinv_t, input_precision="ieee")
    else:
        m = _forcing_gain(mask_ptr, e, t, n_steps, n_batch, rb, ro, n_out, n_mask, strength)
        hhat = tl.dot(target - b_out, pinv_t, input_precision="ieee")
        h = h + m[:, None] * (hhat - h)
    return h


@triton.jit
def leaky_train_forward_kernel(w_ptr, d_ptr, noise_ptr, s_ptr, slope_ptr, free_ptr, w_out_ptr, b_out_ptr,
                               pinv_ptr, tgt_ptr, mask_ptr, n_batch, n_unit, n_steps, n_out, n_mask, alpha,
                               strength, ACT: tl.constexpr, HAS_NOISE: tl.constexpr, FORCE: tl.constexpr,
                               BLOCK_B: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_O: tl.constexpr):
    """``h[t+1] = (1 - alpha) h[t] + alpha phi(h[t] @ W.T + d[t]) + noise[t]``, storing every state in
    ``s`` (``s[:, 0]`` holds ``h0`` on entry) and ``slope[t] = alpha phi'(pre[t])``.

    With ``FORCE`` 1 (error) or 2 (teacher) each new state is stored in ``free[t]`` (network, time,
    batch, unit) and then forced through the readout (:func:`_force`; ``w_out`` (network, output,
    unit), ``b_out`` (network, output), ``pinv`` (network, unit, output), ``target`` and ``mask``
    time-major), the forced state carried on and stored in ``s``; with ``FORCE`` 0 none of these is read."""
    e = tl.program_id(0)
    rb = tl.program_id(1) * BLOCK_B + tl.arange(0, BLOCK_B)
    rn = tl.arange(0, BLOCK_N)
    ro = tl.arange(0, BLOCK_O)
    m2 = (rb[:, None] < n_batch) & (rn[None, :] < n_unit)
    wt = _load_t(w_ptr + e * n_unit * n_unit, rn, rn, n_unit, n_unit, n_unit)
    if FORCE != 0:
        w_out_t = _load_t(w_out_ptr + e * n_out * n_unit, ro, rn, n_out, n_unit, n_unit)
        pinv_t = _load_t(pinv_ptr + e * n_unit * n_out, rn, ro, n_unit, n_out, n_out)
        b_out = tl.load(b_out_ptr + e * n_out + ro, mask=ro < n_out, other=0.0)[None, :]
    h = tl.load(_slab(s_ptr, e, 0, n_steps + 1, n_batch, rb, rn, n_unit), mask=m2, other=0.0)
    for t in range(n_steps):
        d = tl.load(_slab(d_ptr, e, t, n_steps, n_batch, rb, rn, n_unit), mask=m2, other=0.0)
        y, s = _act_slope(tl.dot(h, wt, input_precision="ieee") + d, ACT)
        h = (1.0 - alpha) * h + alpha * y
        if HAS_NOISE:
            h += tl.load(_slab(noise_ptr, e, t, n_steps, n_batch, rb, rn, n_unit), mask=m2, other=0.0)
        tl.store(_slab(slope_ptr, e, t, n_steps, n_batch, rb, rn, n_unit), alpha * s, mask=m2)
        if FORCE != 0:
            tl.store(_slab(free_ptr, e, t, n_steps, n_batch, rb, rn, n_unit), h, mask=m2)
            h = _force(h, w_out_t, b_out, pinv_t, tgt_ptr, mask_ptr, e, t, n_steps, n_batch, rb, ro, n_out,
                       n_mask, strength, FORCE)
        tl.store(_slab(s_ptr, e, t + 1, n_steps + 1, n_batch, rb, rn, n_unit), h, mask=m2)


@triton.jit
def leaky_train_backward_kernel(w_ptr, gs_ptr, slope_ptr, s_ptr, gpre_ptr, gh_ptr, gw_ptr, mask_ptr, n_batch,
                                n_unit, n_steps, n_out, n_mask, alpha, strength, FORCE: tl.constexpr,
                                BLOCK_B: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_O: tl.constexpr):
    """BPTT of :func:`leaky_train_forward_kernel`, backwards in time: ``g = gs[t] + grad_h``,
    ``gpre[t] = slope[t] * g``, ``grad_h = (1 - alpha) g + gpre[t] @ W``; ``gh`` gets ``dL/dh0`` and
    ``gw[e, block]`` (network, batch blocks, unit, unit) this block's ``sum_t gpre[t].T @ h[t]``.

    Under forcing ``gs[t]`` is the gradient at the state before forcing and ``s`` holds the forced
    states; the carried ``grad_h`` passes the forcing step first: unchanged for error forcing (``FORCE``
    1, its correction detached), scaled by ``1 - c m`` per batch row (:func:`_forcing_gain`) for teacher
    forcing (``FORCE`` 2, the only case that reads ``mask``)."""
    e = tl.program_id(0)
    blk = tl.program_id(1)
    rb = blk * BLOCK_B + tl.arange(0, BLOCK_B)
    rn = tl.arange(0, BLOCK_N)
    ro = tl.arange(0, BLOCK_O)
    m2 = (rb[:, None] < n_batch) & (rn[None, :] < n_unit)
    mw = (rn[:, None] < n_unit) & (rn[None, :] < n_unit)
    w = tl.load(w_ptr + e * n_unit * n_unit + rn[:, None] * n_unit + rn[None, :], mask=mw, other=0.0)
    grad_h = tl.zeros((BLOCK_B, BLOCK_N), dtype=tl.float32)
    acc = tl.zeros((BLOCK_N, BLOCK_N), dtype=tl.float32)
    for k in range(n_steps):
        t = n_steps - 1 - k
        if FORCE == 2:
            m = _forcing_gain(mask_ptr, e, t, n_steps, n_batch, rb, ro, n_out, n_mask, strength)
            grad_h = grad_h - m[:, None] * grad_h
        g = tl.load(_slab(gs_ptr, e, t, n_steps, n_batch, rb, rn, n_unit), mask=m2, other=0.0) + grad_h
        gd = tl.load(_slab(slope_ptr, e, t, n_steps, n_batch, rb, rn, n_unit), mask=m2, other=0.0) * g
        tl.store(_slab(gpre_ptr, e, t, n_steps, n_batch, rb, rn, n_unit), gd, mask=m2)
        grad_h = (1.0 - alpha) * g + tl.dot(gd, w, input_precision="ieee")
        h = tl.load(_slab(s_ptr, e, t, n_steps + 1, n_batch, rb, rn, n_unit), mask=m2, other=0.0)
        acc += tl.dot(tl.trans(gd), h, input_precision="ieee")
    tl.store(_slab(gh_ptr, e, 0, 1, n_batch, rb, rn, n_unit), grad_h, mask=m2)
    n_blocks = tl.num_programs(1)
    tl.store(gw_ptr + ((e * n_blocks + blk) * n_unit + rn[:, None]) * n_unit + rn[None, :], acc, mask=mw)


@triton.jit
def pl_train_forward_kernel(a_ptr, w_ptr, d_ptr, noise_ptr, s_ptr, n_batch, n_unit, n_steps, n_relu,
                            HAS_NOISE: tl.constexpr, BLOCK_B: tl.constexpr, BLOCK_N: tl.constexpr):
    """PLRNN / ALRNN ``z[t+1] = z[t] @ A.T + phi*(z[t]) @ W.T + d[t] + noise[t]`` (``phi*`` the ReLU
    on the last ``n_relu`` units, the identity on the others), storing every state in ``s``
    (``s[:, 0]`` holds ``z0`` on entry); the states are all the backward needs."""
    e = tl.program_id(0)
    rb = tl.program_id(1) * BLOCK_B + tl.arange(0, BLOCK_B)
    rn = tl.arange(0, BLOCK_N)
    m2 = (rb[:, None] < n_batch) & (rn[None, :] < n_unit)
    at = _load_t(a_ptr + e * n_unit * n_unit, rn, rn, n_unit, n_unit, n_unit)
    wt = _load_t(w_ptr + e * n_unit * n_unit, rn, rn, n_unit, n_unit, n_unit)
    relu_unit = (rn >= n_unit - n_relu)[None, :]
    z = tl.load(_slab(s_ptr, e, 0, n_steps + 1, n_batch, rb, rn, n_unit), mask=m2, other=0.0)
    for t in range(n_steps):
        d = tl.load(_slab(d_ptr, e, t, n_steps, n_batch, rb, rn, n_unit), mask=m2, other=0.0)
        phi = tl.where(relu_unit, tl.maximum(z, 0.0), z)
        z = tl.dot(z, at, input_precision="ieee") + tl.dot(phi, wt, input_precision="ieee") + d
        if HAS_NOISE:
            z += tl.load(_slab(noise_ptr, e, t, n_steps, n_batch, rb, rn, n_unit), mask=m2, other=0.0)
        tl.store(_slab(s_ptr, e, t + 1, n_steps + 1, n_batch, rb, rn, n_unit), z, mask=m2)


@triton.jit
def pl_train_backward_kernel(a_ptr, w_ptr, gs_ptr, s_ptr, gd_ptr, gz_ptr, n_batch, n_unit, n_steps, n_relu,
                             BLOCK_B: tl.constexpr, BLOCK_N: tl.constexpr):
    """BPTT of :func:`pl_train_forward_kernel`, backwards in time: ``g = gs[t] + grad_z``,
    ``gd[t] = g`` (the gradient of the drive and of the pre-noise state ``z[t+1]``),
    ``grad_z = g @ A + (g @ W) * phi*'(z[t])`` with ``relu'(0) = 0``; ``gz`` gets ``dL/dz0``."""
    e = tl.program_id(0)
    rb = tl.program_id(1) * BLOCK_B + tl.arange(0, BLOCK_B)
    rn = tl.arange(0, BLOCK_N)
    m2 = (rb[:, None] < n_batch) & (rn[None, :] < n_unit)
    mw = (rn[:, None] < n_unit) & (rn[None, :] < n_unit)
    square = rn[:, None] * n_unit + rn[None, :]
    a = tl.load(a_ptr + e * n_unit * n_unit + square, mask=mw, other=0.0)
    w = tl.load(w_ptr + e * n_unit * n_unit + square, mask=mw, other=0.0)
    relu_unit = (rn >= n_unit - n_relu)[None, :]
    grad_z = tl.zeros((BLOCK_B, BLOCK_N), dtype=tl.float32)
    for k in range(n_steps):
        t = n_steps - 1 - k
        g = tl.load(_slab(gs_ptr, e, t, n_steps, n_batch, rb, rn, n_unit), mask=m2, other=0.0) + grad_z
        tl.store(_slab(gd_ptr, e, t, n_steps, n_batch, rb, rn, n_unit), g, mask=m2)
        z = tl.load(_slab(s_ptr, e, t, n_steps + 1, n_batch, rb, rn, n_unit), mask=m2, other=0.0)
        through = tl.dot(g, w, input_precision="ieee")
        grad_z = tl.dot(g, a, input_precision="ieee") + tl.where(relu_unit & (z <= 0.0), 0.0, through)
    tl.store(_slab(gz_ptr, e, 0, 1, n_batch, rb, rn, n_unit), grad_z, mask=m2)


@triton.jit
def gru_train_forward_kernel(w_ptr, bh_ptr, gi_ptr, noise_ptr, s_ptr, gate_ptr, n_batch, n_unit, n_steps,
                             HAS_NOISE: tl.constexpr, BLOCK_B: tl.constexpr, BLOCK_N: tl.constexpr):
    """GRU (gate order r, z, n as torch's ``GRUCell``): ``gh = h[t] @ W_hh.T + b_hh``,
    ``r = s(gi_r + gh_r)``, ``z = s(gi_z + gh_z)``, ``c = tanh(gi_n + r gh_n)``,
    ``h[t+1] = (1 - z) c + z h[t] + noise[t]``, storing every state in ``s`` (``s[:, 0]`` holds ``h0``
    on entry) and ``gate[t] = (r, z, c, gh_n)`` (network, time, batch, 4 unit); ``gi`` (network, time,
    batch, 3 unit) is the input drive ``W_ih u + b_ih``."""
    e = tl.program_id(0)
    rb = tl.program_id(1) * BLOCK_B + tl.arange(0, BLOCK_B)
    rn = tl.arange(0, BLOCK_N)
    mn = rn < n_unit
    m2 = (rb[:, None] < n_batch) & mn[None, :]
    wr, wz, wn, br, bz, bn = _gru_weights(w_ptr, bh_ptr, e, rn, mn, n_unit)
    h = tl.load(_slab(s_ptr, e, 0, n_steps + 1, n_batch, rb, rn, n_unit), mask=m2, other=0.0)
    for t in range(n_steps):
        gi = _slab(gi_ptr, e, t, n_steps, n_batch, rb, rn, 3 * n_unit)
        r = tl.sigmoid(tl.load(gi, mask=m2, other=0.0) + tl.dot(h, wr, input_precision="ieee") + br)
        z = tl.sigmoid(tl.load(gi + n_unit, mask=m2, other=0.0) + tl.dot(h, wz, input_precision="ieee") + bz)
        hn = tl.dot(h, wn, input_precision="ieee") + bn
        c = _tanh(tl.load(gi + 2 * n_unit, mask=m2, other=0.0) + r * hn)
        h = (1.0 - z) * c + z * h
        if HAS_NOISE:
            h += tl.load(_slab(noise_ptr, e, t, n_steps, n_batch, rb, rn, n_unit), mask=m2, other=0.0)
        gate = _slab(gate_ptr, e, t, n_steps, n_batch, rb, rn, 4 * n_unit)
        tl.store(gate, r, mask=m2)
        tl.store(gate + n_unit, z, mask=m2)
        tl.store(gate + 2 * n_unit, c, mask=m2)
        tl.store(gate + 3 * n_unit, hn, mask=m2)
        tl.store(_slab(s_ptr, e, t + 1, n_steps + 1, n_batch, rb, rn, n_unit), h, mask=m2)


@triton.jit
def gru_train_backward_kernel(w_ptr, gs_ptr, s_ptr, gate_ptr, ggi_ptr, ggh_ptr, gh0_ptr, n_batch, n_unit,
                              n_steps, BLOCK_B: tl.constexpr, BLOCK_N: tl.constexpr):
    """BPTT of :func:`gru_train_forward_kernel`, backwards in time: ``g = gs[t] + grad_h``,
    ``dx = g (1 - z)(1 - c^2)``, ``dr = dx gh_n r (1 - r)``, ``dz = g (h[t] - c) z (1 - z)``;
    ``ggi[t] = (dr, dz, dx)`` (the input drive's gradient), ``ggh[t] = (dr, dz, dx r)`` (that of
    ``h[t] @ W_hh.T + b_hh``), ``grad_h = g z + ggh[t] @ W_hh``; ``gh0`` gets ``dL/dh0``."""
    e = tl.program_id(0)
    rb = tl.program_id(1) * BLOCK_B + tl.arange(0, BLOCK_B)
    rn = tl.arange(0, BLOCK_N)
    m2 = (rb[:, None] < n_batch) & (rn[None, :] < n_unit)
    mw = (rn[:, None] < n_unit) & (rn[None, :] < n_unit)
    square = e * 3 * n_unit * n_unit + rn[:, None] * n_unit + rn[None, :]
    wr = tl.load(w_ptr + square, mask=mw, other=0.0)
    wz = tl.load(w_ptr + n_unit * n_unit + square, mask=mw, other=0.0)
    wn = tl.load(w_ptr + 2 * n_unit * n_unit + square, mask=mw, other=0.0)
    grad_h = tl.zeros((BLOCK_B, BLOCK_N), dtype=tl.float32)
    for k in range(n_steps):
        t = n_steps - 1 - k
        g = tl.load(_slab(gs_ptr, e, t, n_steps, n_batch, rb, rn, n_unit), mask=m2, other=0.0) + grad_h
        gate = _slab(gate_ptr, e, t, n_steps, n_batch, rb, rn, 4 * n_unit)
        r = tl.load(gate, mask=m2, other=0.0)
        z = tl.load(gate + n_unit, mask=m2, other=0.0)
        c = tl.load(gate + 2 * n_unit, mask=m2, other=0.0)
        hn = tl.load(gate + 3 * n_unit, mask=m2, other=0.0)
        h = tl.load(_slab(s_ptr, e, t, n_steps + 1, n_batch, rb, rn, n_unit), mask=m2, other=0.0)
        dx = g * (1.0 - z) * (1.0 - c * c)
        dr = dx * hn * r * (1.0 - r)
        dz = g * (h - c) * z * (1.0 - z)
        dn = dx * r
        ggi = _slab(ggi_ptr, e, t, n_steps, n_batch, rb, rn, 3 * n_unit)
        tl.store(ggi, dr, mask=m2)
        tl.store(ggi + n_unit, dz, mask=m2)
        tl.store(ggi + 2 * n_unit, dx, mask=m2)
        ggh = _slab(ggh_ptr, e, t, n_steps, n_batch, rb, rn, 3 * n_unit)
        tl.store(ggh, dr, mask=m2)
        tl.store(ggh + n_unit, dz, mask=m2)
        tl.store(ggh + 2 * n_unit, dn, mask=m2)
        grad_h = (g * z + tl.dot(dr, wr, input_precision="ieee") + tl.dot(dz, wz, input_precision="ieee")
                  + tl.dot(dn, wn, input_precision="ieee"))
    tl.store(_slab(gh0_ptr, e, 0, 1, n_batch, rb, rn, n_unit), grad_h, mask=m2)


@triton.jit
def shallow_train_forward_kernel(w2_ptr, h2_ptr, w1_ptr, a_ptr, d_ptr, y_ptr, al_ptr, mk_ptr, noise_ptr,
                                 c_ptr, p_ptr, act_ptr, pre_ptr, n_batch, n_unit, n_hid, n_steps,
                                 CLIPPED: tl.constexpr, HAS_NOISE: tl.constexpr, BLOCK_B: tl.constexpr,
                                 BLOCK_N: tl.constexpr, BLOCK_L: tl.constexpr):
    """(Clipped) shallow PLRNN under (generalised) teacher forcing: ``pre[t] = c[t] @ W2.T``,
    ``act[t] = relu(pre[t] + h2) [- relu(pre[t])]``, ``p[t] = a c[t] + act[t] @ W1.T + d[t]``,
    ``z = p[t] + noise[t]``, ``c[t+1] = z + alphas[t] mask (y[t] - z)``; stores the predictions
    ``p``, the carried states ``c`` (``c[:, 0]`` holds ``z0`` on entry), ``act`` and ``pre``
    (network, time, batch, hidden). ``alphas`` (time,) and ``mask`` (latent,) are shared."""
    e = tl.program_id(0)
    rb = tl.program_id(1) * BLOCK_B + tl.arange(0, BLOCK_B)
    rn = tl.arange(0, BLOCK_N)
    rl = tl.arange(0, BLOCK_L)
    mb = rb[:, None] < n_batch
    m2 = mb & (rn[None, :] < n_unit)
    mh = mb & (rl[None, :] < n_hid)
    w2t = _load_t(w2_ptr + e * n_hid * n_unit, rl, rn, n_hid, n_unit, n_unit)
    w1t = _load_t(w1_ptr + e * n_unit * n_hid, rn, rl, n_unit, n_hid, n_hid)
    h2 = tl.load(h2_ptr + e * n_hid + rl, mask=rl < n_hid, other=0.0)[None, :]
    a = tl.load(a_ptr + e * n_unit + rn, mask=rn < n_unit, other=0.0)[None, :]
    mk = tl.load(mk_ptr + rn, mask=rn < n_unit, other=0.0)[None, :]
    c = tl.load(_slab(c_ptr, e, 0, n_steps + 1, n_batch, rb, rn, n_unit), mask=m2, other=0.0)
    for t in range(n_steps):
        pre = tl.dot(c, w2t, input_precision="ieee")
        act = tl.maximum(pre + h2, 0.0)
        if CLIPPED:
            act = act - tl.maximum(pre, 0.0)
        tl.store(_slab(pre_ptr, e, t, n_steps, n_batch, rb, rl, n_hid), pre, mask=mh)
        tl.store(_slab(act_ptr, e, t, n_steps, n_batch, rb, rl, n_hid), act, mask=mh)
        d = tl.load(_slab(d_ptr, e, t, n_steps, n_batch, rb, rn, n_unit), mask=m2, other=0.0)
        p = tl.dot(act, w1t, input_precision="ieee") + (a * c + d)
        z = p
        if HAS_NOISE:
            z += tl.load(_slab(noise_ptr, e, t, n_steps, n_batch, rb, rn, n_unit), mask=m2, other=0.0)
        y = tl.load(_slab(y_ptr, e, t, n_steps, n_batch, rb, rn, n_unit), mask=m2, other=0.0)
        c = z + (tl.load(al_ptr + t) * mk) * (y - z)
        tl.store(_slab(p_ptr, e, t, n_steps, n_batch, rb, rn, n_unit), p, mask=m2)
        tl.store(_slab(c_ptr, e, t + 1, n_steps + 1, n_batch, rb, rn, n_unit), c, mask=m2)


@triton.jit
def shallow_train_backward_kernel(w2_ptr, h2_ptr, w1_ptr, a_ptr, al_ptr, mk_ptr, gp_in_ptr, pre_ptr, gp_ptr,
                                  gq_ptr, gh2_ptr, gz_ptr, n_batch, n_unit, n_hid, n_steps,
                                  CLIPPED: tl.constexpr, BLOCK_B: tl.constexpr, BLOCK_N: tl.constexpr,
                                  BLOCK_L: tl.constexpr):
    """BPTT of :func:`shallow_train_forward_kernel`, backwards in time: ``gp[t] = dL/dp[t] +
    (1 - alphas[t] mask) grad_c`` (also the drive's gradient), ``g = gp[t] @ W1``,
    ``gq[t] = g [pre + h2 > 0] [- g [pre > 0]]`` (the gradient of ``c[t] @ W2.T``),
    ``grad_c = a gp[t] + gq[t] @ W2``; ``gz`` gets ``dL/dz0`` and ``gh2`` (network, batch blocks,
    hidden) this block's ``sum_t sum_b g [pre + h2 > 0]`` (the ``h2`` gradient), ``relu'(0) = 0``."""
    e = tl.program_id(0)
    blk = tl.program_id(1)
    rb = blk * BLOCK_B + tl.arange(0, BLOCK_B)
    rn = tl.arange(0, BLOCK_N)
    rl = tl.arange(0, BLOCK_L)
    mb = rb[:, None] < n_batch
    m2 = mb & (rn[None, :] < n_unit)
    mh = mb & (rl[None, :] < n_hid)
    mw = (rl[:, None] < n_hid) & (rn[None, :] < n_unit)
    w2 = tl.load(w2_ptr + e * n_hid * n_unit + rl[:, None] * n_unit + rn[None, :], mask=mw, other=0.0)
    w1 = tl.load(w1_ptr + e * n_unit * n_hid + rn[:, None] * n_hid + rl[None, :],
                 mask=(rn[:, None] < n_unit) & (rl[None, :] < n_hid), other=0.0)
    h2 = tl.load(h2_ptr + e * n_hid + rl, mask=rl < n_hid, other=0.0)[None, :]
    a = tl.load(a_ptr + e * n_unit + rn, mask=rn < n_unit, other=0.0)[None, :]
    mk = tl.load(mk_ptr + rn, mask=rn < n_unit, other=0.0)[None, :]
    grad_c = tl.zeros((BLOCK_B, BLOCK_N), dtype=tl.float32)
    acc = tl.zeros((BLOCK_B, BLOCK_L), dtype=tl.float32)
    for k in range(n_steps):
        t = n_steps - 1 - k
        gp = (tl.load(_slab(gp_in_ptr, e, t, n_steps, n_batch, rb, rn, n_unit), mask=m2, other=0.0)
              + (1.0 - tl.load(al_ptr + t) * mk) * grad_c)
        tl.store(_slab(gp_ptr, e, t, n_steps, n_batch, rb, rn, n_unit), gp, mask=m2)
        g = tl.dot(gp, w1, input_precision="ieee")
        pre = tl.load(_slab(pre_ptr, e, t, n_steps, n_batch, rb, rl, n_hid), mask=mh, other=0.0)
        v = tl.where(pre + h2 > 0.0, g, 0.0)
        acc += v
        if CLIPPED:
            v = v - tl.where(pre > 0.0, g, 0.0)
        tl.store(_slab(gq_ptr, e, t, n_steps, n_batch, rb, rl, n_hid), v, mask=mh)
        grad_c = a * gp + tl.dot(v, w2, input_precision="ieee")
    tl.store(_slab(gz_ptr, e, 0, 1, n_batch, rb, rn, n_unit), grad_c, mask=m2)
    tl.store(gh2_ptr + (e * tl.num_programs(1) + blk) * n_hid + rl, tl.sum(acc, axis=0), mask=rl < n_hid)
