"""The ``torch.autograd.Function`` s behind :func:`neurodyn.kernels.fused_states` (time-major tensors)."""

from __future__ import annotations

import numpy as np
import torch

from neurodyn._threads import blas_threads, numba_threads
from neurodyn.kernels._workspace import empty


def leaky(params, h0, u, xi, forcing=None, outputs=False):
    """Leaky-RNN states (network, time, batch, unit) of ensemble params (tensor fields stacked over
    networks); ``h0`` (network, batch, unit), ``u`` (network, time, batch, input), ``xi`` noise
    (network, time, batch, unit) or None. The drive ``W_in u + b`` is formed inside the kernel.

    ``forcing`` (a :class:`~neurodyn.kernels.fused.ReadoutForcing` whose tensors have the leading
    network dim, targets and mask time-major) forces each state through the readout after the step;
    the states returned are then those before forcing. With ``outputs`` the readout
    ``states @ w_out.T + b_out`` (network, time, batch, output) of those states is formed inside the
    same loops and returned after the states, with gradients to ``w_out`` and ``b_out``."""
    from neurodyn.kernels._numba_math import ACTIVATION_CODES

    dtype = h0.dtype
    weights = (params.w_rec.to(dtype), params.w_in.to(dtype), params.b.to(dtype))
    readout = (params.w_out.to(dtype), params.b_out.to(dtype)) if outputs else (None, None)
    return _LeakyRecurrence.apply(*weights, u.to(dtype), h0, xi, float(params.alpha),
                                  ACTIVATION_CODES[params.activation], _forcing_arrays(forcing, dtype, False),
                                  *readout)


def leaky_triton(params, h0, u, xi, forcing=None):
    """:func:`leaky` with the time loop and its BPTT in Triton (float32, CUDA or ``TRITON_INTERPRET=1``),
    ``forcing`` (stacked as there) forced inside the kernels."""
    if forcing is not None:  # time-major copies once, for the forward and the backward launch
        forcing = forcing._replace(targets=forcing.targets.contiguous(), mask=forcing.mask.contiguous())
    weights = (params.w_rec.to(h0.dtype), params.w_in.to(h0.dtype), params.b.to(h0.dtype))
    return _LeakyRecurrenceTriton.apply(*weights, u.to(h0.dtype), h0, xi, float(params.alpha),
                                        params.activation, forcing)


def shallow(params, z0, u, xi, target, alphas, mask, readout=None):
    """Shallow-PLRNN predictions (time, batch, latent) under forcing (see ``fused_states``); with
    ensemble params every tensor but ``alphas`` and ``mask`` has a leading network dim. With
    ``readout`` (a :class:`~neurodyn.kernels.fused.ReadoutForcing` stacked as :func:`leaky` takes
    it: a leading network dim, of 1 for one network) each state is forced through the readout after
    the step (its noise and its state forcing) and the states before that forcing are returned."""
    from neurodyn.models.shplrnn import shplrnn_drive

    d = _drive(shplrnn_drive, params, u, z0).to(z0.dtype).expand(target.shape)
    p = [getattr(params, f).to(z0.dtype) for f in ("a", "W1", "W2", "h2")]
    arrays = _forcing_arrays(readout, z0.dtype, z0.ndim == 2)  # one network: no network dim
    return _ShallowForced.apply(*p, d, z0, xi, target, alphas, mask, bool(params.clipped), arrays)


def shallow_triton(params, z0, u, xi, target, alphas, mask):
    """:func:`shallow` with the time loop and its BPTT in Triton (float32, CUDA or ``TRITON_INTERPRET=1``);
    one network runs as a stack of one."""
    from neurodyn.models.shplrnn import shplrnn_drive

    d = _drive(shplrnn_drive, params, u, z0).to(z0.dtype).expand(target.shape)
    p = [getattr(params, f).to(z0.dtype) for f in ("a", "W1", "W2", "h2")]
    alphas, mask = alphas.to(z0.dtype).contiguous(), mask.to(z0.dtype).contiguous()
    return _as_stack(_ShallowForcedTriton.apply, (*p, d, z0, xi, target),
                     (alphas, mask, bool(params.clipped)), z0.ndim == 2)


def gru(params, h0, u, xi, forcing=None):
    """GRU states (time, batch, unit); ``h0`` (batch, unit), ``u`` (time, batch, input), ``xi``
    noise (time, batch, unit) or None; with ensemble params each has a leading network dim.

    ``forcing`` (a :class:`~neurodyn.kernels.fused.ReadoutForcing` stacked as :func:`leaky` takes it,
    with a network dim of 1 for one network) forces each state through the readout after the step;
    the states returned are then those before forcing."""
    from neurodyn.models.gru import gru_drive

    gi = _drive(gru_drive, params, u, h0).to(h0.dtype)
    gi = gi.expand(*h0.shape[:-2], u.shape[-3], h0.shape[-2], gi.shape[-1])
    return _GRURecurrence.apply(params.w_hh.to(h0.dtype), params.b_hh.to(h0.dtype), gi, h0, xi,
                                _forcing_arrays(forcing, h0.dtype, h0.ndim == 2))


