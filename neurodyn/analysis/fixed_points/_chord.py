"""Chord-Newton check of candidates against fixed points already found: each candidate iterates
``x ← x − (J* − I)⁻¹ (G(x) − x)`` with the factorisation of the nearest known point ``x*``, so that
the many candidates that lie in the basin of a known point converge at the cost of a few map
evaluations instead of a Newton search with one factorisation per step (Kelley 2003, *Solving
Nonlinear Equations with Newton's Method*, SIAM, §2.3: the chord method)."""

from __future__ import annotations

import torch

from neurodyn.analysis.fixed_points._search import BatchedMap
from neurodyn.analysis.fixed_points._stability import JacobianFn, step_jacobians
from neurodyn.kernels.linalg import gathered_matvec, lu_threads, uses_compiled

#: chord steps a candidate may take before it is handed to the Newton search
CHORD_STEPS = 8
#: every chord step must lower q by at least this factor (the residual about 4.5×): a candidate that
#: contracts more slowly lies at the edge of the known point's basin or outside it, where its own
#: search may lead it to another point (a saddle). On the 3-bit flip-flop networks of the benchmark
#: (1,024 task states) 0.05 finds the same points as 0.01 (16 units: 16 of joint Adam's 17 with
#: either; 128 units with the gradient start: all 24) and settles more candidates. (The docs record
#: an earlier build on which 0.05 and 0.25 lost a saddle reached by one candidate of 1,024.)
CHORD_RATE = 0.05
#: the chord steps gather one inverse per candidate up to this many entries in all (small states:
#: one batched product instead of a Python loop over the known points)
GATHER_ELEMENTS = 1 << 18


def chord_inverses(G: BatchedMap, points: torch.Tensor, jacobian: JacobianFn | None) -> torch.Tensor:
    """``(∂G/∂x − I)⁻¹`` at each point, (point, state, state); NaN where ``J − I`` is singular
    (such a point never passes a candidate's chord check)."""
    M = step_jacobians(G, points, jacobian).clone()
    M.diagonal(dim1=-2, dim2=-1).sub_(1.0)
    with lu_threads(M):
        inv, info = torch.linalg.inv_ex(M)
    bad = (info != 0) | ~torch.isfinite(inv).all(-1).all(-1)
    if bool(bad.any()):
        inv[bad] = float("nan")
    return inv


def chord_check(
    G: BatchedMap,
    x: torch.Tensor,
    points: torch.Tensor,
    inverses: torch.Tensor,
    *,
    tol_q: float,
    n_steps: int = CHORD_STEPS,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Chord steps from each row of ``x`` with the inverse of the known point nearest to it.

    A row that reaches ``q < tol_q`` with q falling by ×``CHORD_RATE`` or more at every step has
    converged (to a fixed point near that known point, by its own iterates); the others fail at
    their first slow or non-finite step.

    Parameters
    ----------
    G : callable ``(candidate, state) -> (candidate, state)``
    x : Tensor, shape (candidate, state)
        Where the checks start.
    points : Tensor, shape (point, state)
        Known fixed points.
    inverses : Tensor, shape (point, state, state)
        ``(J − I)⁻¹`` at each of them (see :func:`chord_inverses`).
    tol_q : float
    n_steps : int
        Chord steps at most.

    Returns
    -------
    converged : Tensor, shape (candidate,) bool
    states, q : Tensor, shapes (candidate, state) and (candidate,)
        Final iterate and its q where converged (``x`` and its q elsewhere).
    steps : Tensor, shape (candidate,) int64
        Chord steps taken by the converged rows (0 elsewhere).
    """
    with torch.no_grad():
        ra = G(x) - x
    q0 = 0.5 * ra.pow(2).sum(-1)
    states, q = x.clone(), q0.clone()
    converged = torch.zeros(x.shape[0], dtype=torch.bool, device=x.device)
    steps = torch.zeros(x.shape[0], dtype=torch.int64, device=x.device)
    near = torch.cdist(x, points).argmin(1)
    pos = torch.arange(x.shape[0], device=x.device)
    xa, qa = x, q0
    for step in range(1, n_steps + 1):
        x_try = xa - _apply_grouped(inverses, near, ra)
        with torch.no_grad():
            r_try = G(x_try) - x_try
        q_try = 0.5 * r_try.pow(2).sum(-1)
        fast = torch.isfinite(q_try) & (q_try <= CHORD_RATE * qa)
        done = fast & (q_try < tol_q)
        fin = pos[done]
        states[fin], q[fin], steps[fin], converged[fin] = x_try[done], q_try[done], step, True
        keep = fast & ~done
        xa, ra, qa, near, pos = x_try[keep], r_try[keep], q_try[keep], near[keep], pos[keep]
        if pos.numel() == 0:
            break
    return converged, states, q, steps


def _apply_grouped(inverses: torch.Tensor, near: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
    """``inverses[near[i]] @ r[i]`` for each row: compiled or as one batched product over gathered
    inverses when they are small (:func:`~neurodyn.kernels.linalg.gathered_matvec`; at most
    ``GATHER_ELEMENTS`` entries in all, or any number within the compiled loops' state size), else
    one matrix product per point (candidates sharing a point form one block of right-hand sides)."""
    if uses_compiled(inverses) or near.numel() * inverses.shape[-1] ** 2 <= GATHER_ELEMENTS:
        return gathered_matvec(inverses, near, r)
    order = torch.argsort(near)
    groups, counts = torch.unique_consecutive(near[order], return_counts=True)
    out = torch.empty_like(r)
    start = 0
    for j, c in zip(groups.tolist(), counts.tolist()):
        rows = order[start:start + c]
        out[rows] = r[rows] @ inverses[j].mT
        start += c
    return out
