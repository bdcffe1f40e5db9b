"""Figure of a reconstruction: held-out data beside a fitted model's free run (matplotlib imported inside)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["plot_reconstruction"]


def plot_reconstruction(result: Any, held_out: Any, *, channels: Sequence[int] = (0, 1), n_show: int = 200,
                        dt: float | None = None, channel_names: Sequence[str] | None = None, axes: Any = None,
                        title: str | None = None):
    """Time course and state-space projection of held-out data and of a fitted model's free run.

    Left: the first of ``channels`` over the first ``n_show`` time steps, data and generated (the
    measures are phase-free, so the two need not line up in time). Right: the two ``channels`` of the
    whole held-out series and of the whole free run, one against the other.

    Parameters
    ----------
    result : ReconstructionResult
        From :func:`~neurodyn.analysis.reconstruction.evaluate_reconstruction`; its ``generated``
        trajectory, shape (time, channel), is drawn.
    held_out : array-like, shape (time, channel)
        The held-out data that ``result`` was scored on.
    channels : pair of int
        Channel indices of the projection (the first is also the time course).
    n_show : int
        Time steps in the time course (>= 2).
    dt : float, optional
        Sampling interval in seconds; labels the time axis in steps of ``dt`` ms.
    channel_names : sequence of str, optional
        Names of all channels (default ``x0, x1, ...``).
    axes : pair of matplotlib Axes, optional
        A new 10 x 3.6 inch figure with two panels by default.
    title : str, optional
        Title of the time-course panel.

    Returns
    -------
    ndarray of matplotlib Axes, shape (2,)
        Each with two lines labelled ``"held-out data"`` and ``"generated (free run)"``, or
        ``"expected rate (free run)"`` when ``result.generated`` holds the rates of a Poisson
        observation (``result.generated_kind == "rate"``) rather than counts like the data.

    Raises
    ------
    ValueError
        When ``held_out`` and ``result.generated`` have different channel counts, a channel index
        is out of range or ``n_show < 2``.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from neurodyn.analysis.reconstruction._examples import rotation_result
    >>> from neurodyn.plotting import plot_reconstruction
    >>> result, held_out = rotation_result()  # a rotation scored on its own circle
    >>> axes = plot_reconstruction(result, held_out, dt=0.01)
    >>> axes[0].get_xlabel(), [line.get_label() for line in axes[1].get_lines()]
    ('time step (10.0 ms)', ['held-out data', 'generated (free run)'])
    """
    data = np.asarray(held_out, dtype=float)
    gen = np.asarray(result.generated, dtype=float)
    if data.ndim != 2 or gen.ndim != 2 or data.shape[1] != gen.shape[1]:
        raise ValueError(f"held_out has shape {data.shape} but the free run {gen.shape}; give the "
                         "(time, channel) data the result was scored on")
    i, j = (int(c) for c in channels)
    if not (0 <= i < data.shape[1] and 0 <= j < data.shape[1]):
        raise ValueError(f"channels {tuple(channels)} do not exist: the data have {data.shape[1]} channels")
    if int(n_show) < 2:
        raise ValueError(f"n_show must be at least 2 time steps, got {n_show}")
    names = list(channel_names) if channel_names is not None else [f"x{k}" for k in range(data.shape[1])]
    if axes is None:
        import matplotlib.pyplot as plt

        axes = plt.subplots(1, 2, figsize=(10, 3.6), layout="constrained")[1]
    n = min(int(n_show), len(data), len(gen))
    rate = getattr(result, "generated_kind", "observation") == "rate"
    gen_label = "expected rate (free run)" if rate else "generated (free run)"
    axes[0].plot(data[:n, i], label="held-out data")
    axes[0].plot(gen[:n, i], label=gen_label)
    unit = "" if dt is None else f" ({dt * 1e3:.1f} ms)"
    axes[0].set(xlabel=f"time step{unit}", ylabel=names[i], title=title or "time course")
    axes[1].plot(data[:, i], data[:, j], lw=0.4, label="held-out data")
    axes[1].plot(gen[:, i], gen[:, j], lw=0.8, label=gen_label)
    axes[1].set(xlabel=names[i], ylabel=names[j], title="state space")
    for ax in axes:
        ax.legend(fontsize=8)
    return np.asarray(axes)
