"""Tangent-space QR steps of the Lyapunov spectrum: NumPy reference and a Numba kernel.

``qr_chunk(J, q)`` takes Jacobians ``J`` (time, batch, state, state) and an orthonormal frame ``q``
(batch, state, k), applies ``q <- qr(J[t] @ q)`` for every time step and returns the logs of the
moduli of the diagonal of ``R`` (time, batch, k) and the final frame. The Numba kernel uses
modified Gram-Schmidt with one re-orthogonalisation pass and scaled norms (as LAPACK's ``dnrm2``),
so that a strong contraction (``|J q|`` below 1e-154, whose squares underflow) or expansion keeps
its exact logarithm; both agree to round-off. A tangent vector mapped exactly to zero (a singular
Jacobian) gives ``log 0 = -inf``.
"""

from __future__ import annotations

import numpy as np


def qr_chunk_numpy(J: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    logs = np.empty((J.shape[0], q.shape[0], q.shape[2]))
    with np.errstate(divide="ignore"):
        for t in range(J.shape[0]):
            q, r = np.linalg.qr(J[t] @ q)
            logs[t] = np.log(np.abs(np.diagonal(r, axis1=1, axis2=2)))
    return logs, q


_KERNEL = None


def _kernel():
    global _KERNEL
    if _KERNEL is None:
        from numba import njit

        @njit(cache=True, error_model="numpy")
        def qr_chunk(J, q):  # pragma: no cover - compiled
            n_t, n_b, n, _ = J.shape
            k = q.shape[2]
            logs = np.empty((n_t, n_b, k))
            v = np.empty((n, k))
            for t in range(n_t):
                for b in range(n_b):
                    for i in range(n):
                        for j in range(k):
                            acc = 0.0
                            for m in range(n):
                                acc += J[t, b, i, m] * q[b, m, j]
                            v[i, j] = acc
                    for j in range(k):
                        for _ in range(2):  # Gram-Schmidt twice for orthogonality
                            for p in range(j):
                                dot = 0.0
                                for i in range(n):
                                    dot += q[b, i, p] * v[i, j]
                                for i in range(n):
                                    v[i, j] -= dot * q[b, i, p]
                        scale = 0.0  # the norm as scale * sqrt(sum (v / scale)^2): no under-/overflow
                        for i in range(n):
                            scale = max(scale, abs(v[i, j]))
                        if scale == 0.0:
                            logs[t, b, j] = -np.inf
                            for i in range(n):
                                q[b, i, j] = 0.0
                            continue
                        ss = 0.0
                        for i in range(n):
                            ss += (v[i, j] / scale) ** 2
                        root = np.sqrt(ss)
                        logs[t, b, j] = np.log(scale) + np.log(root)
                        for i in range(n):
                            q[b, i, j] = (v[i, j] / scale) / root
            return logs, q

        _KERNEL = qr_chunk
    return _KERNEL


def qr_chunk(J: np.ndarray, q: np.ndarray, backend: str) -> tuple[np.ndarray, np.ndarray]:
    """The Numba kernel for ``backend="numba"``, else the NumPy reference (see the module docstring)."""
    if backend == "numba":
        return _kernel()(np.ascontiguousarray(J), np.ascontiguousarray(q).copy())
    return qr_chunk_numpy(J, q)
