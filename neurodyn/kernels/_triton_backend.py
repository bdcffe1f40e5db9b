"""Dispatch of one time chunk to the Triton kernels (imports Triton only when a kernel runs).

float32 only. Block sizes: ``BLOCK_N`` is the unit count rounded up to a power of two (at least
16, the smallest ``tl.dot`` tile); ``BLOCK_B`` and ``num_warps`` are autotuned on a GPU and fixed
to a single configuration under ``TRITON_INTERPRET=1``. A family's weights are *resident* (held
on chip for the whole loop) when their padded size is at most :data:`MAX_RESIDENT` elements;
larger leaky RNNs use the tiled kernel, larger networks of other families are not supported
(``backend="auto"`` then uses torch).

Training (:func:`leaky_train_forward`, :func:`leaky_train_backward`, :func:`pl_train_forward`,
:func:`pl_train_backward`, :func:`gru_train_forward`, :func:`gru_train_backward`,
:func:`shallow_train_forward`, :func:`shallow_train_backward`, used by the autograd Functions of
:mod:`~neurodyn.kernels._fused_autograd`): the leaky RNN (with or without error or teacher forcing
through its readout of at most :data:`FORCING_MAX_OUTPUTS` outputs), GRU, PLRNN and ALRNN up to
:data:`TRAIN_MAX_UNITS` units, the shallow PLRNN (state forcing included) up to that many latent and
hidden units (:func:`shallow_train_config`), ``BLOCK_B`` fixed to the forward
kernel's first configuration so that the backward can size its per-block weight-gradient buffer.
"""

from __future__ import annotations

import os
from functools import cache
from typing import Any

import torch

__all__ = ["FORCING_MAX_OUTPUTS", "KERNELS", "gru_train_backward", "gru_train_forward", "interpreting",
           "leaky_train_backward", "leaky_train_forward", "pl_train_backward", "pl_train_forward",
           "shallow_train_backward", "shallow_train_forward", "supports", "train_supports"]

MAX_RESIDENT = 8192  # fp32 weight elements kept on chip per program (32 KiB)
TILED_BLOCK_N = 64
#: the training kernels keep W_rec (and its gradient), A and W, or the GRU's three W_hh blocks on chip:
#: BLOCK_N <= 64 (sm_90 compiles without spills, tests/kernels/test_kernels_triton_aot.py)
TRAIN_MAX_UNITS = 64
#: outputs of a readout the leaky training kernels force through (its weights and pseudo-inverse held on
#: chip beside W_rec): BLOCK_O <= 32 compiles without spills at 64 units, teacher forcing at 64 spilled
FORCING_MAX_OUTPUTS = 32
#: families the Triton training kernels cover, and the recurrent weight whose last dim is the unit count
_TRAIN_UNITS = {"leaky": "w_rec", "gru": "w_hh", "plrnn": "A", "alrnn": "A", "shplrnn": "W2"}
#: (BLOCK_B, num_warps) autotune candidates per BLOCK_N; chosen from sm_90 ahead-of-time compiles
#: without register spills (see tests/test_kernels_triton_aot.py); "tiled" is the fallback kernel
CONFIGS = {16: ((16, 4), (32, 4)), 32: ((16, 4), (32, 8)), 64: ((16, 8),),
           "tiled": ((16, 8),)}
_ACT = {"tanh": 0, "relu": 1, "softplus": 2, "sigmoid": 3, "linear": 4}
_KERNELS = ("leaky_kernel", "gru_kernel", "pl_kernel", "shallow_kernel", "leaky_tiled_kernel")


def interpreting() -> bool:
    """True when Triton runs kernels in its CPU interpreter (``TRITON_INTERPRET=1``).

    Examples
    --------
    >>> import os
    >>> from neurodyn.kernels._triton_backend import interpreting
    >>> interpreting() == (os.environ.get("TRITON_INTERPRET", "0") == "1")
    True
    """
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


def _pow2(n: int) -> int:
    return max(16, 1 << (max(int(n), 1) - 1).bit_length())


def _resident_pl(p: Any) -> int:
    return 2 * _pow2(p.A.shape[-1]) ** 2


