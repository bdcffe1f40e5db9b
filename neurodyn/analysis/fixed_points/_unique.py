"""De-duplication, outlier exclusion and minimal periods of fixed-point candidates."""

from __future__ import annotations

import numpy as np


def distance_inliers(points: np.ndarray, initial_states: np.ndarray, scale: float) -> np.ndarray:
    """FixedPointFinder's distance test: keep points closer than ``scale`` to the initial states.

    Distances are measured from the centroid of ``initial_states`` (n, state) and divided by the
    mean distance of the initial states to that centroid; points (point, state) with a normalised
    distance of ``scale`` or more are outliers. With one initial state (or all equal) the spread
    is zero and every finite point is kept.

    Returns
    -------
    ndarray of bool, shape (point,)
    """
    finite = np.isfinite(points).all(axis=-1)
    centroid = initial_states.mean(axis=0)
    spread = np.linalg.norm(initial_states - centroid, axis=-1).mean()
    if not np.isfinite(scale) or spread == 0:
        return finite
    with np.errstate(invalid="ignore"):
        dist = np.linalg.norm(points - centroid, axis=-1) / spread
    return finite & (dist < scale)


#: states are compared at this resolution when they break ties in :func:`result_order`
ORDER_RESOLUTION = 1e-9


def result_order(states: np.ndarray, q: np.ndarray, converged: np.ndarray) -> np.ndarray:
    """Row order of a result: converged rows first, then by increasing q, where a q at its row's
    round-off level (``100 (eps · max(1, max |state|))²``, eps of ``states``' dtype) counts as 0, and
    ties broken by the states in lexicographic order (at ``ORDER_RESOLUTION``).

    Points polished to round-off have q that differ only by rounding, which the run's arithmetic
    decides (thread count, memory alignment, the process's earlier work); ordered by them, two
    such points could swap rows between runs of the same seed.

    Parameters
    ----------
    states : ndarray, shape (row, state)
    q, converged : ndarray, shape (row,)

    Returns
    -------
    ndarray of int64, shape (row,)
        Indices into the rows, in order.

    Examples
    --------
    >>> import numpy as np
    >>> states = np.array([[0.9, -0.6], [-0.9, 0.6], [0.0, 0.0]])
    >>> result_order(states, np.array([3e-31, 2e-31, 1e-3]), np.array([True, True, False])).tolist()
    [1, 0, 2]
    """
    states = np.asarray(states)
    if states.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    eps = float(np.finfo(states.dtype).eps) if np.issubdtype(states.dtype, np.floating) else 2.0 ** -52
    with np.errstate(invalid="ignore"):
        floor = 100.0 * (eps * np.maximum(1.0, np.abs(states).max(-1))) ** 2
        key_q = np.where(np.asarray(q) <= floor, 0.0, q)
    grid = np.round(states / ORDER_RESOLUTION)
    columns = (grid[:, j] for j in range(states.shape[1] - 1, -1, -1))  # the last key sorts first
    keys = (*columns, key_q, ~np.asarray(converged, dtype=bool))
    return np.lexsort(keys).astype(np.int64)


def unique_points(points: np.ndarray, rank: np.ndarray, tol: float, n_cond: int = 0) -> np.ndarray:
    """Indices of representatives of points that differ by at least ``tol`` along some unit.

    Two points are duplicates when ``max_i |a_i - b_i| < tol`` (FixedPointFinder's ``tol_unique``
    rule); with ``n_cond`` > 0 the last ``n_cond`` columns are the input each point was found under,
    and points are duplicates only when those are exactly equal (and their states within ``tol``).
    Points are visited in increasing ``rank`` (point,), one value per point (e.g. q, or each point's
    position in a sort: ``np.argsort(order)``, not the ``order`` itself), and a point is
    kept unless it duplicates an already kept one, so the best of each group represents it.
    Each kept point removes its later duplicates in one vectorised test, so the cost is
    ``kept × point`` distance rows rather than a Python step per point.
    """
    return _greedy_unique(points[:, None, :], points, rank, tol, n_cond)


def unique_cycles(orbits: np.ndarray, rank: np.ndarray, tol: float, n_cond: int = 0) -> np.ndarray:
    """Indices of distinct cycles among orbits (cycle, k, state), cyclic shifts being the same.

    A candidate duplicates a kept cycle when its first point lies within ``tol`` (max-abs) of
    any point of that cycle's orbit (and, with ``n_cond``, has exactly its input columns).
    """
    return _greedy_unique(orbits, orbits[:, 0], rank, tol, n_cond)


def distance(diff: np.ndarray, n_cond: int = 0) -> np.ndarray:
    """Max-abs distance over the last axis of differences ``diff`` (..., state [+ input]); with
    ``n_cond`` > 0 over the state columns only, and ``inf`` where the last ``n_cond`` columns (the
    inputs) differ at all: points under different inputs are never duplicates."""
    diff = np.abs(diff)
    if not n_cond:
        return diff.max(axis=-1)
    return np.where((diff[..., -n_cond:] == 0).all(axis=-1), diff[..., :-n_cond].max(axis=-1, initial=0.0),
                    np.inf)


