"""Phase portraits: what is drawn matches the results passed in."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from neurodyn.analysis.plrnn.basins import compute_basins  # noqa: E402
from neurodyn.analysis.plrnn.manifolds import find_manifolds  # noqa: E402
from neurodyn.models import PLSystem  # noqa: E402
from neurodyn.plotting.phase_portrait import MANIFOLD_COLORS, plot_phase_portrait  # noqa: E402


def bistable():
    return PLSystem(np.array([[1.0, 0.0], [-1.0, 0.0]]), np.array([-1.0, -1.0]),
                    np.array([[2.0, 0.0], [0.3, 0.5]]), np.zeros(2), np.array([[-2.0, 2.0], [0.0, 0.0]]))


@pytest.fixture(scope="module")
def results():
    system = bistable()
    man = find_manifolds(system, [np.zeros(2)], box=3.0, max_depth=8)
    basins = compute_basins(system, [np.array([2.0, 1.2]), np.array([-2.0, -1.2])],
                            grid=([(-3, 3), (-3, 3)], 15), max_steps=100)
    return system, man, basins


def test_2d_portrait_draws_every_piece_region_and_basin(results):
    system, man, basins = results
    ax = plot_phase_portrait(system, manifolds=man, basins=basins)
    lines = ax.get_lines()
    region_lines = [ln for ln in lines if ln.get_linestyle() == ":"]
    assert len(region_lines) == 2  # x = 1 and x = -1
    for kind, color in MANIFOLD_COLORS.items():
        drawn = [ln for ln in lines if ln.get_color() == color]
        assert len(drawn) == len(man.select(kind))
    assert len(ax.collections) >= 2  # basin image + saddle marker
    assert ax.get_xlim() == (-3.0, 3.0)
    plt.close("all")


def test_3d_portrait_and_errors(results):
    system, man, _ = results
    lin = np.eye(3) * 0.5
    lin[:2, :2] = system.linear
    s3 = PLSystem(np.hstack([system.normals, np.zeros((2, 1))]), system.offsets, lin, np.zeros(3),
                  np.vstack([system.mixing, np.zeros((1, 2))]))
    man3 = find_manifolds(s3, [np.zeros(3)], box=2.0, max_depth=6)
    ax = plot_phase_portrait(s3, manifolds=man3, dims=(0, 1, 2))
    assert ax.name == "3d"
    assert len(ax.collections) >= len([p for p in man3.pieces if p.dim == 2])
    with pytest.raises(ValueError, match="dims"):
        plot_phase_portrait(system, manifolds=man, dims=(0, 0))
    with pytest.raises(ValueError, match="out of range"):
        plot_phase_portrait(system, manifolds=man, dims=(0, 5))
    plt.close("all")


def test_manifold_lines_drawn_above_point_markers(results):
    system, man, _ = results
    ax = plot_phase_portrait(system, manifolds=man)
    manifold_lines = [ln for ln in ax.get_lines() if ln.get_color() in MANIFOLD_COLORS.values()]
    markers = [c for c in ax.collections if c.get_label().startswith("saddle")]
    assert manifold_lines and markers
    assert min(ln.get_zorder() for ln in manifold_lines) > max(c.get_zorder() for c in markers)
    plt.close("all")


def test_cli_figure_has_title_naming_file_and_manifolds(tmp_path):
    from neurodyn.analysis.plrnn import find_cycles
    from neurodyn.cli.manifolds import _figure
    from neurodyn.io import load_model

    path = tmp_path / "lozi.npz"  # the Lozi map (a = 1.7, b = 0.5) as PLRNN arrays
    np.savez(path, A=np.array([[1.7, 1.0], [0.5, 0.0]]), W=np.array([[-3.4, 0.0], [0.0, 0.0]]),
             h=np.array([1.0, 0.0]))
    model = load_model(path, arch="plrnn").model
    cycles = find_cycles(model, max_order=1, exhaustive=True)
    man = find_manifolds(model, cycles, box=3.0, max_depth=3)
    fig = _figure(model, cycles, man, (0, 1), None, source=str(path))
    ax = fig.axes[0]
    title = ax.get_title()
    assert "lozi.npz" in title and "stable and unstable manifolds" in title
    manifold_lines = [ln for ln in ax.get_lines() if ln.get_color() in MANIFOLD_COLORS.values()]
    markers = [c for c in ax.collections if c.get_label().startswith("saddle")]
    assert manifold_lines and markers
    assert min(ln.get_zorder() for ln in manifold_lines) > max(c.get_zorder() for c in markers)
    fig.savefig(tmp_path / "m.png")
    plt.close(fig)


def test_legend_is_drawn_above_the_manifold_lines_and_keys_the_basins(results):
    system, man, basins = results
    ax = plot_phase_portrait(system, manifolds=man, basins=basins)
    legend = ax.get_legend()
    top = max(a.get_zorder() for a in [*ax.lines, *ax.collections])
    assert legend.get_zorder() > top  # a manifold line does not cross the legend
    assert legend.get_frame().get_alpha() > 0.9
    labels = [t.get_text() for t in legend.get_texts()]
    present = np.unique(basins.labels)
    assert {f"basin of attractor {k}" for k in present if k >= 0} <= set(labels)
    assert ("diverges" in labels) == (-1 in present)
    plt.close("all")


def test_a_smooth_model_is_refused_not_ignored():
    from neurodyn.models import LeakyRNN

    with pytest.raises(TypeError, match="plot_phase_portrait draws piecewise-linear maps .* got a LeakyRNN"):
        plot_phase_portrait(LeakyRNN(1, 4, 1, seed=0), dims=(0, 99))


def test_a_2d_piece_seen_edge_on_is_drawn_as_its_outline():
    # a stable-manifold piece in a plane holding the dropped axis projects to a zero-area polygon: only an
    # outline shows it (a filled polygon without one drew nothing)
    from types import SimpleNamespace

    from neurodyn.plotting.phase_portrait import _draw_manifolds

    square = np.array([[0.0, 0.0, -1.0], [1.0, 1.0, -1.0], [1.0, 1.0, 1.0], [0.0, 0.0, 1.0]])  # x = y plane
    piece = SimpleNamespace(kind="stable", dim=2, vertices=square, points=lambda v: v)
    fig, ax = plt.subplots()
    _draw_manifolds(ax, SimpleNamespace(pieces=[piece]), (0, 1), False)
    (poly,) = ax.patches
    assert poly.get_linewidth() > 0
    assert matplotlib.colors.same_color(poly.get_edgecolor()[:3], MANIFOLD_COLORS["stable"])
    plt.close(fig)


def test_points_have_the_fixed_point_markers_and_axis_names(tmp_path):
    from neurodyn.analysis.plrnn import find_cycles
    from neurodyn.cli.manifolds import _figure
    from neurodyn.io import load_model
    from neurodyn.plotting import plot_fixed_points

    path = tmp_path / "lozi.npz"
    np.savez(path, A=np.array([[1.7, 1.0], [0.5, 0.0]]), W=np.array([[-3.4, 0.0], [0.0, 0.0]]),
             h=np.array([1.0, 0.0]))
    model = load_model(path, arch="plrnn").model
    cycles = find_cycles(model, max_order=1, exhaustive=True)
    man = find_manifolds(model, cycles, box=3.0, max_depth=1)
    portrait = _figure(model, cycles, man, (0, 1), None, source=str(path)).axes[0]
    points = plot_fixed_points(cycles)

    def styles(ax):
        return {c.get_label(): (tuple(np.round(c.get_facecolor()[0], 3)), c.get_paths()[0].vertices.tobytes())
                for c in ax.collections if c.get_label().startswith("saddle")}

    assert styles(portrait) and styles(portrait) == styles(points)  # filled red triangles in both
    assert (portrait.get_xlabel(), portrait.get_ylabel()) == (points.get_xlabel(), points.get_ylabel())
    assert portrait.get_xlabel() == "unit 0"
    plt.close("all")
