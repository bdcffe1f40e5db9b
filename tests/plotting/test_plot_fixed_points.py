"""plot_fixed_points / plot_eigenvalues return Axes and draw one marker per point / eigenvalue."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from problems import BistableTanh, FlipTanh, Rotation  # noqa: E402

from neurodyn.analysis import find_fixed_points, load_fixed_points  # noqa: E402
from neurodyn.plotting import plot_eigenvalues, plot_fixed_points  # noqa: E402


def n_markers(ax, label):
    return sum(len(c.get_offsets()) for c in ax.collections if c.get_label() == label)


@pytest.fixture
def saddle_result():
    """Product of two bistable tanh maps in 2-D: 4 stable, 4 saddles (1 unstable dim), 1 unstable."""
    problem = BistableTanh(2.0)

    def F(h, u):
        return problem(h)

    grid = np.stack(np.meshgrid(np.linspace(-1.2, 1.2, 9), np.linspace(-1.2, 1.2, 9)), -1)
    return find_fixed_points(F, state_size=2, initial_states=grid.reshape(-1, 2))


def test_portrait_draws_each_point_with_its_stability(saddle_result):
    good = saddle_result.fixed_points()
    assert good.n_points == 9
    fig, ax = plt.subplots()
    traj = np.random.default_rng(0).normal(size=(3, 20, 2))
    out = plot_fixed_points(saddle_result, trajectories=traj, ax=ax)
    assert out is ax
    assert n_markers(ax, "stable") == 4
    assert n_markers(ax, "saddle (1 unstable dim)") == 4
    assert n_markers(ax, "unstable") == 1
    mode_lines = [ln for ln in ax.lines if ln.get_color() == "tab:red"]
    assert len(mode_lines) == 4  # one unstable-mode segment per saddle
    assert len([ln for ln in ax.lines if ln.get_color() == "0.8"]) == 3  # trajectories
    plt.close(fig)


def test_portrait_in_3d_with_default_axes_and_cycles():
    res = find_fixed_points(FlipTanh(2.0), state_size=1, initial_states=np.linspace(-1, 1, 9)[:, None],
                            max_order=2)
    ax = plot_fixed_points(res)
    assert n_markers(ax, "stable") == 2  # the two points of the stable 2-cycle
    assert n_markers(ax, "unstable") == 1
    assert any(ln.get_linestyle() == "--" for ln in ax.lines)  # the cycle is joined
    plt.close(ax.figure)
    three = find_fixed_points(Rotation3D(), state_size=3, initial_states=np.eye(3))
    ax3 = plot_fixed_points(three)
    assert ax3.name == "3d" and n_markers(ax3, "stable") == 1
    plt.close(ax3.figure)


class Rotation3D:
    def __call__(self, h, u):
        return 0.5 * h.flip(-1)


def test_loaded_result_plots_without_modes(saddle_result, tmp_path):
    saddle_result.save(tmp_path / "f.nc")
    back = load_fixed_points(tmp_path / "f.nc")
    ax = plot_fixed_points(back)
    assert n_markers(ax, "saddle (1 unstable dim)") == 4
    assert not [ln for ln in ax.lines if ln.get_color() == "tab:red"]
    plt.close(ax.figure)


def test_eigenvalue_plot_counts_and_unit_circle(saddle_result):
    ax = plot_eigenvalues(saddle_result)
    assert n_markers(ax, "stable") == 4 * 2
    assert n_markers(ax, "saddle (1 unstable dim)") == 4 * 2
    circle = ax.lines[0].get_xydata()
    np.testing.assert_allclose(np.hypot(circle[:, 0], circle[:, 1]), 1.0, atol=1e-12)
    plt.close(ax.figure)
    ax = plot_eigenvalues(saddle_result, which="saddle")
    assert n_markers(ax, "saddle (1 unstable dim)") == 8 and n_markers(ax, "stable") == 0
    plt.close(ax.figure)
    rot = find_fixed_points(Rotation(0.9, 0.7), state_size=2, initial_states=np.eye(2))
    ax = plot_eigenvalues(rot, which=[0])
    offsets = ax.collections[0].get_offsets()
    np.testing.assert_allclose(np.sort(offsets[:, 1]), [-0.9 * np.sin(0.7), 0.9 * np.sin(0.7)])
    plt.close(ax.figure)
    with pytest.raises(ValueError, match="unknown which"):
        plot_eigenvalues(rot, which="wobbly")


def test_bad_trajectories_shape(saddle_result):
    with pytest.raises(ValueError, match="trajectories must have shape"):
        plot_fixed_points(saddle_result, trajectories=np.zeros((4, 2)))
    n_unit = saddle_result.states.shape[1]
    with pytest.raises(ValueError, match="trajectories are empty"):
        plot_fixed_points(saddle_result, trajectories=np.zeros((0, 5, n_unit)))
    traj = np.zeros((2, 3, n_unit))
    traj[1, 2, 0] = np.nan
    with pytest.raises(ValueError, match=r"NaN or Inf \(first at trial, time, unit \(1, 2, 0\)\)"):
        plot_fixed_points(saddle_result, trajectories=traj)
    plt.close("all")


class TiltedBistable:
    """Unit 0 is a bistable tanh map, unit 1 = 0.5 unit 0 + 0.3: three fixed points on one line."""

    def __call__(self, h, u):
        x = BistableTanh(2.0)(h[..., :1])
        return torch.cat([x, 0.5 * h[..., :1] + 0.3], -1)


def offsets(ax):
    labels = ("stable", "saddle (1 unstable dim)", "unstable")
    return np.concatenate([c.get_offsets() for c in ax.collections if c.get_label() in labels])


def test_small_state_is_drawn_in_raw_units_not_pca():
    res = find_fixed_points(TiltedBistable(), state_size=2,
                            initial_states=np.stack([np.linspace(-1.2, 1.2, 7), np.zeros(7)], 1))
    good = res.fixed_points()
    assert good.n_points == 3
    fig, ax = plt.subplots()
    plot_fixed_points(res, ax=ax)
    # collinear points keep their raw coordinates (a PCA would put them all at PC 2 = 0)
    drawn = offsets(ax)
    want = np.asarray(good.states)
    np.testing.assert_allclose(drawn[np.argsort(drawn[:, 0])], want[np.argsort(want[:, 0])], atol=1e-9)
    assert np.ptp(drawn[:, 1]) > 0.5
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("unit 0", "unit 1")
    plt.close(fig)


def test_projection_keywords_and_large_state_pca():
    res = find_fixed_points(Rotation3D(), state_size=3, initial_states=np.eye(3))
    fig, ax = plt.subplots()  # a 2-D axes for a 3-unit state: the first two units
    plot_fixed_points(res, ax=ax)
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("unit 0", "unit 1")
    plt.close(fig)
    ax3 = plot_fixed_points(res)
    assert ax3.name == "3d" and ax3.get_zlabel() == "unit 2"
    plt.close(ax3.figure)
    four = find_fixed_points(lambda h, u: 0.5 * h, state_size=4, initial_states=np.eye(4))
    fig, ax = plt.subplots()
    plot_fixed_points(four, ax=ax)
    assert ax.get_xlabel() == "PC1"  # one point (the origin): no variance to explain
    plt.close(fig)
    fig, ax = plt.subplots()
    plot_fixed_points(four, ax=ax, dims=(3, 1))
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("unit 3", "unit 1")
    plt.close(fig)
    fig, ax = plt.subplots()
    plot_fixed_points(four, ax=ax, pca=False)
    assert ax.get_xlabel() == "unit 0"
    with pytest.raises(ValueError, match="dims"):
        plot_fixed_points(four, ax=ax, dims=(0, 4))
    with pytest.raises(ValueError, match="3-D"):
        plot_fixed_points(four, ax=ax, dims=(0, 1, 2))
    plt.close(fig)


def test_a_result_of_another_type_or_a_bad_pca_gets_one_line_errors(saddle_result):
    from sklearn.decomposition import PCA

    from neurodyn.plotting import plot_fixed_point_figure

    for plot in (plot_fixed_points, plot_eigenvalues, plot_fixed_point_figure):
        with pytest.raises(TypeError, match=f"{plot.__name__} takes the result of find_fixed_points"):
            plot("points.nc")
    four = find_fixed_points(lambda h, u: 0.5 * h, state_size=4, initial_states=np.eye(4))
    fig, ax = plt.subplots()
    with pytest.raises(TypeError, match="pca must be None, False or a fitted object with a transform"):
        plot_fixed_points(four, ax=ax, pca=True)
    states = np.random.default_rng(0).normal(size=(20, 4))
    ax3 = fig.add_subplot(projection="3d")
    with pytest.raises(ValueError, match="pca.transform gives 2 components but the axes is 3-D"):
        plot_fixed_points(four, ax=ax3, pca=PCA(2).fit(states))
    plot_fixed_points(four, ax=ax, pca=PCA(2).fit(states))  # two components suit a 2-D axes
    assert ax.get_xlabel().startswith("PC1")
    plt.close(fig)
