"""The reconstruction figure: held-out data and the free run, as a time course and a projection."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from neurodyn.analysis.reconstruction import ReconstructionResult  # noqa: E402
from neurodyn.plotting import plot_reconstruction  # noqa: E402


def _result(generated):
    return ReconstructionResult(models=("fitted",), d_stsp=np.zeros(1), d_h=np.zeros(1), pe=np.zeros(1),
                                status=("ok",), max_lyapunov=float("nan"), generated=generated, settings={})


def test_draws_the_chosen_channels_into_given_axes():
    rng = np.random.default_rng(0)
    data, gen = rng.standard_normal((50, 3)), rng.standard_normal((40, 3))
    fig, axes = plt.subplots(1, 2)
    out = plot_reconstruction(_result(gen), data, channels=(2, 0), n_show=30, channel_names=["a", "b", "c"],
                              axes=axes, title="demo")
    assert list(out) == list(axes)
    held, free = axes[0].get_lines()
    np.testing.assert_array_equal(held.get_ydata(), data[:30, 2])
    np.testing.assert_array_equal(free.get_ydata(), gen[:30, 2])
    x, y = axes[1].get_lines()[1].get_data()
    np.testing.assert_array_equal(x, gen[:, 2])
    np.testing.assert_array_equal(y, gen[:, 0])
    assert (axes[0].get_title(), axes[1].get_xlabel(), axes[1].get_ylabel()) == ("demo", "c", "a")
    plt.close(fig)


@pytest.mark.parametrize("kwargs, match", [({"channels": (0, 5)}, "channels \\(0, 5\\) do not exist"),
                                           ({"n_show": 1}, "n_show must be at least 2")])
def test_bad_arguments_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        plot_reconstruction(_result(np.zeros((10, 2))), np.zeros((10, 2)), **kwargs)


def test_data_of_another_width_are_refused():
    with pytest.raises(ValueError, match="give the \\(time, channel\\) data the result was scored on"):
        plot_reconstruction(_result(np.zeros((10, 2))), np.zeros((10, 3)))


def test_poisson_rates_are_labelled_as_expected_rates():
    counts, rates = np.zeros((20, 2)), np.full((20, 2), 3.0)
    poisson = ReconstructionResult(models=("fitted",), d_stsp=np.zeros(1), d_h=np.zeros(1), pe=np.zeros(1),
                                   status=("ok",), max_lyapunov=float("nan"), generated=rates,
                                   settings={"observation": "poisson", "sample_counts": 1})
    assert (poisson.generated_kind, _result(rates).generated_kind) == ("rate", "observation")
    axes = plot_reconstruction(poisson, counts)
    assert [line.get_label() for line in axes[0].get_lines()] == ["held-out data", "expected rate (free run)"]
    assert axes[1].get_lines()[1].get_label() == "expected rate (free run)"
    plt.close(axes[0].figure)
