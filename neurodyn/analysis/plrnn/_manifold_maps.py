"""Exact images and region-wise preimages of affine manifold pieces under a PL map.

A piece is ``(base, basis, polytope)`` with orthonormal ``basis``; inside one linear region the map
is ``z -> J z + c``, so the image of a piece is again a piece (``base' = J base + c``, new basis from
the QR factors of ``J basis``), and so is the preimage through any region whose ``J`` is invertible.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from neurodyn.analysis.plrnn._polytope import Polytope, box_rows, clip_all, feasible_point, split


class Geom(NamedTuple):
    base: np.ndarray  # (latent,)
    basis: np.ndarray  # (latent, k)
    poly: Polytope


def _rebase(base: np.ndarray, M: np.ndarray, poly: Polytope, box: tuple, tol: float,
            extra: tuple[np.ndarray, np.ndarray] | None = None) -> Geom | None:
    """Re-orthonormalise ``{base + M s}`` (``M`` full column rank) and clip by the box (and by
    ``extra`` rows ``E s <= e`` in the old coordinates)."""
    Q, R = np.linalg.qr(M)
    Rinv = np.linalg.inv(R)
    moved = Polytope(poly.A @ Rinv, poly.b, poly.vertices @ R.T, np.nan)
    A, b = box_rows(base, Q, *box)
    if extra is not None:
        A = np.vstack([A, extra[0] @ Rinv])
        b = np.concatenate([b, extra[1]])
    out = clip_all(moved, A, b, tol=tol)
    if out is None or np.max(np.ptp(out.vertices, axis=0)) <= 2 * tol:
        return None
    return Geom(base, Q, out)


def full_rank(M: np.ndarray, rtol: float = 1e-10) -> bool:
    sv = np.linalg.svd(M, compute_uv=False)
    return sv.size == 0 or sv[-1] > rtol * max(sv[0], 1e-300)


def image(system: Any, geom: Geom, region: np.ndarray, box: tuple, tol: float
          ) -> tuple[list[tuple[np.ndarray, Geom]], bool]:
    """Image of a piece lying in ``region``, cut into pieces of constant region code.

    Returns ``([(code, geom)], collapsed)``; ``collapsed`` is True when ``J`` folds the piece onto a
    lower dimension (it is then dropped).
    """
    J, c = system.affine_map(region)
    M = J @ geom.basis
    if not full_rank(M):
        return [], True
    g = _rebase(J @ geom.base + c, M, geom.poly, box, tol)
    if g is None:
        return [], False
    N, o = system.normals, system.offsets
    cells = split(g.poly, N @ g.basis, N @ g.base + o, tol=tol)
    return [(code, Geom(g.base, g.basis, cell)) for code, cell in cells], False


class InverseMaps(NamedTuple):
    """Affine maps of the candidate regions, with inverses where they exist."""

    codes: np.ndarray  # (region, hyperplane)
    J: np.ndarray  # (region, latent, latent)
    c: np.ndarray  # (region, latent)
    Jinv: np.ndarray  # (region, latent, latent), NaN where singular
    singular: np.ndarray  # (region,) bool


def inverse_maps(system: Any, codes: np.ndarray, rtol: float = 1e-10) -> InverseMaps:
    J, c = system.affine_map(codes)
    sv = np.linalg.svd(J, compute_uv=False)
    singular = sv[:, -1] <= rtol * np.maximum(sv[:, 0], 1e-300)
    Jinv = np.full_like(J, np.nan)
    if np.any(~singular):
        Jinv[~singular] = np.linalg.inv(J[~singular])
    return InverseMaps(codes, J, c, Jinv, singular)


def preimages(system: Any, geom: Geom, maps: InverseMaps, box: tuple, tol: float,
              exclude: np.ndarray | None = None) -> list[tuple[np.ndarray, Geom]]:
    """All preimage pieces of a piece through the invertible candidate regions.

    ``exclude`` (hyperplane,) bool: one region code to skip (the local branch that the seed's shell
    already covers).
    """
    ok = ~maps.singular
    if exclude is not None:
        ok &= ~np.all(maps.codes == exclude, axis=1)
    idx = np.flatnonzero(ok)
    if idx.size == 0:
        return []
    N, o = system.normals, system.offsets
    Jinv = maps.Jinv[idx]
    base = np.einsum("rij,rj->ri", Jinv, geom.base - maps.c[idx])
    M = Jinv @ geom.basis  # (region, latent, k)
    # cheap necessary test: every region half-space must hold at some vertex of the preimage
    vx = base[:, None, :] + np.einsum("rik,vk->rvi", M, geom.poly.vertices)
    sign = np.where(maps.codes[idx], 1.0, -1.0)
    pre = (vx @ N.T + o) * sign[:, None, :]
    scale = np.linalg.norm(N, axis=1)
    lo_b, hi_b = box
    inbox = np.all((vx.max(axis=1) >= lo_b - tol) & (vx.min(axis=1) <= hi_b + tol), axis=1)
    cand = np.all(pre.max(axis=1) >= -tol * np.maximum(scale, 1.0), axis=1) & inbox
    out = []
    for r in np.flatnonzero(cand):
        if not full_rank(M[r]):
            continue
        rows = -sign[r][:, None] * (N @ M[r])
        rhs = sign[r] * (N @ base[r] + o)
        g = _rebase(base[r], M[r], geom.poly, box, tol, extra=(rows, rhs))
        if g is not None:
            out.append((maps.codes[idx[r]], g))
    return out


def singular_reach(system: Any, geom: Geom, maps: InverseMaps, box: tuple) -> list[np.ndarray]:
    """Singular candidate regions whose image meets the piece (an LP per singular region)."""
    out = []
    n, k = system.n_latent, geom.basis.shape[1]
    N, o = system.normals, system.offsets
    for r in np.flatnonzero(maps.singular):
        sign = np.where(maps.codes[r], 1.0, -1.0)
        # variables (z, s): J z + c = base + V s, z in region and box, s in the piece
        A_eq = np.hstack([maps.J[r], -geom.basis])
        b_eq = geom.base - maps.c[r]
        A_ub = np.vstack([np.hstack([-sign[:, None] * N, np.zeros((len(N), k))]),
                          np.hstack([np.zeros((len(geom.poly.b), n)), geom.poly.A])])
        b_ub = np.concatenate([sign * o, geom.poly.b])
        bounds = [(lo, hi) for lo, hi in zip(*box)] + [(None, None)] * k
        if feasible_point(A_ub, b_ub, A_eq=A_eq, b_eq=b_eq, bounds=bounds) is not None:
            out.append(maps.codes[r])
    return out
