"""The paper figure of a fixed-point search: one marker per point class (saddles by unstable dimension),
explained variance on PC axes, a titled two-panel figure with letters and one legend."""

import matplotlib

matplotlib.use("Agg")

from math import comb  # noqa: E402

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from problems import BistableTanh  # noqa: E402

from neurodyn.analysis import find_fixed_points, load_fixed_points  # noqa: E402
from neurodyn.plotting import (  # noqa: E402
    condition_title,
    label_panels,
    plot_eigenvalues,
    plot_fixed_point_figure,
    plot_fixed_points,
)

SADDLE = {1: "saddle (1 unstable dim)", 2: "saddle (2 unstable dims)", 3: "saddle (3 unstable dims)"}
DIRECTION = {k: "unstable direction" + label.removeprefix("saddle") for k, label in SADDLE.items()}


class ThreeBitsAndALeak:
    """Three bistable tanh units and one contracting unit: 3^3 fixed points; a point with k units
    at 0 has k unstable dimensions, so there are C(3, k) 2^(3-k) of each kind."""

    def __call__(self, h, u):
        return torch.cat([BistableTanh(2.0)(h[..., :3]), 0.5 * h[..., 3:]], -1)


@pytest.fixture(scope="module")
def product():
    g = np.linspace(-1.2, 1.2, 5)
    grid = np.stack(np.meshgrid(g, g, g), -1).reshape(-1, 3)
    init = np.hstack([grid, np.zeros((len(grid), 1))])
    res = find_fixed_points(ThreeBitsAndALeak(), state_size=4, initial_states=init)
    traj = init[None] + np.random.default_rng(0).normal(0.0, 0.1, (3, len(init), 4))
    return res, traj


def scatters(ax):
    return {c.get_label(): c for c in ax.collections if not c.get_label().startswith("_")}


def test_one_marker_style_per_class_with_the_result_counts(product):
    res, traj = product
    counts = {"stable": 8, **{SADDLE[k]: comb(3, k) * 2 ** (3 - k) for k in (1, 2, 3)}}
    for label, want in counts.items():  # the oracle: the counts of the closed form match the result
        if label == "stable":
            assert np.sum(res.stability == "stable") == want
        else:
            k = int(label.split("(")[1][0])
            assert np.sum((res.stability == "saddle") & (res.n_unstable == k)) == want
    fig, ax = plt.subplots()
    plot_fixed_points(res, trajectories=traj, ax=ax)
    drawn = scatters(ax)
    assert {k: len(v.get_offsets()) for k, v in drawn.items()} == counts
    styles = {(tuple(np.round(v.get_facecolor()[0], 3)), v.get_paths()[0].vertices.tobytes())
              for v in drawn.values()}
    assert len(styles) == len(drawn)  # each class has its own colour and marker
    labels = ax.get_legend().get_texts()
    assert {t.get_text() for t in labels} >= {*counts, *DIRECTION.values()}
    plt.close(fig)


def test_pc_axes_name_their_explained_variance(product):
    res, traj = product
    flat = traj.reshape(-1, 4)
    s = np.linalg.svd(flat - flat.mean(0), compute_uv=False)
    ratio = s**2 / np.sum(s**2)
    fig, ax = plt.subplots()
    plot_fixed_points(res, trajectories=traj, ax=ax)
    assert ax.get_xlabel() == f"PC1 ({100 * ratio[0]:.0f} %)"
    assert ax.get_ylabel() == f"PC2 ({100 * ratio[1]:.0f} %)"
    plt.close(fig)

    class FittedPCA:  # a fitted object with transform and explained_variance_ratio_
        explained_variance_ratio_ = np.array([0.5, 0.25, 0.125])

        def transform(self, x):
            return x[:, :3]

    ax = plot_fixed_points(res, pca=FittedPCA())
    assert [ax.get_xlabel(), ax.get_ylabel(), ax.get_zlabel()] == ["PC1 (50 %)", "PC2 (25 %)", "PC3 (12 %)"]
    plt.close(ax.figure)


