"""The one place that limits torch to a single intra-op thread for a block and restores the count."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

__all__ = ["one_thread"]


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
