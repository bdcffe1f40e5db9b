"""Cost budgets shared by the analyses: the memory a search may hold and the work that warns first."""

from __future__ import annotations

import os
import warnings

__all__ = ["MAX_MEMORY", "WARN_FLOPS", "check_memory", "half_physical_memory", "warn_flops"]

#: default ``max_memory`` of the analyses that hold many (state x state) blocks at once, in bytes
MAX_MEMORY = 1 << 30
#: above this many floating-point operations an analysis warns (about 15 minutes at 10 GFLOP/s)
WARN_FLOPS = 1e13


def half_physical_memory() -> float:
    """Half of this machine's physical memory in bytes (``os.sysconf``), the most one array request
    (a task batch) may take; 16 x :data:`MAX_MEMORY` where the size cannot be read.

    Examples
    --------
    >>> half_physical_memory() >= MAX_MEMORY / 2
    True
    """
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2
    except (AttributeError, OSError, ValueError):
        return 16.0 * MAX_MEMORY


def check_memory(what: str, n_bytes: float, detail: str, fix: str, *,
                 max_memory: float = MAX_MEMORY) -> None:
    """One-line ``ValueError`` with the estimate when ``n_bytes`` exceeds ``max_memory``, before allocating.

    Examples
    --------
    >>> check_memory("sample", 3 * 2**30, "10 trials", "lower n_trials")
    Traceback (most recent call last):
    ...
    ValueError: sample needs about 3 GiB (10 trials), more than the 1 GiB memory budget; lower n_trials
    """
    if n_bytes > max_memory:
        raise ValueError(f"{what} needs about {n_bytes / 2**30:.3g} GiB ({detail}), more than the "
                         f"{max_memory / 2**30:.3g} GiB memory budget; {fix}")


def warn_flops(what: str, flops: float, detail: str, fix: str, *, stacklevel: int = 3) -> None:
    """One ``RuntimeWarning`` line with the estimate when ``flops`` exceeds :data:`WARN_FLOPS`.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_flops("search", 3e13, "4096 points", "use fewer")
    >>> print(caught[0].message)
    search: about 3e+13 floating-point operations (4096 points; roughly 50 min at 10 GFLOP/s); use fewer
    """
    if flops > WARN_FLOPS:
        warnings.warn(f"{what}: about {flops:.2g} floating-point operations ({detail}; roughly "
                      f"{flops / 1e10 / 60:.0f} min at 10 GFLOP/s); {fix}", RuntimeWarning,
                      stacklevel=stacklevel)
