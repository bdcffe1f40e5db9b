"""The standard two-panel figure of a fixed-point search: (a) the points in state space, (b) their spectra."""

from __future__ import annotations

from typing import Any

import numpy as np

from neurodyn.plotting._style import check_axes, condition_title, label_panels
from neurodyn.plotting.fixed_points import check_result, plot_eigenvalues, plot_fixed_points

__all__ = ["plot_fixed_point_figure"]


def plot_fixed_point_figure(result, *, trajectories: Any = None, axes: Any = None, title: str | None = None,
                            n_leading: int | None = 3, pca: Any = None, titles: bool = True):
    """Two panels with letters: (a) :func:`plot_fixed_points`, (b) :func:`plot_eigenvalues`.

    The figure is titled with the model and condition (``title``), each panel says what it shows,
    and one legend below both panels explains the markers they share (stability classes, saddles
    by number of unstable dimensions, unstable directions, cycles, the unit circle). The legend has
    as many columns as fit the figure's width (at most 7), and a panel title too long for its panel
    (e.g. in a single-column figure) is replaced by a short one ("Fixed points", "Eigenvalues").
    A result without points gives panels that say "no points".

    Parameters
    ----------
    result : FixedPointResult or CycleResult
    trajectories : array-like, shape (trial, time, unit), optional
        Network trajectories drawn behind the points in panel a (the PCA is fitted on them).
    axes : sequence of 2 matplotlib Axes, optional
        Panel a (3-D for three coordinates) and panel b; default: a new 11 x 5.5 inch figure, with a
        3-D panel a when the state has at least 3 units.
    title : str, optional
        Figure title; default: :func:`condition_title` of the result, e.g. "LeakyRNN, 64 units,
        input (0, 0, 0)" (the model's class is named only when ``result.attrs`` records it).
    n_leading : int or None
        Eigenvalues per point drawn in colour in panel b (None: all).
    pca : None, False or fitted PCA
        Passed to :func:`plot_fixed_points`.
    titles : bool
        Title each panel with what it shows (default); False leaves the panels untitled.

    Returns
    -------
    ndarray of 2 matplotlib Axes
        ``axes[0].figure`` is the figure (save it with ``savefig``).

    Raises
    ------
    TypeError
        If ``result`` is not a fixed-point or cycle result, or ``pca`` has no ``transform`` method.
    ValueError
        If ``axes`` is not two Axes, or as :func:`~neurodyn.plotting.plot_fixed_points` raises.
    TypeError
        If ``axes`` (or one of its entries) is not a matplotlib Axes, e.g. a figure.

    Examples
    --------
    >>> import torch
    >>> from neurodyn.analysis import find_fixed_points
    >>> res = find_fixed_points(lambda h, u: torch.tanh(2 * h), state_size=2,
    ...                         initial_states=[[-1.0, 1.0], [0.1, 1.0], [1.0, -0.1]])
    >>> axes = plot_fixed_point_figure(res, title="tanh(2h), 2 units")
    >>> axes[0].figure.texts[0].get_text()
    'tanh(2h), 2 units'
    """
    import matplotlib.pyplot as plt

    check_result(result, "plot_fixed_point_figure")
    states = np.asarray(result.states)
    if axes is None:
        fig = plt.figure(figsize=(11, 5.5), layout="constrained")
        three_d = states.shape[1] >= 3
        axes = [fig.add_subplot(1, 2, 1, projection="3d" if three_d else None), fig.add_subplot(1, 2, 2)]
    axes = check_axes(axes, 2, "panels a and b")
    ax_a, ax_b = axes
    fig = ax_a.figure
    plot_fixed_points(result, trajectories=trajectories, ax=ax_a, pca=pca, title="", legend=False)
    orders = np.asarray(getattr(result, "order", np.ones(0)))
    what = "Fixed points and cycles" if np.any(orders > 1) else "Fixed points"
    if states.shape[1] <= 3 or pca is False:
        where = "in state coordinates"
    else:
        where = "top principal components of " + ("the trajectories (grey)" if trajectories is not None
                                                  else "the points")
    plot_eigenvalues(result, ax=ax_b, n_leading=n_leading, legend=False)
    if titles:
        jac = "monodromy-matrix" if np.any(orders > 1) else "Jacobian"
        n_eig = np.asarray(result.eigenvalues).shape[1]
        lead = "All" if n_leading is None or n_leading >= n_eig else f"Leading {n_leading}"
        for ax, long, short in ((ax_a, f"{what}, {where}", what),
                                (ax_b, f"{lead} {jac} eigenvalues of each point", "Eigenvalues")):
            _fitting_title(ax, long, short)
    if len(states) == 0:
        for ax in axes:
            draw = ax.text2D if getattr(ax, "name", "") == "3d" else ax.text
            draw(0.5, 0.5, "no points", transform=ax.transAxes, ha="center", va="center", color="0.4")
    label_panels(axes)
    handles: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    if handles:
        engine = fig.get_layout_engine()
        outside = engine is not None and "Constrained" in type(engine).__name__
        size, ncol = _legend_layout(list(handles), fig.get_size_inches()[0])
        fig.legend(handles.values(), handles.keys(),
                   loc="outside lower center" if outside else "lower center",
                   ncol=ncol, fontsize=size, frameon=False)
    fig.suptitle(condition_title(result) if title is None else title, fontsize=11)
    return axes


