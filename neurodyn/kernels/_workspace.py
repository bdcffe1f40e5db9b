"""Large buffers that the fused training kernels reuse from one optimiser step to the next.

An ensemble's per-step buffers (states, slopes and their gradients, (network, time, batch, unit):
about 34 MB each for 32 networks x 64 units x batch 64 x 64 steps in float32) lie above glibc's
mmap threshold, so every fresh one page-faults again when it is first written: about 75 ms of a
250 ms step on a 2-core machine (``benchmarks/bench_training_ensemble.py`` with and without
``MALLOC_MMAP_THRESHOLD_``). Inside :func:`reuse_buffers` (the training engine's loop),
:func:`empty` hands back the buffer it last gave for the same role when no tensor, view or array
still shares its memory; outside, and for small buffers, it is ``torch.empty``.

A buffer is reused only when its storage's reference count says that the pool alone holds it
(``torch._C._storage_Use_Count``); where that count is not available, nothing is reused.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import torch

#: buffers of fewer bytes are allocated afresh (the allocator reuses small blocks by itself)
MIN_BYTES = 1 << 20

_LOCAL = threading.local()


def _use_count(t: torch.Tensor) -> int | None:
    """References to ``t``'s storage (tensors and views sharing it), or None where torch does not say."""
    count = getattr(torch._C, "_storage_Use_Count", None)
    return None if count is None else int(count(t.untyped_storage()._cdata))


def _alone() -> int | None:
    """:func:`_use_count` of a tensor that nothing else shares (the count includes the storage
    object the query itself makes)."""
    if not hasattr(_LOCAL, "alone"):
        _LOCAL.alone = _use_count(torch.empty(1))
    return _LOCAL.alone


@contextmanager
def reuse_buffers() -> Iterator[None]:
    """Within the block (on this thread), :func:`empty` reuses buffers; they are released on exit."""
    depth = getattr(_LOCAL, "depth", 0)
    if depth == 0:
        _LOCAL.pool = {}
    _LOCAL.depth = depth + 1
    try:
        yield
    finally:
        _LOCAL.depth = depth
        if depth == 0:
            _LOCAL.pool = {}


def empty(role: str, shape: tuple[int, ...], dtype: torch.dtype, *, zero: bool = False) -> torch.Tensor:
    """``torch.empty(shape, dtype=dtype)`` on the CPU (zeroed when ``zero``), reusing the buffer last
    returned for ``role`` inside :func:`reuse_buffers` when it is large enough, of ``dtype``, and
    nothing else shares it."""
    n = math.prod(shape)
    pool = getattr(_LOCAL, "pool", None) if getattr(_LOCAL, "depth", 0) else None
    if pool is None or n * torch.empty((), dtype=dtype).element_size() < MIN_BYTES or _alone() is None:
        return torch.zeros(shape, dtype=dtype) if zero else torch.empty(shape, dtype=dtype)
    buf = pool.get(role)
    if buf is None or buf.dtype != dtype or buf.numel() < n or _use_count(buf) != _alone():
        buf = pool[role] = torch.empty(n, dtype=dtype)
    out = buf[:n].view(shape)
    return out.zero_() if zero else out
