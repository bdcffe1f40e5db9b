"""Homoclinic and heteroclinic points: intersections of stable and unstable manifold pieces.

Two pieces ``{p + V a : A_s a <= b_s}`` (stable) and ``{q + U c : A_u c <= b_u}`` (unstable) meet
where ``p + V a = q + U c`` with both sets of facet constraints satisfied: a linear solve when
``dim V + dim U = latent``, a feasibility LP otherwise. A meeting point is transversal when
``[V, U]`` spans the state space. A transversal homoclinic point of a saddle implies a Smale
horseshoe in some iterate of the map, i.e. chaos (Smale-Birkhoff homoclinic theorem; for
piecewise-smooth maps it needs the region maps along the orbit to be invertible, which is checked
here). Used for PLRNNs in Eisenmann et al., "Detecting invariant manifolds in ReLU-based RNNs"
(ICLR 2026).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from neurodyn._result import Result, decode_attrs, encode_attrs
from neurodyn.analysis.plrnn._polytope import feasible_point
from neurodyn.analysis.plrnn.manifold_result import ManifoldPiece, ManifoldResult

__all__ = ["HomoclinicResult", "find_homoclinic_points"]

HOMOCLINIC_STATUS = ("transversal", "tangential", "not_invertible")
_BOOLS = ("transversal", "invertible")
_INTS = ("stable_saddle", "unstable_saddle", "stable_piece", "unstable_piece")


@dataclass(frozen=True)
class HomoclinicResult(Result):
    """Intersection points of stable and unstable pieces (format ``neurodyn.homoclinic``).

    Attributes
    ----------
    points : ndarray, shape (point, latent)
    kind : ndarray of str, shape (point,)
        "homoclinic" (both pieces from the same saddle) or "heteroclinic".
    stable_saddle, unstable_saddle, stable_piece, unstable_piece : ndarray of int, shape (point,)
    transversal : ndarray of bool, shape (point,)
    angle : ndarray, shape (point,)
        Smallest principal angle (rad) between the two pieces' directions (0 = tangency).
    invertible : ndarray of bool, shape (point,)
        The region maps along the orbit are invertible: the regions of both pieces, of their
        ancestor pieces (the way back to the saddle) and of the saddle cycle (needed for the
        Smale-Birkhoff argument).
    approach : ndarray, shape (point,)
        Smallest distance to the stable piece's saddle cycle along the first ``n_check`` forward
        iterates of the point (a numerical confirmation that it lies on the stable manifold).

    Examples
    --------
    >>> from neurodyn.analysis import find_homoclinic_points
    >>> from neurodyn.analysis.plrnn._examples import lozi_manifolds, lozi_map
    >>> result = find_homoclinic_points(lozi_map(), lozi_manifolds(max_depth=5))
    >>> result.points.shape[1], sorted(set(result.kind.tolist())), sorted(set(result.status.tolist()))
    (2, ['heteroclinic', 'homoclinic'], ['transversal'])
    >>> print(result.report().splitlines()[-1][:40])
    transversal homoclinic point of saddle 1
    """

    points: np.ndarray
    kind: np.ndarray
    stable_saddle: np.ndarray
    unstable_saddle: np.ndarray
    stable_piece: np.ndarray
    unstable_piece: np.ndarray
    transversal: np.ndarray
    angle: np.ndarray
    invertible: np.ndarray
    approach: np.ndarray
    attrs: dict[str, Any] = field(default_factory=dict)

    FORMAT: ClassVar[str] = "neurodyn.homoclinic"
    FORMAT_VERSION: ClassVar[int] = 1
    REQUIRED: ClassVar[tuple[str, ...]] = ("state", "kind", *_INTS, *_BOOLS, "angle", "approach")

    @property
    def status(self) -> np.ndarray:
        """Per point, shape (point,): ``"transversal"`` (the pieces span the state space),
        ``"tangential"`` (they do not) or ``"not_invertible"`` (a region map along the orbit is
        singular, so the Smale-Birkhoff argument does not apply)."""
        return np.where(~self.invertible, "not_invertible",
                        np.where(self.transversal, "transversal", "tangential")).astype(object)

    @property
    def proves_chaos(self) -> bool:
        """True when some transversal homoclinic point with invertible region maps was found."""
        return bool(np.any((self.kind == "homoclinic") & self.transversal & self.invertible))

    def report(self) -> str:
        """A plain-language summary: what was found and whether it establishes chaos."""
        n_h = int(np.sum(self.kind == "homoclinic"))
        n_x = int(np.sum(self.kind == "heteroclinic"))
        lines = [f"{n_h} homoclinic and {n_x} heteroclinic points "
                 f"({int(np.sum(self.transversal))} transversal)"]
        if self.proves_chaos:
            i = int(np.flatnonzero((self.kind == "homoclinic") & self.transversal & self.invertible)[0])
            lines.append(
                f"transversal homoclinic point of saddle {int(self.stable_saddle[i])} at "
                f"{np.array2string(self.points[i], precision=6)} (angle {self.angle[i]:.3g} rad): by "
                "the Smale-Birkhoff homoclinic theorem some iterate of the map has a horseshoe, so the "
                "map is chaotic on an invariant Cantor set (not necessarily an attractor)")
        else:
            lines.append("no transversal homoclinic point found: this does not rule out chaos "
                         "(manifolds are truncated by depth, box and piece caps)")
        return "\n".join(lines)

    def to_xarray(self):
        """Dims ``point``, ``unit``; booleans stored as int8."""
        import xarray as xr

        d = ("point",)
        data = {"state": (("point", "unit"), self.points), "kind": (d, self.kind.astype(object)),
                "angle": (d, self.angle), "approach": (d, self.approach), "status": (d, self.status)}
        data.update({k: (d, getattr(self, k)) for k in _INTS})
        data.update({k: (d, getattr(self, k).astype(np.int8)) for k in _BOOLS})
        return xr.Dataset(data, attrs={**self.format_attrs(), "proves_chaos": int(self.proves_chaos),
                                       **encode_attrs(self.attrs)})

    @classmethod
    def from_xarray(cls, ds) -> HomoclinicResult:
        """Rebuild from :meth:`to_xarray`'s dataset (or a file written from one)."""
        return cls(points=ds["state"].values.astype(np.float64),
                   kind=ds["kind"].values.astype(str), angle=ds["angle"].values.astype(np.float64),
                   approach=ds["approach"].values.astype(np.float64),
                   attrs=decode_attrs(ds.attrs, skip=("proves_chaos",)),
                   **{k: ds[k].values.astype(np.int64) for k in _INTS},
                   **{k: ds[k].values.astype(bool) for k in _BOOLS})


