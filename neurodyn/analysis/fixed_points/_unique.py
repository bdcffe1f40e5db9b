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


def unique_points(points: np.ndarray, rank: np.ndarray, tol: float) -> np.ndarray:
    """Indices of representatives of points that differ by at least ``tol`` along some unit.

    Two points are duplicates when ``max_i |a_i - b_i| < tol`` (FixedPointFinder's ``tol_unique``
    rule). Points are visited in increasing ``rank`` (e.g. q, non-converged last) and a point is
    kept unless it duplicates an already kept one, so the best of each group represents it.
    """
    kept: list[int] = []
    kept_states = np.empty((0, points.shape[-1]))
    for i in np.argsort(rank, kind="stable"):
        if kept and (np.abs(kept_states - points[i]).max(axis=-1) < tol).any():
            continue
        kept.append(int(i))
        kept_states = np.vstack([kept_states, points[i]])
    return np.asarray(kept, dtype=np.int64)


def unique_cycles(orbits: np.ndarray, rank: np.ndarray, tol: float) -> np.ndarray:
    """Indices of distinct cycles among orbits (cycle, k, state), cyclic shifts being the same.

    A candidate duplicates a kept cycle when its first point lies within ``tol`` (max-abs) of
    any point of that cycle's orbit.
    """
    kept: list[int] = []
    k, n_state = orbits.shape[1], orbits.shape[2]
    kept_points = np.empty((0, n_state))
    for i in np.argsort(rank, kind="stable"):
        if kept and (np.abs(kept_points - orbits[i, 0]).max(axis=-1) < tol).any():
            continue
        kept.append(int(i))
        kept_points = np.vstack([kept_points, orbits[i].reshape(k, n_state)])
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