#: padded weight elements one program keeps on chip, per family with a resident kernel
_RESIDENT = {
    "leaky": lambda p: _pow2(p.w_rec.shape[-1]) ** 2,
    "gru": lambda p: 3 * _pow2(p.w_hh.shape[-1]) ** 2,
    "plrnn": _resident_pl,
    "alrnn": _resident_pl,
    "shplrnn": lambda p: 2 * _pow2(p.W2.shape[-1]) * _pow2(p.W2.shape[-2]),
}


def resident_size(family: str, params: Any) -> int:
    """Padded number of weight elements one program keeps on chip for ``family`` (0: unknown)."""
    return _RESIDENT[family](params) if family in _RESIDENT else 0


def supports(family: str, params: Any, dtype: torch.dtype) -> str | None:
    """None when the Triton backend can run this case, else the reason it cannot.

    Examples
    --------
    >>> import torch
    >>> from neurodyn.kernels._triton_backend import supports
    >>> from neurodyn.models import LeakyRNN
    >>> params = LeakyRNN(1, 8, 1).params()
    >>> supports("leaky", params, torch.float32) is None
    True
    >>> supports("leaky", params, torch.float64)
    "the Triton kernels are float32 (got torch.float64); use backend='numba' or 'torch'"
    """
    if family not in KERNELS:
        return f"the Triton backend has no kernel for model family {family!r}; use backend='torch'"
    if dtype != torch.float32:
        return f"the Triton kernels are float32 (got {dtype}); use backend='numba' or 'torch'"
    if family != "leaky" and resident_size(family, params) > MAX_RESIDENT:
        return (f"{family} weights ({resident_size(family, params)} padded elements) do not fit on "
                f"chip (limit {MAX_RESIDENT}); use backend='torch'")
    return None


def train_supports(family: str, params: Any, dtype: torch.dtype) -> str | None:
    """None when the Triton training kernels (forward + BPTT) can train this case, else the reason.

    They cover the leaky RNN, GRU, PLRNN, ALRNN and shallow PLRNN (one network or an ensemble) with
    resident weights (at most 64 units; the shallow PLRNN at most 64 latent and 64 hidden units) in
    float32.

    Examples
    --------
    >>> import torch
    >>> from neurodyn.kernels._triton_backend import train_supports
    >>> from neurodyn.models import ALRNN, GRU, LeakyRNN, PLRNN
    >>> train_supports("leaky", LeakyRNN(1, 64, 1).params(), torch.float32) is None
    True
    >>> train_supports("leaky", LeakyRNN(1, 65, 1).params(), torch.float32)
    "the Triton training kernels hold at most 64 units on chip (got 65); use backend='torch'"
    >>> train_supports("alrnn", ALRNN(1, 64, 1, n_relu=8).params(), torch.float32) is None
    True
    >>> train_supports("plrnn", PLRNN(1, 80, 1).params(), torch.float32)
    "the Triton training kernels hold at most 64 units on chip (got 80); use backend='torch'"
    >>> train_supports("gru", GRU(1, 64, 1).params(), torch.float32) is None
    True
    >>> train_supports("gru", GRU(1, 65, 1).params(), torch.float32)
    "the Triton training kernels hold at most 64 units on chip (got 65); use backend='torch'"
    >>> from neurodyn.models import ShallowPLRNN
    >>> train_supports("shplrnn", ShallowPLRNN(1, 64, 1, n_hidden=64).params(), torch.float32) is None
    True
    >>> train_supports("shplrnn", ShallowPLRNN(1, 8, 1, n_hidden=65).params(), torch.float32)
    "the Triton training kernels hold at most 64 hidden units on chip (got 65); use backend='torch'"
    >>> reason = train_supports("lstm", None, torch.float32)
    >>> reason.startswith("the Triton training kernels cover the leaky RNN, GRU, PLRNN, ALRNN and shallow")
    True
    """
    if family not in _TRAIN_UNITS:
        return (f"the Triton training kernels cover the leaky RNN, GRU, PLRNN, ALRNN and shallow PLRNN "
                f"only, not {family!r}; use backend='torch'")
    if dtype != torch.float32:
        return f"the Triton kernels are float32 (got {dtype}); use backend='numba' or 'torch'"
    n = getattr(params, _TRAIN_UNITS[family]).shape[-1]
    if n > TRAIN_MAX_UNITS:
        return (f"the Triton training kernels hold at most {TRAIN_MAX_UNITS} units on chip (got {n}); "
                f"use backend='torch'")
    if family == "shplrnn" and params.W2.shape[-2] > TRAIN_MAX_UNITS:
        return (f"the Triton training kernels hold at most {TRAIN_MAX_UNITS} hidden units on chip "
                f"(got {params.W2.shape[-2]}); use backend='torch'")
    return None


