"""Bounded convex polytopes ``{s : A s <= b}`` in the coordinates of a manifold piece.

A manifold piece is ``{p + V s : A s <= b}`` with ``V`` (latent, k) orthonormal; all geometry here
happens in the k piece coordinates. Each polytope is kept in reduced form: its vertices
(vertex, k) and a non-redundant facet list. ``k = 1`` (intervals) takes an exact closed-form path;
``k >= 2`` uses Qhull half-space intersection with the Chebyshev centre (an LP) as interior point.
Up to ``HULL_MAX_DIM`` piece dimensions the facets are read off Qhull's convex hull of the vertices
and cuts are hulls of points; above it Qhull's triangulated hull has combinatorially many facets, so
the facets come from the half-space description itself (the halfspaces that are vertices of the dual
hull) and every cut is one half-space intersection.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

HULL_MAX_DIM = 3


class Polytope(NamedTuple):
    """Reduced polytope: facets ``A`` (facet, k), ``b`` (facet,), vertices (vertex, k), inradius."""

    A: np.ndarray
    b: np.ndarray
    vertices: np.ndarray
    radius: float


def chebyshev(A: np.ndarray, b: np.ndarray, *, radius_bounds: tuple[float | None, float | None] = (0.0, None)
              ) -> tuple[np.ndarray | None, float]:
    """Centre and radius of the largest ball in ``{A s <= b}`` (``(None, -inf)`` when infeasible).

    The linear programme (scipy's HiGHS) maximises ``r`` subject to ``A s + ||A_i|| r <= b`` within
    ``radius_bounds``; a negative lower bound lets it report how far an empty cell is from
    non-empty (the region search), an upper bound keeps unbounded cells finite.
    """
    from scipy.optimize import linprog

    k = A.shape[1]
    if A.shape[0] == 0 and radius_bounds[1] is not None:
        return np.zeros(k), float(radius_bounds[1])
    norms = np.linalg.norm(A, axis=1)
    cost = np.zeros(k + 1)
    cost[-1] = -1.0
    res = linprog(cost, A_ub=np.hstack([A, norms[:, None]]), b_ub=b,
                  bounds=[(None, None)] * k + [radius_bounds], method="highs")
    if res.status != 0:
        return None, -np.inf
    return res.x[:k], float(res.x[-1])


def feasible_point(A_ub: np.ndarray, b_ub: np.ndarray, *, A_eq: np.ndarray | None = None,
                   b_eq: np.ndarray | None = None, bounds: list | None = None) -> np.ndarray | None:
    """A point of ``{x : A_ub x <= b_ub, A_eq x = b_eq}`` within ``bounds`` (default free), or None.

    A feasibility linear programme (zero cost, scipy's HiGHS).
    """
    from scipy.optimize import linprog

    n = A_ub.shape[1]
    res = linprog(np.zeros(n), A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq,
                  bounds=[(None, None)] * n if bounds is None else bounds, method="highs")
    return res.x if res.status == 0 else None


def _reduce_interval(A: np.ndarray, b: np.ndarray, tol: float) -> Polytope | None:
    a = A[:, 0]
    if np.any((np.abs(a) <= 1e-300) & (b < -tol)):
        return None
    pos, neg = a > 1e-300, a < -1e-300
    hi = np.min(b[pos] / a[pos]) if pos.any() else np.inf
    lo = np.max(b[neg] / a[neg]) if neg.any() else -np.inf
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError("unbounded manifold piece; give a finite box")
    return _interval(lo, hi, tol)


def _interval(lo: float, hi: float, tol: float) -> Polytope | None:
    """The 1-D polytope ``[lo, hi]`` (facets ``s <= hi``, ``-s <= -lo``); None when thinner than ``2 tol``."""
    if hi - lo <= 2 * tol:
        return None
    return Polytope(np.array([[1.0], [-1.0]]), np.array([hi, -lo]), np.array([[lo], [hi]]),
                    0.5 * (hi - lo))


def reduce(A: np.ndarray, b: np.ndarray, *, tol: float = 1e-10) -> Polytope | None:
    """Vertices and non-redundant facets of ``{A s <= b}``; None when empty or thinner than ``tol``.

    Raises
    ------
    ValueError
        If the polytope is unbounded (every piece carries the bounding box).
    """
    A = np.asarray(A, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if A.shape[1] == 1:
        return _reduce_interval(A, b, tol)
    centre, radius = chebyshev(A, b)
    if centre is None or radius <= tol:
        return None
    from scipy.spatial import ConvexHull, HalfspaceIntersection, QhullError

    try:
        hs = HalfspaceIntersection(np.hstack([A, -b[:, None]]), centre)
        verts = hs.intersections
        hull = ConvexHull(verts) if A.shape[1] <= HULL_MAX_DIM else None
    except QhullError:
        return None
    if not np.all(np.isfinite(verts)) or np.max(np.abs(verts)) > 1e12:
        raise ValueError("unbounded manifold piece; give a finite box")
    if hull is None:  # facets: the non-redundant halfspaces; vertices: the distinct intersections
        keep = np.unique(np.concatenate([np.asarray(f, dtype=np.int64) for f in hs.dual_facets]))
        norms = np.linalg.norm(A[keep], axis=1)
        eq = np.hstack([A[keep], -b[keep, None]]) / norms[:, None]
        return Polytope(*_facets(eq), _distinct(verts), radius)
    eq = hull.equations  # n . x + d <= 0 inside
    verts = verts[np.unique(hull.vertices)]
    return Polytope(*_facets(eq), verts, radius)


def _facets(eq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(A, b)`` from unit-normal equations ``n . s + d <= 0`` (facet, k + 1), duplicates merged."""
    eq = np.unique(np.round(eq, 12), axis=0)
    return eq[:, :-1], -eq[:, -1]


def _distinct(points: np.ndarray, rtol: float = 1e-9) -> np.ndarray:
    """Points (point, k) without near-duplicates (a degenerate vertex is met once per dual facet)."""
    tol = rtol * (1.0 + float(np.max(np.abs(points))))
    points = points[np.lexsort(points.T[::-1])]
    dup = np.zeros(len(points), dtype=bool)
    for start in range(0, len(points), 512):  # blocks of rows: an earlier row within tol marks a duplicate
        rows = points[start:start + 512]
        near = np.max(np.abs(rows[:, None, :] - points[None, :start + 512, :]), axis=2) <= tol
        near &= np.arange(start + 512)[None, :len(points)] < np.arange(start, start + len(rows))[:, None]
        dup[start:start + len(rows)] = near.any(axis=1)
    return points[~dup]


def linear_range(poly: Polytope, c: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Min and max of ``c @ s + d`` over the polytope; ``c`` (m, k), ``d`` (m,) → (m,), (m,)."""
    vals = poly.vertices @ c.T + d
    return vals.min(axis=0), vals.max(axis=0)


def _from_points(points: np.ndarray, tol: float) -> Polytope | None:
    """Convex hull of points (point, k) as a reduced polytope; None when thinner than ``tol``."""
    k = points.shape[1]
    if k == 1:
        return _interval(points.min(), points.max(), tol)
    from scipy.spatial import ConvexHull, QhullError

    if len(points) <= k:
        return None
    try:
        hull = ConvexHull(points)
    except QhullError:
        return None
    A, b = _facets(hull.equations)
    verts = points[hull.vertices]
    depth = float(np.min(b - A @ verts.mean(axis=0)))
    if depth <= tol:
        return None
    return Polytope(A, b, verts, depth)


def clip(poly: Polytope, a: np.ndarray, b0: float, *, tol: float = 1e-10) -> Polytope | None:
    """``poly ∩ {a @ s <= b0}`` from the vertices alone (no LP).

    The cut polytope is the hull of the vertices on the kept side and of the points where segments
    between kept and removed vertices cross the hyperplane (all inside by convexity).
    """
    scale = max(float(np.linalg.norm(a)), 1e-300)
    vals = (poly.vertices @ a - b0) / scale
    if np.all(vals <= tol):
        return poly
    if np.all(vals >= -tol):
        return None
    if poly.vertices.shape[1] > HULL_MAX_DIM:
        return reduce(np.vstack([poly.A, a]), np.append(poly.b, b0), tol=tol)
    keep, drop = vals <= 0, vals > 0
    vk, vd = poly.vertices[keep], poly.vertices[drop]
    fk, fd = vals[keep], vals[drop]
    inner = fk < 0
    t = fk[inner, None] / (fk[inner, None] - fd[None, :])  # (kept, dropped)
    cross = vk[inner, None, :] + t[..., None] * (vd[None, :, :] - vk[inner, None, :])
    return _from_points(np.vstack([vk, cross.reshape(-1, vk.shape[1])]), tol)


def clip_all(poly: Polytope, A: np.ndarray, b: np.ndarray, *, tol: float = 1e-10) -> Polytope | None:
    """Clip by every row of ``A s <= b`` (rows satisfied at all vertices cost one product)."""
    norms = np.maximum(np.linalg.norm(A, axis=1), 1e-300)
    viol = np.flatnonzero(np.max(poly.vertices @ A.T - b, axis=0) / norms > tol)
    if poly.vertices.shape[1] > HULL_MAX_DIM and len(viol) > 1:  # one intersection for all cuts
        if np.any(np.all((poly.vertices @ A[viol].T - b[viol]) / norms[viol] >= -tol, axis=0)):
            return None
        return reduce(np.vstack([poly.A, A[viol]]), np.concatenate([poly.b, b[viol]]), tol=tol)
    for i in viol:
        poly = clip(poly, A[i], b[i], tol=tol)
        if poly is None:
            return None
    return poly


def split(poly: Polytope, c: np.ndarray, d: np.ndarray, *, tol: float = 1e-10
          ) -> list[tuple[np.ndarray, Polytope]]:
    """Cut a polytope by the hyperplanes ``c[j] @ s + d[j] = 0`` into cells of constant sign.

    Returns ``[(signs, cell)]`` with ``signs`` (m,) bool: ``c[j] @ s + d[j] > 0`` inside the cell
    (a hyperplane containing the whole cell counts as False).
    """
    norms = np.maximum(np.linalg.norm(c, axis=1), 1e-300)
    cells = [(np.zeros(len(d), dtype=bool), poly)]
    lo, hi = linear_range(poly, c, d)
    for j in np.flatnonzero((lo / norms < -tol) & (hi / norms > tol)):
        nxt = []
        for signs, cell in cells:
            for positive in (True, False):
                sign = -1.0 if positive else 1.0
                sub = clip(cell, sign * c[j], -sign * d[j], tol=tol)
                if sub is not None:
                    s = signs.copy()
                    s[j] = positive
                    nxt.append((s, sub))
        cells = nxt
    out = []
    for signs, cell in cells:
        clo, chi = linear_range(cell, c, d)
        s = signs.copy()
        decided = (clo / norms > -tol) | (chi / norms < tol)
        s[decided] = ((clo + chi) / 2 / norms > tol)[decided]
        out.append((s, cell))
    return out


def sample(poly: Polytope, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` points (n, k) in the polytope: evenly spaced for intervals, else uniform by rejection."""
    k = poly.vertices.shape[1]
    if k == 1:
        lo, hi = poly.vertices[0, 0], poly.vertices[1, 0]
        return np.linspace(lo, hi, n + 2)[1:-1, None]
    lo, hi = poly.vertices.min(axis=0), poly.vertices.max(axis=0)
    out = np.empty((0, k))
    for _ in range(50):
        cand = rng.uniform(lo, hi, size=(4 * n + 16, k))
        ok = np.all(cand @ poly.A.T <= poly.b, axis=1)
        out = np.vstack([out, cand[ok]])
        if len(out) >= n:
            break
    if len(out) < n:  # very thin polytope: convex combinations of vertices
        w = rng.dirichlet(np.ones(len(poly.vertices)), size=n - len(out))
        out = np.vstack([out, w @ poly.vertices])
    return out[:n]


def contains(poly: Polytope, s: np.ndarray, tol: float = 1e-9) -> np.ndarray:
    """Whether each point (..., k) lies in the polytope up to ``tol`` (facets normalised)."""
    norms = np.linalg.norm(poly.A, axis=1)
    return np.all((s @ poly.A.T - poly.b) / norms <= tol, axis=-1)


def box_rows(base: np.ndarray, basis: np.ndarray, lo: np.ndarray, hi: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray]:
    """Rows keeping ``lo <= base + basis @ s <= hi`` as ``A s <= b``."""
    return np.vstack([basis, -basis]), np.concatenate([hi - base, base - lo])
