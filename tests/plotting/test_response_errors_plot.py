"""The report-error figure: a normalised histogram and a swap-model density that integrates to 1."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from neurodyn.plotting import plot_response_errors  # noqa: E402
from neurodyn.tasks import MixtureFit, sample_mixture_responses  # noqa: E402

FIT = MixtureFit(kappa=6.0, p_target=0.6, p_swap=0.3, p_guess=0.1, log_likelihood=0.0, n_trials=0,
                 n_iterations=0, converged=True)


def test_histogram_and_model_density_are_both_normalised_per_degree():
    rng = np.random.default_rng(0)
    t, nt = rng.uniform(-np.pi, np.pi, 400), rng.uniform(-np.pi, np.pi, (400, 2))
    r = sample_mixture_responses(FIT, t, nt, seed=0)
    fig, ax = plt.subplots()
    assert plot_response_errors(FIT, r, t, nt, ax=ax, bins=24, label="data") is ax
    heights = np.array([p.get_height() for p in ax.patches])
    assert len(heights) == 24 and heights.sum() * 15 == pytest.approx(1.0)  # 15-degree bins
    x, y = ax.get_lines()[0].get_data()
    assert np.trapezoid(y, x) == pytest.approx(1.0, abs=1e-3)  # the mixture's error density, per degree
    assert y[np.argmin(np.abs(x))] == pytest.approx(y.max())  # peaked at zero error
    assert "data" in ax.get_legend_handles_labels()[1]
    plt.close(fig)


def test_degrees_are_refused():
    with pytest.raises(ValueError, match="look like degrees"):
        plot_response_errors(FIT, np.array([90.0, -45.0]), np.zeros(2), np.zeros(2))