def _train_launch(h: torch.Tensor, n_batch: int):
    """Grid, block sizes and warps of the training kernels (``BLOCK_B`` fixed: the backward sizes its
    per-block weight-gradient buffer by the grid)."""
    if h.device.type != "cuda" and not interpreting():
        raise ValueError("the Triton backend needs CUDA tensors (or TRITON_INTERPRET=1 for testing)")
    bn = _pow2(h.shape[-1])
    block_b, warps = configs_for("leaky_kernel", bn)[0]
    meta = {"BLOCK_B": block_b, "BLOCK_N": bn, "num_warps": warps}
    return (h.shape[0], triton_cdiv(n_batch, block_b)), meta


#: the ``FORCE`` codes of the leaky training kernels: no forcing, error forcing, teacher forcing
_FORCE = {None: 0, "error": 1, "teacher": 2}


def _forcing_args(forcing: Any, states: torch.Tensor) -> tuple[tuple, dict]:
    """The readout-forcing pointer arguments ``(w_out, b_out, pinv, targets, mask)``, scalars
    ``(n_out, n_mask, strength)`` and constexprs ``FORCE``, ``BLOCK_O`` of the leaky training kernels
    for ``forcing`` (stacked as :func:`leaky_train_forward` takes it, or None: ``states`` stands in
    for the arrays, which are then not read). Raises ``ValueError`` for more than
    :data:`FORCING_MAX_OUTPUTS` outputs."""
    if forcing is None:
        return (states,) * 5 + (1, 1, 0.0), {"FORCE": 0, "BLOCK_O": 16}
    n_out, n_mask = forcing.w_out.shape[-2], forcing.mask.shape[-1]
    if n_out > FORCING_MAX_OUTPUTS:
        raise ValueError(f"forcing through the readout on Triton holds at most {FORCING_MAX_OUTPUTS} outputs "
                         f"on chip (got {n_out}); use backend='numba' or 'torch'")
    arrays = tuple(getattr(forcing, k).contiguous() for k in ("w_out", "b_out", "pinv", "targets", "mask"))
    return (*arrays, n_out, n_mask, float(forcing.strength)), {"FORCE": _FORCE[forcing.method],
                                                                 "BLOCK_O": _pow2(n_out)}


def leaky_train_forward(w: torch.Tensor, drive: torch.Tensor, noise: torch.Tensor | None,
                        states: torch.Tensor, slopes: torch.Tensor, alpha: float, activation: str,
                        forcing: Any = None) -> torch.Tensor | None:
    """Fill ``states[:, 1:]`` and ``slopes`` (``alpha phi'(pre)``) of leaky RNNs in one launch.

    ``w`` (network, unit, unit); ``drive`` = ``W_in u + b``, ``noise`` (or None) and ``slopes``
    (network, time, batch, unit); ``states`` (network, time + 1, batch, unit) with ``h0`` first.
    Every tensor contiguous float32 on one CUDA device (or the CPU under ``TRITON_INTERPRET=1``).

    ``forcing``, a :class:`~neurodyn.kernels.fused.ReadoutForcing` with a leading network dim on
    every field and time-major targets and mask (``_stack_readout_forcing``), forces each new state
    through the readout after its noise; ``states`` then holds the forced states and the states
    before forcing are returned (network, time, batch, unit); without it, None.
    """
    from neurodyn.kernels._triton_kernels import leaky_train_forward_kernel

    n_steps, n_batch, n = drive.shape[1:]
    grid, meta = _train_launch(states, n_batch)
    nz = noise if noise is not None else states  # not read without noise
    free = None if forcing is None else torch.empty_like(slopes)
    (*arrays, n_out, n_mask, strength), force = _forcing_args(forcing, states)
    leaky_train_forward_kernel[grid](w, drive, nz, states, slopes, states if free is None else free, *arrays,
                                     n_batch, n, n_steps, n_out, n_mask, float(alpha), strength,
                                     ACT=_ACT[activation], HAS_NOISE=noise is not None, **force, **meta)
    return free