def _forcing_arrays(forcing, dtype, one: bool):
    """A stacked :class:`~neurodyn.kernels.fused.ReadoutForcing` as the Numba kernels take it:
    ``(method code, strength, w_out, b_out, pinv_t, targets, mask)`` with NumPy arrays in ``dtype``
    (without the network dim for ``one`` network); None stays None."""
    from neurodyn.kernels._numba_bptt import ERROR_FORCING, TEACHER_FORCING

    if forcing is None:
        return None
    method = {"error": ERROR_FORCING, "teacher": TEACHER_FORCING}[forcing.method]
    fields = (forcing.w_out, forcing.b_out, forcing.pinv.mT, forcing.targets, forcing.mask)
    return (method, float(forcing.strength), *(_np((t[0] if one else t).to(dtype)) for t in fields))


def _no_forcing(lead: tuple, dt) -> tuple:
    """The forcing arguments of an unforced kernel call, as :func:`_forcing_arrays` gives them: the
    code for no forcing and empty arrays (with the ``lead`` dims) that the kernels do not read."""
    from neurodyn.kernels._numba_bptt import NO_FORCING

    none = np.empty((*lead, 0, 0), dt)
    return (NO_FORCING, 0.0, none, np.empty((*lead, 0), dt), none, np.empty((*lead, 0, 0, 0), dt),
            np.empty((*lead, 0, 0, 1), dt))


def gru_triton(params, h0, u, xi):
    """:func:`gru` with the time loop and its BPTT in Triton (float32, CUDA or ``TRITON_INTERPRET=1``);
    one network runs as a stack of one."""
    from neurodyn.models.gru import gru_drive

    gi = _drive(gru_drive, params, u, h0).to(h0.dtype)
    gi = gi.expand(*h0.shape[:-2], u.shape[-3], h0.shape[-2], gi.shape[-1])
    w, b = params.w_hh.to(h0.dtype), params.b_hh.to(h0.dtype)
    return _as_stack(_GRURecurrenceTriton.apply, (w, b, gi, h0, xi), (), h0.ndim == 2)


def piecewise(params, h0, u, xi, forcing=None, readout=None):
    """PLRNN or ALRNN states (time, batch, latent); shapes as in :func:`gru`. With ``forcing``
    ``(target, alphas, mask)`` (one network; ``target`` time-major, detached; ``u`` may then be None)
    the predictions under teacher forcing (see ``fused_states``). With ``readout`` (a
    :class:`~neurodyn.kernels.fused.ReadoutForcing` stacked as :func:`leaky` takes it: a leading
    network dim, of 1 for one network; ``u`` may then be None) each state is forced through the
    readout after the step and the states before forcing are returned."""
    if forcing is None and readout is None:
        return _PiecewiseRecurrence.apply(*_piecewise_args(params, h0, u), h0, xi, _n_relu(params, h0))
    if forcing is not None:
        a, w, d = _piecewise_args(params, h0, u, forcing[0].shape[-3])
        return _PiecewiseRecurrence.apply(a, w, d, h0, xi, _n_relu(params, h0), forcing)
    a, w, d = _piecewise_args(params, h0, u, readout.targets.shape[-3])
    # one network runs the batch-blocked kernel, without the network dim
    return _PiecewiseRecurrence.apply(a, w, d, h0, xi, _n_relu(params, h0), None,
                                      _forcing_arrays(readout, h0.dtype, h0.ndim == 2))


def piecewise_triton(params, h0, u, xi):
    """:func:`piecewise` with the time loop and its BPTT in Triton (float32, CUDA or
    ``TRITON_INTERPRET=1``); one network runs as a stack of one."""
    return _as_stack(_PiecewiseRecurrenceTriton.apply, (*_piecewise_args(params, h0, u), h0, xi),
                     (_n_relu(params, h0),), h0.ndim == 2)


def _as_stack(apply, tensors, rest, one: bool):
    """``apply(*tensors, *rest)`` of a Function that takes stacks of networks; for ``one`` network each
    of ``tensors`` (None stays None) gets a leading network dim of 1 and the output loses it again
    (by ``squeeze``, whose backward is a view, where indexing's fills a zero gradient to copy into)."""
    if not one:
        return apply(*tensors, *rest)
    return apply(*(None if t is None else t[None] for t in tensors), *rest).squeeze(0)


def _piecewise_args(params, h0, u, n_steps=None):
    """``A``, ``W`` and the drive ``h + C u`` ([network,] time, batch, latent; expanded) of a PLRNN /
    ALRNN rollout, in the dtype of ``h0``; ``n_steps`` defaults to that of ``u`` (needed without it)."""
    from neurodyn.models._pl_common import drive

    d = _drive(drive, params, u, h0).to(h0.dtype)
    d = d.expand(*h0.shape[:-2], u.shape[-3] if n_steps is None else n_steps, *h0.shape[-2:])
    return params.A.to(h0.dtype), params.W.to(h0.dtype), d


def _n_relu(params, h0) -> int:
    """The number of ReLU units (the last ones): the ALRNN's ``n_relu``, every unit of a PLRNN."""
    return int(getattr(params, "n_relu", h0.shape[-1]))


