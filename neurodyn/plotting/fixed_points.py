"""Figures of fixed-point searches: state-space portraits and eigenvalue spectra."""

from __future__ import annotations

from typing import Any

import numpy as np

from neurodyn.plotting._style import (  # noqa: F401  (STABILITY_COLORS, SLOW_COLOR: public colours)
    CYCLE_COLOR,
    SLOW_COLOR,
    STABILITY_COLORS,
    axes_or_new,
    condition_title,
    point_classes,
    state_axis_label,
)

#: colour of the network trajectories drawn behind the points
TRAJECTORY_COLOR = "0.8"


def plot_fixed_points(result, *, trajectories: Any = None, ax: Any = None, pca: Any = None,
                      dims: Any = None, mode_length: float = 0.15, title: str | None = None,
                      legend: bool = True):
    """Fixed points (and cycles) with trajectories, in raw state units or top principal components.

    A state of at most 3 units is drawn in its own coordinates (axes "unit 0", "unit 1", ...), so
    collinear points are not squeezed onto a line; a larger state is projected onto its top
    principal components (axes "PC1 (63 %)", ...: the share of the variance each explains) unless
    ``pca=False`` or ``dims`` asks for raw units. Converged points get one marker per class:
    stable (black dots), saddles by their number of unstable dimensions (red triangles for 1,
    purple squares for 2, brown diamonds for 3, ...), unstable (orange), marginal (green);
    non-converged slow points are grey crosses. The points of each period-k cycle are joined by
    a dashed line; each saddle's leading (unstable) eigenvector is drawn as a short line through
    it in the saddle's colour when the result carries ``leading_mode`` (a loaded file does not),
    keyed "unstable direction" in the legend, or "unstable direction (2 unstable dims)" etc., one
    entry per colour, when saddles of several classes are drawn.
    3-D markers are drawn without depth shading, so one class has one colour.

    Parameters
    ----------
    result : FixedPointResult or CycleResult
        Any result with ``states (fixed_point, unit)``, ``stability``, ``n_unstable``,
        ``converged``, ``order``, ``cycle_id``, ``cycle_step`` and ``attrs``.
    trajectories : array-like, shape (trial, time, unit), optional
        Drawn as thin grey lines; the PCA (if used) is fitted on them when given, else on the points.
    ax : matplotlib Axes, optional
        A 3-D axes (``projection="3d"``) draws three coordinates, a 2-D axes two; a new figure by
        default (3-D when the state, or ``dims``, has at least 3 units).
    pca : None, False or fitted object with ``transform`` (e.g. ``sklearn.decomposition.PCA``)
        None (default): raw units when the state has at most 3 units, else PCA fitted here.
        False: always raw units (the first 2 or 3, or ``dims``). A fitted object: project with it
        (its ``explained_variance_ratio_``, if any, labels the axes).
    dims : sequence of 2 or 3 ints, optional
        Unit indices to draw in raw coordinates (implies no PCA); their count must match the axes.
    mode_length : float
        Length of the unstable-mode lines as a fraction of the plotted data's extent.
    title : str, optional
        Axes title; default: the model and condition from ``result.attrs``
        (e.g. "LeakyRNN, 64 units, input (0, 0, 0)", see :func:`condition_title`); ``""`` for none.
    legend : bool
        Draw the legend (one entry per point class, the unstable directions and cycles).

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    TypeError
        If ``result`` is not a fixed-point or cycle result, or ``pca`` is neither None, False nor an
        object with a ``transform`` method.
    ValueError
        If ``trajectories`` is not (trial, time, unit) with the result's unit count, is empty or
        holds NaN/Inf, ``dims`` names
        units out of range, repeats one, does not match a 2-D/3-D ``ax``, or is combined with a
        fitted ``pca``, or ``pca.transform`` gives fewer components than the axes has dims.

    Examples
    --------
    >>> import torch
    >>> from neurodyn.analysis import find_fixed_points
    >>> res = find_fixed_points(lambda h, u: torch.tanh(2 * h), state_size=1,
    ...                         initial_states=[[-1.0], [0.1], [1.0]])
    >>> ax = plot_fixed_points(res)
    >>> ax.get_legend_handles_labels()[1]
    ['stable', 'unstable']
    """

    check_result(result, "plot_fixed_points")
    states = np.asarray(result.states, dtype=float)
    n_unit = states.shape[1]
    traj = None
    if trajectories is not None:
        traj = np.asarray(trajectories, dtype=float)
        if traj.ndim != 3 or traj.shape[-1] != n_unit:
            raise ValueError(f"trajectories must have shape (trial, time, {n_unit}), got {traj.shape}")
        if traj.size == 0:
            raise ValueError(f"trajectories are empty (shape {traj.shape}); give at least one trial and "
                             "step, or leave them out")
        if not np.isfinite(traj).all():
            where = tuple(int(i) for i in np.argwhere(~np.isfinite(traj))[0])
            raise ValueError(f"trajectories contain NaN or Inf (first at trial, time, unit {where}); "
                             "plot finite trajectories (e.g. before a run diverged)")
    raw = pca is False or dims is not None or (pca is None and n_unit <= 3)
    if dims is not None:
        if pca not in (None, False):
            raise ValueError("pass either dims (raw units) or a fitted pca, not both")
        dims = tuple(int(d) for d in np.atleast_1d(dims))
        if len(dims) not in (2, 3) or len(set(dims)) != len(dims) or min(dims) < 0 or max(dims) >= n_unit:
            raise ValueError(f"dims must name 2 or 3 distinct units of the {n_unit}-unit state, got {dims}")
    want_3d = len(dims) == 3 if dims is not None else n_unit >= 3
    ax = axes_or_new(ax, projection="3d" if want_3d else None)
    three_d = getattr(ax, "name", "") == "3d"
    n_comp = 3 if three_d else 2
    if raw:
        if dims is None:
            dims = tuple(range(min(n_comp, n_unit)))
        elif len(dims) != n_comp:
            raise ValueError(f"dims {dims} names {len(dims)} units but the axes is {n_comp}-D; "
                             f"pass a {'3-D' if len(dims) == 3 else '2-D'} ax or change dims")
        project = _raw_projection(dims, n_comp)
        labels = [state_axis_label(d) for d in dims] + [""] * (n_comp - len(dims))
    else:
        project, ratio = _projection(pca, traj.reshape(-1, n_unit) if traj is not None else states, n_comp)
        labels = [f"PC{k + 1}" + (f" ({100 * ratio[k]:.0f} %)" if ratio is not None else "")
                  for k in range(n_comp)]

    def draw(xyz, *args, **kwargs):
        cols = [xyz[..., i] for i in range(n_comp)]
        return ax.plot(*cols, *args, **kwargs)

    if traj is not None:
        for trial in traj:
            draw(project(trial), color=TRAJECTORY_COLOR, lw=0.5, zorder=1)
    pts = project(states)
    extent = float(np.ptp(pts, axis=0).max()) if pts.size else 1.0
    if traj is not None:
        extent = float(np.ptp(project(traj.reshape(-1, n_unit)), axis=0).max())
    classes = point_classes(result)
    shade = {"depthshade": False} if three_d else {}
    for cls in classes:
        ax.scatter(*pts[cls.mask].T[:n_comp], s=36, label=cls.label, zorder=3, **cls.scatter_kwargs(),
                   **shade)
    cycle_label = "cycle"
    for cid in np.unique(result.cycle_id[result.order > 1]):
        rows = np.flatnonzero(result.cycle_id == cid)
        rows = rows[np.argsort(result.cycle_step[rows])]
        draw(pts[np.r_[rows, rows[:1]]], ls="--", color=CYCLE_COLOR, lw=1, zorder=2, label=cycle_label)
        cycle_label = None
    if result.leading_mode is not None:
        half = 0.5 * mode_length * (extent if extent > 0 else 1.0)
        saddles = [cls for cls in classes if cls.label.startswith("saddle")]
        for cls in saddles:  # one legend entry per colour: qualified by the saddle class when several
            mode_label = ("unstable direction" if len(saddles) == 1 else
                          "unstable direction" + cls.label.removeprefix("saddle"))
            for i in np.flatnonzero(cls.mask):
                ends = project(states[i] + np.outer([-1.0, 1.0], result.leading_mode[i]))
                direction = ends[1] - ends[0]
                norm = np.linalg.norm(direction)
                if norm > 0:
                    seg = pts[i] + np.outer([-half, half], direction / norm)
                    draw(seg, color=cls.color, lw=1.5, zorder=2, label=mode_label)
                    mode_label = None
    ax.set_xlabel(labels[0])
    ax.set_ylabel(labels[1])
    if n_comp == 3:
        ax.set_zlabel(labels[2])
    if raw and len(dims) == 1:
        ax.set_yticks([])  # a 1-unit state lies on the x axis
    ax.set_title(condition_title(result) if title is None else title, fontsize=10)
    if legend and ax.get_legend_handles_labels()[0]:
        ax.legend(loc="best", fontsize="small")
    return ax


