"""Figures of distance matrices, their embeddings and solution degeneracy (matplotlib imported inside)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from neurodyn.plotting._style import axes_or_new, check_axes


def plot_distance_matrix(D: Any, *, ax: Any = None, cmap: str = "viridis", labels: bool | None = None,
                         title: str | None = None, names: Sequence[str] | None = None,
                         colorbar_label: str | None = None):
    """Heat map of a ``(network, network_)`` distance (or similarity) matrix.

    Parameters
    ----------
    D : xarray.DataArray or array, shape (network, network)
        E.g. from :func:`neurodyn.analysis.pairwise_distances` (its ``metric`` attribute titles the plot).
    ax : matplotlib Axes, optional
    cmap : str
    labels : bool, optional
        Tick labels from the ``network`` coordinate (or ``names``); default when there are at most 30
        networks. Without them the ticks are integer network indices.
    title : str, optional
    names : sequence of str, optional
        Network names for the tick labels when ``D`` has no ``network`` coordinate.
    colorbar_label : str, optional
        Label of the colour bar; default: the ``metric`` attribute of ``D`` (e.g. "cka"), if any.

    Returns
    -------
    matplotlib Axes
        With one image (``ax.images[0]``) and a colour bar.

    Raises
    ------
    ValueError
        If ``D`` is not a non-empty square matrix, or ``names`` has another length.
    TypeError
        If ``ax`` is not a matplotlib Axes.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> from neurodyn.analysis import pairwise_distances
    >>> from neurodyn.plotting import plot_distance_matrix
    >>> rng = np.random.default_rng(0)
    >>> D = pairwise_distances([rng.normal(size=(30, 4)) for _ in range(3)], metric="cka", progress=False)
    >>> ax = plot_distance_matrix(D)
    >>> ax.images[0].get_array().shape, ax.get_title()
    ((3, 3), 'pairwise cka')
    >>> plt.close(ax.figure)
    """
    M = np.asarray(getattr(D, "values", D), dtype=float)
    if M.ndim != 2 or M.shape[0] != M.shape[1] or M.shape[0] == 0:
        raise ValueError(f"D must be a square (network, network) matrix with at least one network, got shape "
                         f"{M.shape}")
    if names is not None and (np.ndim(names) != 1 or len(names) != len(M)):
        raise ValueError(f"names has {np.size(names)} entries for {len(M)} networks; give one per row of D")
    ax = axes_or_new(ax, figsize=(4, 3.5))
    im = ax.imshow(M, cmap=cmap, interpolation="nearest")
    cb = ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    metric = getattr(D, "attrs", {}).get("metric", "distance")
    if colorbar_label is None and "metric" in getattr(D, "attrs", {}):
        colorbar_label = str(metric)
    if colorbar_label:
        cb.set_label(colorbar_label)
    if names is None:
        names = (list(map(str, D.coords["network"].values)) if hasattr(D, "coords") and "network" in D.coords
                 else [str(k) for k in range(len(M))])
    if labels if labels is not None else len(M) <= 30:
        ax.set_xticks(range(len(M)), list(map(str, names)), rotation=90, fontsize=7)
        ax.set_yticks(range(len(M)), list(map(str, names)), fontsize=7)
    else:
        from matplotlib.ticker import MaxNLocator

        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    ax.set_title(title or f"pairwise {metric}")
    return ax


def plot_embedding(coords: Any, *, ax: Any = None, labels: Sequence[str] | None = None,
                   color: Any = None, cmap: str = "viridis", colorbar_label: str | None = None,
                   axis_labels: Sequence[str] = ("MDS 1", "MDS 2")):
    """Scatter of networks in a 2-D embedding of their distances (e.g. ``embed_distances``).

    Parameters
    ----------
    coords : array, shape (network, 2)
    ax : matplotlib Axes, optional
    labels : sequence of str, optional
        Text placed next to each point (a list, tuple or array).
    color : array, shape (network,), or one matplotlib colour, optional
        Values mapped through ``cmap`` (e.g. network size or task loss), with a colour bar; or one
        colour (e.g. ``"tab:red"``) for every point.
    cmap, colorbar_label : str
    axis_labels : pair of str
        Names of the two axes (what produced the coordinates); default ``("MDS 1", "MDS 2")``.

    Returns
    -------
    matplotlib Axes
        With one PathCollection holding one point per network.

    Raises
    ------
    ValueError
        If ``coords`` is not (network, 2), ``labels`` or ``color`` has another length, ``color`` is a
        single value that is not a matplotlib colour (e.g. a number), or ``axis_labels`` is not two
        names.
    TypeError
        If ``ax`` is not a matplotlib Axes.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> from neurodyn.plotting import plot_embedding
    >>> ax = plot_embedding(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]), labels=["a", "b", "c"],
    ...                    color=[8, 16, 32], colorbar_label="units")
    >>> len(ax.collections[0].get_offsets()), [t.get_text() for t in ax.texts]
    (3, ['a', 'b', 'c'])
    >>> plt.close(ax.figure)
    """
    from matplotlib.colors import is_color_like

    P = np.asarray(coords, dtype=float)
    if P.ndim != 2 or P.shape[1] != 2:
        raise ValueError(f"coords must have shape (network, 2); got {P.shape}; embed in 2 dimensions or "
                         "pass two columns, e.g. coords[:, :2]")
    single = color is not None and np.ndim(color) == 0
    if single and not is_color_like(color):
        raise ValueError(f"color must be one value per network or one matplotlib colour, got {color!r}; "
                         "e.g. color='tab:red' or color=values (shape (network,))")
    if isinstance(axis_labels, str) or np.ndim(axis_labels) != 1 or len(axis_labels) != 2:
        raise ValueError(f"axis_labels must be two names, got {axis_labels!r}; e.g. ('PC 1', 'PC 2')")
    for name, given in (("labels", labels), ("color", color)):
        if given is not None and np.ndim(given) != 0 and len(given) != len(P):
            raise ValueError(f"{name} has {len(given)} entries for {len(P)} networks; give one per row of "
                             "coords")
    ax = axes_or_new(ax, figsize=(4, 3.5))
    if single:
        sc = ax.scatter(P[:, 0], P[:, 1], color=color, s=25)
    else:
        sc = ax.scatter(P[:, 0], P[:, 1], c=color, cmap=cmap if color is not None else None, s=25)
    if color is not None and not single:
        cb = ax.figure.colorbar(sc, ax=ax)
        if colorbar_label:
            cb.set_label(colorbar_label)
    for k, text in enumerate([] if labels is None else list(labels)):
        ax.annotate(str(text), P[k, :2], fontsize=7, xytext=(3, 3), textcoords="offset points")
    ax.set_xlabel(str(axis_labels[0]))
    ax.set_ylabel(str(axis_labels[1]))
    ax.set_aspect("equal", adjustable="datalim")
    return ax


def plot_solution_degeneracy(result: Any, *, axes: Any = None):
    """Three panels of a :class:`~neurodyn.analysis.DegeneracyResult`: behaviour, dynamics, weights.

    Left: each network's behaviour metric in and out of distribution (one line per network). Middle and
    right: the dynamics and weight distance matrices (as :func:`plot_distance_matrix` draws them), titled
    with their mean (the degeneracy), with the network names on both axes (integer indices for more than
    30 networks). Each matrix has its own colour scale; its colour bar names the metric.

    Parameters
    ----------
    result : DegeneracyResult
    axes : sequence of 3 matplotlib Axes, optional

    Returns
    -------
    ndarray of 3 Axes

    Raises
    ------
    ValueError
        If ``axes`` does not hold 3 Axes.
    TypeError
        If ``axes`` is not a sequence of matplotlib Axes (e.g. a figure).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from neurodyn.analysis import compute_solution_degeneracy
    >>> from neurodyn.models import LeakyRNN
    >>> from neurodyn.plotting import plot_solution_degeneracy
    >>> from neurodyn.tasks import FlipFlop
    >>> models = [LeakyRNN(1, 6, 1, seed=s) for s in range(3)]
    >>> result = compute_solution_degeneracy(models, FlipFlop(n_bits=1, n_steps=20), n_trials=4,
    ...                                      dynamics_metric="procrustes")
    >>> axes = plot_solution_degeneracy(result)
    >>> len(axes), axes[1].images[0].get_array().shape  # behaviour, dynamics, weights
    (3, (3, 3))
    >>> plt.close(axes[0].figure)
    """
    import matplotlib.pyplot as plt

    if axes is not None:
        axes = check_axes(axes, 3, "behaviour, dynamics and weights")
    else:
        axes = plt.subplots(1, 3, figsize=(12, 3.6), layout="constrained")[1]
    metric = result.settings["behaviour_metric"]
    x = [0, 1]
    for b_id, b_ood in zip(result.behaviour_id, result.behaviour_ood):
        axes[0].plot(x, [b_id, b_ood], "o-", color="0.4", alpha=0.6, lw=1)
    axes[0].set_xticks(x, ["in distribution", "OOD"])
    axes[0].set_ylabel(metric)
    sd_id, sd_ood = result.behaviour_degeneracy_id, result.behaviour_degeneracy_ood
    axes[0].set_title(f"behaviour: sd {sd_id:.3g} (ID) / {sd_ood:.3g} (OOD)")
    for ax, M, what, value in ((axes[1], result.dynamics, result.settings["dynamics_metric"],
                                result.dynamics_degeneracy),
                               (axes[2], result.weights, "weights", result.weight_degeneracy)):
        plot_distance_matrix(M, ax=ax, names=result.names, title=f"{what}: mean {value:.3g}",
                             colorbar_label=f"{what} distance (own scale)")
        ax.set_xlabel("network")
    axes[1].set_ylabel("network")
    return axes


__all__ = ["plot_distance_matrix", "plot_embedding", "plot_solution_degeneracy"]
