"""Checking a traced basin boundary against simulation.

A stable manifold of codimension 1 that separates two basins (Eisenmann et al., "Detecting invariant
manifolds in ReLU-based RNNs", ICLR 2026) must do two things a simulation can test: states pushed a
little to either side of it go to different attractors, and every place where the basin label
changes on a grid lies on it, up to the grid's resolution.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from neurodyn.analysis.plrnn.basins import BasinResult, basin_boundary, compute_basins

__all__ = ["compute_boundary_agreement"]


def _normal(basis: np.ndarray) -> np.ndarray:
    """Unit normal (latent,) of a hyperplane piece spanned by the columns of ``basis`` (latent, n-1)."""
    u, _, _ = np.linalg.svd(basis, full_matrices=True)
    return u[:, -1]


def _switch_midpoints(basins: BasinResult) -> np.ndarray:
    """Midpoints (pair, latent) of grid neighbours attracted to different attractors."""
    labels = basins.labels_grid()
    pts = basins.states.reshape(*labels.shape, -1)
    out = []
    for axis in range(labels.ndim):
        a = [slice(None)] * labels.ndim
        b = [slice(None)] * labels.ndim
        a[axis], b[axis] = slice(None, -1), slice(1, None)
        la, lb = labels[tuple(a)], labels[tuple(b)]
        switch = (la != lb) & (la >= 0) & (lb >= 0)
        out.append(0.5 * (pts[tuple(a)][switch] + pts[tuple(b)][switch]))
    return np.concatenate(out) if out else np.empty((0, basins.states.shape[1]))


def compute_boundary_agreement(
    model: Any,
    manifolds: Any,
    basins: BasinResult,
    *,
    offset: float | None = None,
    tol: float | None = None,
    max_steps: int | None = None,
    u: Any = None,
):
    """How well a traced basin boundary (stable manifold pieces) agrees with simulated basins.

    Two checks, both against forward simulation (:func:`compute_basins`):

    * **across**: every sample point ``p`` of a boundary piece (codimension 1, from
      :func:`basin_boundary`) is pushed to ``p ± offset n`` along the piece's unit normal ``n``; the
      boundary is right there when the two states reach two different attractors.
    * **grid**: every pair of grid neighbours attracted to different attractors brackets the true
      boundary; its midpoint should lie within ``tol`` of the traced pieces. A midpoint farther away
      is a basin change the traced boundary misses: the grid points next to it are misassigned.

    Parameters
    ----------
    model : RecurrentModel or PLSystem
        The model whose basins were computed.
    manifolds : ManifoldResult or list of ManifoldPiece
        Stable manifolds from :func:`find_manifolds` (the codimension-1 stable pieces are used), or
        the pieces themselves.
    basins : BasinResult
        Basins on a grid (``compute_basins(..., grid=...)``); its attractors and settings are reused.
    offset : float, optional
        Push across the boundary, in state units. Default: a quarter of the smallest grid step.
    tol : float, optional
        Largest accepted distance of a switch midpoint from the traced boundary. Default: half the
        diagonal of a grid cell (a midpoint of neighbours on either side is at most that far from
        any boundary crossing the segment between them, plus the boundary's curvature).
    max_steps : int, optional
        Step budget for the pushed states (default: the basins' own).
    u : array, shape (input,), optional
        Constant input, as for :func:`compute_basins`.

    Returns
    -------
    xarray.Dataset
        ``across_labels`` (sample, side) the attractor reached from ``p - offset n`` and
        ``p + offset n``; ``split`` (sample,) True when they differ and both were attracted;
        ``switch_point`` (switch, unit) the label-change midpoints and ``switch_distance`` (switch,)
        their distance to the traced boundary; attrs ``split_fraction`` (share of samples whose
        sides split), ``misassigned_fraction`` (share of grid points that have a neighbour with
        another label farther than ``tol`` from the boundary), ``n_switch``, ``n_samples``,
        ``offset``, ``tol``.

    Raises
    ------
    ValueError
        If ``basins`` was not computed on a grid, or there is no boundary piece of codimension 1.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis import compute_basins, find_cycles, find_manifolds
    >>> from neurodyn.analysis.plrnn import compute_boundary_agreement
    >>> from neurodyn.models import ShallowPLRNN
    >>> normals = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])  # stable (4, 1), (-2, 1); saddle (-1/2, 1)
    >>> mixing = np.array([[-1.5, 1.5, 0.5], [0.0, 0.0, 0.0]])
    >>> model = ShallowPLRNN.from_arrays([2.0, 0.5], mixing, normals, [0.0, 0.5], [-1.0, -1.0, 0.0])
    >>> cycles = find_cycles(model, max_order=1, exhaustive=True)
    >>> basins = compute_basins(model, cycles, grid=([(-4, 5), (-4, 5)], 31), max_steps=300)
    >>> stable = find_manifolds(model, cycles, kind="stable", box=(-4.0, 5.0))
    >>> check = compute_boundary_agreement(model, stable, basins)
    >>> check.attrs["split_fraction"], check.attrs["misassigned_fraction"]
    (1.0, 0.0)
    """
    import xarray as xr

    if basins.grid_axes is None:
        raise ValueError("basins must be computed on a grid for the grid check: "
                         "compute_basins(..., grid=(bounds, n))")
    pieces = list(manifolds) if isinstance(manifolds, (list, tuple)) else basin_boundary(manifolds)
    n = basins.states.shape[1]
    pieces = [p for p in pieces if p.kind == "stable" and p.dim == n - 1]
    if not pieces:
        raise ValueError("no stable manifold piece of codimension 1 was given: trace one with "
                         "find_manifolds(model, cycles, kind='stable') around a saddle between basins")
    steps = np.array([np.diff(ax).min() if len(ax) > 1 else np.inf for ax in basins.grid_axes])
    offset = float(0.25 * steps.min()) if offset is None else float(offset)
    tol = float(0.5 * np.linalg.norm(steps)) if tol is None else float(tol)
    samples = np.concatenate([p.samples for p in pieces])
    normals = np.concatenate([np.repeat(_normal(p.basis)[None], len(p.samples), axis=0) for p in pieces])
    pushed = np.concatenate([samples - offset * normals, samples + offset * normals])
    kw = {k: basins.attrs[k] for k in ("tol", "diverge_radius") if k in basins.attrs}
    across = compute_basins(model, list(basins.attractors), states=pushed, u=u,
                            max_steps=int(max_steps or basins.attrs.get("max_steps", 1000)), **kw)
    sides = across.labels.reshape(2, -1).T
    split = (sides[:, 0] != sides[:, 1]) & np.all(sides >= 0, axis=1)
    mids = _switch_midpoints(basins)
    dist = np.full(len(mids), np.inf)
    for p in pieces:
        dist = np.minimum(dist, p.distance(mids))
    # grid points next to a switch the traced boundary does not explain
    far = mids[dist > tol]
    grid_pts = basins.states
    bad = np.zeros(len(grid_pts), dtype=bool)
    for m in far:
        bad |= np.all(np.abs(grid_pts - m) <= 0.5 * steps + 1e-12, axis=1)
    return xr.Dataset(
        {"sample_point": (("sample", "unit"), samples),
         "across_labels": (("sample", "side"), sides),
         "split": (("sample",), split),
         "switch_point": (("switch", "unit"), mids),
         "switch_distance": (("switch",), dist)},
        coords={"side": ["minus", "plus"]},
        attrs={"split_fraction": float(split.mean()), "misassigned_fraction": float(bad.mean()),
               "n_switch": len(mids), "n_samples": len(samples), "offset": offset, "tol": tol},
    )
