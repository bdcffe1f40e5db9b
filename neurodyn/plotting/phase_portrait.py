"""Phase portraits of piecewise-linear maps: regions, cycles, manifolds and basins of attraction."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from neurodyn.plotting._style import axes_or_new, point_classes, state_axis_label

__all__ = ["plot_phase_portrait"]

MANIFOLD_COLORS = {"stable": "tab:blue", "unstable": "tab:red"}
#: drawing order: 1-D manifold pieces above the point markers, so a short branch stays visible
MARKER_ZORDER, MANIFOLD_ZORDER = 5, 6
#: the legend is drawn above everything else
LEGEND_ZORDER = 10


def _system(model: Any):
    if model is None:
        return None
    if all(hasattr(model, a) for a in ("normals", "offsets", "affine_map")):
        return model
    from neurodyn.models.piecewise import is_piecewise_linear, pl_system

    return pl_system(model) if is_piecewise_linear(model) else None


def _limits(dims, manifolds, basins, cycles, limits):
    if limits is not None:
        lim = np.asarray(limits, dtype=float).reshape(-1, 2)
        if len(lim) != len(dims):
            raise ValueError(f"limits needs one (low, high) per plotted dimension ({len(dims)})")
        return lim
    if manifolds is not None:
        return np.stack([manifolds.box[0][list(dims)], manifolds.box[1][list(dims)]], 1)
    pts = [np.asarray(basins.states)] if basins is not None else []
    if cycles is not None:
        pts.append(np.asarray(cycles.states))
    if not pts:
        return np.array([[-1.0, 1.0]] * len(dims))
    p = np.concatenate(pts)[:, list(dims)]
    pad = 0.1 * np.maximum(np.ptp(p, axis=0), 1e-9)
    return np.stack([p.min(0) - pad, p.max(0) + pad], 1)


def _draw_regions(ax, system, dims, base, lim):
    """Switching hyperplanes restricted to the plotted plane through ``base``."""
    i, j = dims
    for k, (nrm, off) in enumerate(zip(system.normals, system.offsets)):
        a, b = nrm[i], nrm[j]
        c = off + nrm @ base - a * base[i] - b * base[j]
        if abs(a) < 1e-14 and abs(b) < 1e-14:
            continue
        if abs(b) > abs(a):
            xs = lim[0]
            ys = -(c + a * xs) / b
        else:
            ys = lim[1]
            xs = -(c + b * ys) / a
        ax.plot(xs, ys, color="0.75", lw=0.8, ls=":", zorder=1,
                label="region boundaries" if k == 0 else None)


def _draw_basins(ax, basins, dims, n_latent):
    import matplotlib.colors as mcolors

    n_att = len(basins.attractors)
    cmap = mcolors.ListedColormap(["0.3", "white"] + [f"C{k % 10}" for k in range(n_att)])
    norm = mcolors.BoundaryNorm(np.arange(-2.5, n_att + 0.5), cmap.N)
    if basins.grid_axes is not None and n_latent == 2 and tuple(dims) == (0, 1):
        ax.pcolormesh(basins.grid_axes[0], basins.grid_axes[1], basins.labels_grid().T, cmap=cmap,
                      norm=norm, alpha=0.3, shading="nearest", zorder=0)
    else:
        pts = basins.states[:, list(dims)]
        ax.scatter(*pts.T, c=basins.labels, cmap=cmap, norm=norm, s=4, alpha=0.4, lw=0, zorder=0)
    names = {-2: "undecided", -1: "diverges"}  # labels UNDECIDED and DIVERGED of the basin search
    for label in np.unique(basins.labels):  # legend keys only: empty patches
        ax.fill([], [], color=cmap(norm(label)), alpha=0.3, ec="0.6" if label == -1 else None,
                label=names.get(int(label), f"basin of attractor {label}"))


def _draw_manifolds(ax, manifolds, dims, three_d):
    seen = set()
    for p in manifolds.pieces:
        v = p.points(p.vertices)[:, list(dims)]
        label = None if p.kind in seen else f"{p.kind} manifold"
        seen.add(p.kind)
        color = MANIFOLD_COLORS[p.kind]
        if p.dim == 1:
            ax.plot(*v.T, color=color, lw=2.5, label=label, zorder=MANIFOLD_ZORDER,
                    solid_capstyle="round")
        elif p.dim == 2 and len(v) >= 3:
            c = v.mean(0)
            if three_d:
                from mpl_toolkits.mplot3d.art3d import Poly3DCollection

                ax.add_collection3d(Poly3DCollection([v], color=color, alpha=0.25, label=label))
            else:
                order = np.argsort(np.arctan2(v[:, 1] - c[1], v[:, 0] - c[0]))
                # outlined: a piece whose plane holds the dropped axis projects to a zero-area polygon,
                # which only its outline shows (a segment)
                ax.fill(*v[order].T, facecolor=color, edgecolor=color, alpha=0.25, lw=1.0, label=label,
                        zorder=2)
        else:
            ax.scatter(*p.samples[:, list(dims)].T, color=color, s=4, label=label, zorder=MANIFOLD_ZORDER)


def _draw_cycles(ax, cycles, manifolds, dims, three_d):
    """Fixed points and cycle points with the markers of :func:`plot_fixed_points` (one per stability
    class, saddles by their number of unstable dimensions); without ``cycles`` the manifolds' saddles."""
    if cycles is not None:
        states = np.asarray(cycles.states)
        for cid in np.unique(cycles.cycle_id):
            rows = np.flatnonzero(cycles.cycle_id == cid)
            if len(rows) > 1:
                rows = rows[np.argsort(cycles.cycle_step[rows])]
                loop = np.append(rows, rows[0])
                ax.plot(*states[loop][:, list(dims)].T, color="0.4", lw=0.8, ls="--", zorder=4)
        points = cycles
    elif manifolds is not None and any(s.status == "ok" for s in manifolds.saddles):
        ok = [s for s in manifolds.saddles if s.status == "ok"]
        states = np.concatenate([s.points for s in ok])
        n_unstable = np.concatenate([[s.n_unstable] * len(s.points) for s in ok])
        points = SimpleNamespace(stability=np.full(len(states), "saddle"), n_unstable=n_unstable,
                                 converged=np.ones(len(states), dtype=bool))
    else:
        return
    shade = {"depthshade": False} if three_d else {}
    for cls in point_classes(points):
        ax.scatter(*states[cls.mask][:, list(dims)].T, s=80, label=cls.label, zorder=MARKER_ZORDER,
                   **cls.scatter_kwargs(), **shade)


