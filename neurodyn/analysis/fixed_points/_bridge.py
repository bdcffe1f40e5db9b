"""Starts between stable fixed points: the midpoints of pairs of attractors, from which a second
Newton pass reaches the saddles on the boundaries of their basins that candidates started from a
network's own states can miss (a saddle whose stable manifold separates two attractors lies on
most paths between them, often near their midpoint)."""

from __future__ import annotations

import math

import torch

#: power-iteration steps of the stability test (:func:`contracting`); the growth of the last half
#: estimates the spectral radius
POWER_STEPS = 40
#: up to this many state dims the test takes the eigenvalues themselves (a small ``geev`` costs
#: less than the power iteration's many small products)
EXACT_MAX_STATE = 32
#: Newton steps from each midpoint at most (each kept only where it lowers q): on the 16- and
#: 128-unit flip-flop networks of the benchmark all 28 midpoints converge within 4
NEWTON_STEPS = 8
#: at most this many midpoints, those of the closest pairs of stable points (all pairs of the
#: 8 attractors of a 3-bit flip-flop network: 28)
MAX_MIDPOINTS = 64


def contracting(jacobians: torch.Tensor, margin: float = 1e-3, n_steps: int = POWER_STEPS) -> torch.Tensor:
    """Whether each Jacobian's spectral radius is below ``1 − margin``, estimated by power iteration
    above ``EXACT_MAX_STATE`` state dims (from the eigenvalues up to it).

    A fixed-point test that is cheap next to an eigenvalue solve (``n_steps`` matrix-vector
    products per point): from a fixed pseudo-random vector, the geometric mean of the growth per
    step over the last ``n_steps // 2`` steps estimates the modulus of the leading eigenvalue
    (a complex pair included). It serves to pick start points only; the reported labels come from
    the eigenvalues.

    Parameters
    ----------
    jacobians : Tensor, shape (point, state, state)
    margin : float
        Moduli within ``margin`` below 1 count as not contracting (``marginal_tol`` of the labels).

    Returns
    -------
    Tensor of bool, shape (point,)
    """
    n_points, n_state = jacobians.shape[:2]
    if n_state <= EXACT_MAX_STATE:
        radius = torch.linalg.eigvals(jacobians).abs().amax(-1) if n_state else \
            jacobians.new_zeros(n_points)
        return torch.isfinite(radius) & (radius < 1.0 - margin)
    gen = torch.Generator(device=jacobians.device).manual_seed(0)
    v = torch.randn((n_points, 1, n_state), generator=gen, dtype=jacobians.dtype, device=jacobians.device)
    log_growth = torch.zeros(n_points, dtype=jacobians.dtype, device=jacobians.device)
    counted = n_steps - n_steps // 2
    for step in range(n_steps):
        v = v @ jacobians.mT  # (J v)ᵀ: a row vector times Jᵀ takes torch's faster batched path
        norm = v.norm(dim=(1, 2)).clamp(min=torch.finfo(v.dtype).tiny)
        v = v / norm[:, None, None]
        if step >= n_steps - counted:
            log_growth += norm.log()
    return torch.isfinite(log_growth) & (log_growth < counted * math.log1p(-min(margin, 0.5)))


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
