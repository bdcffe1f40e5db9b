"""Procrustes over vector fields: ``max_C tr(A^T C B C^T)`` over all orthogonal ``C`` (with reflections).

Batched over operator pairs and restarts in torch (float64). Each iteration replaces ``C`` by the polar
factor of the gradient of the convexified objective ``tr(A^T C B C^T) + sigma/2 ||C||^2`` with
``sigma = 2 ||A||_2 ||B||_2`` (a minorise-maximise step that never decreases the objective), or by the
polar factor of the plain gradient when that step reaches a higher value. The objective has many local
maxima for operators of ~20 dimensions, so many starts are run and pruned by successive halving.
"""

from __future__ import annotations

import contextlib
import hashlib
from typing import Any

import numpy as np
import torch

from neurodyn._seed import SeedLike, numpy_rng
from neurodyn._threads import one_thread


def canonical_order(A: np.ndarray, B: np.ndarray) -> bool:
    """True when the pair should be swapped so that ``d(A, B)`` and ``d(B, A)`` run the same computation."""
    ka = (A.shape[0], hashlib.sha1(np.ascontiguousarray(A).tobytes()).hexdigest())
    kb = (B.shape[0], hashlib.sha1(np.ascontiguousarray(B).tobytes()).hexdigest())
    return kb < ka


