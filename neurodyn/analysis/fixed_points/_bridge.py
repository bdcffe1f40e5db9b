"""Starts between stable fixed points: the midpoints of pairs of attractors, from which a second
Newton pass reaches the saddles on the boundaries of their basins that candidates started from a
network's own states can miss (a saddle whose stable manifold separates two attractors lies on
most paths between them, often near their midpoint)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from neurodyn.analysis.fixed_points._newton import newton_polish, round_off_q
from neurodyn.analysis.fixed_points._search import BatchedMap, speed
from neurodyn.analysis.fixed_points._stability import JacobianFn
from neurodyn.analysis.fixed_points._unique import result_order, unique_points

#: Newton steps from each midpoint at most (each kept only where it lowers q): on the 16- and
#: 128-unit flip-flop networks of the benchmark all 28 midpoints converge within 4
NEWTON_STEPS = 8
#: at most this many midpoints, those of the closest pairs of stable points (all pairs of the
#: 8 attractors of a 3-bit flip-flop network: 28)
MAX_MIDPOINTS = 64


def with_midpoint_starts(F: BatchedMap, part: dict[str, Any], linearise: Callable[[dict], dict],
                         certified: Callable[[torch.Tensor], np.ndarray], like: torch.Tensor,
                         tol_unique: float, jacobian: JacobianFn | None, tol_q: float,
                         counts: dict[str, int]) -> dict[str, Any]:
    """``part`` (one order-1 part of the search's points, not yet linearised) with the points that
    Newton steps from the midpoints of pairs of its stable points reach and it lacks, all linearised
    by ``linearise``.

    The stable points are those the result labels ``"stable"`` (every ``|λ| < 1 − marginal_tol``).
    So that the spectra of all points come from one call, the starts first pair the points that
    ``certified(states)`` (point, state) -> bool (point,) proves stable without eigenvalues (squarings
    of their Jacobians, see ``_stability.certify_stable``; a proof implies the label), and the part
    and the points they reach are then linearised together. Only where the spectra label further
    points stable (slow attractors that the squarings could not prove) do the pairs with those
    follow, their points linearised apart. The new points are converged, farther than
    ``tol_unique`` from the known points and from each other, and polished to round-off; rows are
    sorted converged first, then by q (``_unique.result_order``).
    ``counts["n_midpoint_candidates"]`` counts the starts; ``like`` gives dtype and device.
    """
    conv = np.asarray(part["converged"], dtype=bool)
    if conv.sum() < 2:
        return linearise(part)
    points = torch.as_tensor(part["orbits"][conv, 0], dtype=like.dtype, device=like.device)
    proven = np.asarray(certified(points), dtype=bool)
    starts = midpoints(points[torch.as_tensor(proven, device=like.device)])
    new = _reached(F, starts, part, jacobian, tol_q, tol_unique)
    n_part = conv.shape[0]
    done = linearise(part if new is None else _concat(part, new))
    stable = done["stability"][:n_part][conv] == "stable"
    late = stable & ~proven
    n_starts = starts.shape[0]
    if late.any():  # pairs with a point only its eigenvalues label stable
        i, j = midpoint_pairs(points[torch.as_tensor(stable, device=like.device)])
        with_late = torch.as_tensor(late[stable], device=like.device)
        pick = with_late[i] | with_late[j]
        stable_points = points[torch.as_tensor(stable, device=like.device)]
        later = 0.5 * (stable_points[i[pick]] + stable_points[j[pick]])
        n_starts += later.shape[0]
        new = _reached(F, later, done, jacobian, tol_q, tol_unique)
        if new is not None:
            done = _concat(done, linearise(new))
    counts["n_midpoint_candidates"] = int(n_starts)
    order = result_order(done["orbits"][:, 0], done["q"], done["converged"])
    return {**{name: value[order] for name, value in done.items() if name != "order"}, "order": 1}


def _reached(F: BatchedMap, starts: torch.Tensor, part: dict[str, Any], jacobian: JacobianFn | None,
             tol_q: float, tol_unique: float) -> dict[str, Any] | None:
    """The rows (not linearised) of the new points that :func:`newton_from` reaches from ``starts``
    (start, state) away from ``part``'s points, de-duplicated and polished to round-off; None when
    there are none."""
    if starts.shape[0] == 0:
        return None
    known = torch.as_tensor(part["orbits"][:, 0], dtype=starts.dtype, device=starts.device)
    x, q = newton_from(F, starts, known, jacobian=jacobian, tol_q=tol_q, tol_unique=tol_unique)
    if x.shape[0] == 0:
        return None
    keep = unique_points(x.cpu().numpy(), q.cpu().numpy(), tol_unique)
    x = x[torch.as_tensor(keep, device=x.device)]
    eps = float(torch.finfo(x.dtype).eps)
    x = newton_polish(F, x, jacobian=jacobian, until_q=round_off_q(x, eps))
    with torch.no_grad():
        q_new = (0.5 * (F(x) - x).pow(2).sum(-1)).cpu().numpy()
    n_new = x.shape[0]
    return {"orbits": x.cpu().numpy()[:, None], "q": q_new, "converged": np.ones(n_new, dtype=bool),
            "iterations": np.full(n_new, NEWTON_STEPS), "status": np.full(n_new, "converged", dtype=object),
            "order": 1}


def _concat(part: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The rows of ``part`` followed by those of ``new`` (the fields of ``new``)."""
    return {**{name: np.concatenate([part[name], new[name]]) for name in new if name != "order"}, "order": 1}


def newton_from(F: BatchedMap, starts: torch.Tensor, known: torch.Tensor, *, jacobian: JacobianFn | None,
                tol_q: float, tol_unique: float,
                n_steps: int = NEWTON_STEPS) -> tuple[torch.Tensor, torch.Tensor]:
    """Up to ``n_steps`` Newton steps from each start (:func:`newton_polish`: each kept only where
    it lowers q, each row until ``q < tol_q``), then the rows that converged away from the
    ``known`` points.

    Parameters
    ----------
    starts : Tensor, shape (start, state)
    known : Tensor, shape (point, state)

    Returns
    -------
    states, q : Tensor, shapes (new, state) and (new,)
        The rows that reached ``q < tol_q`` at least ``tol_unique`` (in some unit) from every
        known point, in order of the starts.
    """
    x = newton_polish(F, starts, n_steps=n_steps, jacobian=jacobian, until_q=tol_q)
    with torch.no_grad():
        q = speed(F, x)
    new = q < tol_q
    if known.shape[0]:
        new &= torch.cdist(x, known, p=float("inf")).min(1).values >= tol_unique
    return x[new], q[new]


def midpoints(points: torch.Tensor, max_pairs: int | None = None) -> torch.Tensor:
    """Midpoints of the pairs :func:`midpoint_pairs` picks from ``points`` (point, state), in its
    order; shape (pair, state)."""
    i, j = midpoint_pairs(points, max_pairs)
    return 0.5 * (points[i] + points[j])


def midpoint_pairs(points: torch.Tensor, max_pairs: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Row indices ``(i, j)`` (pair,) of pairs of ``points`` (point, state), ``i < j``, in pair
    order; only the ``max_pairs`` (default ``MAX_MIDPOINTS``) closest pairs when there are more, in
    order of increasing distance (ties in pair order)."""
    max_pairs = MAX_MIDPOINTS if max_pairs is None else int(max_pairs)
    i, j = torch.triu_indices(points.shape[0], points.shape[0], offset=1, device=points.device)
    if i.numel() > max_pairs:
        dist = (points[i] - points[j]).norm(dim=-1)
        order = torch.sort(dist, stable=True).indices[:max_pairs]
        i, j = i[order], j[order]
    return i, j