def _text_width(text: str, size: float) -> float:
    """Width in points of ``text`` at font size ``size`` (points) in the default font."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath

    return TextToPath().get_text_width_height_descent(text, FontProperties(size=size), ismath=False)[0]


def _legend_layout(labels: list[str], width_in: float, *, max_columns: int = 7,
                   max_rows: int = 3) -> tuple[str, int]:
    """(font size, columns) of the shared legend: "small" with as many columns as fit the figure's
    width, or a smaller font when that needs more than ``max_rows`` rows (a narrow figure)."""
    for size in ("small", "x-small", "xx-small"):
        ncol = _legend_columns(labels, width_in, max_columns=max_columns, size=size)
        if -(-len(labels) // ncol) <= max_rows:
            break
    return size, ncol


def _legend_columns(labels: list[str], width_in: float, *, max_columns: int, size: str = "small") -> int:
    """The most legend columns (at most ``max_columns``) whose entries fit a ``width_in``-inch figure
    at font ``size``; entries fill columns top to bottom as ``Figure.legend`` places them: split into
    ``ncol`` columns as evenly as possible, the first ones one entry longer (``numpy.array_split``)."""
    import matplotlib as mpl
    from matplotlib.font_manager import FontProperties

    size = FontProperties(size=size).get_size_in_points()
    handle = (mpl.rcParams["legend.handlelength"] + mpl.rcParams["legend.handletextpad"]) * size
    spacing = mpl.rcParams["legend.columnspacing"] * size
    widths = [handle + _text_width(label, size) for label in labels]
    for ncol in range(min(len(labels), max_columns), 1, -1):
        columns = [c for c in np.array_split(np.asarray(widths), ncol) if len(c)]
        total = sum(float(c.max()) for c in columns) + spacing * (len(columns) - 1)
        if total <= 72.0 * width_in * 0.9:  # margin for the legend's border and padding
            return ncol
    return 1


def _fitting_title(ax, long: str, short: str, size: float = 10.0) -> None:
    """Title ``ax`` with ``long`` if it fits the axes' share of the figure's width (the axes and the gap
    beside it) at ``size`` points, else with ``short`` (at a smaller size if even that does not fit)."""
    fig = ax.figure
    width = (ax.get_position().width + 0.1) * fig.get_size_inches()[0] * 72.0
    if _text_width(long, size) <= width:
        ax.set_title(long, fontsize=size)
    elif _text_width(short, size) <= width:
        ax.set_title(short, fontsize=size)
    else:
        ax.set_title(short, fontsize=max(6.0, size * width / _text_width(short, size)))
