"""Figures of fixed-point searches: state-space portraits and eigenvalue spectra."""

from __future__ import annotations

from typing import Any

import numpy as np

#: colour of each stability label; non-converged slow points are drawn as grey crosses
STABILITY_COLORS = {"stable": "black", "saddle": "tab:red", "unstable": "tab:orange",
                    "marginal": "tab:green"}
SLOW_COLOR = "0.6"


def plot_fixed_points(result, *, trajectories: Any = None, ax: Any = None, pca: Any = None,
                      dims: Any = None, mode_length: float = 0.15):
    """Fixed points (and cycles) with trajectories, in raw state units or top principal components.

    A state of at most 3 units is drawn in its own coordinates (axes "unit 0", "unit 1", ...), so
    collinear points are not squeezed onto a line; a larger state is projected onto its top
    principal components ("PC 1", ...) unless ``pca=False`` or ``dims`` asks for raw units.
    Converged points are coloured by stability (one scatter per label, labelled for the legend);
    non-converged slow points are grey crosses; the points of each period-k cycle are joined by a
    dashed line; each saddle's leading (unstable) eigenvector is drawn as a short line through it
    when the result carries ``leading_mode`` (a loaded file does not).

    Parameters
    ----------
    result : FixedPointResult
    trajectories : array-like, shape (trial, time, unit), optional
        Drawn as thin grey lines; the PCA (if used) is fitted on them when given, else on the points.
    ax : matplotlib Axes, optional
        A 3-D axes (``projection="3d"``) draws three coordinates, a 2-D axes two; a new figure by
        default (3-D when the state, or ``dims``, has at least 3 units).
    pca : None, False or fitted object with ``transform`` (e.g. ``sklearn.decomposition.PCA``)
        None (default): raw units when the state has at most 3 units, else PCA fitted here.
        False: always raw units (the first 2 or 3, or ``dims``). A fitted object: project with it.
    dims : sequence of 2 or 3 ints, optional
        Unit indices to draw in raw coordinates (implies no PCA); their count must match the axes.
    mode_length : float
        Length of the unstable-mode lines as a fraction of the plotted data's extent.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    ValueError
        If ``trajectories`` is not (trial, time, unit) with the result's unit count, ``dims`` names
        units out of range, repeats one, does not match a 2-D/3-D ``ax``, or is combined with a
        fitted ``pca``.
    """
    import matplotlib.pyplot as plt

    states = np.asarray(result.states, dtype=float)
    n_unit = states.shape[1]
    traj = None
    if trajectories is not None:
        traj = np.asarray(trajectories, dtype=float)
        if traj.ndim != 3 or traj.shape[-1] != n_unit:
            raise ValueError(f"trajectories must have shape (trial, time, {n_unit}), got {traj.shape}")
    raw = pca is False or dims is not None or (pca is None and n_unit <= 3)
    if dims is not None:
        if pca not in (None, False):
            raise ValueError("pass either dims (raw units) or a fitted pca, not both")
        dims = tuple(int(d) for d in np.atleast_1d(dims))
        if len(dims) not in (2, 3) or len(set(dims)) != len(dims) or min(dims) < 0 or max(dims) >= n_unit:
            raise ValueError(f"dims must name 2 or 3 distinct units of the {n_unit}-unit state, got {dims}")
    if ax is None:
        want_3d = len(dims) == 3 if dims is not None else n_unit >= 3
        fig = plt.figure()
        ax = fig.add_subplot(projection="3d" if want_3d else None)
    n_comp = 3 if getattr(ax, "name", "") == "3d" else 2
    if raw:
        if dims is None:
            dims = tuple(range(min(n_comp, n_unit)))
        elif len(dims) != n_comp:
            raise ValueError(f"dims {dims} names {len(dims)} units but the axes is {n_comp}-D; "
                             f"pass a {'3-D' if len(dims) == 3 else '2-D'} ax or change dims")
        project = _raw_projection(dims, n_comp)
        labels = [f"unit {d}" for d in dims] + [""] * (n_comp - len(dims))
    else:
        project = _projection(pca, traj.reshape(-1, n_unit) if traj is not None else states, n_comp)
        labels = [f"PC {k + 1}" for k in range(n_comp)]

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
    ax.set_xlabel(labels[0])
    ax.set_ylabel(labels[1])
    if n_comp == 3:
        ax.set_zlabel(labels[2])
    if raw and len(dims) == 1:
        ax.set_yticks([])  # a 1-unit state lies on the x axis
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


def _raw_projection(dims: tuple[int, ...], n_comp: int):
    """``x (..., unit) -> (..., n_comp)``: the units ``dims``, zero-padded to ``n_comp`` columns."""
    def project(x):
        x = np.asarray(x, dtype=float)[..., list(dims)]
        pad = np.zeros((*x.shape[:-1], n_comp - len(dims)))
        return np.concatenate([x, pad], axis=-1)

    return project


__all__ = ["plot_eigenvalues", "plot_fixed_points"]