def _drive(fn, params, u, h0):
    """The input drive ``fn(params, u)`` (time, batch, drive) of one network, or of an ensemble
    (``h0`` (network, batch, state), ``u`` (network, time, batch, input)) as one batched product
    over all of a network's (time, batch) rows; without inputs, the bias alone, viewed so that it
    broadcasts against (network, time, batch, drive)."""
    if h0.ndim == 2:
        return fn(params, u)
    from neurodyn.kernels._families import family_of, lift

    if u is None:  # the bias alone (PL families forced through the readout, no inputs given)
        return fn(lift(params, family_of(params)), None)[:, None, None]
    n_net, n_steps, n_batch = u.shape[:3]
    d = fn(lift(params, family_of(params)), u.reshape(n_net, n_steps * n_batch, u.shape[-1]))
    return d.reshape(n_net, n_steps, n_batch, -1) if d.shape[-2] == n_steps * n_batch else d[:, None]


def _parallel(kernel, n_items: int, *args) -> None:
    """Run a parallel Numba kernel of ``n_items`` parallel items on at most that many threads (one
    network runs on one thread, with no team to wait for), with one BLAS thread per Numba thread
    (the kernels' per-step GEMMs are too small to share)."""
    with numba_threads(n_items), blas_threads(1):
        kernel(*args)


def _np(x: torch.Tensor) -> np.ndarray:
    """A contiguous NumPy view (or copy) of ``x``, detached."""
    return x.detach().contiguous().numpy()


class _LeakyRecurrence(torch.autograd.Function):
    """``(w_rec, w_in, b, u, h0, noise, alpha, code, forcing, w_out, b_out) -> states`` of a stack of
    networks: ``w_rec`` (network, unit, unit), ``w_in`` (network, unit, input), ``b`` (network, unit),
    ``u`` (network, time, batch, input), ``h0`` (network, batch, unit), ``noise`` (network, time,
    batch, unit) or None; ``forcing`` None or ``(method code, strength, w_out, b_out, pinv_t,
    targets, mask)`` with NumPy arrays as :func:`~neurodyn.kernels._numba_bptt.leaky_forward_stack`
    takes them (no gradient flows to them: the correction is detached). The loops run in
    :mod:`~neurodyn.kernels._numba_bptt`, one network per parallel item; under forcing the states
    returned are those before forcing and the forced ones are carried (and saved for the backward).
    With the readout ``w_out`` (network, output, unit) and ``b_out`` (network, output) the outputs
    ``states @ w_out.T + b_out`` (network, time, batch, output) are formed in the same loops and
    returned as well, ``(states, outputs)``, with gradients to both; a gradient that does not arrive
    (the states or outputs unused) is not materialised as zeros."""

    @staticmethod
    def forward(ctx, w_rec, w_in, b, u, h0, noise, alpha, code, forcing=None, w_out=None,  # type: ignore[override]
                b_out=None):
        from neurodyn.kernels._numba_bptt import NO_FORCING, leaky_forward_stack

        ctx.set_materialize_grads(False)
        dt = h0.detach().numpy().dtype.type
        n_net, n_steps, n_batch = u.shape[:3]
        n_unit = h0.shape[-1]
        w, w_in, b, u = (t.detach().contiguous() for t in (w_rec, w_in, b, u))
        states = empty("leaky.states", (n_net, n_steps + 1, n_batch, n_unit), h0.dtype)
        slopes = empty("leaky.slopes", (n_net, n_steps, n_batch, n_unit), h0.dtype)
        states[:, 0] = h0.detach()
        xi = _np(noise) if noise is not None else np.empty((n_net, 0, n_batch, n_unit), dt)
        method, strength, *arrays = _no_forcing((n_net,), dt) if forcing is None else forcing
        free = empty("leaky.free", (n_net, n_steps if method != NO_FORCING else 0, n_batch, n_unit), h0.dtype)
        with_y = w_out is not None
        ro_w, ro_b = (w_out.detach().contiguous(), b_out.detach().contiguous()) if with_y else \
            (h0.new_empty((n_net, 0, n_unit)), h0.new_empty((n_net, 0)))
        y = empty("leaky.outputs", (n_net, n_steps if with_y else 0, n_batch, ro_w.shape[1]), h0.dtype)
        _parallel(leaky_forward_stack, n_net, w.numpy(), _np(w_in.mT), b.numpy(), u.numpy(), xi,
                  states.numpy(), slopes.numpy(), dt(alpha), int(code), dt is np.float64, int(method),
                  dt(strength), *arrays, free.numpy(), ro_w.numpy(), ro_b.numpy(), y.numpy())
        ctx.save_for_backward(w, w_in, u, states, slopes, ro_w, free)
        seen = free if method != NO_FORCING else states[:, 1:]
        ctx.alpha, ctx.forcing, ctx.with_y = alpha, (int(method), dt(strength), arrays[-1]), with_y
        return (seen, y) if with_y else seen

    @staticmethod
    def backward(ctx, grad_states, grad_y=None):  # type: ignore[override]
        from neurodyn.kernels._numba_bptt import leaky_backward_stack

        w, w_in, u, states, slopes, ro_w, free = ctx.saved_tensors
        n_net, n_steps, n_batch = u.shape[:3]
        n_unit = w.shape[-1]
        dtype = w.dtype
        grad_h = empty("leaky.grad_h", states.shape[:1] + states.shape[2:], dtype, zero=True)
        grad_pre = empty("leaky.grad_pre", tuple(slopes.shape), dtype)
        grad_ro_w = torch.zeros(ro_w.shape, dtype=dtype)
        grad_ro_b = torch.zeros(ro_w.shape[:2], dtype=dtype)
        grad_w_int = torch.zeros((n_net, u.shape[-1], n_unit), dtype=dtype)
        grad_b = torch.zeros((n_net, n_unit), dtype=dtype)
        none = np.empty((n_net, 0, n_batch, n_unit), w.numpy().dtype)
        gs = none if grad_states is None else _np(grad_states)
        with_y = ctx.with_y and grad_y is not None
        gy = _np(grad_y) if with_y else np.empty((n_net, 0, n_batch, ro_w.shape[1]), gs.dtype)
        dt = w.numpy().dtype.type
        _parallel(leaky_backward_stack, n_net, _np(w.mT), gs, slopes.numpy(), grad_h.numpy(),
                  grad_pre.numpy(), dt(ctx.alpha), *ctx.forcing, gy, ro_w.numpy(), states.numpy(),
                  free.numpy(), grad_ro_w.numpy(), grad_ro_b.numpy(), u.numpy(), grad_w_int.numpy(),
                  grad_b.numpy())
        rows = grad_pre.reshape(n_net, n_steps * n_batch, n_unit)
        grad_u = grad_pre @ w_in.unsqueeze(1) if ctx.needs_input_grad[3] else None
        grad_w = rows.mT @ states[:, :-1].reshape(n_net, n_steps * n_batch, n_unit)
        readout = (grad_ro_w, grad_ro_b) if with_y else (None, None)
        return grad_w, grad_w_int.mT, grad_b, grad_u, grad_h, None, None, None, None, *readout