def test_3d_markers_have_one_colour_per_class(product):
    res, traj = product
    ax = plot_fixed_points(res, trajectories=traj)
    assert ax.name == "3d"
    ax.figure.canvas.draw()  # depth shading would give the farther points of a class lighter colours
    for label, col in scatters(ax).items():
        face = col.get_facecolors()
        assert np.allclose(face, face[0]), label
    plt.close(ax.figure)


def test_eigenvalue_panel_draws_the_leading_eigenvalues_per_point(product):
    res, _ = product
    ax = plot_eigenvalues(res, n_leading=2)
    drawn = scatters(ax)
    for k in (1, 2, 3):
        rows = (res.stability == "saddle") & (res.n_unstable == k)
        np.testing.assert_allclose(drawn[SADDLE[k]].get_offsets(),
                                   np.c_[res.eigenvalues[rows, :2].real.ravel(),
                                         res.eigenvalues[rows, :2].imag.ravel()])
    assert len(drawn["other eigenvalues"].get_offsets()) == res.n_points * 2
    assert "|λ| = 1" in ax.get_legend_handles_labels()[1]
    plt.close(ax.figure)
    ax = plot_eigenvalues(res, n_leading=None, others=True)
    assert "other eigenvalues" not in scatters(ax)
    assert sum(len(c.get_offsets()) for c in ax.collections) == res.n_points * 4
    with pytest.raises(ValueError, match="n_leading"):
        plot_eigenvalues(res, n_leading=0)
    plt.close("all")


def test_two_panel_figure_has_letters_a_title_and_one_legend(product):
    res, traj = product
    axes = plot_fixed_point_figure(res, trajectories=traj, title="three bits and a leak, 4 units")
    fig = axes[0].figure
    assert axes[0].name == "3d" and len(axes) == 2
    assert fig.get_suptitle() == "three bits and a leak, 4 units"
    letters = [t.get_text() for ax in axes for t in ax.texts]
    assert letters == ["a", "b"]
    assert "principal components" in axes[0].get_title() and "Leading 3" in axes[1].get_title()
    assert axes[0].get_legend() is None and axes[1].get_legend() is None
    (legend,) = fig.legends
    labels = [t.get_text() for t in legend.get_texts()]
    assert len(labels) == len(set(labels))
    assert {"stable", *SADDLE.values(), *DIRECTION.values(), "|λ| = 1", "other eigenvalues"} == set(labels)
    assert "%" in axes[0].get_xlabel()
    fig.canvas.draw()  # 9 entries split over the columns as matplotlib splits them: within the figure
    assert legend.get_window_extent().width <= fig.bbox.width
    plt.close(fig)
    axes = plot_fixed_point_figure(res)  # default title from the result: no model recorded, no input
    assert axes[0].figure.get_suptitle() == "4 units, no input"
    plt.close("all")


def test_condition_title_names_model_units_and_input(tmp_path):
    from neurodyn.analysis.plrnn import find_cycles
    from neurodyn.models import PLRNN, LeakyRNN

    net = LeakyRNN(3, 8, 3, seed=0)
    res = find_fixed_points(net, inputs=[0.0, 0.5, -1.0], n_inits=16, seed=0, max_iters=50)
    assert condition_title(res) == "8 units, input (0, 0.5, -1)"
    assert condition_title(res, model="LeakyRNN") == "LeakyRNN, 8 units, input (0, 0.5, -1)"
    res.save(tmp_path / "f.nc")
    assert condition_title(load_fixed_points(tmp_path / "f.nc")) == "8 units, input (0, 0.5, -1)"
    ax = plot_fixed_points(res)
    assert ax.get_title() == "8 units, input (0, 0.5, -1)"
    plt.close(ax.figure)
    lozi = PLRNN.from_arrays(np.array([[1.7, 1.0], [0.5, 0.0]]), np.array([[-3.4, 0.0], [0.0, 0.0]]),
                             np.array([1.0, 0.0]))
    cycles = find_cycles(lozi, max_order=1, exhaustive=True)
    assert condition_title(cycles) == "PLRNN, 2 units, no input"  # the exact search records the model


