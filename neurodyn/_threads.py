"""The one place that limits torch to a single intra-op thread for a block and restores the count,
BLAS libraries to a number of threads, and Numba's parallel kernels to their number of items."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

__all__ = ["blas_threads", "numba_threads", "one_thread"]

#: threadpoolctl's controller and the number of imported modules when it was made
_CONTROLLER: list[Any] = [None, -1]


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Run the block with ``torch.set_num_threads(1)``, then restore the caller's thread count.

    Used where reductions must not depend on the thread count (same bits in any process) or where
    the work is many small matrices, on which intra-op threads only add synchronisation.
    Torch is imported on entry, not with this module.

    Examples
    --------
    >>> import torch
    >>> before = torch.get_num_threads()
    >>> with one_thread():
    ...     inside = torch.get_num_threads()
    >>> inside, torch.get_num_threads() == before  # one thread inside, the caller's count restored after
    (1, True)
    """
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@contextlib.contextmanager
def numba_threads(n_items: int) -> Iterator[None]:
    """Run a parallel Numba launch on at most ``n_items`` threads, then restore both thread counts.

    An idle Numba thread still joins every launch, which costs milliseconds per call on a busy
    machine (a small batch is one item). Numba's OpenMP layer sets the process's OpenMP thread
    count, which torch reads as its own, so torch's intra-op count is put back as well: without
    that, a process started with ``OMP_NUM_THREADS=1`` would train on two torch threads after
    its first Numba launch. Numba and torch are imported on entry.

    Examples
    --------
    >>> import torch
    >>> before = torch.get_num_threads()
    >>> with numba_threads(1):
    ...     pass
    >>> torch.get_num_threads() == before
    True
    """
    import numba
    import torch

    n_torch, n_numba = torch.get_num_threads(), numba.get_num_threads()
    numba.set_num_threads(max(1, min(n_numba, int(n_items))))
    try:
        yield
    finally:
        numba.set_num_threads(n_numba)
        if torch.get_num_threads() != n_torch:
            torch.set_num_threads(n_torch)


def blas_threads(limits: int | None) -> contextlib.AbstractContextManager:
    """``threadpoolctl.threadpool_limits(limits, user_api="blas")`` from a cached controller.

    Finding the loaded BLAS libraries costs about a millisecond per call (a scan of the process's
    shared objects), which short calls that limit threads around a few LAPACK calls would pay
    each time; the controller is made again only after a module was imported since (a new module
    may have loaded another library). ``None`` leaves the limits as they are.
    """
    from threadpoolctl import ThreadpoolController

    if _CONTROLLER[0] is None or _CONTROLLER[1] != len(sys.modules):
        _CONTROLLER[0] = ThreadpoolController()
        _CONTROLLER[1] = len(sys.modules)
    return _CONTROLLER[0].limit(limits=limits, user_api="blas")