def _drive_grads(grad_pre: torch.Tensor, u: torch.Tensor, w_in: torch.Tensor, need_u: bool):
    """From the leaky RNN's pre-activation gradients (network, time, batch, unit) of the Triton kernels
    (the Numba backward sums the ``W_in`` and ``b`` gradients in its loop): those rows as
    (network, time * batch, unit) and the gradients of ``W_in``, ``b`` and the inputs (None unless
    ``need_u``), each one (batched) product over all steps; ``W_in``'s as ``(uᵀ grad_pre)ᵀ``, which
    torch's CPU GEMM ran 2-3x faster for few inputs."""
    n_net, n_steps, n_batch, n_unit = grad_pre.shape
    rows = grad_pre.reshape(n_net, n_steps * n_batch, n_unit)
    grad_w_in = (u.reshape(n_net, n_steps * n_batch, u.shape[-1]).mT @ rows).mT
    grad_u = grad_pre @ w_in.unsqueeze(1) if need_u else None
    return rows, grad_w_in, rows.sum(1), grad_u


class _LeakyRecurrenceTriton(torch.autograd.Function):
    """``(w_rec, w_in, b, u, h0, noise, alpha, activation, forcing) -> states`` as :class:`_LeakyRecurrence`
    (same shapes; ``forcing`` None or the stacked :class:`~neurodyn.kernels.fused.ReadoutForcing` of
    ``_stack_readout_forcing``, detached), with the loops in :mod:`~neurodyn.kernels._triton_kernels`.
    The input drive ``u @ W_in.T + b`` is one batched product in torch before the loop, and the ``W_in``,
    ``b`` and input gradients are products of the kernel's pre-activation gradients after it. Under
    forcing the states returned are those before forcing; the forced ones are carried and saved."""

    @staticmethod
    def forward(ctx, w_rec, w_in, b, u, h0, noise, alpha, activation, forcing=None):  # type: ignore[override]
        from neurodyn.kernels._triton_backend import leaky_train_forward

        n_net, n_steps, n_batch = u.shape[:3]
        w, w_in, u = (t.detach().contiguous() for t in (w_rec, w_in, u))
        drive = (u @ w_in.mT[:, None] + b.detach()[:, None, None, :]).contiguous()
        states = h0.new_empty((n_net, n_steps + 1, n_batch, h0.shape[-1]))
        slopes = torch.empty_like(drive)
        states[:, 0] = h0.detach()
        free = leaky_train_forward(w, drive, None if noise is None else noise.detach().contiguous(), states,
                                   slopes, alpha, activation, forcing)
        ctx.save_for_backward(w, w_in, u, states, slopes)
        ctx.alpha, ctx.forcing = alpha, forcing
        return states[:, 1:] if free is None else free

    @staticmethod
    def backward(ctx, grad_states):  # type: ignore[override]
        from neurodyn.kernels._triton_backend import leaky_train_backward

        w, w_in, u, states, slopes = ctx.saved_tensors
        grad_pre, grad_h0, grad_w = leaky_train_backward(w, grad_states.contiguous(), slopes, states,
                                                         ctx.alpha, ctx.forcing)
        _, grad_w_in, grad_b, grad_u = _drive_grads(grad_pre, u, w_in, ctx.needs_input_grad[3])
        return grad_w, grad_w_in, grad_b, grad_u, grad_h0, None, None, None, None


