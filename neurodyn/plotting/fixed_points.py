"""Figures of fixed-point searches: state-space portraits and eigenvalue spectra."""

from __future__ import annotations

from typing import Any

import numpy as np

#: colour of each stability label; non-converged slow points are drawn as grey crosses
STABILITY_COLORS = {"stable": "black", "saddle": "tab:red", "unstable": "tab:orange",
                    "marginal": "tab:green"}
SLOW_COLOR = "0.6"


def plot_fixed_points(result, *, trajectories: Any = None, ax: Any = None, pca: Any = None,
                      mode_length: float = 0.15):
    """Fixed points (and cycles) with trajectories in the top principal components.

    Converged points are coloured by stability (one scatter per label, labelled for the legend);
    non-converged slow points are grey crosses; the points of each period-k cycle are joined by a
    dashed line; each saddle's leading (unstable) eigenvector is drawn as a short line through it
    when the result carries ``leading_mode`` (a loaded file does not).

    Parameters
    ----------
    result : FixedPointResult
    trajectories : array-like, shape (trial, time, unit), optional
        Drawn as thin grey lines; the PCA is fitted on them when given, else on the points.
    ax : matplotlib Axes, optional
        A 3-D axes (``projection="3d"``) for three components, else 2-D; a new figure by default
        (3-D when the state has at least 3 units).
    pca : fitted object with ``transform`` (e.g. ``sklearn.decomposition.PCA``), optional
        Projection to use instead of fitting one.
    mode_length : float
        Length of the unstable-mode lines as a fraction of the projected data's extent.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    ValueError
        If ``trajectories`` is not (trial, time, unit) with the result's unit count.
    """
    import matplotlib.pyplot as plt

    states = np.asarray(result.states, dtype=float)
    n_unit = states.shape[1]
    traj = None
    if trajectories is not None:
        traj = np.asarray(trajectories, dtype=float)
        if traj.ndim != 3 or traj.shape[-1] != n_unit:
            raise ValueError(f"trajectories must have shape (trial, time, {n_unit}), got {traj.shape}")
    if ax is None:
        fig = plt.figure()
        ax = fig.add_subplot(projection="3d" if n_unit >= 3 else None)
    n_comp = 3 if getattr(ax, "name", "") == "3d" else 2
    project = _projection(pca, traj.reshape(-1, n_unit) if traj is not None else states, n_comp)

    def draw(xyz, *args, **kwargs):
        cols = [xyz[..., i] for i in range(n_comp)]
        return ax.plot(*cols, *args, **kwargs)

    if traj is not None:
        for trial in traj:
            draw(project(trial), color="0.8", lw=0.5, zorder=1)
    pts = project(states)
    extent = float(np.ptp(pts, axis=0).max()) if pts.size else 1.0
    if traj is not None:
        extent = float(np.ptp(project(traj.reshape(-1, n_unit)), axis=0).max())
    good = np.asarray(result.converged, dtype=bool)
    for label, color in STABILITY_COLORS.items():
        mask = good & (result.stability == label)
        if mask.any():
            ax.scatter(*pts[mask].T[:n_comp], color=color, s=30, label=label, zorder=3)
    if (~good).any():
        ax.scatter(*pts[~good].T[:n_comp], color=SLOW_COLOR, marker="x", s=25,
                   label="slow point", zorder=3)
    for cid in np.unique(result.cycle_id[result.order > 1]):
        rows = np.flatnonzero(result.cycle_id == cid)
        rows = rows[np.argsort(result.cycle_step[rows])]
        draw(pts[np.r_[rows, rows[:1]]], ls="--", color="tab:purple", lw=1, zorder=2)
    if result.leading_mode is not None:
        half = 0.5 * mode_length * (extent if extent > 0 else 1.0)
        for i in np.flatnonzero(good & (result.stability == "saddle")):
            ends = project(states[i] + np.outer([-1.0, 1.0], result.leading_mode[i]))
            direction = ends[1] - ends[0]
            norm = np.linalg.norm(direction)
            if norm > 0:
                seg = pts[i] + np.outer([-half, half], direction / norm)
                draw(seg, color=STABILITY_COLORS["saddle"], lw=1.5, zorder=2)
    ax.set_xlabel("PC 1")
    ax.set_ylabel("PC 2")
    if n_comp == 3:
        ax.set_zlabel("PC 3")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="best", fontsize="small")
    return ax


def plot_eigenvalues(result, *, ax: Any = None, which: Any = "converged"):
    """Eigenvalues of the points' (monodromy) Jacobians in the complex plane, with the unit circle.

    Parameters
    ----------
    result : FixedPointResult
    ax : matplotlib Axes, optional
    which : {"converged", "all", "stable", "saddle", "unstable", "marginal"}, int or index array
        Which points' spectra to draw: converged points (default), every point, the converged
        points with one stability label, or explicit row indices. For a cycle only its first
        point (``cycle_step == 0``) is drawn, since every point of a cycle has the same spectrum.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    ValueError
        For an unknown ``which``.
    """
    import matplotlib.pyplot as plt

    rows = _select_rows(result, which)
    if ax is None:
        ax = plt.figure().add_subplot()
    theta = np.linspace(0, 2 * np.pi, 361)
    ax.plot(np.cos(theta), np.sin(theta), color="0.5", ls="--", lw=1)
    for label, color in STABILITY_COLORS.items():
        r = rows[result.stability[rows] == label]
        if r.size:
            ev = result.eigenvalues[r].ravel()
            ax.scatter(ev.real, ev.imag, s=12, color=color, alpha=0.7, label=label)
    ax.axhline(0, color="0.85", lw=0.5, zorder=0)
    ax.axvline(0, color="0.85", lw=0.5, zorder=0)
    ax.set_aspect("equal")
    ax.set_xlabel("Re λ")
    ax.set_ylabel("Im λ")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="best", fontsize="small")
    return ax


def _select_rows(result, which) -> np.ndarray:
    first = result.cycle_step == 0
    if isinstance(which, str):
        if which == "all":
            return np.flatnonzero(first)
        good = first & np.asarray(result.converged, dtype=bool)
        if which == "converged":
            return np.flatnonzero(good)
        if which in STABILITY_COLORS:
            return np.flatnonzero(good & (result.stability == which))
        raise ValueError(
            f"unknown which={which!r}; use 'converged', 'all', a stability label or row indices"
        )
    return np.atleast_1d(np.asarray(which, dtype=np.int64))


def _projection(pca, data: np.ndarray, n_comp: int):
    """``x (..., unit) -> (..., n_comp)``: the given ``pca.transform`` or PCA fitted on ``data``."""
    if pca is not None:
        return lambda x: np.asarray(pca.transform(np.atleast_2d(x).reshape(-1, x.shape[-1])))[
            :, :n_comp].reshape(*x.shape[:-1], n_comp)
    mean = data.mean(axis=0) if data.size else np.zeros(data.shape[-1])
    if data.shape[0] > 1:
        _, _, vt = np.linalg.svd(data - mean, full_matrices=False)
    else:
        vt = np.eye(data.shape[-1])
    comps = np.zeros((n_comp, data.shape[-1]))
    k = min(n_comp, vt.shape[0])
    comps[:k] = vt[:k]
    return lambda x: (x - mean) @ comps.T
