"""One look for every figure of fixed points: a marker and colour per point class, titles, panel letters."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

#: colour of each stability label (saddles: the colour of saddles with one unstable dimension)
STABILITY_COLORS = {"stable": "black", "saddle": "tab:red", "unstable": "tab:orange",
                    "marginal": "tab:green"}
#: colour of non-converged slow points (drawn as crosses)
SLOW_COLOR = "0.6"
#: (colour, marker) of saddles with 1, 2, 3, ... unstable dimensions; the last one repeats
SADDLE_STYLES = (("tab:red", "^"), ("tab:purple", "s"), ("tab:brown", "D"), ("tab:pink", "v"),
                 ("tab:olive", "p"))
#: colour of the dashed lines joining the points of a cycle
CYCLE_COLOR = "tab:blue"


@dataclass(frozen=True)
class PointClass:
    """Rows of a fixed-point result drawn alike: a legend label, a row mask and a marker style."""

    label: str
    mask: np.ndarray
    color: str
    marker: str

    def scatter_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of ``Axes.scatter`` for this class (filled markers get a white edge)."""
        if self.marker == "x":
            return {"color": self.color, "marker": "x", "linewidths": 1.2}
        return {"color": self.color, "marker": self.marker, "edgecolors": "white", "linewidths": 0.5}


def state_axis_label(d: int) -> str:
    """``"unit 3"``: the axis label of state dimension ``d`` in every figure drawn in raw coordinates."""
    return f"unit {int(d)}"


def saddle_style(n_unstable: int) -> tuple[str, str]:
    """(colour, marker) of a saddle with ``n_unstable`` unstable dimensions (``n_unstable >= 1``)."""
    return SADDLE_STYLES[min(max(int(n_unstable), 1), len(SADDLE_STYLES)) - 1]


def point_classes(result: Any) -> list[PointClass]:
    """The classes of a fixed-point result's rows, in legend order.

    Converged points are split by stability, saddles further by their number of unstable
    dimensions (``"saddle (1 unstable dim)"``, ``"saddle (2 unstable dims)"``, ...); rows that did
    not converge form the class ``"slow point"``. Empty classes are left out. Works for every
    result with ``stability``, ``n_unstable`` and ``converged`` arrays of shape (fixed_point,).
    """
    stability = np.asarray(result.stability, dtype=str)
    n_unstable = np.asarray(result.n_unstable, dtype=np.int64)
    good = np.asarray(result.converged, dtype=bool)
    classes = []
    for label in ("stable", "saddle", "unstable", "marginal"):
        mask = good & (stability == label)
        if label == "saddle":
            for k in np.unique(n_unstable[mask]):
                color, marker = saddle_style(k)
                dims = "dim" if k == 1 else "dims"
                classes.append(PointClass(f"saddle ({k} unstable {dims})", mask & (n_unstable == k),
                                          color, marker))
        elif mask.any():
            classes.append(PointClass(label, mask, STABILITY_COLORS[label], "o"))
    if (~good).any():
        classes.append(PointClass("slow point", ~good, SLOW_COLOR, "x"))
    return classes


def condition_title(result: Any, model: str | None = None) -> str:
    """``"LeakyRNN, 64 units, input (0, 0, 0)"``: the model, state size and constant input of a search.

    The model's class name is ``model`` if given, else ``attrs["model"]`` (or ``attrs["model_class"]``)
    of the result, else left out; the input is ``attrs["input"]`` ("no input" when empty or absent).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> import numpy as np
    >>> from neurodyn.plotting._style import condition_title
    >>> result = SimpleNamespace(states=np.zeros((3, 64)), attrs={"model": "LeakyRNN", "input": [0.0, 1.0]})
    >>> condition_title(result)
    'LeakyRNN, 64 units, input (0, 1)'
    >>> condition_title(SimpleNamespace(states=np.zeros((1, 1)), attrs={}), model="PLRNN")
    'PLRNN, 1 unit, no input'
    """
    attrs = getattr(result, "attrs", None) or {}
    name = model or attrs.get("model") or attrs.get("model_class")
    parts = [str(name)] if name and name != "none" else []
    n_units = np.asarray(result.states).shape[1]
    parts.append(f"{n_units} unit{'' if n_units == 1 else 's'}")
    parts.append(input_text(attrs.get("input")))
    return ", ".join(parts)