class _ShallowForced(torch.autograd.Function):
    """``(a, W1, W2, h2, drive, z0, noise, target, alphas, mask, clipped, readout) -> predictions``,
    time-major, with the loops in :mod:`~neurodyn.kernels._numba_bptt_plrnn`; with a leading network
    dim on every tensor but ``alphas`` and ``mask`` the stack runs one network per parallel item.
    ``readout`` None or ``(method code, strength, w_out, b_out, pinv_t, targets, mask)`` with NumPy
    arrays as :func:`~neurodyn.kernels._numba_bptt_plrnn.shallow_forced_forward` (one network) or its
    ``_stack`` takes them (no gradient flows to them): each state is forced through the readout after
    the step, the states before that forcing are returned and the forced ones carried (and saved)."""

    @staticmethod
    def forward(ctx, a, w1, w2, h2, drive, z0, noise, target, alphas, mask, clipped,  # type: ignore[override]
                readout=None):
        from neurodyn.kernels import _numba_bptt_plrnn as k
        from neurodyn.kernels._numba_bptt import NO_FORCING

        *lead, n_steps, n_batch, n = target.shape
        n_hid, dtype = w2.shape[-2], z0.dtype
        a, w1, w2 = a.detach().contiguous(), w1.detach().contiguous(), w2.detach().contiguous()
        carried = empty("shallow.carried", (*lead, n_steps + 1, n_batch, n), dtype)
        carried[..., 0, :, :] = z0.detach()
        preds = empty("shallow.preds", (*lead, n_steps, n_batch, n), dtype)
        acts = empty("shallow.acts", (*lead, n_steps, n_batch, n_hid), dtype)
        s1, s2 = (empty(f"shallow.{s}", (*lead, n_steps, n_batch, n_hid), torch.bool) for s in ("s1", "s2"))
        dt = carried.numpy().dtype
        xi = _np(noise) if noise is not None else np.empty((*lead, 0, n_batch, n), dt)
        method, strength, *arrays = _no_forcing(tuple(lead), dt) if readout is None else readout
        free = empty("shallow.free", (*lead, n_steps if method != NO_FORCING else 0, n_batch, n), dtype)
        args = (w1.numpy(), _np(w2.mT), _np(h2), a.numpy(), _np(drive), _np(target), _np(alphas), _np(mask),
                xi, carried.numpy(), preds.numpy(), acts.numpy(), s1.numpy(), s2.numpy(), clipped,
                int(method), dt.type(strength), *arrays, free.numpy())
        if lead:
            _parallel(k.shallow_forced_forward_stack, lead[0], *args)
        else:
            with blas_threads(1):  # the per-step GEMMs are too small to share
                k.shallow_forced_forward(*args)
        ctx.save_for_backward(a, w1, w2, alphas, mask, carried, acts, s1, s2)
        ctx.clipped, ctx.readout = clipped, (int(method), dt.type(strength), arrays[-1])
        return free if method != NO_FORCING else preds

    @staticmethod
    def backward(ctx, grad_preds):  # type: ignore[override]
        from neurodyn.kernels import _numba_bptt_plrnn as k

        a, w1, w2, alphas, mask, carried, acts, s1, s2 = ctx.saved_tensors
        *lead, n_steps, n_batch, n = grad_preds.shape
        n_hid = w2.shape[-2]
        grad_p = empty("shallow.grad_p", (*lead, n_steps, n_batch, n), a.dtype)
        grad_pre = empty("shallow.grad_pre", (*lead, n_steps, n_batch, n_hid), a.dtype)
        grad_h2 = torch.zeros((*lead, n_hid), dtype=a.dtype)
        grad_z0 = torch.zeros((*lead, n_batch, n), dtype=a.dtype)
        args = (w1.numpy(), _np(w2.mT), a.numpy(), alphas.numpy(), mask.numpy(), _np(grad_preds), s1.numpy(),
                s2.numpy(), grad_p.numpy(), grad_pre.numpy(), grad_h2.numpy(), grad_z0.numpy(), ctx.clipped,
                *ctx.readout)
        if lead:
            _parallel(k.shallow_forced_backward_stack, lead[0], *args)
        else:
            with blas_threads(1):
                k.shallow_forced_backward(*args)
        return (*_shallow_weight_grads(grad_p, grad_pre, carried, acts), grad_h2, grad_p, grad_z0,
                None, None, None, None, None, None)


