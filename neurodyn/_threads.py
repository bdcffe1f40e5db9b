"""The one place that limits torch to a single intra-op thread for a block and restores the count."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

__all__ = ["one_thread"]


@contextlib.contextmanager
def one_thread(enabled: bool = True) -> Iterator[None]:
    """Run the block with ``torch.set_num_threads(1)``, then restore the caller's thread count.

    Used where reductions must not depend on the thread count (same bits in any process) or where
    the work is many small matrices, on which intra-op threads only add synchronisation.
    ``enabled=False`` does nothing. Torch is imported on entry, not with this module.

    Examples
    --------
    >>> import torch
    >>> before = torch.get_num_threads()
    >>> with one_thread():
    ...     torch.get_num_threads()
    1
    >>> torch.get_num_threads() == before
    True
    """
    if not enabled:
        yield
        return
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