def test_loaded_file_has_no_unstable_direction_entry(product, tmp_path):
    res, _ = product
    res.save(tmp_path / "p.nc")
    ax = plot_fixed_points(load_fixed_points(tmp_path / "p.nc"))
    labels = ax.get_legend_handles_labels()[1]
    assert not any(lb.startswith("unstable direction") for lb in labels) and SADDLE[2] in labels
    plt.close(ax.figure)


def test_label_panels_on_2d_and_3d_axes():
    fig = plt.figure()
    axes = [fig.add_subplot(1, 3, 1), fig.add_subplot(1, 3, 2, projection="3d"), fig.add_subplot(1, 3, 3)]
    texts = label_panels(axes, "xyz")
    assert [t.get_text() for t in texts] == ["x", "y", "z"]
    assert all(t.get_fontweight() == "bold" for t in texts)
    with pytest.raises(ValueError, match="letters"):
        label_panels(axes, "ab")
    plt.close(fig)


def test_single_column_figure_gets_a_legend_and_titles_that_fit(product):
    res, _ = product
    fig = plt.figure(figsize=(3.3, 2.2), layout="constrained")
    axes = plot_fixed_point_figure(res, axes=[fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)], pca=False)
    (legend,) = fig.legends
    fig.canvas.draw()
    assert legend.get_window_extent().width <= fig.bbox.width
    assert [ax.get_title() for ax in axes] == ["Fixed points", "Eigenvalues"]
    plt.close(fig)
    axes = plot_fixed_point_figure(res, titles=False)
    assert [ax.get_title() for ax in axes] == ["", ""]
    legend = axes[0].figure.legends[0]
    assert -(-len(legend.get_texts()) // legend._ncols) <= 3  # 11 in, 9 entries: at most three rows
    plt.close("all")


def test_a_result_without_points_says_so(product):
    res, _ = product
    axes = plot_fixed_point_figure(res.select([]))
    assert [t.get_text() for ax in axes for t in ax.texts] == ["no points", "a", "no points", "b"]
    plt.close("all")


@pytest.mark.parametrize("axes", ["figure", "one", "three"])
def test_figure_axes_must_be_two_axes(product, axes):
    res, _ = product
    fig = plt.figure()
    given = {"figure": fig, "one": [fig.add_subplot(1, 1, 1)], "three": plt.subplots(1, 3)[1]}[axes]
    error = TypeError if axes == "figure" else ValueError
    with pytest.raises(error, match=r"axes must be 2 matplotlib Axes \(panels a and b\)"):
        plot_fixed_point_figure(res, axes=given)
    plt.close("all")


def test_eigenvalue_rows_out_of_range_are_refused(product):
    res, _ = product
    with pytest.raises(ValueError, match=r"which: row 99 out of range for 27 points"):
        plot_eigenvalues(res, which=[99])


def test_each_unstable_direction_legend_entry_has_its_saddles_colour(product):
    res, traj = product
    ax = plot_fixed_points(res, trajectories=traj)
    handles = dict(zip(*reversed(ax.get_legend_handles_labels())))
    for k in (1, 2, 3):
        marker_colour = matplotlib.colors.to_rgba(handles[SADDLE[k]].get_facecolor()[0])
        assert matplotlib.colors.to_rgba(handles[DIRECTION[k]].get_color()) == marker_colour
    plt.close(ax.figure)
    ax = plot_fixed_points(res.select(res.n_unstable <= 1), trajectories=traj)  # one saddle class: one entry
    handles = dict(zip(*reversed(ax.get_legend_handles_labels())))
    assert not set(DIRECTION.values()) & set(handles)
    assert matplotlib.colors.to_rgba(handles["unstable direction"].get_color()) == matplotlib.colors.to_rgba(
        "tab:red")
    plt.close(ax.figure)