def pad_pair(A: np.ndarray, B: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Square ``A`` and ``B`` zero-padded (bottom and right) to the larger of their sizes."""
    n = max(A.shape[0], B.shape[0])
    return np.pad(A, ((0, n - A.shape[0]),) * 2), np.pad(B, ((0, n - B.shape[0]),) * 2)


def random_orthogonal(n: int, n_restarts: int, seed: SeedLike, stream: int = 0) -> np.ndarray:
    """``(n_restarts, n, n)`` Haar-random orthogonal matrices, alternately with det +1 and det -1; each
    ``stream`` (round of restarts) is an independent sequence."""
    rng = numpy_rng(seed, n, stream) if stream else numpy_rng(seed, n)
    out = np.empty((n_restarts, n, n))
    for i in range(n_restarts):
        Q, R = np.linalg.qr(rng.standard_normal((n, n)))
        Q = Q * np.sign(np.diag(R))
        if (np.linalg.det(Q) > 0) != (i % 2 == 0):
            Q[:, 0] = -Q[:, 0]
        out[i] = Q
    return out


def spectral_init(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``E_A D E_B^T`` from the eigenvectors of the symmetric parts (sorted by eigenvalue), signs ``D`` by
    :func:`signed_match`."""
    _, Ea = np.linalg.eigh(A + A.T)
    _, Eb = np.linalg.eigh(B + B.T)
    return signed_match(A, B, Ea, Eb)


def _real_eigenbasis(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (each complex pair as ``lambda``, ``conj(lambda)``) and a real basis of the same order.

    A complex eigenvector ``v`` is rotated in phase so that ``Re v`` and ``Im v`` are orthogonal with
    ``|Re v| >= |Im v|`` (unique up to sign) and contributes ``Re v`` for ``lambda`` (``Im >= 0``) and
    ``Im v`` for its conjugate; orthogonally conjugate operators get bases that agree up to signs.
    """
    lam, V = np.linalg.eig(A)
    V = V * np.exp(-0.5j * np.angle(np.sum(V * V, axis=0)))
    return lam, np.where(lam.imag >= 0, V.real, V.imag)


def schur_init(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``Q_A D Q_B^T`` from real Schur vectors of ``A`` and ``B`` built in matched eigenvalue order.

    The eigenvalues of ``B`` are matched to those of ``A`` (``scipy.optimize.linear_sum_assignment`` on
    ``|lambda - mu|^2``); both real eigenbases are put in the order of ``A``'s eigenvalues by decreasing
    modulus and orthonormalised by QR (``Q^T A Q`` is then the real Schur form in that order). For
    ``B = C^T A C`` with ``C`` orthogonal and distinct eigenvalues, ``Q_B = C^T Q_A`` up to column signs,
    which :func:`signed_match` recovers, so the start is the exact alignment.
    """
    from scipy.optimize import linear_sum_assignment

    la, Va = _real_eigenbasis(A)
    lb, Vb = _real_eigenbasis(B)
    order = np.lexsort((-la.imag, -np.abs(la)))
    _, match = linear_sum_assignment(np.abs(la[order, None] - lb[None, :]) ** 2)
    Qa, Qb = (_orthonormal_columns(M) for M in (Va[:, order], Vb[:, match]))
    return signed_match(A, B, Qa, Qb)


def _orthonormal_columns(M: np.ndarray) -> np.ndarray:
    """Q of the QR decomposition with a non-negative diagonal of R (unique for full-rank ``M``)."""
    Q, R = np.linalg.qr(M)
    return Q * np.where(np.diag(R) < 0, -1.0, 1.0)


def signed_match(A: np.ndarray, B: np.ndarray, Ea: np.ndarray, Eb: np.ndarray) -> np.ndarray:
    """``E_A D E_B^T`` for orthonormal bases ``E_A``, ``E_B`` with the best found column signs ``D``.

    The signs maximise ``sum_ij W_ij d_i d_j`` with ``W_ij = (E_A^T A E_A)_ij (E_B^T B E_B)_ij`` (plus
    transpose): propagated along a maximum spanning tree of ``|W|`` (exact for conjugate pairs in
    matching bases, where every coupling agrees), then improved by single flips.
    """
    W = (Ea.T @ A @ Ea) * (Eb.T @ B @ Eb)
    W = W + W.T
    np.fill_diagonal(W, 0.0)
    d = _tree_signs(W)
    for _ in range(4 * A.shape[0]):
        gain = -4.0 * d * (W @ d)
        i = int(np.argmax(gain))
        if gain[i] <= 1e-14:
            break
        d[i] = -d[i]
    return (Ea * d) @ Eb.T


def _tree_signs(W: np.ndarray) -> np.ndarray:
    """Signs fixed along a maximum spanning tree of ``|W|`` (Prim), ``d_j = d_i sign(W_ij)``."""
    n = W.shape[0]
    d = np.ones(n)
    in_tree = np.zeros(n, bool)
    in_tree[0] = True
    best, parent = np.abs(W[0]).copy(), np.zeros(n, int)
    for _ in range(n - 1):
        cand = np.where(in_tree, -1.0, best)
        j = int(np.argmax(cand))
        in_tree[j] = True
        d[j] = d[parent[j]] * (1.0 if W[parent[j], j] >= 0 else -1.0)
        closer = np.abs(W[j]) > best
        best[closer], parent[closer] = np.abs(W[j])[closer], j
    return d


def initial_rotations(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Deterministic starting points ``(5, n, n)``: the identity, a reflection, the guess from the symmetric
    parts and the Schur-vector guesses in the eigenvalue order of ``A`` and of ``B``."""
    flip = np.eye(A.shape[0])
    flip[0, 0] = -1.0
    return np.stack([np.eye(A.shape[0]), flip, spectral_init(A, B), schur_init(A, B), schur_init(B, A).T])


def one_cpu_thread(device: Any) -> contextlib.AbstractContextManager[None]:
    """:func:`~neurodyn._threads.one_thread` when ``device`` is the CPU: the search works on batches of
    small matrices, where intra-op threads only add synchronisation (30x slower on a busy 2-core machine)."""
    return one_thread() if torch.device(device).type == "cpu" else contextlib.nullcontext()


def _polar(G: torch.Tensor) -> torch.Tensor:
    U, _, Vh = torch.linalg.svd(G)
    return U @ Vh


@torch.no_grad()
def maximise_alignment(
    A: torch.Tensor, B: torch.Tensor, C0: torch.Tensor, *, max_iter: int = 500, tol: float = 1e-11,
    stages: tuple[int, ...] = (20, 40, 80), n_keep: int = 4, same: float = 1e-8,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Best orthogonal ``C`` per pair over its restarts, by successive halving.

    All starts run ``stages[0]`` iterations and the better half of each pair's starts (at least
    ``n_keep``) goes on for ``stages[1]`` iterations, and so on; the survivors then continue until their
    improvement per iteration falls below ``tol`` (pairs that have converged leave the batch) or
    ``max_iter`` iterations in all.

    Parameters
    ----------
    A, B : Tensor, shape (pair, n, n), float64
    C0 : Tensor, shape (pair, restart, n, n)
        Orthogonal starting points.

    Returns
    -------
    value : Tensor, shape (pair,)
        ``max tr(A^T C B C^T)`` found.
    C : Tensor, shape (pair, n, n)
    n_found : Tensor, shape (pair,)
        Surviving starts that ended within ``same`` of ``value`` (2 or more: the best was found twice).
    """
    A4, B4 = A[:, None], B[:, None]
    sigma = 2.0 * torch.linalg.matrix_norm(A, ord=2) * torch.linalg.matrix_norm(B, ord=2)
    sigma = sigma[:, None, None, None] + 1e-300
    C, value = C0.clone(), _objective(A4, B4, C0)
    n_done = 0
    for length in stages:
        for _ in range(min(length, max_iter - n_done)):
            C, value = _step(A4, B4, C, sigma)
        n_done = min(n_done + length, max_iter)
        keep = torch.argsort(value, dim=1, descending=True)[:, : max(n_keep, -(-C.shape[1] // 2))]
        C = torch.take_along_dim(C, keep[..., None, None], dim=1)
        value = torch.take_along_dim(value, keep, dim=1)
    active = torch.arange(A.shape[0], device=A.device)
    for _ in range(max_iter - n_done):
        if active.numel() == 0:
            break
        Cn, vn = _step(A4[active], B4[active], C[active], sigma[active])
        moving = torch.any(vn - value[active] > tol, dim=1)
        C[active], value[active] = Cn, vn
        active = active[moving]
    best = torch.argmax(value, dim=1)
    idx = torch.arange(A.shape[0], device=A.device)
    n_found = torch.sum(value >= value[idx, best][:, None] - same, dim=1)
    return value[idx, best], C[idx, best], n_found


def _step(A: torch.Tensor, B: torch.Tensor, C: torch.Tensor, sigma: torch.Tensor):
    G = A @ C @ B.transpose(-1, -2) + A.transpose(-1, -2) @ C @ B
    safe, fast = _polar(G + sigma * C), _polar(G)
    v_safe, v_fast = _objective(A, B, safe), _objective(A, B, fast)
    take = v_fast > v_safe
    return torch.where(take[..., None, None], fast, safe), torch.maximum(v_fast, v_safe)


def _objective(A: torch.Tensor, B: torch.Tensor, C: torch.Tensor) -> torch.Tensor:
    return torch.sum(A * (C @ B @ C.transpose(-1, -2)), dim=(-2, -1))


__all__ = ["canonical_order", "initial_rotations", "maximise_alignment", "pad_pair", "random_orthogonal"]