def plot_eigenvalues(result, *, ax: Any = None, which: Any = "converged", n_leading: int | None = 3,
                     others: bool = True, legend: bool = True):
    """Leading eigenvalues of each point's (monodromy) Jacobian in the complex plane, with the unit circle.

    Each selected point contributes its ``n_leading`` largest-modulus eigenvalues, drawn with the
    point's marker and colour from :func:`plot_fixed_points` (stable black dots, saddles by number
    of unstable dimensions, ...), so a saddle with one unstable dimension shows one marker outside
    the unit circle; the remaining eigenvalues are small grey dots behind them (``others``).

    Parameters
    ----------
    result : FixedPointResult or CycleResult
    ax : matplotlib Axes, optional
    which : {"converged", "all", "stable", "saddle", "unstable", "marginal"}, int or index array
        Which points' spectra to draw: converged points (default), every point, the converged
        points with one stability label, or explicit row indices. For a cycle only its first
        point (``cycle_step == 0``) is drawn, since every point of a cycle has the same spectrum.
    n_leading : int or None
        Eigenvalues per point drawn with the point's marker (they are sorted by decreasing
        modulus); None draws all of them that way.
    others : bool
        Draw the remaining eigenvalues as small grey dots (label "other eigenvalues").
    legend : bool

    Returns
    -------
    matplotlib.axes.Axes
        ``ax.lines[0]`` is the unit circle.

    Raises
    ------
    TypeError
        If ``result`` is not a fixed-point or cycle result.
    ValueError
        For an unknown ``which``, a row index in ``which`` out of range, or ``n_leading < 1``.

    Examples
    --------
    >>> import torch
    >>> from neurodyn.analysis import find_fixed_points
    >>> res = find_fixed_points(lambda h, u: torch.tanh(2 * h), state_size=1,
    ...                         initial_states=[[-1.0], [0.1], [1.0]])
    >>> ax = plot_eigenvalues(res)
    >>> sorted(len(c.get_offsets()) for c in ax.collections)  # 2 stable points, 1 unstable
    [1, 2]
    """

    check_result(result, "plot_eigenvalues")
    if n_leading is not None and int(n_leading) < 1:
        raise ValueError(f"n_leading must be >= 1 or None, got {n_leading}")
    rows = _select_rows(result, which)
    chosen = np.zeros(len(result.stability), dtype=bool)
    chosen[rows] = True
    ax = axes_or_new(ax)
    theta = np.linspace(0, 2 * np.pi, 361)
    ax.plot(np.cos(theta), np.sin(theta), color="0.5", ls="--", lw=1, label="|λ| = 1")
    eig = np.asarray(result.eigenvalues)
    lead = eig.shape[1] if n_leading is None else min(int(n_leading), eig.shape[1])
    if others and lead < eig.shape[1] and rows.size:
        rest = eig[rows, lead:].ravel()
        ax.scatter(rest.real, rest.imag, s=4, color="0.75", lw=0, zorder=1, label="other eigenvalues")
    for cls in point_classes(result):
        r = np.flatnonzero(cls.mask & chosen)
        if r.size:
            ev = eig[r, :lead].ravel()
            ax.scatter(ev.real, ev.imag, s=30, label=cls.label, zorder=3, **cls.scatter_kwargs())
    ax.axhline(0, color="0.85", lw=0.5, zorder=0)
    ax.axvline(0, color="0.85", lw=0.5, zorder=0)
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel("Re λ")
    ax.set_ylabel("Im λ")
    if legend and ax.get_legend_handles_labels()[0]:
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
    rows = np.atleast_1d(np.asarray(which, dtype=np.int64))
    n = len(first)
    bad = rows[(rows < -n) | (rows >= n)]
    if bad.size:
        raise ValueError(f"which: row {int(bad[0])} out of range for {n} point{'' if n == 1 else 's'}; "
                         f"give row indices in [0, {n}) or 'converged', 'all' or a stability label")
    return rows