def leaky_train_backward(w: torch.Tensor, grad_states: torch.Tensor, slopes: torch.Tensor,
                         states: torch.Tensor, alpha: float, forcing: Any = None) -> tuple[torch.Tensor, ...]:
    """BPTT of :func:`leaky_train_forward`: ``(grad_pre, grad_h0, grad_w)``.

    ``grad_states`` (network, time, batch, unit) is ``dL/dh[t+1]`` from everything but the
    recurrence (under ``forcing``, the one the forward got: at the states before forcing);
    ``grad_pre`` (same shape) the gradient of each step's pre-activation, ``grad_h0``
    (network, batch, unit), ``grad_w`` (network, unit, unit): the per-batch-block partial sums the
    kernel writes, added in a fixed order (deterministic, no atomics).
    """
    from neurodyn.kernels._triton_kernels import leaky_train_backward_kernel

    n_net, n_steps, n_batch, n = grad_states.shape
    grid, meta = _train_launch(states, n_batch)
    grad_pre = torch.empty_like(grad_states)
    grad_h0 = states.new_empty((n_net, n_batch, n))
    partial = states.new_empty((n_net, grid[1], n, n))
    (*arrays, n_out, n_mask, strength), force = _forcing_args(forcing, states)
    leaky_train_backward_kernel[grid](w, grad_states, slopes, states, grad_pre, grad_h0, partial, arrays[-1],
                                      n_batch, n, n_steps, n_out, n_mask, float(alpha), strength, **force,
                                      **meta)
    return grad_pre, grad_h0, partial.sum(1)


def pl_train_forward(a: torch.Tensor, w: torch.Tensor, drive: torch.Tensor, noise: torch.Tensor | None,
                     states: torch.Tensor, n_relu: int) -> None:
    """Fill ``states[:, 1:]`` of PLRNNs / ALRNNs (ReLU on the last ``n_relu`` units) in one launch.

    ``a``, ``w`` (network, latent, latent): ``A`` and ``W`` as the step uses them (any ``A``, not only
    a diagonal one); ``drive`` = ``h + C u``, ``noise`` (or None) (network, time, batch, latent);
    ``states`` (network, time + 1, batch, latent) with ``z0`` first. Every tensor contiguous float32
    on one CUDA device (or the CPU under ``TRITON_INTERPRET=1``).
    """
    from neurodyn.kernels._triton_kernels import pl_train_forward_kernel

    n_steps, n_batch, n = drive.shape[1:]
    grid, meta = _train_launch(states, n_batch)
    nz = noise if noise is not None else states  # not read without noise
    pl_train_forward_kernel[grid](a, w, drive, nz, states, n_batch, n, n_steps, int(n_relu),
                                  HAS_NOISE=noise is not None, **meta)


def pl_train_backward(a: torch.Tensor, w: torch.Tensor, grad_states: torch.Tensor, states: torch.Tensor,
                      n_relu: int) -> tuple[torch.Tensor, torch.Tensor]:
    """BPTT of :func:`pl_train_forward`: ``(grad_drive, grad_z0)``.

    ``grad_states`` (network, time, batch, latent) is ``dL/dz[t+1]`` from everything but the
    recurrence; ``grad_drive`` (same shape) the gradient of each step's drive (and of its state
    before the noise), from which the ``A`` and ``W`` gradients are products over all steps;
    ``grad_z0`` (network, batch, latent).
    """
    from neurodyn.kernels._triton_kernels import pl_train_backward_kernel

    n_net, n_steps, n_batch, n = grad_states.shape
    grid, meta = _train_launch(states, n_batch)
    grad_drive = torch.empty_like(grad_states)
    grad_z0 = states.new_empty((n_net, n_batch, n))
    pl_train_backward_kernel[grid](a, w, grad_states, states, grad_drive, grad_z0, n_batch, n, n_steps,
                                   int(n_relu), **meta)
    return grad_drive, grad_z0


