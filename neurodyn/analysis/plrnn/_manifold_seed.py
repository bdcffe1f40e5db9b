"""Saddles of a PL map and the local seeds of their manifolds.

The local unstable (stable) manifold of a saddle cycle ``z_0 .. z_{p-1}`` of a piecewise-affine map
is, near ``z_0``, a piece of the affine subspace ``z_0 + E``, with ``E`` the invariant subspace of
the monodromy matrix ``M = J_{p-1} ... J_0`` for the eigenvalues outside (inside) the unit circle.
The seed ``S = {z_0 + Z s : |s|_inf <= r}`` is chosen so small that every forward and backward image
along the cycle stays inside the cycle's own linear regions; the whole manifold is then
``⋃_{i<p} F^i(S) ∪ ⋃_n F^n(F^p(S) \\ S)`` (unstable; with preimages for the stable one), and
``F^p(S) \\ S`` is cut into convex "shell" pieces, one per facet of ``S``. For a stable manifold of
a strongly contracting cycle (a long period, or stable eigenvalues near 0) no such ``S`` may exist,
since the local preimage stretches ``S`` by the inverse stable eigenvalues; then ``S`` is sized by
its forward images only and each shell piece is clipped to the points whose orbit follows the
cycle's regions for one period, which is exactly the local preimage of ``S`` in those regions.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from neurodyn.analysis.plrnn._polytope import Polytope, box_rows, reduce
from neurodyn.analysis.plrnn.manifold_result import Saddle


class Seed(NamedTuple):
    """Seed pieces of one manifold: ``cube`` (the local piece S) and ``shell`` (F^{±p}(S) \\ S)."""

    basis: np.ndarray  # (latent, k) orthonormal
    cube: Polytope
    shell: list[Polytope]


def saddles_from(cycles: Any, system: Any, *, tol: float = 1e-7) -> list[tuple[np.ndarray, str]]:
    """Cycles as ``[(points (period, latent), status)]`` from a CycleResult or a list of arrays.

    Raises
    ------
    ValueError
        If a given array, or a converged cycle of a ``CycleResult``, is not a fixed point/cycle of
        the map (``F(z_i) != z_{i+1}``), e.g. a result computed for another model or input.
    """
    if hasattr(cycles, "cycle_id") and hasattr(cycles, "states"):
        if cycles.states.shape[1] != system.n_latent:
            raise ValueError(f"the CycleResult has {cycles.states.shape[1]}-dimensional states but the model "
                             f"has {system.n_latent} latent units; pass the result of find_cycles(model)")
        out = []
        keys = sorted({(int(o), int(c)) for o, c in zip(cycles.order, cycles.cycle_id)})
        for o, c in keys:
            rows = np.flatnonzero((cycles.order == o) & (cycles.cycle_id == c))
            rows = rows[np.argsort(cycles.cycle_step[rows])]
            conv = bool(np.all(cycles.converged[rows]))
            if conv:
                check_orbit(system, cycles.states[rows], f"cycle (order {o}, id {c}) of the CycleResult", tol)
            out.append((np.asarray(cycles.states[rows], dtype=np.float64),
                        "ok" if conv else "not_converged"))
        return out
    out = []
    for i, z in enumerate(cycles):
        pts = np.atleast_2d(np.asarray(z, dtype=np.float64))
        if pts.ndim != 2 or pts.shape[1] != system.n_latent:
            raise ValueError(f"cycle {i} must have shape (period, {system.n_latent}), got {np.shape(z)}")
        if not np.all(np.isfinite(pts)):
            raise ValueError(f"cycle {i} contains NaN or Inf")
        check_orbit(system, pts, f"cycle {i}", tol)
        out.append((pts, "ok"))
    return out


def check_orbit(system: Any, pts: np.ndarray, what: str, tol: float) -> None:
    """Raise unless ``F(z_i) = z_(i+1)`` (cyclically) to relative tolerance ``tol``."""
    pts = np.asarray(pts, dtype=np.float64)
    err = np.linalg.norm(system.step(pts) - np.roll(pts, -1, axis=0), axis=1)
    if np.any(err > tol * (1 + np.linalg.norm(pts, axis=1))):
        raise ValueError(f"{what} is not a cycle of the map (|F(z_i) - z_(i+1)| up to {err.max():.2e}); "
                         "pass exact points of this model (and input), e.g. from find_cycles(model)")


def describe_saddle(system: Any, points: np.ndarray, status: str, box: tuple, *,
                    marginal_tol: float, region_tol: float, nonsaddles: bool = False) -> Saddle:
    """Regions, monodromy eigenvalues and status of one cycle."""
    codes = system.region_code(points)
    J = system.affine_map(codes)[0]
    M = np.eye(system.n_latent)
    for Ji in J:
        M = Ji @ M
    eig = np.linalg.eigvals(M)
    eig = eig[np.argsort(-np.abs(eig), kind="stable")]
    n_u = int(np.sum(np.abs(eig) > 1 + marginal_tol))
    n_s = int(np.sum(np.abs(eig) < 1 - marginal_tol))
    if status == "ok":
        if n_u + n_s < len(eig):
            status = "not_hyperbolic"
        elif (n_u == 0 or n_s == 0) and not nonsaddles:
            status = "not_saddle"
        elif np.min(_margins(system, points)) < region_tol:
            status = "on_boundary"
        elif np.any(points < box[0]) or np.any(points > box[1]):
            status = "outside_box"
    return Saddle(points, codes, eig, n_u, status)


def _margins(system: Any, points: np.ndarray) -> np.ndarray:
    """Distance of each point to its nearest switching hyperplane, shape (point,)."""
    norms = np.linalg.norm(system.normals, axis=1)
    keep = norms > 0
    if not np.any(keep):
        return np.full(len(points), np.inf)
    pre = np.abs(system.preactivation(points)[:, keep]) / norms[keep]
    return pre.min(axis=1)


def make_seed(system: Any, saddle: Saddle, kind: str, box: tuple, tol: float) -> Seed | None:
    """Seed cube and shell pieces of the ``kind`` manifold at the first cycle point.

    Returns None when the monodromy restricted to the stable subspace is singular (then the
    backward shell is unbounded); the caller reports it.
    """
    from scipy.linalg import schur

    pts = saddle.points
    J = system.affine_map(saddle.regions)[0]
    n, p = system.n_latent, len(pts)
    partial = [np.eye(n)]
    for Ji in J:
        partial.append(Ji @ partial[-1])
    M = partial[-1]
    outside = (lambda re, im: re * re + im * im > 1) if kind == "unstable" else \
        (lambda re, im: re * re + im * im < 1)
    _, Z, k = schur(M, output="real", sort=outside)
    Z = Z[:, :k]
    T = Z.T @ M @ Z
    if abs(np.linalg.det(T)) < 1e-300:
        return None
    Tinv = np.linalg.inv(T)
    grow, shrink = (T, Tinv) if kind == "unstable" else (Tinv, T)
    mats, P = [grow, np.eye(k)], np.eye(k)
    for _ in range(2000):
        P = shrink @ P
        mats.append(P)
        if np.linalg.norm(P, 2) < 1e-8:
            break
    gain = np.array([[np.linalg.norm(partial[i] @ Z @ m, 2) for m in mats] for i in range(p)])
    margins = _margins(system, pts)
    bA, bb = box_rows(pts[0], Z, *box)
    seed = _cube_and_shell(Z, grow, 0.5 * np.min(margins / gain.max(axis=1)) / np.sqrt(k), bA, bb, tol)
    if seed.cube is None and kind == "stable":
        # strongly contracting cycles: the whole local preimage cannot fit in the cycle's regions,
        # so size S by its forward images only and clip the shell to the points whose orbit
        # follows the cycle's regions for one period (exactly the local preimage of S)
        r = 0.5 * np.min(margins / gain[:, 1:].max(axis=1)) / np.sqrt(k)
        rA, rb = _chain_rows(system, saddle, partial, Z)
        seed = _cube_and_shell(Z, grow, r, bA, bb, tol, rA, rb)
    return seed


def _chain_rows(system: Any, saddle: Saddle, partial: list, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows keeping ``z_i + partial_i Z s`` in the cycle's region ``i`` for every ``i`` as ``A s <= b``."""
    rows, rhs = [], []
    for i, (z, code) in enumerate(zip(saddle.points, saddle.regions)):
        sign = np.where(code, -1.0, 1.0)[:, None]  # code True: N y + o >= 0
        rows.append(sign * (system.normals @ partial[i] @ Z))
        rhs.append(-sign[:, 0] * system.preactivation(z))
    return np.vstack(rows), np.concatenate(rhs)


def _cube_and_shell(Z: np.ndarray, grow: np.ndarray, r: float, bA: np.ndarray, bb: np.ndarray, tol: float,
                    rA: np.ndarray | None = None, rb: np.ndarray | None = None) -> Seed:
    k = Z.shape[1]
    cube_A = np.vstack([np.eye(k), -np.eye(k)])
    cube_b = np.full(2 * k, r)
    cube = reduce(np.vstack([cube_A, bA]), np.concatenate([cube_b, bb]), tol=tol * 1e-3)
    if cube is None:
        return Seed(Z, None, [])
    if rA is not None:  # the shell pieces must follow the cycle's regions
        bA, bb = np.vstack([bA, rA]), np.concatenate([bb, rb])
    # F^p(S) (unstable) or its local preimage (stable): {s : cube_A @ inv(grow) @ s <= r}
    img_A = cube_A @ np.linalg.inv(grow)
    shell = []
    for i in range(2 * k):
        A = np.vstack([img_A, -cube_A[i:i + 1], cube_A[:i], bA])
        b = np.concatenate([cube_b, [-r], cube_b[:i], bb])
        piece = reduce(A, b, tol=tol)
        if piece is not None:
            shell.append(piece)
    return Seed(Z, cube, shell)
