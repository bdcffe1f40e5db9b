"""The one place that limits torch to a single intra-op thread for a block and restores the count,
and BLAS libraries to a number of threads."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

__all__ = ["blas_threads", "one_thread"]

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
