"""Jacobians, spectra and stability labels of fixed points and cycles of a discrete-time map."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import torch

from neurodyn._threads import blas_threads

BatchedMap = Callable[[torch.Tensor], torch.Tensor]
JacobianFn = Callable[[torch.Tensor], torch.Tensor]

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


def step_jacobians(G1: BatchedMap, x: torch.Tensor, jacobian: JacobianFn | None = None) -> torch.Tensor:
    """One-step Jacobians at each row of ``x`` (point, state): ``jacobian(x)`` when given (a
    closed form), else :func:`batch_jacobian` of ``G1``; (point, state, state), no gradient."""
    if x.shape[0] == 0:
        return x.new_zeros((0, x.shape[-1], x.shape[-1]))
    with torch.no_grad():
        return batch_jacobian(G1, x) if jacobian is None else jacobian(x)


def power_jacobian(G1: BatchedMap, k: int, jacobian: JacobianFn | None = None) -> JacobianFn:
    """The Jacobian of ``G1^k`` by the chain rule along the orbit, ``J(h_{k-1}) ... J(h_0)``.

    Returns a callable ``(point, state) -> (point, state, state)``; one-step Jacobians come
    from ``jacobian`` (closed forms) or autograd of ``G1``, never from autograd through ``G1^k``.
    """
    def jac_k(x: torch.Tensor) -> torch.Tensor:
        h, mono = x, None
        for j in range(k):
            step = step_jacobians(G1, h, jacobian)
            mono = step if mono is None else step @ mono
            if j < k - 1:
                with torch.no_grad():
                    h = G1(h)
        return mono

    return jac_k


def cycle_jacobians(G1: BatchedMap, orbit: torch.Tensor, jacobian: JacobianFn | None = None) -> torch.Tensor:
    """Monodromy matrices of period-k orbits at every point of the orbit.

    Parameters
    ----------
    G1 : callable, the one-step map
    orbit : Tensor, shape (cycle, k, state)
        ``orbit[:, j]`` is the j-th point of each cycle (``orbit[:, j+1] = G1(orbit[:, j])``).
    jacobian : callable, optional
        One-step Jacobians ``(point, state) -> (point, state, state)``; autograd of ``G1`` by default.

    Returns
    -------
    Tensor, shape (cycle, k, state, state)
        ``[:, j]`` is ``J(h_{j+k-1}) ... J(h_{j+1}) J(h_j)`` (indices mod k): the monodromy
        seen from the j-th point. Each one-step Jacobian is computed once.
    """
    n_cycles, k, n_state = orbit.shape
    steps = step_jacobians(G1, orbit.reshape(-1, n_state), jacobian).reshape(n_cycles, k, n_state, n_state)
    return monodromy(steps)[0]


def monodromy(steps: torch.Tensor, input_steps: torch.Tensor | None = None):
    """Monodromy matrices, and input Jacobians of the k-fold map, from one-step Jacobians along orbits.

    Parameters
    ----------
    steps : Tensor, shape (cycle, k, state, state)
        ``∂F/∂h`` at each point of each orbit.
    input_steps : Tensor, shape (cycle, k, state, input), optional
        ``∂F/∂u`` at the same points (the input held constant along the orbit).

    Returns
    -------
    monodromies : Tensor, shape (cycle, k, state, state)
        Seen from each point j: ``A_{j+k-1} ... A_{j+1} A_j`` (indices mod k).
    input_jacobians : Tensor, shape (cycle, k, state, input), or None
        ``∂F^k/∂u`` from each point j: ``D ← A_i D + B_i`` along the orbit from ``D = 0``.

    Examples
    --------
    >>> import torch
    >>> A = torch.tensor([[[[2.0]], [[3.0]]]])          # one 2-cycle of a scalar map
    >>> B = torch.tensor([[[[1.0]], [[1.0]]]])
    >>> mono, D = monodromy(A, B)
    >>> mono.flatten().tolist(), D.flatten().tolist()   # 3*2 from both points; 3*1+1 and 2*1+1
    ([6.0, 6.0], [4.0, 3.0])
    """
    k = steps.shape[1]
    monos, inputs = [], []
    for j in range(k):
        mono = steps[:, j]
        acc = None if input_steps is None else input_steps[:, j]
        for i in range(1, k):
            nxt = (j + i) % k
            mono = steps[:, nxt] @ mono
            if acc is not None:
                acc = steps[:, nxt] @ acc + input_steps[:, nxt]
        monos.append(mono)
        inputs.append(acc)
    return torch.stack(monos, dim=1), None if input_steps is None else torch.stack(inputs, dim=1)


#: batched eigendecompositions of matrices up to this size run on one BLAS thread: many small
#: LAPACK calls gain nothing from threads and lose several times their CPU time to spinning
ONE_THREAD_EIG_MAX = 512


def spectra(jacobians: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues sorted by decreasing modulus and the leading mode, from one eigenvalue solve.

    Ties in modulus are broken by decreasing real part, then decreasing imaginary part, so the
    order is deterministic. The leading mode is the real part of the unit eigenvector of the
    first eigenvalue in that order, scaled so that its largest component is real and positive; it
    comes from two steps of inverse iteration with that eigenvalue as the shift (real solves for a
    real eigenvalue, complex ones otherwise) instead of every eigenvector (LAPACK ``?geev``
    without vectors costs about half as much as with them; Golub & Van Loan, *Matrix
    Computations*, §7.6.1). From
    ``PARALLEL_SPECTRA_MIN_STATE`` state dims the points are split over as many threads as torch's
    intra-op thread count (``torch.get_num_threads()``, e.g. set by ``OMP_NUM_THREADS``), each
    running one-threaded LAPACK with the GIL released; every point's result is the same whatever
    the split.

    Parameters
    ----------
    jacobians : ndarray, shape (point, state, state)

    Returns
    -------
    eigenvalues : ndarray of complex128, shape (point, state)
    leading_mode : ndarray of float64, shape (point, state)

    Examples
    --------
    >>> import numpy as np
    >>> eig, mode = spectra(np.array([[[0.5, 0.0], [0.0, -2.0]]]))
    >>> eig.round(3).tolist(), mode.round(3).tolist()
    ([[(-2+0j), (0.5+0j)]], [[0.0, 1.0]])
    """
    n_points, n_state = jacobians.shape[:2]
    if n_points == 0:
        return np.zeros((0, n_state), dtype=complex), np.zeros((0, n_state))
    parts = _on_threads(_spectra_block, jacobians)
    return np.concatenate([e for e, _ in parts]), np.concatenate([m for _, m in parts])


