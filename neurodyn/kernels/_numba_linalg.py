"""Numba solves of many small linear systems, one system at a time in registers and L1 cache.

LAPACK's batched solvers, called through torch, cost a few microseconds of call overhead per
matrix, more than the arithmetic of a 16 × 16 system. These loops keep each system in one small
work array and update whole rows (fixed length, so LLVM vectorises them), including the columns
already eliminated: about 1.5 times the flops of a textbook LU and several times less time below
about 32 state dims. Non-finite values are not assumed away (no ``nnan``/``ninf`` fast-math
flags), so a NaN or singular system is reported, not hidden.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["damped_solve_rows", "gathered_matvec_rows", "solve_rows"]

#: fast-math flags that keep NaN and infinity semantics (the solves report non-finite results)
FASTMATH = {"nsz", "arcp", "contract", "reassoc"}


@njit(fastmath=FASTMATH, cache=True, error_model="numpy")
def _eliminate(A, n, pivot):
    """Gaussian elimination of the augmented ``(n, n + 1)`` block ``A`` in place (partial pivoting
    when ``pivot``), then back substitution into its last column; False where a pivot is zero or
    not finite, or the solution is not finite."""
    m = n + 1
    for k in range(n):
        p = k
        big = abs(A[k, k])
        if pivot:
            for i in range(k + 1, n):
                v = abs(A[i, k])
                if v > big:
                    big, p = v, i
        if not big > 0.0 or not np.isfinite(big):
            return False
        if p != k:
            for j in range(m):
                t = A[k, j]
                A[k, j] = A[p, j]
                A[p, j] = t
        inv = 1.0 / A[k, k]
        for i in range(k + 1, n):
            f = A[i, k] * inv
            for j in range(m):  # whole rows: a fixed trip count vectorises
                A[i, j] -= f * A[k, j]
    for i in range(n - 1, -1, -1):
        s = A[i, n]
        for j in range(i + 1, n):
            s -= A[i, j] * A[j, n]
        v = s / A[i, i]
        if not np.isfinite(v):
            return False
        A[i, n] = v
    return True


@njit(fastmath=FASTMATH, cache=True, error_model="numpy")
def solve_rows(M, r, out, ok):
    """``out[b] = −M[b]⁻¹ r[b]`` by LU with partial pivoting, for every ``b``.

    ``M`` (system, n, n), ``r`` and ``out`` (system, n), ``ok`` (system,) bool: False (and
    ``out[b]`` zero) where ``M[b]`` is singular or the result is not finite.
    """
    nb, n, _ = M.shape
    A = np.empty((n, n + 1), M.dtype)
    for b in range(nb):
        for i in range(n):
            for j in range(n):
                A[i, j] = M[b, i, j]
            A[i, n] = -r[b, i]
        good = _eliminate(A, n, True)
        ok[b] = good
        for i in range(n):
            out[b, i] = A[i, n] if good else 0.0


@njit(fastmath=FASTMATH, cache=True, error_model="numpy")
def damped_solve_rows(M, r, mu, out, ok):
    """``out[b] = −(M[b]ᵀM[b] + mu[b] I)⁻¹ M[b]ᵀ r[b]`` (a Levenberg–Marquardt step), for every ``b``.

    The normal matrix is symmetric positive definite for ``mu > 0``, so elimination runs without
    pivoting and a non-positive pivot marks a failed row (as a Cholesky factorisation would):
    ``ok[b]`` False and ``out[b]`` zero.
    """
    nb, n, _ = M.shape
    A = np.empty((n, n + 1), M.dtype)
    for b in range(nb):
        A[:, :] = 0.0
        for k in range(n):  # A += M[k]ᵀ M[k] row by row; last column −Mᵀ r
            rk = r[b, k]
            for i in range(n):
                mki = M[b, k, i]
                A[i, n] -= mki * rk
                for j in range(n):
                    A[i, j] += mki * M[b, k, j]
        for i in range(n):
            A[i, i] += mu[b]
        good = _eliminate(A, n, False)
        ok[b] = good
        for i in range(n):
            out[b, i] = A[i, n] if good else 0.0


@njit(fastmath=FASTMATH, cache=True, error_model="numpy")
def gathered_matvec_rows(A, index, r, out):
    """``out[b] = A[index[b]] @ r[b]`` for every ``b``; ``A`` (matrix, n, n), ``index`` (system,)
    int64, ``r`` and ``out`` (system, n)."""
    nb, n = r.shape
    for b in range(nb):
        a = index[b]
        for i in range(n):
            s = 0.0
            for j in range(n):
                s += A[a, i, j] * r[b, j]
            out[b, i] = s