def _greedy_unique(kept_as: np.ndarray, probes: np.ndarray, rank: np.ndarray, tol: float,
                   n_cond: int = 0) -> np.ndarray:
    """Greedy representatives in increasing ``rank``: candidate ``i`` (its points ``kept_as[i]``,
    shape (k, state), and its probe ``probes[i]``, (state,)) is kept unless its probe lies within
    ``tol`` (max-abs) of a point of a kept candidate. The first unresolved candidate in rank order
    is always kept, and it resolves every later one whose probe is within ``tol`` of its points."""
    order = np.argsort(rank, kind="stable")
    alive = np.ones(order.size, dtype=bool)  # in rank order: neither kept nor a duplicate yet
    kept: list[int] = []
    pos = 0
    while True:
        rest = np.flatnonzero(alive[pos:])
        if rest.size == 0:
            break
        pos += int(rest[0])
        i = order[pos]
        kept.append(int(i))
        alive[pos] = False
        later = pos + 1 + np.flatnonzero(alive[pos + 1:])
        dist = distance(probes[order[later]][:, None, :] - kept_as[i][None], n_cond).min(axis=-1)
        alive[later[dist < tol]] = False
    return np.asarray(kept, dtype=np.int64)


def has_minimal_period(orbits: np.ndarray, tol: float) -> np.ndarray:
    """True where an orbit (cycle, k+1, state) of ``orbit[:, j] = F^j(h)`` has minimal period k.

    The orbit must hold ``k + 1`` points (``F^0 .. F^k``); a candidate whose ``F^d(h)`` returns
    within ``tol`` of ``h`` for a proper divisor ``d`` of ``k`` belongs to a lower order.
    """
    k = orbits.shape[1] - 1
    ok = np.ones(orbits.shape[0], dtype=bool)
    for d in range(1, k):
        if k % d == 0:
            ok &= np.abs(orbits[:, d] - orbits[:, 0]).max(axis=-1) >= tol
    return ok



def merge_bracketing(points: np.ndarray, q: np.ndarray, qfun, tol_q: float, floor: float,
                     n_samples: int = 9, n_cond: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Merge converged points that approach one marginal fixed point from different sides.

    At a marginal fixed point (``J − I`` singular) the residual ``q`` falls only algebraically and
    Newton steps cannot polish the point, so searches started on different sides stop at
    ``q < tol_q`` some way off it, farther apart than ``tol_unique``. Two points ``a``, ``b`` are one
    fixed point when the straight segment between them stays below ``tol_q`` and ``q`` dips inside
    it below half the smaller end value (they bracket the point); points polished down to ``q <=
    floor`` (round-off) are exact and never merged, which keeps distinct points and the points of a
    line attractor apart. Groups are the connected components of this relation (a point that
    brackets members of two groups joins them), so points around a marginal point in several
    dimensions form one group however their pairs line up. A group is represented by the mean of
    its points when ``q`` there is lowest, else by its best point.

    Parameters
    ----------
    points : ndarray, shape (point, state)
    q : ndarray, shape (point,)
    qfun : callable
        ``qfun(states (n, state)) -> q (n,)``.
    tol_q, floor : float
    n_cond : int
        The last ``n_cond`` columns are the input each point was found under: only points with
        exactly equal inputs are merged.

    Returns
    -------
    keep : ndarray of int64, shape (group,)
        Index of each group's first point (the lowest q), in increasing order of q.
    states : ndarray, shape (group, state)
        The representative state of each group.
    """
    order = np.argsort(q, kind="stable")
    groups: list[list[int]] = []
    inner = np.linspace(0.0, 1.0, n_samples)[1:-1, None]

    def brackets(i: int, j: int) -> bool:
        if min(q[i], q[j]) <= floor or (n_cond and np.any(points[i, -n_cond:] != points[j, -n_cond:])):
            return False
        qs = qfun(points[i] + inner * (points[j] - points[i]))
        return bool(np.all(qs <= tol_q) and qs.min() < 0.5 * min(q[i], q[j]))

    for i in order:  # groups are the connected components of the bracketing relation
        joined = [g for g in groups if any(brackets(int(j), int(i)) for j in g)]
        merged = sorted([int(i), *(j for g in joined for j in g)], key=lambda j: (q[j], j))
        groups = [g for g in groups if not any(g is h for h in joined)] + [merged]
    groups.sort(key=lambda g: (q[g[0]], g[0]))
    states = np.empty((len(groups), points.shape[1]))
    for n, g in enumerate(groups):
        states[n] = points[g[0]]
        if len(g) > 1:
            mean = points[g].mean(axis=0)
            if qfun(mean[None])[0] < q[g[0]]:
                states[n] = mean
    return np.asarray([g[0] for g in groups], dtype=np.int64), states