def _meet(sp: ManifoldPiece, up: ManifoldPiece, tol: float) -> np.ndarray | None:
    """A common point of two pieces, or None."""
    V, U = sp.basis, up.basis
    n, ks, ku = V.shape[0], V.shape[1], U.shape[1]
    M = np.hstack([V, -U])
    rhs = up.base - sp.base
    if ks + ku == n and np.linalg.matrix_rank(M) == n:
        x = np.linalg.solve(M, rhs)
        a, c = x[:ks], x[ks:]
        ok_s = np.all((sp.A @ a - sp.b) / np.linalg.norm(sp.A, axis=1) <= tol)
        ok_u = np.all((up.A @ c - up.b) / np.linalg.norm(up.A, axis=1) <= tol)
        return sp.points(a) if ok_s and ok_u else None
    A_ub = np.block([[sp.A, np.zeros((len(sp.b), ku))], [np.zeros((len(up.b), ks)), up.A]])
    x = feasible_point(A_ub, np.concatenate([sp.b, up.b]) + tol, A_eq=M, b_eq=rhs)
    return None if x is None else sp.points(x[:ks])


def _bounds(pieces: list[ManifoldPiece]) -> tuple[np.ndarray, np.ndarray]:
    """Bounding boxes of pieces in state coordinates, each (piece, latent)."""
    vx = [p.points(p.vertices) for p in pieces]
    return np.array([v.min(0) for v in vx]), np.array([v.max(0) for v in vx])


def _orbit_regions(manifolds: ManifoldResult, i: int) -> list[np.ndarray]:
    """Regions of a piece, of its ancestors (the orbit's way to the saddle) and of the saddle."""
    out = []
    while i >= 0:
        piece = manifolds.pieces[i]
        out.append(piece.region)
        i = piece.parent
    out.extend(manifolds.saddles[piece.saddle].regions)
    return out


def _approach(system: Any, manifolds: ManifoldResult, pts: np.ndarray, saddle: np.ndarray,
              n_check: int) -> np.ndarray:
    """Closest distance to each point's saddle cycle over its first ``n_check`` forward iterates."""
    best = np.full(len(pts), np.inf)
    for s in np.unique(saddle):
        rows = np.flatnonzero(saddle == s)
        z, target = pts[rows].copy(), manifolds.saddles[int(s)].points
        with np.errstate(over="ignore", invalid="ignore"):
            for _ in range(n_check):
                z = system.step(z)
                d = np.linalg.norm(z[:, None, :] - target[None], axis=-1).min(axis=1)
                best[rows] = np.minimum(best[rows], np.where(np.isfinite(d), d, np.inf))
    return best


