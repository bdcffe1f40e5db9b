"""Dispatch of one time chunk to the Numba kernels (tensor ↔ NumPy, dtype-matched scalars)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

__all__ = ["run_chunk"]

GEMM_MIN_BATCH = 64  # networks with at least this many trials use the BLAS-blocked kernels
GEMM_BLOCK = 128  # trials per block in that path


def _np(x: torch.Tensor) -> np.ndarray:
    return x.detach().contiguous().numpy()


def run_chunk(family: str, params: Any, h: torch.Tensor, drive: torch.Tensor,
              noise: torch.Tensor | None, noise_std: float, n_steps: int, t0: int, every: int,
              out: torch.Tensor | None) -> None:
    """Advance ``h`` (network, batch, unit) in place by ``n_steps`` steps, filling ``out``.

    ``drive`` is (network, batch, n_steps or 1, rows), ``noise`` (network, batch, n_steps, unit)
    or None, ``out`` (network, batch, records, unit) or None; ``t0`` is the global index of the
    chunk's first step (for the ``every`` phase).
    """
    from neurodyn.kernels import numba_plrnn, numba_rnn
    from neurodyn.kernels.numba_math import ACTIVATION_CODES

    hn = h.numpy()
    dt = hn.dtype.type
    n_net, n_batch, n = hn.shape
    nz = _np(noise) if noise is not None else np.empty((n_net, n_batch, 0, n), hn.dtype)
    on = out.numpy() if out is not None else np.empty((n_net, n_batch, 0, n), hn.dtype)
    exact = hn.dtype == np.float64
    common = (nz, dt(noise_std), hn, on, int(n_steps), int(t0), int(every))
    if n_batch >= GEMM_MIN_BATCH:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1, user_api="blas"):  # parallelism comes from the Numba threads
            _run_gemm(family, params, _np(drive), common, exact, min(GEMM_BLOCK, n_batch))
    elif family == "leaky":
        code = ACTIVATION_CODES[params.activation]
        numba_rnn.leaky_kernel(_np(params.w_rec), _np(drive), *common, dt(params.alpha), code, exact)
    elif family == "gru":
        numba_rnn.gru_kernel(_np(params.w_hh), _np(params.b_hh), _np(drive), *common, exact)
    else:
        numba_plrnn.run(family, params, _np(drive), common)


def _run_gemm(family: str, params: Any, drive: np.ndarray, common: tuple, exact: bool, kb: int) -> None:
    """The BLAS-blocked kernels of :mod:`neurodyn.kernels.numba_gemm` (weights transposed)."""
    from neurodyn.kernels import numba_gemm
    from neurodyn.kernels.numba_math import ACTIVATION_CODES

    dt = common[2].dtype.type
    if family == "leaky":
        code = ACTIVATION_CODES[params.activation]
        numba_gemm.leaky_gemm_kernel(_np(params.w_rec.mT), drive, *common, dt(params.alpha), code, exact, kb)
    elif family == "gru":
        numba_gemm.gru_gemm_kernel(_np(params.w_hh.mT), _np(params.b_hh), drive, *common, exact, kb)
    elif family in ("plrnn", "alrnn"):
        n_relu = params.A.shape[-1] if family == "plrnn" else int(params.n_relu)
        mt = _np(torch.cat([params.A, params.W], dim=-1).mT)
        numba_gemm.pl_gemm_kernel(mt, drive, *common, n_relu, kb)
    else:
        numba_gemm.shallow_gemm_kernel(_np(params.W2.mT), _np(params.h2), _np(params.W1.mT), _np(params.a),
                                       drive, *common, bool(params.clipped), kb)