def input_text(u: Any) -> str:
    """``"input (0, 0.5)"`` for a constant input vector, ``"no input"`` for None, "none" or empty."""
    if u is None or isinstance(u, str):
        return "no input"
    values = np.atleast_1d(np.asarray(u, dtype=float)).ravel()
    if values.size == 0:
        return "no input"
    return "input (" + ", ".join(f"{v + 0.0:.3g}" for v in values) + ")"


def label_panels(axes: Iterable[Any], letters: str = "abcdefghijklmnopqrstuvwxyz", *,
                 size: float = 13.0) -> list[Any]:
    """Bold panel letters (a, b, ...) at the top left of each axes, outside the data area.

    Parameters
    ----------
    axes : iterable of matplotlib Axes (2-D or 3-D)
    letters : str
        One letter per axes, in order.
    size : float
        Font size in points.

    Returns
    -------
    list of matplotlib Text
        The letters, one per axes (``text.get_text()`` is the letter).

    Raises
    ------
    ValueError
        If there are more axes than letters.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, axes = plt.subplots(1, 2)
    >>> [t.get_text() for t in label_panels(axes)]
    ['a', 'b']
    >>> plt.close(fig)
    """
    axes = list(np.ravel(np.asarray(axes, dtype=object)))
    if len(axes) > len(letters):
        raise ValueError(f"{len(axes)} axes but only {len(letters)} letters; pass more letters")
    texts = []
    for ax, letter in zip(axes, letters):
        draw = ax.text2D if getattr(ax, "name", "") == "3d" else ax.text
        texts.append(draw(-0.08, 1.04, letter, transform=ax.transAxes, fontsize=size, fontweight="bold",
                          va="bottom", ha="right"))
    return texts


def check_axes(axes: Any, n: int, what: str) -> np.ndarray:
    """``axes`` as a flat object array of ``n`` matplotlib Axes; a one-line ``ValueError`` when it holds
    another number of them (``what`` names the panels, e.g. "panels a and b") and a ``TypeError`` when
    an entry (or ``axes`` itself, e.g. a figure) is not an Axes.

    Examples
    --------
    >>> check_axes([1, 2, 3], 2, "panels a and b")
    Traceback (most recent call last):
    ...
    ValueError: axes must be 2 matplotlib Axes (panels a and b), got 3; e.g. plt.subplots(1, 2)[1]
    """
    from matplotlib.axes import Axes

    if isinstance(axes, Axes) or not np.iterable(axes):
        raise TypeError(f"axes must be {n} matplotlib Axes ({what}), got {type(axes).__name__}; e.g. "
                        f"plt.subplots(1, {n})[1]")
    flat = np.asarray(list(axes), dtype=object).ravel()
    if flat.size != n:
        raise ValueError(f"axes must be {n} matplotlib Axes ({what}), got {flat.size}; e.g. "
                         f"plt.subplots(1, {n})[1]")
    bad = [type(a).__name__ for a in flat if not isinstance(a, Axes)]
    if bad:
        raise TypeError(f"axes must be {n} matplotlib Axes ({what}), got a {bad[0]} among them; e.g. "
                        f"plt.subplots(1, {n})[1]")
    return flat


def axes_or_new(ax: Any, *, projection: str | None = None, **figure_kw: Any) -> Any:
    """``ax`` itself, or the one axes of a new figure (``figure_kw`` as in ``plt.subplots``: ``figsize``,
    ``layout``); ``projection="3d"`` for a 3-D axes. Matplotlib is imported only to make a figure.
    ``TypeError`` for an ``ax`` that is not a matplotlib Axes (e.g. an array of them, or a figure)."""
    if ax is not None:
        from matplotlib.axes import Axes

        if not isinstance(ax, Axes):
            raise TypeError(f"ax must be a matplotlib Axes (e.g. fig, ax = plt.subplots()), got "
                            f"{type(ax).__name__}")
        return ax
    import matplotlib.pyplot as plt

    return plt.subplots(subplot_kw={"projection": projection}, **figure_kw)[1]