def eigenvalues(jacobians: np.ndarray) -> np.ndarray:
    """Eigenvalues of a batch of square matrices, in LAPACK's order (``?geev`` without eigenvectors),
    split over threads as :func:`spectra` splits its points.

    NumPy's LAPACK, not torch's: torch's batched ``eigvals`` runs MKL on its own intra-op threads,
    which ``threadpoolctl`` does not limit, and on two threads took 5-13x its one-thread time for
    16 matrices of 128-200 dims on a 2-core machine.

    Parameters
    ----------
    jacobians : ndarray, shape (point, state, state)
        float32 or float64.

    Returns
    -------
    ndarray, shape (point, state)
        Complex (complex64 for float32 matrices) where any eigenvalue of a block is complex, else
        real, as :func:`numpy.linalg.eigvals` returns them.

    Examples
    --------
    >>> import numpy as np
    >>> eigenvalues(np.array([[[0.0, -1.0], [1.0, 0.0]]])).tolist()
    [[1j, -1j]]
    """
    if jacobians.shape[0] == 0:
        return np.zeros(jacobians.shape[:2], dtype=np.result_type(jacobians.dtype, np.complex64))
    return np.concatenate(_on_threads(np.linalg.eigvals, jacobians))


def _on_threads(fn: Callable[[np.ndarray], Any], jacobians: np.ndarray) -> list[Any]:
    """``fn`` of consecutive blocks of the points of ``jacobians`` (point, state, state), in order:
    up to ``ONE_THREAD_EIG_MAX`` state dims each block on one BLAS thread, the blocks on
    :func:`_spectra_workers` of :func:`_pool`'s threads (LAPACK releases the GIL); above it one
    block with BLAS's own threads."""
    n_points, n_state = jacobians.shape[:2]
    limits = 1 if n_state <= ONE_THREAD_EIG_MAX else None
    workers = _spectra_workers(n_points, n_state) if limits == 1 else 1
    with blas_threads(limits):
        if workers == 1:
            return [fn(jacobians)]
        blocks = np.array_split(np.arange(n_points), workers)
        return list(_pool().map(lambda rows: fn(jacobians[rows]), blocks))


#: :func:`spectra` splits its points over threads from this many state dims (one LAPACK call per
#: point, with the GIL released): below it a block's eigenvalues cost less than a thread's hand-off
PARALLEL_SPECTRA_MIN_STATE = 48


