"""Figures of continuous-report behaviour: report errors against a fitted swap model."""

from __future__ import annotations

from typing import Any

import numpy as np

from neurodyn.plotting._style import axes_or_new

__all__ = ["plot_response_errors"]


def plot_response_errors(fit: Any, responses: Any, targets: Any, non_targets: Any, *, ax: Any = None,
                         bins: int = 36, label: str = "reports"):
    """Histogram of report errors (degrees) with the density of a fitted swap model over it.

    Parameters
    ----------
    fit : MixtureFit
        From :func:`~neurodyn.tasks.fit_mixture_model` (on these reports, or others to compare).
    responses, targets : array-like, shape (trial,)
        Reported and cued angles in radians.
    non_targets : array-like, shape (trial,) or (trial, non_target)
        Uncued items in radians; the model's swap term is averaged over their offsets from the target.
    ax : matplotlib Axes, optional
        A new 4.5 x 3 inch figure by default.
    bins : int
        Histogram bins over [-180, 180) degrees.
    label : str
        Legend label of the histogram (e.g. "data", "network").

    Returns
    -------
    matplotlib.axes.Axes
        A density histogram (per degree) and a line labelled with the fit's parameters.

    Raises
    ------
    ValueError
        For angles that are not radians or shapes that do not match (as ``fit_mixture_model``).

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.plotting import plot_response_errors
    >>> from neurodyn.tasks import fit_mixture_model, sample_mixture_responses
    >>> rng = np.random.default_rng(0)
    >>> targets, non_targets = rng.uniform(-np.pi, np.pi, 500), rng.uniform(-np.pi, np.pi, 500)
    >>> truth = {"kappa": 8.0, "p_target": 0.7, "p_swap": 0.2, "p_guess": 0.1}
    >>> reports = sample_mixture_responses(truth, targets, non_targets, seed=1)
    >>> fit = fit_mixture_model(reports, targets, non_targets)
    >>> ax = plot_response_errors(fit, reports, targets, non_targets)
    >>> ax.get_xlabel(), len(ax.patches), ax.get_lines()[0].get_label().startswith("swap model")
    ('report error (deg)', 36, True)
    """

    from neurodyn.tasks.swap_model import _check, _wrap, error_density

    r, t, nt = _check(responses, targets, non_targets)
    ax = axes_or_new(ax, figsize=(4.5, 3), layout="constrained")
    errors = np.rad2deg(_wrap(r - t))
    ax.hist(errors, bins=bins, range=(-180, 180), density=True, color="0.75", label=label)
    grid = np.linspace(-np.pi, np.pi, 721)
    density = error_density(fit, grid, _wrap(nt - t[:, None])) * np.pi / 180  # per degree
    ax.plot(np.rad2deg(grid), density, color="C3",
            label=f"swap model: κ {fit.kappa:.3g}, target {fit.p_target:.2f}, swap {fit.p_swap:.2f}, "
                  f"guess {fit.p_guess:.2f}")
    ax.set(xlabel="report error (deg)", ylabel="density (1/deg)", xlim=(-180, 180))
    ax.legend(fontsize=7)
    return ax
