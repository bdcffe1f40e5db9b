"""The Numba chunk runners of the built-in families (tensor ↔ NumPy, dtype-matched scalars).

:data:`KERNELS` maps a family name to its runner (contract in :mod:`neurodyn.kernels._families`).
Each runner calls a register-blocked kernel (:mod:`~neurodyn.kernels._numba_rnn`,
:mod:`~neurodyn.kernels._numba_plrnn`) for small batches and a BLAS-blocked one
(:mod:`~neurodyn.kernels._numba_gemm`, weights transposed) when a network has at least
:data:`GEMM_MIN_BATCH` trials. Numba itself is imported when a runner first runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from neurodyn._threads import numba_threads

__all__ = ["KERNELS"]

GEMM_MIN_BATCH = 64  # networks with at least this many trials use the BLAS-blocked kernels
GEMM_BLOCK = 128  # trials per block in that path


def _np(x: torch.Tensor) -> np.ndarray:
    return x.detach().contiguous().numpy()


def _runner(small: Callable[..., None], large: Callable[..., None]) -> Callable[..., None]:
    """A chunk runner calling ``small(p, drive, common, exact)`` or ``large(..., block)``."""

    def run(params: Any, h: torch.Tensor, drive: torch.Tensor, noise: torch.Tensor | None,
            noise_std: float, n_steps: int, t0: int, every: int, out: torch.Tensor | None) -> None:
        hn = h.numpy()
        n_net, n_batch, n = hn.shape
        nz = _np(noise) if noise is not None else np.empty((n_net, n_batch, 0, n), hn.dtype)
        on = out.numpy() if out is not None else np.empty((n_net, n_batch, 0, n), hn.dtype)
        common = (nz, hn.dtype.type(noise_std), hn, on, int(n_steps), int(t0), int(every))
        exact = hn.dtype == np.float64
        if n_batch < GEMM_MIN_BATCH:
            from neurodyn.kernels._numba_rnn import KB

            with numba_threads(n_net * -(-n_batch // KB)):
                small(params, _np(drive), common, exact)
            return
        from threadpoolctl import threadpool_limits

        kb = min(GEMM_BLOCK, n_batch)
        with threadpool_limits(limits=1, user_api="blas"), numba_threads(n_net * -(-n_batch // kb)):
            large(params, _np(drive), common, exact, kb)  # parallelism comes from the Numba threads

    return run


def _leaky_args(p: Any, common: tuple) -> tuple:
    from neurodyn.kernels._numba_math import ACTIVATION_CODES

    return common[2].dtype.type(p.alpha), ACTIVATION_CODES[p.activation]


def _leaky(p, drive, common, exact):
    from neurodyn.kernels._numba_rnn import leaky_kernel

    leaky_kernel(_np(p.w_rec), drive, *common, *_leaky_args(p, common), exact)


def _leaky_gemm(p, drive, common, exact, kb):
    from neurodyn.kernels._numba_gemm import leaky_gemm_kernel

    leaky_gemm_kernel(_np(p.w_rec.mT), drive, *common, *_leaky_args(p, common), exact, kb)


def _gru(p, drive, common, exact):
    from neurodyn.kernels._numba_rnn import gru_kernel

    gru_kernel(_np(p.w_hh), _np(p.b_hh), drive, *common, exact)


def _gru_gemm(p, drive, common, exact, kb):
    from neurodyn.kernels._numba_gemm import gru_gemm_kernel

    gru_gemm_kernel(_np(p.w_hh.mT), _np(p.b_hh), drive, *common, exact, kb)


def _pl_parts(p: Any) -> tuple[torch.Tensor, int]:
    """``[A | W]`` (network, latent, 2 latent) and the number of ReLU units (PLRNN: all)."""
    n_relu = p.A.shape[-1] if getattr(p, "n_relu", None) is None else int(p.n_relu)
    return torch.cat([p.A, p.W], dim=-1), n_relu


def _pl(p, drive, common, exact):
    from neurodyn.kernels._numba_plrnn import pl_kernel

    m, n_relu = _pl_parts(p)
    pl_kernel(_np(m), drive, *common, n_relu)


def _pl_gemm(p, drive, common, exact, kb):
    from neurodyn.kernels._numba_gemm import pl_gemm_kernel

    m, n_relu = _pl_parts(p)
    pl_gemm_kernel(_np(m.mT), drive, *common, n_relu, kb)


def _shallow(p, drive, common, exact):
    from neurodyn.kernels._numba_plrnn import shallow_kernel

    shallow_kernel(_np(p.W2), _np(p.h2), _np(p.W1), _np(p.a), drive, *common, bool(p.clipped))


def _shallow_gemm(p, drive, common, exact, kb):
    from neurodyn.kernels._numba_gemm import shallow_gemm_kernel

    shallow_gemm_kernel(_np(p.W2.mT), _np(p.h2), _np(p.W1.mT), _np(p.a), drive, *common,
                        bool(p.clipped), kb)


#: family name -> Numba chunk runner
KERNELS: dict[str, Callable[..., None]] = {
    "leaky": _runner(_leaky, _leaky_gemm),
    "gru": _runner(_gru, _gru_gemm),
    "plrnn": _runner(_pl, _pl_gemm),
    "alrnn": _runner(_pl, _pl_gemm),
    "shplrnn": _runner(_shallow, _shallow_gemm),
}
