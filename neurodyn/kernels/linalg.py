"""Solves of many small linear systems at once, for the per-candidate Newton searches.

``newton_directions(M, r)`` gives ``−M⁻¹ r`` per row and ``damped_directions(M, r, mu)`` the
Levenberg–Marquardt step ``−(MᵀM + μ I)⁻¹ Mᵀ r``; both give zero rows where a system is singular
or the result is not finite. ``gathered_matvec(A, index, r)`` gives
``A[index[i]] @ r[i]`` per row (chord steps with the inverse at a known point). On CPU tensors of at most
``COMPILED_MAX_STATE`` state dims they run compiled loops
(:mod:`~neurodyn.kernels._numba_linalg`), where torch's batched LAPACK calls cost more in
per-matrix overhead than in arithmetic; otherwise they run torch's batched solvers, the reference.
"""

from __future__ import annotations

import contextlib
import importlib.util

import torch

from neurodyn._threads import one_thread

__all__ = ["COMPILED_MAX_STATE", "LU_ONE_THREAD_MIN_STATE", "damped_directions", "gathered_matvec",
           "lu_threads", "newton_directions", "uses_compiled"]

#: the compiled solves run up to this many state dims (at 64 torch's LAPACK is as fast)
COMPILED_MAX_STATE = 32

_NUMBA = importlib.util.find_spec("numba") is not None


#: torch's batched LU-based calls on the CPU run on one thread from this many dims (see :func:`lu_threads`)
LU_ONE_THREAD_MIN_STATE = 129


def lu_threads(M: torch.Tensor) -> contextlib.AbstractContextManager:
    """The context for torch's batched LU-based calls (``solve``, ``inv``, ``lu_factor``) on ``M``
    (system, n, n): one torch thread for a batch of at least ``LU_ONE_THREAD_MIN_STATE`` dims on the
    CPU, else nothing.

    On more than one intra-op thread, torch's CPU batched LU factorisation fails inside MKL for
    larger matrices (torch 2.13, 2-core x86 machine: from 151 dims in float64, and at 200 in
    float32, "Parameter 6 was incorrect on entry to DLASWP", after which the call never returns;
    pytorch issues 141358 and 142815). One thread, or one matrix, runs it correctly. Below the
    threshold the threads are kept: switching torch's thread count at every Newton iteration
    doubled the search's time at 128 dims, where the batched LU ran correctly on two threads.

    Examples
    --------
    >>> import torch
    >>> from neurodyn.kernels.linalg import LU_ONE_THREAD_MIN_STATE, lu_threads
    >>> M = torch.eye(LU_ONE_THREAD_MIN_STATE).expand(4, -1, -1)
    >>> with lu_threads(M):
    ...     inside = torch.get_num_threads()
    >>> inside
    1
    """
    if (M.device.type == "cpu" and M.ndim > 2 and M.shape[0] > 1 and M.shape[-1] >= LU_ONE_THREAD_MIN_STATE
            and torch.get_num_threads() > 1):
        return one_thread()
    return contextlib.nullcontext()


def uses_compiled(M: torch.Tensor) -> bool:
    """Whether the systems ``M`` (system, n, n) are solved by the compiled loops: CPU, float32 or
    float64, ``n ≤ COMPILED_MAX_STATE``, no autograd graph, Numba installed.

    Examples
    --------
    >>> import torch
    >>> from neurodyn.kernels.linalg import COMPILED_MAX_STATE, uses_compiled
    >>> uses_compiled(torch.zeros(4, COMPILED_MAX_STATE + 1, COMPILED_MAX_STATE + 1))  # torch's LAPACK
    False
    """
    return (_NUMBA and M.device.type == "cpu" and M.dtype in (torch.float32, torch.float64)
            and M.shape[-1] <= COMPILED_MAX_STATE and not M.requires_grad)


