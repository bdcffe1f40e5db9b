"""Cost budgets shared by the analyses: the memory a search may hold and the work that warns first."""

from __future__ import annotations

import warnings

__all__ = ["MAX_MEMORY", "WARN_FLOPS", "check_memory", "warn_flops"]

#: default ``max_memory`` of the analyses that hold many (state x state) blocks at once, in bytes
MAX_MEMORY = 1 << 30
#: above this many floating-point operations an analysis warns (about 15 minutes at 10 GFLOP/s)
WARN_FLOPS = 1e13


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


def check_memory(what: str, nbytes: float, detail: str, fix: str, *, device=None) -> None:
    """One-line ``ValueError`` with the estimate when ``nbytes`` exceed the memory available now
    (the free memory of a CUDA ``device``, else the host's), raised before allocating.

    Examples
    --------
    >>> check_memory("jacobians", 2.0**50, "10 Jacobians", "pass fewer states")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: jacobians needs about 1.05e+06 GiB (10 Jacobians) but ... GiB are available; pass fewer states
    """
    if getattr(device, "type", device) == "cuda":
        import torch

        free = torch.cuda.mem_get_info(device)[0]
    else:
        from neurodyn._guard import available_memory

        free = available_memory()
    if nbytes > free:
        raise ValueError(f"{what} needs about {nbytes / 2**30:.3g} GiB ({detail}) but {free / 2**30:.3g} GiB "
                         f"are available; {fix}")