def _shallow_weight_grads(grad_p: torch.Tensor, grad_pre: torch.Tensor, carried: torch.Tensor,
                          acts: torch.Tensor):
    """The ``a``, ``W1`` and ``W2`` gradients of shallow PLRNNs from the prediction gradients ``grad_p``
    ([network,] time, batch, latent), the ``W2 c`` gradients ``grad_pre`` ([network,] time, batch,
    hidden), the carried states ([network,] time + 1, batch, latent) and the hidden activations
    ([network,] time, batch, hidden), each one (batched) product over all steps and batch rows."""
    *lead, _, _, n = grad_p.shape
    n_hid = acts.shape[-1]
    c = carried[..., :-1, :, :]
    grad_a = (grad_p * c).sum((-3, -2))
    grad_w1 = grad_p.reshape(*lead, -1, n).mT @ acts.reshape(*lead, -1, n_hid)
    # (cᵀ grad_pre)ᵀ, not grad_preᵀ c: the same sums, but torch's float32 CPU GEMM of a
    # transposed (hidden, time * batch) left factor and a 10-column right one ran 10x slower
    grad_w2 = (c.reshape(*lead, -1, n).mT @ grad_pre.reshape(*lead, -1, n_hid)).mT
    return grad_a, grad_w1, grad_w2


#: batch rows per Numba thread of the GRU / PLRNN / ALRNN kernels: a batch of fewer rows runs on one
#: thread. On the shared 2-core machine under load, two threads were slower than one at batch 16-64
#: (the rollout table of ``benchmarks/bench_training.py``, ``fused_states_all_threads``).
ROWS_PER_THREAD = 128