def plot_phase_portrait(
    model: Any = None,
    *,
    cycles: Any = None,
    manifolds: Any = None,
    basins: Any = None,
    ax: Any = None,
    dims: tuple[int, ...] = (0, 1),
    show_regions: bool = True,
    base: Any = None,
    limits: Any = None,
):
    """2-D or 3-D phase portrait of a piecewise-linear map from analysis results.

    Draws (back to front) basins of attraction, switching hyperplanes, 2-D manifold pieces, fixed
    points/cycles by stability with the markers of :func:`plot_fixed_points` (stable black dots,
    saddles by their number of unstable dimensions: red triangles for 1, purple squares for 2, ...;
    unstable orange, marginal green; cycle points joined by dashed lines; axes "unit 0", "unit 1")
    and, on top so that short branches are not hidden by the markers, 1-D stable
    (blue) and unstable (red) manifold pieces. Nothing is recomputed: pass the results of
    :func:`~neurodyn.analysis.find_cycles`, :func:`~neurodyn.analysis.find_manifolds` and
    :func:`~neurodyn.analysis.compute_basins`.

    Parameters
    ----------
    model : PLRNN, ShallowPLRNN, ALRNN or PLSystem, optional
        Needed only for the region boundaries.
    cycles : CycleResult, optional
    manifolds : ManifoldResult, optional
    basins : BasinResult, optional
        A 2-D grid over dims (0, 1) of a 2-D map is drawn as an image, otherwise as points.
    ax : matplotlib Axes, optional
        A 3-D axes for three ``dims``; a new figure by default.
    dims : tuple of 2 or 3 ints
        State dimensions to plot.
    show_regions : bool
        Draw the switching hyperplanes (2-D only) in the plane through ``base``.
    base : array, shape (unit,), optional
        Values of the dimensions not plotted (default zeros), used for the region boundaries.
    limits : sequence of (low, high), optional
        Axis limits per plotted dimension (default: the manifolds' box, else the data).

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    ValueError
        If ``dims`` does not name 2 or 3 distinct state dimensions, ``limits`` is malformed, or
        ``base`` is not a finite point of the state space.
    TypeError
        If ``model`` is not piecewise-linear, or ``ax`` is not a matplotlib Axes.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> from neurodyn.analysis import find_cycles, find_manifolds
    >>> from neurodyn.models import PLRNN
    >>> from neurodyn.plotting import plot_phase_portrait
    >>> lozi = PLRNN.from_arrays([[1.7, 1.0], [0.5, 0.0]], [[-3.4, 0.0], [0.0, 0.0]], [1.0, 0.0])
    >>> cycles = find_cycles(lozi, max_order=2, exhaustive=True)
    >>> manifolds = find_manifolds(lozi, find_cycles(lozi, exhaustive=True), box=3.0, max_depth=2)
    >>> ax = plot_phase_portrait(lozi, cycles=cycles, manifolds=manifolds)
    >>> ax.get_xlabel(), ax.get_ylabel()
    ('unit 0', 'unit 1')
    >>> plt.close(ax.figure)
    """

    dims = tuple(int(d) for d in dims)
    if len(dims) not in (2, 3) or len(set(dims)) != len(dims):
        raise ValueError(f"dims must name 2 or 3 distinct state dimensions, got {dims}")
    system = _system(model)
    if model is not None and system is None:
        raise TypeError(f"plot_phase_portrait draws piecewise-linear maps (PLRNN, ShallowPLRNN, ALRNN or a "
                        f"PLSystem), got a {type(model).__name__}; plot smooth networks' fixed points with "
                        "plot_fixed_points")
    n_latent = system.n_latent if system is not None else (
        len(manifolds.box[0]) if manifolds is not None else
        basins.states.shape[1] if basins is not None else
        cycles.states.shape[1] if cycles is not None else max(dims) + 1)
    if max(dims) >= n_latent:
        raise ValueError(f"dims {dims} out of range for a {n_latent}-dimensional state")
    three_d = len(dims) == 3
    ax = axes_or_new(ax, projection="3d" if three_d else None)
    lim = _limits(dims, manifolds, basins, cycles, limits)
    if basins is not None:
        _draw_basins(ax, basins, dims, n_latent)
    if show_regions and system is not None and not three_d:
        b = np.zeros(n_latent) if base is None else np.asarray(base, dtype=float)
        if b.shape != (n_latent,) or not np.all(np.isfinite(b)):
            raise ValueError(f"base must be a finite point of shape ({n_latent},), got shape {b.shape}")
        _draw_regions(ax, system, dims, b, lim)
    if manifolds is not None:
        _draw_manifolds(ax, manifolds, dims, three_d)
    _draw_cycles(ax, cycles, manifolds, dims, three_d)
    ax.set_xlim(*lim[0])
    ax.set_ylim(*lim[1])
    ax.set_xlabel(state_axis_label(dims[0]))
    ax.set_ylabel(state_axis_label(dims[1]))
    if three_d:
        ax.set_zlim(*lim[2])
        ax.set_zlabel(state_axis_label(dims[2]))
    if ax.get_legend_handles_labels()[0]:
        # above every drawn artist (manifold lines have zorder 6), with an opaque frame
        ax.legend(loc="best", fontsize="small", framealpha=0.95).set_zorder(LEGEND_ZORDER)
    return ax