def _spectra_workers(n_points: int, n_state: int) -> int:
    """Threads for :func:`spectra`: as many as torch's intra-op threads (the caller's thread budget,
    e.g. ``OMP_NUM_THREADS``), at most one per point, 1 below ``PARALLEL_SPECTRA_MIN_STATE``."""
    if n_state < PARALLEL_SPECTRA_MIN_STATE or n_points < 2:
        return 1
    return max(1, min(torch.get_num_threads(), n_points))


@functools.cache
def _pool() -> ThreadPoolExecutor:
    """The threads :func:`spectra` splits its points over (made on first use, kept; a forked child
    process makes its own, since it inherits the executor but not its threads)."""
    return ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1), thread_name_prefix="neurodyn-spectra")


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_pool.cache_clear)


def _spectra_block(jacobians: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`spectra` of a block of points (point, state, state), on the calling thread."""
    eig = np.linalg.eigvals(jacobians).astype(np.complex128)
    order = np.lexsort((-eig.imag, -eig.real, -np.round(np.abs(eig), 12)), axis=-1)
    eig = np.take_along_axis(eig, order, axis=-1)
    mode = _eigenvectors(jacobians, eig[:, 0]).real
    norm = np.linalg.norm(mode, axis=-1, keepdims=True)
    return eig, mode / np.where(norm > 0, norm, 1.0)


def _eigenvectors(jacobians: np.ndarray, eigenvalues: np.ndarray) -> np.ndarray:
    """Unit eigenvectors (point, state) of ``eigenvalues`` (point,) by inverse iteration, each
    with its largest component real and positive (NaN-free: a failed solve gives zeros).

    Real eigenvalues (zero imaginary part, as LAPACK returns them) iterate in real arithmetic, about
    a quarter of the complex work."""
    n_points, n_state = jacobians.shape[:2]
    out = np.zeros((n_points, n_state), dtype=np.complex128)
    real = eigenvalues.imag == 0
    for rows, dtype in ((np.flatnonzero(real), np.float64), (np.flatnonzero(~real), np.complex128)):
        if rows.size:
            vals = eigenvalues[rows].real if dtype is np.float64 else eigenvalues[rows]
            out[rows] = _inverse_iteration(jacobians[rows], vals, dtype)
    big = np.take_along_axis(out, np.abs(out).argmax(-1)[:, None], axis=-1)
    return out * np.where(big != 0, np.abs(big) / np.where(big != 0, big, 1.0), 1.0)


def _inverse_iteration(jacobians: np.ndarray, eigenvalues: np.ndarray, dtype) -> np.ndarray:
    """Two inverse-iteration steps from the all-ones vector with the shift just off each eigenvalue,
    in ``dtype`` (float64 for real eigenvalues, complex128 otherwise); unit vectors (point, state),
    zeros where the solve fails. NumPy's solves, not torch's: this runs on :func:`spectra`'s worker
    threads, and torch's batched LU is unsafe on several threads (see
    :func:`neurodyn.kernels.linalg.lu_threads`)."""
    n_state = jacobians.shape[-1]
    scale = np.maximum(np.abs(jacobians).max(axis=(-2, -1)), 1.0)
    # a shift just off the eigenvalue keeps J − σI invertible; the solve amplifies the eigenvector
    # by about |λ − σ|⁻¹ against the other directions
    shift = eigenvalues + 1e-10 * scale
    A = jacobians.astype(dtype) - shift[:, None, None] * np.eye(n_state)
    v = np.ones((A.shape[0], n_state, 1), dtype=dtype)
    for _ in range(2):
        with np.errstate(all="ignore"):
            try:
                v = np.linalg.solve(A, v)
            except np.linalg.LinAlgError:
                v = np.stack([_solve_or_zero(a, b) for a, b in zip(A, v)])
            v = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), np.finfo(float).tiny)
    v = v[..., 0]
    return np.where(np.isfinite(v).all(-1, keepdims=True), v, 0.0)


def _solve_or_zero(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    try:
        return np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        return np.zeros_like(b)


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


#: squarings tried by :func:`certify_stable` before a matrix is left to the eigenvalue solver
MAX_SQUARINGS = 6
#: bytes of float32 matrices squared at once on a CPU: blocks that stay in the cache
SQUARING_BLOCK_BYTES = 8 << 20


def certify_stable(jacobians: torch.Tensor, marginal_tol: float, *,
                   max_squarings: int = MAX_SQUARINGS) -> tuple[torch.Tensor, torch.Tensor]:
    """Prove ``ρ(J) < 1 − marginal_tol`` for the matrices where a few squarings show it.

    For any submultiplicative norm ``ρ(J) ≤ ‖J^p‖^(1/p)``, so the Frobenius norms of
    ``P_k = J^(2^k)``, formed by repeated squaring in float32 batched GEMMs, bound every
    eigenvalue's modulus; ``‖P_k‖`` falls towards ``ρ(J)^(2^k)`` as ``k`` grows, however
    non-normal ``J`` is. A matrix is certified at the first ``k ≤ max_squarings`` with
    ``(‖P_k‖ + e_k)^(1/2^k) < 1 − marginal_tol``: every ``|λ|`` below the marginal band, so
    :func:`classify` would call it stable; squaring continues on the others only. ``e_k``
    bounds ``‖P_k − J^(2^k)‖_F`` rigorously: ``e_0 = u ‖J‖_F`` (Jacobians rounded to the
    squarings' float32; 0 when already in it) and ``e_{k+1} = 2 ‖P_k‖ e_k + e_k² + γ_n ‖P_k‖²`` with
    ``γ_n = n u / (1 − n u)`` (``|fl(AB) − AB| ≤ γ_n |A| |B|``, Higham, *Accuracy and Stability
    of Numerical Algorithms*, §3.5), ``u = 2⁻²⁴``, each plus a bound of what underflow can lose
    (``2 n² u`` times the smallest normal number). Where torch may round float32 products more
    coarsely (TF32 or bfloat16 passes, ``torch.set_float32_matmul_precision``), the squarings run
    in float64 with ``u = 2⁻⁵³``; so do, a second time, the matrices whose float32 squarings
    failed only by their rounding bound (some ``‖P_k‖`` below ``(1 − marginal_tol)^(2^k)`` but
    not ``‖P_k‖ + e_k``: strongly non-normal Jacobians with ``‖J‖ ≫ 1``, whose float32 bound
    outgrows the norms' decay). The norms are summed in float64 and
    enlarged by their own rounding bound. A matrix stops being squared as soon as
    ``(|tr P_k| / n)^(1/2^k)``, a lower bound of ``ρ(J)`` up to rounding, reaches
    ``1 − marginal_tol`` (it cannot be certified), or its norm overflows. Nothing is certified
    that is not stable in exact arithmetic; what is not certified is left to :func:`classify`.

    Parameters
    ----------
    jacobians : Tensor, shape (point, state, state)
        float32 or float64.
    marginal_tol : float
        Half-width of the marginal band ``1 ± marginal_tol``, as for :func:`classify`.
    max_squarings : int
        Largest ``k`` tried (``J^(2^k)``).

    Returns
    -------
    certified : Tensor of bool, shape (point,)
        True where ``ρ(J) < 1 − marginal_tol`` is proven.
    bound : Tensor of float64, shape (point,)
        The proven upper bound of ``ρ(J)`` where certified, NaN elsewhere.

    Examples
    --------
    A Jordan-like block with norm 10 and both eigenvalues 0.5 is certified after a few squarings;
    a rotation by a modulus-1 factor never is.

    >>> import torch
    >>> J = torch.tensor([[[0.5, 10.0], [0.0, 0.5]], [[0.0, -1.0], [1.0, 0.0]]], dtype=torch.float64)
    >>> certified, bound = certify_stable(J, 1e-3)
    >>> certified.tolist(), round(bound[0].item(), 2)
    ([True, False], 0.94)
    """
    n_points, n_state = jacobians.shape[:2]
    device = jacobians.device
    certified = torch.zeros(n_points, dtype=torch.bool, device=device)
    bound = torch.full((n_points,), float("nan"), dtype=torch.float64, device=device)
    limit = 1.0 - marginal_tol
    if n_points == 0 or n_state == 0 or limit <= 0.0:  # with limit ≤ 0 no modulus lies below the band
        return certified, bound
    work = _square_dtype(jacobians)
    certified, bound, blocked = _certify_blocks(jacobians, limit, max_squarings, work)
    retry = ~certified & blocked
    if work == torch.float32 and bool(retry.any()):
        # float32 squarings whose error bound outgrew the norms' decay (strongly non-normal J with
        # ‖J‖ ≫ 1) are repeated in float64, where the bound stays small; the float32 values of
        # float32 Jacobians are exact in float64, so nothing else changes
        rows = retry.nonzero().squeeze(1)
        again, again_bound, _ = _certify_blocks(jacobians[rows].double(), limit, max_squarings, torch.float64)
        certified[rows], bound[rows] = again, again_bound
    return certified, bound


def _certify_blocks(jacobians: torch.Tensor, limit: float, max_squarings: int,
                    work: torch.dtype) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """:func:`_certify_block` over blocks of matrices small enough for the cache on a CPU, squared in
    two reused buffers of dtype ``work``."""
    n_points, n_state = jacobians.shape[:2]
    device = jacobians.device
    out = [torch.zeros(n_points, dtype=torch.bool, device=device),
           torch.full((n_points,), float("nan"), dtype=torch.float64, device=device),
           torch.zeros(n_points, dtype=torch.bool, device=device)]
    item = torch.finfo(work).bits // 8  # bytes per entry
    size = n_points if device.type != "cpu" else max(1, SQUARING_BLOCK_BYTES // (item * n_state * n_state))
    buffers = [torch.empty((min(size, n_points), n_state, n_state), dtype=work, device=device)
               for _ in range(2)]
    for start in range(0, n_points, size):
        block = slice(start, start + size)
        for whole, part in zip(out, _certify_block(jacobians[block], limit, max_squarings, buffers)):
            whole[block] = part
    return out[0], out[1], out[2]


def _certify_block(jacobians: torch.Tensor, limit: float, max_squarings: int,
                   buffers: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`certify_stable` on one block (point, n, n), with ρ < ``limit`` to prove; ``buffers``
    are two (≥ point, n, n) tensors of the squarings' dtype, overwritten. Returns ``certified``,
    ``bound`` and ``blocked``: the matrices that a power's norm alone would have certified but its
    norm plus the rounding bound did not (a more precise dtype may certify them)."""
    n_points, n_state = jacobians.shape[:2]
    device, work = jacobians.device, buffers[0].dtype
    certified = torch.zeros(n_points, dtype=torch.bool, device=device)
    blocked = torch.zeros(n_points, dtype=torch.bool, device=device)
    bound = torch.full((n_points,), float("nan"), dtype=torch.float64, device=device)
    u = torch.finfo(work).eps / 2
    gamma = n_state * u / (1.0 - n_state * u)
    # entries lost to underflow: below the smallest subnormal, n of them in each of n² sums
    underflow = n_state * n_state * float(torch.finfo(work).smallest_normal) * u * 2.0
    index = torch.arange(n_points, device=device)
    err = torch.zeros(n_points, dtype=torch.float64, device=device)
    if jacobians.dtype == work:
        P, where = jacobians, None  # where: the buffer holding P (None: the Jacobians themselves)
    else:
        err = u * _frobenius_upper(jacobians) + underflow
        P, where = buffers[0][:n_points].copy_(jacobians), 0
    for k in range(max_squarings + 1):
        p = 2.0 ** k
        norm = _frobenius_upper(P)
        upper = (norm + err) * (1.0 + 1e-12)
        done = upper < limit ** p * (1.0 - 1e-12)
        certified[index[done]] = True
        bound[index[done]] = upper[done] ** (1.0 / p)
        blocked[index[~done & (norm < limit ** p)]] = True
        if k == max_squarings:
            break
        trace = torch.diagonal(P, dim1=-2, dim2=-1).sum(-1, dtype=torch.float64).abs()
        keep = ~(done | (trace / n_state >= limit ** p) | ~torch.isfinite(upper))
        m = int(keep.sum())
        if m == 0:
            break
        if m < len(keep):  # move the matrices still squared to the front of the other buffer
            rows = keep.nonzero()[:, 0]
            target = 1 if where == 0 else 0
            P = torch.index_select(P, 0, rows, out=buffers[target][:m])
            norm, err, index, where = norm[rows], err[rows], index[rows], target
        err = 2.0 * norm * err + err * err + gamma * norm * norm + underflow
        target = 1 if where == 0 else 0
        P = torch.matmul(P, P, out=buffers[target][:m])
        where = target
    return certified, bound, blocked


def _square_dtype(jacobians: torch.Tensor) -> torch.dtype:
    """float32 for the squarings unless float32 products may be rounded more coarsely than IEEE
    single precision (TF32 or bfloat16 passes allowed by ``torch.set_float32_matmul_precision``
    or ``torch.backends.cuda.matmul.allow_tf32``): then float64."""
    coarse = torch.get_float32_matmul_precision() != "highest" or (
        jacobians.device.type == "cuda" and torch.backends.cuda.matmul.allow_tf32)
    return torch.float64 if coarse else torch.float32


def _frobenius_upper(A: torch.Tensor) -> torch.Tensor:
    """Upper bounds (point,) float64 of the Frobenius norms of A (point, n, n): row norms in A's
    precision, enlarged by their rounding bound, combined in float64."""
    n = A.shape[-1]
    u = torch.finfo(A.dtype).eps / 2
    rows = torch.linalg.vector_norm(A, dim=-1).to(torch.float64) / (1.0 - (n + 2) * u)
    return torch.linalg.vector_norm(rows, dim=-1) * (1.0 + 2.0 * (n + 2) * 2.0 ** -53)
