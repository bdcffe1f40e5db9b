"""The standard two-panel figure of a fixed-point search: (a) the points in state space, (b) their spectra."""

from __future__ import annotations

from typing import Any

import numpy as np

from neurodyn.plotting._style import condition_title, label_panels
from neurodyn.plotting.fixed_points import check_result, plot_eigenvalues, plot_fixed_points

__all__ = ["plot_fixed_point_figure"]


def plot_fixed_point_figure(result, *, trajectories: Any = None, axes: Any = None, title: str | None = None,
                            n_leading: int | None = 3, pca: Any = None):
    """Two panels with letters: (a) :func:`plot_fixed_points`, (b) :func:`plot_eigenvalues`.

    The figure is titled with the model and condition (``title``), each panel says what it shows,
    and one legend below both panels explains the markers they share (stability classes, saddles
    by number of unstable dimensions, unstable directions, cycles, the unit circle).

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
    axes = np.asarray(list(axes), dtype=object)
    if axes.size != 2:
        raise ValueError(f"axes must be 2 matplotlib Axes (panels a and b), got {axes.size}")
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
    ax_a.set_title(f"{what}, {where}", fontsize=10)
    plot_eigenvalues(result, ax=ax_b, n_leading=n_leading, legend=False)
    jac = "monodromy-matrix" if np.any(orders > 1) else "Jacobian"
    n_eig = np.asarray(result.eigenvalues).shape[1]
    lead = "All" if n_leading is None or n_leading >= n_eig else f"Leading {n_leading}"
    ax_b.set_title(f"{lead} {jac} eigenvalues of each point", fontsize=10)
    label_panels(axes)
    handles: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    if handles:
        engine = fig.get_layout_engine()
        outside = engine is not None and "Constrained" in type(engine).__name__
        fig.legend(handles.values(), handles.keys(),
                   loc="outside lower center" if outside else "lower center",
                   ncol=min(len(handles), 7), fontsize="small", frameon=False)
    fig.suptitle(condition_title(result) if title is None else title, fontsize=11)
    return axes