def gru_train_forward(w_hh: torch.Tensor, b_hh: torch.Tensor, gi: torch.Tensor, noise: torch.Tensor | None,
                      states: torch.Tensor, gates: torch.Tensor) -> None:
    """Fill ``states[:, 1:]`` and ``gates`` (``r, z, c, gh_n`` per step) of GRUs in one launch.

    ``w_hh`` (network, 3 unit, unit), ``b_hh`` (network, 3 unit), ``gi`` = ``W_ih u + b_ih`` (network,
    time, batch, 3 unit), ``noise`` (or None) (network, time, batch, unit), ``states`` (network,
    time + 1, batch, unit) with ``h0`` first, ``gates`` (network, time, batch, 4 unit). Every tensor
    contiguous float32 on one CUDA device (or the CPU under ``TRITON_INTERPRET=1``).
    """
    from neurodyn.kernels._triton_kernels import gru_train_forward_kernel

    n_steps, n_batch = gi.shape[1:3]
    n = states.shape[-1]
    grid, meta = _train_launch(states, n_batch)
    nz = noise if noise is not None else states  # not read without noise
    gru_train_forward_kernel[grid](w_hh, b_hh, gi, nz, states, gates, n_batch, n, n_steps,
                                   HAS_NOISE=noise is not None, **meta)


