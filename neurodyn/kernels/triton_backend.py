"""Dispatch of one time chunk to the Triton kernels (imports Triton only when a kernel runs).

float32 only. Block sizes: ``BLOCK_N`` is the unit count rounded up to a power of two (at least
16, the smallest ``tl.dot`` tile); ``BLOCK_B`` and ``num_warps`` are autotuned on a GPU and fixed
to a single configuration under ``TRITON_INTERPRET=1``. A family's weights are *resident* (held
on chip for the whole loop) when their padded size is at most :data:`MAX_RESIDENT` elements;
larger leaky RNNs use the tiled kernel, larger networks of other families are not supported
(``backend="auto"`` then uses torch).
"""

from __future__ import annotations

import os
from functools import cache
from typing import Any

import torch

__all__ = ["interpreting", "run_chunk", "supports"]

MAX_RESIDENT = 8192  # fp32 weight elements kept on chip per program (32 KiB)
TILED_BLOCK_N = 64
#: (BLOCK_B, num_warps) autotune candidates per BLOCK_N; chosen from sm_90 ahead-of-time compiles
#: without register spills (see tests/test_kernels_triton_aot.py); "tiled" is the fallback kernel
CONFIGS = {16: ((16, 4), (32, 4)), 32: ((16, 4), (32, 8)), 64: ((16, 8),),
           "tiled": ((16, 8),)}
_ACT = {"tanh": 0, "relu": 1, "softplus": 2, "sigmoid": 3, "linear": 4}
_KERNELS = ("leaky_kernel", "gru_kernel", "pl_kernel", "shallow_kernel", "leaky_tiled_kernel")


def interpreting() -> bool:
    """True when Triton runs kernels in its CPU interpreter (``TRITON_INTERPRET=1``)."""
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


def _pow2(n: int) -> int:
    return max(16, 1 << (max(int(n), 1) - 1).bit_length())


def resident_size(family: str, params: Any) -> int:
    """Padded number of weight elements one program keeps on chip for ``family``."""
    if family == "shplrnn":
        return 2 * _pow2(params.W2.shape[-1]) * _pow2(params.W2.shape[-2])
    n = _pow2(getattr(params, {"leaky": "w_rec", "gru": "w_hh"}.get(family, "A")).shape[-1])
    return {"leaky": 1, "gru": 3}.get(family, 2) * n * n


def supports(family: str, params: Any, dtype: torch.dtype) -> str | None:
    """None when the Triton backend can run this case, else the reason it cannot."""
    if dtype != torch.float32:
        return f"the Triton kernels are float32 (got {dtype}); use backend='numba' or 'torch'"
    if family != "leaky" and resident_size(family, params) > MAX_RESIDENT:
        return (f"{family} weights ({resident_size(family, params)} padded elements) do not fit on "
                f"chip (limit {MAX_RESIDENT}); use backend='torch'")
    return None


def configs_for(name: str, block_n: int) -> tuple[tuple[int, int], ...]:
    """The (BLOCK_B, num_warps) candidates of kernel ``name`` at ``block_n`` (largest resident tile)."""
    if name == "leaky_tiled_kernel":
        return CONFIGS["tiled"]
    return CONFIGS[min(max(block_n, 16), 64)]


@cache
def _tuned(name: str, block_n: int):
    import triton

    from neurodyn.kernels import triton_kernels

    fn = getattr(triton_kernels, name)
    pairs = ((16, 4),) if interpreting() else configs_for(name, block_n)
    configs = [triton.Config({"BLOCK_B": b}, num_warps=w) for b, w in pairs]
    return triton.autotune(configs=configs, key=["n_unit", "n_batch"], restore_value=["h_ptr"])(fn)


def run_chunk(family: str, params: Any, h: torch.Tensor, drive: torch.Tensor,
              noise: torch.Tensor | None, noise_std: float, n_steps: int, t0: int, every: int,
              out: torch.Tensor | None) -> None:
    """Advance ``h`` (network, batch, unit) in place; same contract as the Numba ``run_chunk``.

    Raises
    ------
    ValueError
        For float64 tensors, CPU tensors without ``TRITON_INTERPRET=1``, or weights too large.
    """
    reason = supports(family, params, h.dtype)
    if reason:
        raise ValueError(reason)
    if h.device.type != "cuda" and not interpreting():
        raise ValueError("the Triton backend needs CUDA tensors (or TRITON_INTERPRET=1 for testing)")
    n_net, n_batch, n = h.shape
    rec = out if out is not None else h.new_empty(1)
    nz = noise if noise is not None else h.new_empty(1)
    d_time = drive.shape[2]
    n_rec = out.shape[2] if out is not None else 0
    flags = {"HAS_NOISE": noise is not None, "RECORD": out is not None and n_rec > 0}
    tail = (n_steps, t0, every, n_rec, d_time, 1 if d_time > 1 else 0)
    bn = _pow2(n)

    def grid(meta):
        return (n_net, triton_cdiv(n_batch, meta["BLOCK_B"]))

    c = {k: v.contiguous() for k, v in params._asdict().items() if isinstance(v, torch.Tensor)}
    if family == "leaky" and resident_size(family, params) > MAX_RESIDENT:
        buf = h.new_empty((2, n_net, n_batch, n))
        _tuned("leaky_tiled_kernel", TILED_BLOCK_N)[grid](
            c["w_rec"], drive, nz, h, buf, rec, n_batch, n, *tail, float(params.alpha), float(noise_std),
            ACT=_ACT[params.activation], BLOCK_N=min(bn, TILED_BLOCK_N), **flags)
    elif family == "leaky":
        _tuned("leaky_kernel", bn)[grid](
            c["w_rec"], drive, nz, h, rec, n_batch, n, *tail, float(params.alpha), float(noise_std),
            ACT=_ACT[params.activation], BLOCK_N=bn, **flags)
    elif family == "gru":
        _tuned("gru_kernel", bn)[grid](c["w_hh"], c["b_hh"], drive, nz, h, rec, n_batch, n, *tail,
                                   float(noise_std), BLOCK_N=bn, **flags)
    elif family in ("plrnn", "alrnn"):
        n_relu = n if family == "plrnn" else int(params.n_relu)
        _tuned("pl_kernel", bn)[grid](c["A"], c["W"], drive, nz, h, rec, n_batch, n, *tail, n_relu,
                                  float(noise_std), BLOCK_N=bn, **flags)
    else:
        n_hid = params.W2.shape[-2]
        _tuned("shallow_kernel", max(bn, _pow2(n_hid)))[grid](
            c["W2"], c["h2"], c["W1"], c["a"], drive, nz, h, rec, n_batch, n, n_hid, *tail,
            float(noise_std), CLIPPED=bool(params.clipped), BLOCK_N=bn, BLOCK_L=_pow2(n_hid), **flags)


def triton_cdiv(a: int, b: int) -> int:
    return -(-a // b)