def newton_directions(M: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
    """``−M⁻¹ r`` per row; zero where ``M`` is singular or the result is not finite.

    Parameters
    ----------
    M : Tensor, shape (system, n, n)
    r : Tensor, shape (system, n)
        Same dtype and device as ``M``.

    Returns
    -------
    Tensor, shape (system, n)

    Examples
    --------
    >>> import torch
    >>> from neurodyn.kernels.linalg import newton_directions
    >>> M = torch.tensor([[[2.0, 0.0], [0.0, 4.0]], [[1.0, 1.0], [1.0, 1.0]]], dtype=torch.float64)
    >>> newton_directions(M, torch.ones(2, 2, dtype=torch.float64)).tolist()
    [[-0.5, -0.25], [0.0, 0.0]]
    """
    if uses_compiled(M):
        from neurodyn.kernels._numba_linalg import solve_rows

        out, ok = _outputs(r)
        solve_rows(M.detach().contiguous().numpy(), r.detach().contiguous().numpy(), out.numpy(), ok.numpy())
        return out
    with lu_threads(M):
        delta, info = torch.linalg.solve_ex(M, -r.unsqueeze(-1))
    delta = delta.squeeze(-1)
    good = (info == 0)[:, None] & torch.isfinite(delta).all(-1, keepdim=True)
    return torch.where(good, delta, torch.zeros_like(delta))


def damped_directions(M: torch.Tensor, r: torch.Tensor, mu: torch.Tensor) -> torch.Tensor:
    """``−(MᵀM + μ I)⁻¹ Mᵀ r`` per row (a Levenberg–Marquardt step with damping ``μ > 0``); zero
    where the normal matrix is singular in floating point or the result is not finite.

    Parameters
    ----------
    M : Tensor, shape (system, n, n)
    r : Tensor, shape (system, n)
    mu : Tensor, shape (system,)
        Same dtype and device as ``M``.

    Returns
    -------
    Tensor, shape (system, n)

    Examples
    --------
    >>> import torch
    >>> from neurodyn.kernels.linalg import damped_directions
    >>> M = torch.eye(2, dtype=torch.float64)[None]
    >>> damped_directions(M, torch.tensor([[3.0, 6.0]], dtype=torch.float64),
    ...                   torch.tensor([2.0], dtype=torch.float64)).tolist()
    [[-1.0, -2.0]]
    """
    if uses_compiled(M):
        from neurodyn.kernels._numba_linalg import damped_solve_rows

        out, ok = _outputs(r)
        damped_solve_rows(M.detach().contiguous().numpy(), r.detach().contiguous().numpy(),
                          mu.detach().to(M.dtype).contiguous().numpy(), out.numpy(), ok.numpy())
        return out
    Mt = M.mT
    A = Mt @ M
    A.diagonal(dim1=-2, dim2=-1).add_(mu[:, None])
    # an LU solve of the normal matrix: LAPACK's batched Cholesky factorisation plus its two
    # triangular solves cost more at these sizes (8 systems of 128: 2.6 against 1.7 ms in float32,
    # 4.1 against 3.6 ms in float64, one thread)
    with lu_threads(A):
        delta, info = torch.linalg.solve_ex(A, -(Mt @ r.unsqueeze(-1)))
    delta = delta.squeeze(-1)
    good = (info == 0)[:, None] & torch.isfinite(delta).all(-1, keepdim=True)
    return torch.where(good, delta, torch.zeros_like(delta))


def gathered_matvec(A: torch.Tensor, index: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
    """``A[index[i]] @ r[i]`` for each row ``i``, without gathering a matrix per row.

    Parameters
    ----------
    A : Tensor, shape (matrix, n, n)
    index : Tensor, shape (system,) int64
        Entries in ``0 .. matrix − 1``.
    r : Tensor, shape (system, n)
        Same dtype and device as ``A``.

    Returns
    -------
    Tensor, shape (system, n)

    Examples
    --------
    >>> import torch
    >>> from neurodyn.kernels.linalg import gathered_matvec
    >>> A = torch.stack([torch.eye(2), 2 * torch.eye(2)]).double()
    >>> gathered_matvec(A, torch.tensor([1, 0]), torch.ones(2, 2, dtype=torch.float64)).tolist()
    [[2.0, 2.0], [1.0, 1.0]]
    """
    if uses_compiled(A) and not r.requires_grad:
        from neurodyn.kernels._numba_linalg import gathered_matvec_rows

        out = torch.empty(r.shape, dtype=r.dtype)
        gathered_matvec_rows(A.detach().contiguous().numpy(), index.to(torch.int64).contiguous().numpy(),
                             r.detach().contiguous().numpy(), out.numpy())
        return out
    return (r.unsqueeze(1) @ A[index].mT).squeeze(1)


def _outputs(r: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.empty(r.shape, dtype=r.dtype), torch.empty(r.shape[0], dtype=torch.bool)
