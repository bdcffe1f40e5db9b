"""Figures of distance matrices, embeddings and degeneracy results."""

import copy
import warnings

import matplotlib
import numpy as np
import pytest

from neurodyn.analysis import compute_solution_degeneracy, embed_distances, pairwise_distances
from neurodyn.models import LeakyRNN
from neurodyn.plotting.similarity import plot_distance_matrix, plot_embedding, plot_solution_degeneracy
from neurodyn.tasks.flipflop import FlipFlop

matplotlib.use("Agg")


def test_distance_matrix_and_embedding_plots():
    rng = np.random.default_rng(0)
    acts = [rng.standard_normal((40, 3 + k)) for k in range(5)]
    D = pairwise_distances(acts, metric="procrustes", progress=False, names=list("abcde"))
    ax = plot_distance_matrix(D)
    np.testing.assert_array_equal(ax.images[0].get_array(), D.values)
    assert [t.get_text() for t in ax.get_xticklabels()] == list("abcde")
    assert "procrustes" in ax.get_title()
    E = embed_distances(D)
    ax = plot_embedding(E, labels=list("abcde"), color=np.arange(5))
    np.testing.assert_allclose(ax.collections[0].get_offsets(), E)
    assert len(ax.texts) == 5


def test_degeneracy_plot():
    nets = [LeakyRNN(2, 6, 2, seed=s) for s in range(3)]
    nets.append(copy.deepcopy(nets[0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = compute_solution_degeneracy(nets, FlipFlop(n_bits=2, n_steps=20), n_trials=8,
                                          dynamics_kwargs={"n_delays": 2, "rank": 6})
    axes = plot_solution_degeneracy(res)
    assert len(axes) == 3 and len(axes[0].lines) == 4
    np.testing.assert_array_equal(axes[1].images[0].get_array(), res.dynamics)
    np.testing.assert_array_equal(axes[2].images[0].get_array(), res.weights)
    assert res.dynamics[0, 3] < 1e-6 and res.weights[0, 3] < 1e-9


@pytest.mark.parametrize("D", [np.arange(12.0).reshape(3, 4), np.zeros((0, 0)), np.zeros(3)])
def test_distance_matrix_must_be_square(D):
    with pytest.raises(ValueError, match=r"D must be a square \(network, network\) matrix with at least one"):
        plot_distance_matrix(D)


def test_embedding_labels_and_colours_must_match_the_points():
    P = np.zeros((3, 2))
    with pytest.raises(ValueError, match="labels has 1 entries for 3 networks"):
        plot_embedding(P, labels=["a"])
    with pytest.raises(ValueError, match="color has 2 entries for 3 networks"):
        plot_embedding(P, color=[1, 2])


@pytest.mark.parametrize("ax", ["foo", [1, 2], 3])
def test_plots_refuse_an_ax_that_is_not_a_matplotlib_axes(ax):
    with pytest.raises(TypeError, match="ax must be a matplotlib Axes"):
        plot_distance_matrix(np.zeros((2, 2)), ax=ax)
    with pytest.raises(TypeError, match="ax must be a matplotlib Axes"):
        plot_embedding(np.zeros((3, 2)), ax=ax)


def _degeneracy_result():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compute_solution_degeneracy([LeakyRNN(1, 6, 1, seed=s) for s in range(3)],
                                           FlipFlop(n_bits=1, n_steps=20), n_trials=4,
                                           dynamics_metric="procrustes")


def test_degeneracy_matrices_name_the_networks_and_label_their_colour_bars():
    import matplotlib.pyplot as plt

    res = _degeneracy_result()
    axes = plot_solution_degeneracy(res)
    for ax, metric in ((axes[1], "procrustes"), (axes[2], "weights")):
        assert [t.get_text() for t in ax.get_xticklabels()] == list(res.names)
        assert [t.get_text() for t in ax.get_yticklabels()] == list(res.names)
        colorbar = ax.images[0].colorbar
        assert metric in colorbar.ax.get_ylabel()
    plt.close("all")
    ax = plot_distance_matrix(np.zeros((40, 40)))  # too many for names: integer ticks
    ticks = ax.get_xticks()
    assert np.all(ticks == np.round(ticks))
    plt.close("all")


def test_degeneracy_axes_must_be_three_axes():
    import matplotlib.pyplot as plt

    res = _degeneracy_result()
    with pytest.raises(ValueError, match=r"axes must be 3 matplotlib Axes .*got 2"):
        plot_solution_degeneracy(res, axes=plt.subplots(1, 2)[1])
    with pytest.raises(TypeError, match=r"axes must be 3 matplotlib Axes .*got Figure"):
        plot_solution_degeneracy(res, axes=plt.figure())
    plt.close("all")


def test_embedding_takes_any_label_sequence_one_colour_and_axis_names():
    import matplotlib.pyplot as plt

    ax = plot_embedding(np.zeros((3, 2)), labels=np.array(["a", "b", "c"]), color="tab:red",
                        axis_labels=("PC 1", "PC 2"))
    assert [t.get_text() for t in ax.texts] == ["a", "b", "c"]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("PC 1", "PC 2")
    with pytest.raises(ValueError, match="color must be one value .* or one matplotlib colour, got 3;"):
        plot_embedding(np.zeros((3, 2)), color=3)
    with pytest.raises(ValueError, match=r"coords must have shape \(network, 2\); got \(5, 3\)"):
        plot_embedding(np.random.default_rng(0).random((5, 3)))
    plt.close("all")
