"""Jacobians, spectra and stability labels of fixed points and cycles of a discrete-time map."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

BatchedMap = Callable[[torch.Tensor], torch.Tensor]

STABILITY_LABELS = ("stable", "saddle", "unstable", "marginal")


def batch_jacobian(G: BatchedMap, x: torch.Tensor, *, chunk_size: int = 1024) -> torch.Tensor:
    """Jacobians ``dG/dx`` at every row of ``x`` by reverse-mode autograd.

    Rows of a batched map do not interact, so the gradient of ``sum_b G(x)[b, i]`` with respect
    to ``x`` holds row ``i`` of every point's Jacobian: ``state`` backward passes through one
    batched forward pass give all Jacobians of a chunk of ``chunk_size`` points, without a
    Python loop over points (and without importing ``torch.func``, whose first use is slow).

    Parameters
    ----------
    G : callable ``(point, state) -> (point, state)``
        Batched map whose rows do not interact.
    x : Tensor, shape (point, state)

    Returns
    -------
    Tensor, shape (point, state, state)
        ``J[b, i, j] = dG_i/dx_j`` at ``x[b]``.
    """
    n_points, n_state = x.shape
    out = torch.empty((n_points, n_state, n_state), dtype=x.dtype, device=x.device)
    with torch.enable_grad():
        for start in range(0, n_points, chunk_size):
            xb = x[start:start + chunk_size].detach().requires_grad_(True)
            yb = G(xb)
            for i in range(n_state):
                (row,) = torch.autograd.grad(yb[:, i].sum(), xb, retain_graph=i < n_state - 1)
                out[start:start + chunk_size, i] = row
    return out


def cycle_jacobians(G1: BatchedMap, orbit: torch.Tensor) -> torch.Tensor:
    """Monodromy matrices of period-k orbits: ``J(h_{k-1}) ... J(h_1) J(h_0)``.

    Parameters
    ----------
    G1 : callable, the one-step map
    orbit : Tensor, shape (cycle, k, state)
        ``orbit[:, j]`` is the j-th point of each cycle (``orbit[:, j+1] = G1(orbit[:, j])``).

    Returns
    -------
    Tensor, shape (cycle, state, state)
    """
    n_cycles, k, n_state = orbit.shape
    steps = batch_jacobian(G1, orbit.reshape(-1, n_state)).reshape(n_cycles, k, n_state, n_state)
    mono = steps[:, 0]
    for j in range(1, k):
        mono = steps[:, j] @ mono
    return mono


def sorted_eigenvalues(jacobians: np.ndarray) -> np.ndarray:
    """Eigenvalues of each matrix sorted by decreasing modulus; (point, state, state) → (point, state).

    Ties in modulus are broken by decreasing real part, then decreasing imaginary part, so the
    order is deterministic.
    """
    if jacobians.shape[0] == 0:
        return np.zeros(jacobians.shape[:2], dtype=complex)
    eig = np.linalg.eigvals(jacobians).astype(np.complex128)
    keys = (-eig.imag, -eig.real, -np.round(np.abs(eig), 12))
    order = np.lexsort(keys, axis=-1)
    return np.take_along_axis(eig, order, axis=-1)


def leading_modes(jacobians: np.ndarray) -> np.ndarray:
    """Real part of the unit eigenvector of each matrix's largest-modulus eigenvalue; (point, state)."""
    if jacobians.shape[0] == 0:
        return np.zeros(jacobians.shape[:2])
    eig, vec = np.linalg.eig(jacobians)
    top = np.argmax(np.abs(eig), axis=-1)
    mode = np.take_along_axis(vec, top[:, None, None], axis=-1)[..., 0].real
    norm = np.linalg.norm(mode, axis=-1, keepdims=True)
    return mode / np.where(norm > 0, norm, 1.0)


def classify(eigenvalues: np.ndarray, marginal_tol: float) -> tuple[np.ndarray, np.ndarray]:
    """Stability of a discrete-time map's fixed point (or cycle) from its eigenvalues.

    With ``m = marginal_tol`` and moduli ``|λ|``:

    * ``n_unstable`` = number of eigenvalues with ``|λ| > 1 + m``;
    * ``unstable`` — every ``|λ| > 1 + m``;
    * ``saddle`` — ``n_unstable ≥ 1`` but not every eigenvalue is unstable;
    * ``marginal`` — ``n_unstable = 0`` and some ``|λ|`` in the band ``[1 − m, 1 + m]``;
    * ``stable`` — every ``|λ| < 1 − m``.

    Returns
    -------
    labels : ndarray of str, shape (point,)
    n_unstable : ndarray of int64, shape (point,)
    """
    mod = np.abs(eigenvalues)
    n_unstable = (mod > 1.0 + marginal_tol).sum(-1).astype(np.int64)
    n_state = mod.shape[-1]
    in_band = ((mod >= 1.0 - marginal_tol) & (mod <= 1.0 + marginal_tol)).any(-1)
    labels = np.where(
        n_unstable == n_state, "unstable",
        np.where(n_unstable > 0, "saddle", np.where(in_band, "marginal", "stable")),
    )
    return labels.astype(object), n_unstable