def check_result(result: Any, where: str) -> None:
    """A one-line ``TypeError`` unless ``result`` has what the fixed-point plots read (``states``,
    ``stability``, ``eigenvalues``: a :class:`~neurodyn.analysis.FixedPointResult` or cycle result).

    Examples
    --------
    >>> check_result("points.nc", "plot_fixed_points")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: plot_fixed_points takes the result of find_fixed_points or find_cycles, got str; ...
    """
    if not all(hasattr(result, name) for name in ("states", "stability", "eigenvalues")):
        raise TypeError(f"{where} takes the result of find_fixed_points or find_cycles, got "
                        f"{type(result).__name__}; load a saved one with neurodyn.io.load(path)")


def _projection(pca, data: np.ndarray, n_comp: int):
    """``(project, ratio)``: ``project(x (..., unit)) -> (..., n_comp)`` with the given
    ``pca.transform`` or a PCA fitted on ``data``; ``ratio (n_comp,)`` is the share of the data's
    variance along each component (None when unknown). A ``pca`` without a ``transform`` method, or
    whose transform gives fewer than ``n_comp`` components, raises a one-line error."""
    if pca is not None:
        if not callable(getattr(pca, "transform", None)):
            raise TypeError(f"pca must be None, False or a fitted object with a transform method (e.g. "
                            f"sklearn.decomposition.PCA(3).fit(states)), got {type(pca).__name__}")
        n_got = np.asarray(pca.transform(np.atleast_2d(data[:1]))).shape[-1] if data.shape[0] else n_comp
        if n_got < n_comp:
            raise ValueError(f"pca.transform gives {n_got} components but the axes is {n_comp}-D; fit the "
                             f"PCA with n_components >= {n_comp} or pass a {n_got}-D ax")
        ratio = getattr(pca, "explained_variance_ratio_", None)
        ratio = None if ratio is None or len(ratio) < n_comp else np.asarray(ratio, dtype=float)[:n_comp]
        return (lambda x: np.asarray(pca.transform(np.atleast_2d(x).reshape(-1, x.shape[-1])))[
            :, :n_comp].reshape(*x.shape[:-1], n_comp)), ratio
    mean = data.mean(axis=0) if data.size else np.zeros(data.shape[-1])
    ratio = None
    if data.shape[0] > 1:
        _, s, vt = np.linalg.svd(data - mean, full_matrices=False)
        total = float(np.sum(s**2))
        if total > 0:
            ratio = np.zeros(n_comp)
            k = min(n_comp, s.size)
            ratio[:k] = s[:k] ** 2 / total
    else:
        vt = np.eye(data.shape[-1])
    comps = np.zeros((n_comp, data.shape[-1]))
    k = min(n_comp, vt.shape[0])
    comps[:k] = vt[:k]
    return (lambda x: (x - mean) @ comps.T), ratio


def _raw_projection(dims: tuple[int, ...], n_comp: int):
    """``x (..., unit) -> (..., n_comp)``: the units ``dims``, zero-padded to ``n_comp`` columns."""
    def project(x):
        x = np.asarray(x, dtype=float)[..., list(dims)]
        pad = np.zeros((*x.shape[:-1], n_comp - len(dims)))
        return np.concatenate([x, pad], axis=-1)

    return project


__all__ = ["plot_eigenvalues", "plot_fixed_points"]
