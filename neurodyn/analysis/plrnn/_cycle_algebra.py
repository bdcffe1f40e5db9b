"""Linear algebra of region sequences: compose affine maps, solve for the cycle, check it.

A k-cycle through regions ``D_1 .. D_k`` (affine maps ``z -> J_i z + c_i``) satisfies
``(I - J_k ... J_1) z_1 = c_k + J_k c_{k-1} + ... + J_k ... J_2 c_1`` (Eisenmann et al. 2023);
it is a true cycle of the map when every ``z_i`` lies in the closure of ``D_i``.
All products are float64.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from neurodyn.models.piecewise import PLSystem


class AffineMaps:
    """Region code → ``(J, c)``, with an O(latent²) path when the normals are unit vectors."""

    def __init__(self, system: PLSystem) -> None:
        self.system = system
        N = system.normals
        unit = N.shape[0] > 0 and np.all(np.count_nonzero(N, axis=1) == 1) and np.all(N.max(axis=1) == 1)
        self.columns = np.argmax(N, axis=1) if unit and len(set(np.argmax(N, axis=1))) == N.shape[0] else None
        norms = np.linalg.norm(N, axis=1)
        self.inv_norms = np.where(norms > 0, 1.0 / np.where(norms > 0, norms, 1.0), 0.0)

    def __call__(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``codes`` (..., hyperplane) → ``J`` (..., latent, latent), ``c`` (..., latent)."""
        s = self.system
        if self.columns is None:
            return s.affine_map(codes)
        d = np.asarray(codes, dtype=np.float64)
        J = np.broadcast_to(s.linear, d.shape[:-1] + s.linear.shape).copy()
        J[..., :, self.columns] += s.mixing * d[..., None, :]
        c = s.bias + (s.mixing * d[..., None, :]) @ s.offsets
        return J, c

    def margins(self, points: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """Signed distance of each point into its region, per hyperplane (negative = outside).

        ``points`` (..., latent), ``codes`` (..., hyperplane) → (..., hyperplane); hyperplanes with a
        zero normal give ``+inf`` when consistent with their constant sign, else ``-inf``.
        """
        pre = self.system.preactivation(points)
        sign = np.where(codes, 1.0, -1.0)
        dist = sign * pre * self.inv_norms
        zero = self.inv_norms == 0
        if np.any(zero):
            ok = (pre > 0) == codes
            dist = np.where(zero, np.where(ok, np.inf, -np.inf), dist)
        return dist


class CycleSolve(NamedTuple):
    """Solution of the linear system of one region sequence (``z`` None when ill-conditioned)."""

    points: np.ndarray | None  # (k, latent) along the orbit, by the region affine maps
    monodromy: np.ndarray  # (latent, latent) J_k ... J_1
    condition: float  # 2-norm condition number of I - J_k ... J_1


def compose(J: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(P, q)`` of the composition ``f_k ∘ ... ∘ f_1``; ``J`` (..., k, n, n), ``c`` (..., k, n)."""
    n = J.shape[-1]
    P = np.broadcast_to(np.eye(n), J.shape[:-3] + (n, n)).copy()
    q = np.zeros(J.shape[:-3] + (n,))
    for i in range(J.shape[-3]):
        P = J[..., i, :, :] @ P
        q = np.einsum("...ij,...j->...i", J[..., i, :, :], q) + c[..., i, :]
    return P, q


DEGENERATE_RTOL = 1e-10  # I - P this close to singular in absolute terms: a non-isolated cycle


def _condition(M: np.ndarray, P: np.ndarray) -> np.ndarray:
    """Condition number of ``M = I - P`` (..., n, n); ``inf`` when ``M`` is singular or its smallest
    singular value is below ``DEGENERATE_RTOL (1 + |P|_F)`` (e.g. ``P = I`` up to rounding, whose
    ``cond`` is small although every point is a cycle: a continuum, not an isolated cycle)."""
    sv = np.linalg.svd(M, compute_uv=False)
    scale = 1.0 + np.linalg.norm(P, axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        cond = sv[..., 0] / sv[..., -1]
    return np.where(sv[..., -1] > DEGENERATE_RTOL * scale, cond, np.inf)


def solve_sequences(J: np.ndarray, c: np.ndarray, max_condition: float) -> tuple[np.ndarray, ...]:
    """Solve a batch of region sequences.

    ``J`` (batch, k, n, n), ``c`` (batch, k, n) → ``points`` (batch, k, n) (NaN rows where the
    condition number of ``I - P`` exceeds ``max_condition``), ``P`` (batch, n, n), ``cond`` (batch,).
    The conditioning is checked explicitly; a failing ``solve`` is never relied upon.
    """
    P, q = compose(J, c)
    n = J.shape[-1]
    M = np.eye(n) - P
    cond = _condition(M, P) if M.shape[0] else np.zeros(0)
    good = np.isfinite(cond) & (cond <= max_condition)
    points = np.full(J.shape[:-1], np.nan)
    if np.any(good):
        z = np.linalg.solve(M[good], q[good][..., None])[..., 0]
        pts = [z]
        for i in range(J.shape[1] - 1):
            z = np.einsum("bij,bj->bi", J[good, i], z) + c[good, i]
            pts.append(z)
        points[good] = np.stack(pts, axis=1)
    return points, P, cond


def solve_one(J: np.ndarray, c: np.ndarray, max_condition: float
              ) -> tuple[np.ndarray | None, np.ndarray, float]:
    """One region sequence (``J`` (k, n, n), ``c`` (k, n)) without batch overhead.

    Returns ``(points (k, n) or None when ill-conditioned, P (n, n), cond)``.
    """
    P, q = J[0], c[0]
    for i in range(1, J.shape[0]):
        P, q = J[i] @ P, J[i] @ q + c[i]
    M = np.eye(J.shape[-1]) - P
    cond = float(_condition(M, P))
    if not cond <= max_condition:
        return None, P, cond
    z = np.linalg.solve(M, q)
    points = [z]
    for i in range(J.shape[0] - 1):
        z = J[i] @ z + c[i]
        points.append(z)
    return np.stack(points), P, cond


def system_scale(system: PLSystem) -> float:
    """Distance scale of a map: the farthest region boundary from the origin plus the bias norm."""
    norms = np.linalg.norm(system.normals, axis=1)
    dist = np.abs(system.offsets) / np.where(norms > 0, norms, np.inf)
    return 1.0 + (float(dist.max()) if dist.size else 0.0) + float(np.linalg.norm(system.bias))


def iterate(system: PLSystem, z: np.ndarray, n_steps: int) -> np.ndarray:
    """Orbit ``z, F(z), ..., F^{n_steps}(z)`` of the true map; (n_steps + 1, latent)."""
    out = [np.asarray(z, dtype=np.float64)]
    for _ in range(n_steps):
        out.append(system.step(out[-1]))
    return np.stack(out)


def residual_q(system: PLSystem, z: np.ndarray, k: int) -> float:
    """``½‖F^k(z) − z‖²`` with the true map."""
    return float(0.5 * np.sum((iterate(system, z, k)[-1] - z) ** 2))


def minimal_period(points: np.ndarray, atol: float, rtol: float) -> int:
    """Smallest ``d | k`` with ``z_{i+d} == z_i`` for all ``i`` (within tolerance); ``points`` (k, n)."""
    k = points.shape[0]
    scale = atol + rtol * max(1.0, float(np.abs(points).max()))
    for d in range(1, k):
        if k % d == 0 and np.max(np.abs(np.roll(points, -d, axis=0) - points)) <= scale:
            return d
    return k


def canonical_rotation(codes: np.ndarray, points: np.ndarray) -> int:
    """Shift that starts the cycle at its lexicographically smallest (code sequence, points).

    Region codes are exact booleans, so the choice does not depend on rounding; ties (a
    periodic code sequence) are broken by the point coordinates.
    """
    k = codes.shape[0]
    keys = []
    for r in range(k):
        idx = [(r + i) % k for i in range(k)]
        keys.append((codes[idx].astype(np.uint8).tobytes(), tuple(points[idx].ravel())))
    return min(range(k), key=lambda r: keys[r])


def same_cycle(a: np.ndarray, b: np.ndarray, atol: float, rtol: float) -> bool:
    """Whether two k-cycles (k, n) are one orbit up to a cyclic shift (relative tolerance)."""
    if a.shape != b.shape:
        return False
    scale = atol + rtol * max(1.0, float(np.abs(b).max()))
    return any(np.max(np.abs(np.roll(a, -r, axis=0) - b)) <= scale for r in range(a.shape[0]))


def classify(eigenvalues: np.ndarray, marginal_tol: float) -> tuple[str, int]:
    """Stability label and number of unstable directions from monodromy eigenvalues.

    ``|λ| > 1 + tol`` unstable, ``|λ| < 1 - tol`` stable, otherwise marginal; a point with any
    marginal eigenvalue is "marginal", with both stable and unstable ones a "saddle".
    """
    mod = np.abs(eigenvalues)
    n_unstable = int(np.sum(mod > 1 + marginal_tol))
    n_stable = int(np.sum(mod < 1 - marginal_tol))
    if n_unstable + n_stable < mod.size:
        return "marginal", n_unstable
    if n_unstable == 0:
        return "stable", 0
    return ("unstable" if n_stable == 0 else "saddle"), n_unstable


def sorted_eigenvalues(P: np.ndarray) -> np.ndarray:
    """Eigenvalues of ``P`` sorted by decreasing modulus (ties by real, then imaginary part)."""
    ev = np.linalg.eigvals(P) if P.size else np.zeros(0, complex)
    order = np.lexsort((-ev.imag, -ev.real, -np.abs(ev)))
    return ev[order].astype(np.complex128)
