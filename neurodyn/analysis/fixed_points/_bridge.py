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
from neurodyn.analysis.fixed_points._unique import unique_points

#: Newton steps from each midpoint at most (each kept only where it lowers q): on the 16- and
#: 128-unit flip-flop networks of the benchmark all 28 midpoints converge within 4
NEWTON_STEPS = 8
#: at most this many midpoints, those of the closest pairs of stable points (all pairs of the
#: 8 attractors of a 3-bit flip-flop network: 28)
MAX_MIDPOINTS = 64


def with_midpoint_starts(F: BatchedMap, part: dict[str, Any], linearise: Callable[[dict], dict],
                         like: torch.Tensor, tol_unique: float, jacobian: JacobianFn | None, tol_q: float,
                         counts: dict[str, int]) -> dict[str, Any]:
    """``part`` (one linearised order-1 part of the search's points) with the points that Newton
    steps from the midpoints of pairs of its stable points reach and it lacks.

    The stable points are those labelled ``"stable"`` by their eigenvalues (every ``|λ| < 1 −
    marginal_tol``), the spectra the result reports. The new points are converged, farther than
    ``tol_unique`` from the part's points and from each other, polished to round-off and
    linearised by ``linearise`` (one spectrum per new point); rows are sorted converged first,
    then by q. ``counts["n_midpoint_candidates"]`` counts the starts; ``like`` gives dtype and
    device.
    """
    conv = part["converged"]
    if conv.sum() < 2:
        return part
    points = torch.as_tensor(part["orbits"][conv, 0], dtype=like.dtype, device=like.device)
    stable = torch.as_tensor(part["stability"][conv] == "stable", device=like.device)
    starts = midpoints(points[stable])
    counts["n_midpoint_candidates"] = int(starts.shape[0])
    if starts.shape[0] == 0:
        return part
    known = torch.as_tensor(part["orbits"][:, 0], dtype=like.dtype, device=like.device)
    x, q = newton_from(F, starts, known, jacobian=jacobian, tol_q=tol_q, tol_unique=tol_unique)
    if x.shape[0] == 0:
        return part
    keep = unique_points(x.cpu().numpy(), q.cpu().numpy(), tol_unique)
    x = x[torch.as_tensor(keep, device=x.device)]
    eps = float(torch.finfo(x.dtype).eps)
    x = newton_polish(F, x, jacobian=jacobian, until_q=round_off_q(x, eps))
    with torch.no_grad():
        q_new = (0.5 * (F(x) - x).pow(2).sum(-1)).cpu().numpy()
    n_new = x.shape[0]
    new = linearise({"orbits": x.cpu().numpy()[:, None], "q": q_new, "converged": np.ones(n_new, dtype=bool),
                     "iterations": np.full(n_new, NEWTON_STEPS),
                     "status": np.full(n_new, "converged", dtype=object), "order": 1})
    merged = {name: np.concatenate([part[name], new[name]]) for name in part if name != "order"}
    order = np.lexsort((merged["q"], ~merged["converged"]))
    return {**{name: value[order] for name, value in merged.items()}, "order": 1}


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
    """Midpoints of pairs of ``points`` (point, state), in pair order; only the ``max_pairs``
    (default ``MAX_MIDPOINTS``) closest pairs when there are more, in order of increasing
    distance (ties in pair order); shape (pair, state)."""
    max_pairs = MAX_MIDPOINTS if max_pairs is None else int(max_pairs)
    i, j = torch.triu_indices(points.shape[0], points.shape[0], offset=1, device=points.device)
    if i.numel() > max_pairs:
        dist = (points[i] - points[j]).norm(dim=-1)
        order = torch.sort(dist, stable=True).indices[:max_pairs]
        i, j = i[order], j[order]
    return 0.5 * (points[i] + points[j])