def _blocks(n_batch: int) -> int:
    """The most threads a batch-blocked kernel gets: one per ``ROWS_PER_THREAD`` rows, at least one."""
    return max(1, n_batch // ROWS_PER_THREAD)


def _noise(noise, lead, n_batch, n, dtype):
    """The noise as a NumPy array, or an empty one (time 0, after the ``lead`` dims) when there is none."""
    return _np(noise) if noise is not None else np.empty((*lead, 0, n_batch, n), dtype)


def _batch_kernel(one, stack, lead, n_batch):
    """The kernel of a batch-blocked family and its number of parallel items: ``one`` over the
    batch blocks of one network, or ``stack`` over the networks of an ensemble (``lead`` = (network,))."""
    return (stack, lead[0]) if lead else (one, _blocks(n_batch))


class _GRURecurrence(torch.autograd.Function):
    """``(w_hh, b_hh, gi, h0, noise, forcing) -> states`` (time, batch, unit), ``gi`` = ``W_ih u + b_ih``
    (time, batch, 3 unit); the loops run in :mod:`~neurodyn.kernels._numba_bptt_gru`. With a
    leading network dim on every tensor the stack kernels run one network per parallel item.
    ``forcing`` None or ``(method code, strength, w_out, b_out, pinv_t, targets, mask)`` with NumPy
    arrays as the kernels take them (of :func:`_forcing_arrays`; no gradient flows to them): the
    states returned are then those before forcing, the forced ones carried and saved for the backward."""

    @staticmethod
    def forward(ctx, w_hh, b_hh, gi, h0, noise, forcing=None):  # type: ignore[override]
        from neurodyn.kernels import _numba_bptt_gru as k
        from neurodyn.kernels._numba_bptt import NO_FORCING

        *lead, n_steps, n_batch, n3 = gi.shape
        n = n3 // 3
        w = w_hh.detach().contiguous()
        states = empty("gru.states", (*lead, n_steps + 1, n_batch, n), h0.dtype)
        gates = empty("gru.gates", (*lead, n_steps, n_batch, 4 * n), h0.dtype)
        states[..., 0, :, :] = h0.detach()
        dt = states.numpy().dtype
        method, strength, *arrays = _no_forcing(tuple(lead), dt) if forcing is None else forcing
        free = empty("gru.free", (*lead, n_steps if method != NO_FORCING else 0, n_batch, n), h0.dtype)
        kernel, items = _batch_kernel(k.gru_forward_kernel, k.gru_forward_stack, lead, n_batch)
        _parallel(kernel, items, w.numpy(), _np(b_hh), _np(gi), _noise(noise, lead, n_batch, n, dt),
                  states.numpy(), gates.numpy(), dt == np.float64, int(method), dt.type(strength), *arrays,
                  free.numpy())
        ctx.save_for_backward(w, states, gates)
        ctx.forcing = (int(method), dt.type(strength), arrays[-1])
        return free if method != NO_FORCING else states[..., 1:, :, :]

    @staticmethod
    def backward(ctx, grad_states):  # type: ignore[override]
        from neurodyn.kernels import _numba_bptt_gru as k

        w, states, gates = ctx.saved_tensors
        *lead, n_steps, n_batch, n = grad_states.shape
        grad_gi = empty("gru.grad_gi", (*lead, n_steps, n_batch, 3 * n), w.dtype)
        grad_gh = empty("gru.grad_gh", (*lead, n_steps, n_batch, 3 * n), w.dtype)
        grad_h0 = torch.empty((*lead, n_batch, n), dtype=w.dtype)
        kernel, items = _batch_kernel(k.gru_backward_kernel, k.gru_backward_stack, lead, n_batch)
        _parallel(kernel, items, _np(w.mT), _np(grad_states), states.numpy(), gates.numpy(), grad_gi.numpy(),
                  grad_gh.numpy(), grad_h0.numpy(), *ctx.forcing)
        return (*_gru_weight_grads(grad_gh, states), grad_gi, grad_h0, None, None)


def _gru_weight_grads(grad_gh: torch.Tensor, states: torch.Tensor):
    """The ``W_hh`` and ``b_hh`` gradients of GRUs from the hidden-gate gradients ``grad_gh`` ([network,]
    time, batch, 3 unit) and the states ([network,] time + 1, batch, unit): one (batched) product and
    one sum over all steps and batch rows."""
    *lead, _, _, n3 = grad_gh.shape
    flat = grad_gh.reshape(*lead, -1, n3)
    return flat.mT @ states[..., :-1, :, :].reshape(*lead, -1, n3 // 3), flat.sum(-2)


class _GRURecurrenceTriton(torch.autograd.Function):
    """``(w_hh, b_hh, gi, h0, noise) -> states`` (network, time, batch, unit) as :class:`_GRURecurrence`
    with a leading network dim (one network: a stack of one), the loops in
    :mod:`~neurodyn.kernels._triton_kernels`; the ``W_hh`` and ``b_hh`` gradients are products of the
    kernel's hidden-gate gradients after it, as there."""

    @staticmethod
    def forward(ctx, w_hh, b_hh, gi, h0, noise):  # type: ignore[override]
        from neurodyn.kernels._triton_backend import gru_train_forward

        n_net, n_steps, n_batch, n3 = gi.shape
        n = n3 // 3
        w = w_hh.detach().contiguous()
        states = h0.new_empty((n_net, n_steps + 1, n_batch, n))
        gates = h0.new_empty((n_net, n_steps, n_batch, 4 * n))
        states[:, 0] = h0.detach()
        xi = None if noise is None else noise.detach().contiguous()
        gru_train_forward(w, b_hh.detach().contiguous(), gi.detach().contiguous(), xi, states, gates)
        ctx.save_for_backward(w, states, gates)
        return states[:, 1:]

    @staticmethod
    def backward(ctx, grad_states):  # type: ignore[override]
        from neurodyn.kernels._triton_backend import gru_train_backward

        w, states, gates = ctx.saved_tensors
        grad_gi, grad_gh, grad_h0 = gru_train_backward(w, grad_states.contiguous(), states, gates)
        return (*_gru_weight_grads(grad_gh, states), grad_gi, grad_h0, None)


class _PiecewiseRecurrence(torch.autograd.Function):
    """``(A, W, drive, z0, noise, n_relu, forcing, readout) -> states`` (time, batch, latent) of the PLRNN /
    ALRNN; the loops run in :mod:`~neurodyn.kernels._numba_bptt_plrnn`. With a leading network dim on
    every tensor the stack kernels run one network per parallel item. ``forcing`` None or
    ``(target, alphas, mask)`` (time-major target without grad, alphas (time,), mask (latent,); one
    network): the rollout is teacher-forced inside the kernels and the predictions before noise and
    forcing are returned, the forced states carried (and saved for the backward). ``readout`` None or
    ``(method code, strength, w_out, b_out, pinv_t, targets, mask)`` with NumPy arrays as
    :func:`~neurodyn.kernels._numba_bptt_plrnn.pl_forward_kernel` (one network) or ``pl_forward_stack``
    takes them (no gradient flows to them): each state is forced through the readout after the step,
    the states before forcing are returned and the forced ones carried (and saved)."""

    @staticmethod
    def forward(ctx, a, w, drive, z0, noise, n_relu, forcing=None, readout=None):  # type: ignore[override]
        from neurodyn.kernels import _numba_bptt_plrnn as k
        from neurodyn.kernels._numba_bptt import NO_FORCING

        *lead, n_steps, n_batch, n = drive.shape
        joined = torch.cat([a.detach(), w.detach()], dim=-1).contiguous()  # [A | W] (latent, 2 latent)
        states = empty("pl.states", (*lead, n_steps + 1, n_batch, n), z0.dtype)
        states[..., 0, :, :] = z0.detach()
        dt = states.numpy().dtype
        none = np.empty((*lead, 0, n_batch, n), dt)
        if forcing is None:
            target, alphas, mask, preds = none, np.empty(0, dt), np.empty(0, dt), None
        else:
            target, alphas, mask = (_np(t.to(z0.dtype)) for t in forcing)
            preds = empty("pl.preds", (*lead, n_steps, n_batch, n), z0.dtype)
        method, strength, *arrays = _no_forcing(tuple(lead), dt) if readout is None else readout
        free = empty("pl.free", (*lead, n_steps if method != NO_FORCING else 0, n_batch, n), z0.dtype)
        kernel, items = _batch_kernel(k.pl_forward_kernel, k.pl_forward_stack, lead, n_batch)
        _parallel(kernel, items, joined.numpy(), _np(drive), _noise(noise, lead, n_batch, n, dt),
                  states.numpy(), n_relu, target, alphas, mask, none if preds is None else preds.numpy(),
                  int(method), dt.type(strength), *arrays, free.numpy())
        ctx.save_for_backward(joined, states)
        ctx.n_relu, ctx.forcing = n_relu, (alphas, mask, int(method), dt.type(strength), arrays[-1])
        return free if method != NO_FORCING else states[..., 1:, :, :] if preds is None else preds

    @staticmethod
    def backward(ctx, grad_states):  # type: ignore[override]
        from neurodyn.kernels import _numba_bptt_plrnn as k

        joined, states = ctx.saved_tensors
        *lead, n_steps, n_batch, n = grad_states.shape
        grad_drive = empty("pl.grad_drive", (*lead, n_steps, n_batch, n), joined.dtype)
        grad_z0 = torch.empty((*lead, n_batch, n), dtype=joined.dtype)
        kernel, items = _batch_kernel(k.pl_backward_kernel, k.pl_backward_stack, lead, n_batch)
        _parallel(kernel, items, _np(joined.mT), _np(grad_states), states.numpy(), grad_drive.numpy(),
                  grad_z0.numpy(), ctx.n_relu, *ctx.forcing)
        return (*_pl_weight_grads(grad_drive, states, ctx.n_relu), grad_drive, grad_z0,
                None, None, None, None)


def _pl_weight_grads(grad_drive: torch.Tensor, states: torch.Tensor, n_relu: int):
    """The ``A`` and ``W`` gradients ``sum_t g[t].T z[t]`` and ``sum_t g[t].T phi*(z[t])`` of a PLRNN /
    ALRNN from the drive gradients ``g`` ([network,] time, batch, latent) and the states ([network,]
    time + 1, batch, latent), each one (batched) product over all steps and batch rows."""
    *lead, _, _, n = grad_drive.shape
    z = states[..., :-1, :, :].reshape(*lead, -1, n)
    n_lin = n - n_relu
    phi = torch.cat([z[..., :n_lin], z[..., n_lin:].clamp(min=0)], dim=-1)
    g = grad_drive.reshape(*lead, -1, n).mT
    return g @ z, g @ phi


class _PiecewiseRecurrenceTriton(torch.autograd.Function):
    """``(A, W, drive, z0, noise, n_relu) -> states`` (network, time, batch, latent) as
    :class:`_PiecewiseRecurrence` with a leading network dim (one network: a stack of one), the loops
    in :mod:`~neurodyn.kernels._triton_kernels`; the ``A`` and ``W`` gradients are products of the
    kernel's drive gradients after it, as there."""

    @staticmethod
    def forward(ctx, a, w, drive, z0, noise, n_relu):  # type: ignore[override]
        from neurodyn.kernels._triton_backend import pl_train_forward

        n_net, n_steps, n_batch, n = drive.shape
        a, w = a.detach().contiguous(), w.detach().contiguous()
        states = z0.new_empty((n_net, n_steps + 1, n_batch, n))
        states[:, 0] = z0.detach()
        xi = None if noise is None else noise.detach().contiguous()
        pl_train_forward(a, w, drive.detach().contiguous(), xi, states, n_relu)
        ctx.save_for_backward(a, w, states)
        ctx.n_relu = n_relu
        return states[:, 1:]

    @staticmethod
    def backward(ctx, grad_states):  # type: ignore[override]
        from neurodyn.kernels._triton_backend import pl_train_backward

        a, w, states = ctx.saved_tensors
        grad_drive, grad_z0 = pl_train_backward(a, w, grad_states.contiguous(), states, ctx.n_relu)
        return (*_pl_weight_grads(grad_drive, states, ctx.n_relu), grad_drive, grad_z0, None, None)


class _ShallowForcedTriton(torch.autograd.Function):
    """``(a, W1, W2, h2, drive, z0, noise, target, alphas, mask, clipped) -> predictions`` (network, time,
    batch, latent) as :class:`_ShallowForced` with a leading network dim (one network: a stack of one),
    the loops in :mod:`~neurodyn.kernels._triton_kernels`; the ``a``, ``W1`` and ``W2`` gradients are
    products of the kernel's prediction and ``W2 c`` gradients after it, as there."""

    @staticmethod
    def forward(ctx, a, w1, w2, h2, drive, z0, noise, target, alphas, mask, clipped):  # type: ignore[override]
        from neurodyn.kernels._triton_backend import shallow_train_forward

        n_net, n_steps, n_batch, n = target.shape
        a, w1, w2, h2 = (t.detach().contiguous() for t in (a, w1, w2, h2))
        carried = z0.new_empty((n_net, n_steps + 1, n_batch, n))
        carried[:, 0] = z0.detach()
        xi = None if noise is None else noise.detach().contiguous()
        alphas, mask = alphas.detach().contiguous(), mask.detach().contiguous()
        preds, acts, pre = shallow_train_forward(a, w1, w2, h2, drive.detach().contiguous(),
                                                 target.detach().contiguous(), alphas, mask, xi, carried,
                                                 clipped)
        ctx.save_for_backward(a, w1, w2, h2, alphas, mask, carried, acts, pre)
        ctx.clipped = clipped
        return preds

    @staticmethod
    def backward(ctx, grad_preds):  # type: ignore[override]
        from neurodyn.kernels._triton_backend import shallow_train_backward

        a, w1, w2, h2, alphas, mask, carried, acts, pre = ctx.saved_tensors
        grad_p, grad_pre, grad_h2, grad_z0 = shallow_train_backward(a, w1, w2, h2, alphas, mask,
                                                                    grad_preds.contiguous(), pre, ctx.clipped)
        return (*_shallow_weight_grads(grad_p, grad_pre, carried, acts), grad_h2, grad_p, grad_z0,
                None, None, None, None, None)