def gru_train_backward(w_hh: torch.Tensor, grad_states: torch.Tensor, states: torch.Tensor,
                       gates: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """BPTT of :func:`gru_train_forward`: ``(grad_gi, grad_gh, grad_h0)``.

    ``grad_states`` (network, time, batch, unit) is ``dL/dh[t+1]`` from everything but the
    recurrence; ``grad_gi`` and ``grad_gh`` (network, time, batch, 3 unit) the gradients of each
    step's input drive ``gi`` and hidden gate pre-activations ``h[t] @ W_hh.T + b_hh``, from which the
    ``W_hh`` and ``b_hh`` gradients are products over all steps; ``grad_h0`` (network, batch, unit).
    """
    from neurodyn.kernels._triton_kernels import gru_train_backward_kernel

    n_net, n_steps, n_batch, n = grad_states.shape
    grid, meta = _train_launch(states, n_batch)
    grad_gi = states.new_empty((n_net, n_steps, n_batch, 3 * n))
    grad_gh = torch.empty_like(grad_gi)
    grad_h0 = states.new_empty((n_net, n_batch, n))
    gru_train_backward_kernel[grid](w_hh, grad_states, states, gates, grad_gi, grad_gh, grad_h0, n_batch, n,
                                    n_steps, **meta)
    return grad_gi, grad_gh, grad_h0


#: (BLOCK_N, BLOCK_L) of the shallow-PLRNN training kernels whose warps differ from those of the larger
#: tile's first configuration: at 8 warps the backward spilled 8 bytes there on sm_90, at 4 it does not
_SHALLOW_WARPS = {(16, 64): 4}


def shallow_train_config(block_n: int, block_l: int) -> tuple[int, int]:
    """``(BLOCK_B, num_warps)`` of the shallow-PLRNN training kernels at latent tile ``block_n`` and
    hidden tile ``block_l``: the first configuration of the larger tile, but for :data:`_SHALLOW_WARPS`."""
    block_b, warps = configs_for("leaky_kernel", max(block_n, block_l))[0]
    return block_b, _SHALLOW_WARPS.get((block_n, block_l), warps)


def _shallow_launch(c: torch.Tensor, n_batch: int, n_hid: int):
    """:func:`_train_launch` for the shallow PLRNN: ``BLOCK_N`` from the latent, ``BLOCK_L`` from the
    hidden size, the configuration that of the larger tile."""
    if c.device.type != "cuda" and not interpreting():
        raise ValueError("the Triton backend needs CUDA tensors (or TRITON_INTERPRET=1 for testing)")
    bn, bl = _pow2(c.shape[-1]), _pow2(n_hid)
    block_b, warps = shallow_train_config(bn, bl)
    meta = {"BLOCK_B": block_b, "BLOCK_N": bn, "BLOCK_L": bl, "num_warps": warps}
    return (c.shape[0], triton_cdiv(n_batch, block_b)), meta


def shallow_train_forward(a: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor, h2: torch.Tensor,
                          drive: torch.Tensor, target: torch.Tensor, alphas: torch.Tensor, mask: torch.Tensor,
                          noise: torch.Tensor | None, carried: torch.Tensor, clipped: bool,
                          ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Fill ``carried[:, 1:]`` of (clipped) shallow PLRNNs under state forcing in one launch and return
    ``(preds, acts, pre)``.

    ``a`` (network, latent), ``w1`` (network, latent, hidden), ``w2`` (network, hidden, latent), ``h2``
    (network, hidden); ``drive`` = ``h1 + C u``, ``target``, ``noise`` (or None) (network, time, batch,
    latent); ``alphas`` (time,), ``mask`` (latent,); ``carried`` (network, time + 1, batch, latent)
    with ``z0`` first. ``preds`` (network, time, batch, latent), ``acts`` and ``pre`` = ``W2 c``
    (network, time, batch, hidden). Every tensor contiguous float32 on one CUDA device (or the CPU
    under ``TRITON_INTERPRET=1``).
    """
    from neurodyn.kernels._triton_kernels import shallow_train_forward_kernel

    n_net, n_steps, n_batch, n = drive.shape
    n_hid = w2.shape[-2]
    grid, meta = _shallow_launch(carried, n_batch, n_hid)
    preds = torch.empty_like(drive)
    acts = carried.new_empty((n_net, n_steps, n_batch, n_hid))
    pre = torch.empty_like(acts)
    nz = noise if noise is not None else carried  # not read without noise
    shallow_train_forward_kernel[grid](w2, h2, w1, a, drive, target, alphas, mask, nz, carried, preds, acts,
                                       pre, n_batch, n, n_hid, n_steps, CLIPPED=bool(clipped),
                                       HAS_NOISE=noise is not None, **meta)
    return preds, acts, pre


def shallow_train_backward(a: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor, h2: torch.Tensor,
                           alphas: torch.Tensor, mask: torch.Tensor, grad_preds: torch.Tensor,
                           pre: torch.Tensor, clipped: bool) -> tuple[torch.Tensor, ...]:
    """BPTT of :func:`shallow_train_forward`: ``(grad_p, grad_pre, grad_h2, grad_z0)``.

    ``grad_preds`` (network, time, batch, latent) is ``dL/dp[t]``; ``grad_p`` (same shape) adds what
    reaches ``p[t]`` through the carried state (also the drive's gradient), ``grad_pre`` (network,
    time, batch, hidden) the gradient of ``W2 c[t]``, from which the ``a``, ``W1`` and ``W2`` gradients
    are products over all steps; ``grad_h2`` (network, hidden): the per-batch-block partial sums the
    kernel writes, added in a fixed order (deterministic, no atomics); ``grad_z0`` (network, batch,
    latent).
    """
    from neurodyn.kernels._triton_kernels import shallow_train_backward_kernel

    n_net, n_steps, n_batch, n = grad_preds.shape
    n_hid = w2.shape[-2]
    grid, meta = _shallow_launch(grad_preds, n_batch, n_hid)
    grad_p = torch.empty_like(grad_preds)
    grad_pre = torch.empty_like(pre)
    partial = pre.new_empty((n_net, grid[1], n_hid))
    grad_z0 = grad_preds.new_empty((n_net, n_batch, n))
    shallow_train_backward_kernel[grid](w2, h2, w1, a, alphas, mask, grad_preds, pre, grad_p, grad_pre,
                                        partial, grad_z0, n_batch, n, n_hid, n_steps, CLIPPED=bool(clipped),
                                        **meta)
    return grad_p, grad_pre, partial.sum(1), grad_z0


def configs_for(name: str, block_n: int) -> tuple[tuple[int, int], ...]:
    """The (BLOCK_B, num_warps) candidates of kernel ``name`` at ``block_n`` (largest resident tile)."""
    if name == "leaky_tiled_kernel":
        return CONFIGS["tiled"]
    return CONFIGS[min(max(block_n, 16), 64)]


@cache
def _tuned(name: str, block_n: int):
    import triton

    from neurodyn.kernels import _triton_kernels as triton_kernels

    fn = getattr(triton_kernels, name)
    pairs = ((16, 4),) if interpreting() else configs_for(name, block_n)
    configs = [triton.Config({"BLOCK_B": b}, num_warps=w) for b, w in pairs]
    return triton.autotune(configs=configs, key=["n_unit", "n_batch"], restore_value=["h_ptr"])(fn)


def _launch(name: str, block_n: int, h: torch.Tensor, drive: torch.Tensor, noise: torch.Tensor | None,
            noise_std: float, n_steps: int, t0: int, every: int, out: torch.Tensor | None,
            weights: tuple, scalars: tuple, **meta: Any) -> None:
    """Launch kernel ``name`` with the argument layout every kernel shares.

    ``weights`` come first, then drive, noise, state, (``meta`` extra buffers), record, sizes, the
    time arguments, family ``scalars`` and the noise std; ``meta`` holds the constexprs.
    Raises ``ValueError`` for CPU tensors without ``TRITON_INTERPRET=1``.
    """
    if h.device.type != "cuda" and not interpreting():
        raise ValueError("the Triton backend needs CUDA tensors (or TRITON_INTERPRET=1 for testing)")
    n_net, n_batch, n = h.shape
    rec = out if out is not None else h.new_empty(1)
    nz = noise if noise is not None else h.new_empty(1)
    d_time = drive.shape[2]
    n_rec = out.shape[2] if out is not None else 0
    flags = {"HAS_NOISE": noise is not None, "RECORD": out is not None and n_rec > 0}
    buffers, sizes = meta.pop("buffers", ()), meta.pop("sizes", (n_batch, n))
    tail = (n_steps, t0, every, n_rec, d_time, 1 if d_time > 1 else 0)

    def grid(m):
        return (n_net, triton_cdiv(n_batch, m["BLOCK_B"]))

    args = (*(w.contiguous() for w in weights), drive, nz, h, *buffers, rec, *sizes, *tail, *scalars,
            float(noise_std))
    _tuned(name, block_n)[grid](*args, **meta, **flags)


def _leaky(p, h, drive, noise, noise_std, n_steps, t0, every, out):
    bn, act = _pow2(h.shape[-1]), _ACT[p.activation]
    run = (drive, noise, noise_std, n_steps, t0, every, out)
    if resident_size("leaky", p) > MAX_RESIDENT:
        _launch("leaky_tiled_kernel", TILED_BLOCK_N, h, *run, (p.w_rec,), (float(p.alpha),), ACT=act,
                BLOCK_N=min(bn, TILED_BLOCK_N), buffers=(h.new_empty((2, *h.shape)),))
    else:
        _launch("leaky_kernel", bn, h, *run, (p.w_rec,), (float(p.alpha),), ACT=act, BLOCK_N=bn)


def _gru(p, h, drive, noise, noise_std, n_steps, t0, every, out):
    bn = _pow2(h.shape[-1])
    _launch("gru_kernel", bn, h, drive, noise, noise_std, n_steps, t0, every, out, (p.w_hh, p.b_hh), (),
            BLOCK_N=bn)


def _pl(p, h, drive, noise, noise_std, n_steps, t0, every, out):
    n, bn = h.shape[-1], _pow2(h.shape[-1])
    n_relu = n if getattr(p, "n_relu", None) is None else int(p.n_relu)
    _launch("pl_kernel", bn, h, drive, noise, noise_std, n_steps, t0, every, out, (p.A, p.W), (n_relu,),
            BLOCK_N=bn)


def _shallow(p, h, drive, noise, noise_std, n_steps, t0, every, out):
    n, n_hid = h.shape[-1], p.W2.shape[-2]
    bn, bl = _pow2(n), _pow2(n_hid)
    _launch("shallow_kernel", max(bn, bl), h, drive, noise, noise_std, n_steps, t0, every, out,
            (p.W2, p.h2, p.W1, p.a), (), sizes=(h.shape[1], n, n_hid), CLIPPED=bool(p.clipped),
            BLOCK_N=bn, BLOCK_L=bl)


#: family name -> Triton chunk runner (float32; see :func:`supports` for the size limits)
KERNELS = {"leaky": _leaky, "gru": _gru, "plrnn": _pl, "alrnn": _pl, "shplrnn": _shallow}


def triton_cdiv(a: int, b: int) -> int:
    return -(-a // b)