def find_homoclinic_points(
    model: Any,
    manifolds: ManifoldResult,
    *,
    tol: float = 1e-9,
    exclude_radius: float = 1e-6,
    n_check: int = 60,
    u: Any = None,
) -> HomoclinicResult:
    """Homoclinic/heteroclinic points from the pieces of :func:`find_manifolds`.

    Parameters
    ----------
    model : PLRNN, ShallowPLRNN, ALRNN or PLSystem
        The map the manifolds were computed for.
    manifolds : ManifoldResult
        Needs both stable and unstable pieces.
    tol : float
        Slack on the piece facets when testing a candidate point.
    exclude_radius : float
        Meeting points closer than this to a cycle point of the saddle(s) are the trivial
        intersection at the saddle itself and are dropped.
    n_check : int
        Forward iterates used to confirm convergence to the saddle (``approach``).
    u : array, shape (input,), optional
        Constant input (models only).

    Returns
    -------
    HomoclinicResult
        With :attr:`~HomoclinicResult.proves_chaos` and :meth:`~HomoclinicResult.report`.

    Raises
    ------
    ValueError
        If ``manifolds`` has no stable or no unstable pieces, or was computed for another model
        or input (its saddles are not cycles of this map).

    Examples
    --------
    >>> from neurodyn.analysis import find_cycles, find_homoclinic_points, find_manifolds
    >>> from neurodyn.analysis.plrnn._examples import lozi_map
    >>> lozi = lozi_map()
    >>> manifolds = find_manifolds(lozi, find_cycles(lozi, exhaustive=True), box=3.0, max_depth=5)
    >>> homoclinic = find_homoclinic_points(lozi, manifolds)
    >>> homoclinic.proves_chaos  # a transversal homoclinic point of the saddle at x = 1/2.2
    True
    """
    from neurodyn.analysis.plrnn._manifold_seed import check_orbit
    from neurodyn.analysis.plrnn.manifolds import _as_system

    system = _as_system(model, u)
    n = len(manifolds.box[0])
    if n != system.n_latent or any(s.regions.shape[1] != len(system.offsets) for s in manifolds.saddles):
        raise ValueError(f"the manifolds ({n}-dimensional) were not computed for this model "
                         f"({system.n_latent} latent units, {len(system.offsets)} hyperplanes); "
                         "pass find_manifolds(model, ...)")
    for k, sad in enumerate(manifolds.saddles):
        if sad.status == "ok":
            check_orbit(system, sad.points, f"saddle {k} of the ManifoldResult", 1e-7)
    saddle = [0 < s.n_unstable < n for s in manifolds.saddles]  # attractor/repeller pieces excluded
    stable = [p for p in manifolds.select("stable") if saddle[p.saddle]]
    unstable = [p for p in manifolds.select("unstable") if saddle[p.saddle]]
    if not stable or not unstable:
        raise ValueError("find_homoclinic_points needs stable and unstable pieces; "
                         "run find_manifolds with kind='both'")
    index = {id(p): i for i, p in enumerate(manifolds.pieces)}
    lo_s, hi_s = _bounds(stable)
    lo_u, hi_u = _bounds(unstable)
    overlap = np.all((lo_s[:, None] <= hi_u[None] + tol) & (lo_u[None] <= hi_s[:, None] + tol), axis=2)
    rows: list[tuple] = []
    found: dict[tuple[int, int], list[np.ndarray]] = {}  # per (stable, unstable) saddle pair
    for i, j in zip(*np.nonzero(overlap)):
        sp, up = stable[i], unstable[j]
        x = _meet(sp, up, tol)
        if x is None:
            continue
        near = [np.min(np.linalg.norm(manifolds.saddles[s].points - x, axis=1))
                for s in {sp.saddle, up.saddle}]
        if min(near) < exclude_radius:
            continue
        pair = (sp.saddle, up.saddle)
        seen = found.setdefault(pair, [])
        if seen and np.min(np.linalg.norm(np.asarray(seen) - x, axis=1)) < 10 * tol + 1e-12:
            continue
        seen.append(x)
        rows.append((x, sp, up))
    pts, kinds, ss, us, spi, upi, tr, ang, inv = ([] for _ in range(9))
    for x, sp, up in rows:
        sv = np.linalg.svd(sp.basis.T @ up.basis, compute_uv=False)
        angle = float(np.arccos(np.clip(sv.max(), -1.0, 1.0))) if sv.size else np.pi / 2
        full = np.linalg.matrix_rank(np.hstack([sp.basis, up.basis]), tol=1e-9) == len(x)
        codes = _orbit_regions(manifolds, index[id(sp)]) + _orbit_regions(manifolds, index[id(up)])
        dets = np.linalg.det(system.affine_map(np.array(codes))[0])
        pts.append(x)
        kinds.append("homoclinic" if sp.saddle == up.saddle else "heteroclinic")
        ss.append(sp.saddle)
        us.append(up.saddle)
        spi.append(index[id(sp)])
        upi.append(index[id(up)])
        tr.append(bool(full))
        ang.append(angle)
        inv.append(bool(np.min(np.abs(dets)) > 1e-12))
    n = manifolds.box[0].shape[0]
    appr = _approach(system, manifolds, np.asarray(pts).reshape(-1, n), np.asarray(ss), n_check)
    ints = lambda v: np.asarray(v, dtype=np.int64)  # noqa: E731
    return HomoclinicResult(
        np.asarray(pts, dtype=np.float64).reshape(-1, n), np.asarray(kinds, dtype=str),
        ints(ss), ints(us), ints(spi), ints(upi), np.asarray(tr, dtype=bool),
        np.asarray(ang, dtype=np.float64), np.asarray(inv, dtype=bool),
        np.asarray(appr, dtype=np.float64), {"tol": tol, "n_check": n_check})
