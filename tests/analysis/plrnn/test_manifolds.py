"""Stable/unstable manifolds of PL maps against closed forms, invariance, and the cycle search."""

from __future__ import annotations

import numpy as np
import pytest

from neurodyn.analysis.plrnn.manifolds import find_manifolds
from neurodyn.models import PLRNN, PLSystem, ShallowPLRNN


def bistable(c=0.3):
    """x' = f(x) (slope 2 inside |x| < 1, saturating at x = ±2), y' = 0.5 y + c x.

    Saddle at 0 with W^s = {x = 0}; the right branch of W^u is the segment of y = (2c/3) x up to
    (2, 4c/3) followed by the vertical segment x = 2 up to the stable point (2, 4c).
    """
    return PLSystem(normals=np.array([[1.0, 0.0], [-1.0, 0.0]]), offsets=np.array([-1.0, -1.0]),
                    linear=np.array([[2.0, 0.0], [c, 0.5]]), bias=np.zeros(2),
                    mixing=np.array([[-2.0, 2.0], [0.0, 0.0]]))


def flip_cycle_model():
    """Shallow PLRNN: x' = -2x inside |x| < 1 (slope -1/2 outside), y' = 2y (slope 1/2 outside).

    Saddle 2-cycle (±3, 0): W^u = the segments {x = ±3, |y| < 3}, W^s = {y = 0, x != 0}.
    """
    N = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    V = np.array([[1.5, -1.5, 0.0, 0.0], [0.0, 0.0, -1.5, 1.5]])
    return ShallowPLRNN.from_arrays(np.array([-2.0, 2.0]), V, N, np.zeros(2), -np.ones(4))


def lozi_plrnn(a=1.7, b=0.5):
    return PLRNN.from_arrays(np.array([[a, 1.0], [b, 0.0]]), np.array([[-2 * a, 0.0], [0.0, 0.0]]),
                             np.array([1.0, 0.0]))


def lengths(pieces):
    return np.array([np.ptp(p.vertices) for p in pieces])


def test_saddle_fixed_point_manifolds_match_closed_form():
    c, box = 0.3, 5.0
    res = find_manifolds(bistable(c), [np.zeros(2)], box=box, max_depth=60)
    stable, unstable = res.select("stable"), res.select("unstable")
    assert res.saddles[0].status == "ok" and res.saddles[0].n_unstable == 1
    # W^s: the whole line x = 0 inside the box, covered once (pieces do not overlap)
    s_pts = np.concatenate([p.points(p.vertices) for p in stable])
    np.testing.assert_allclose(s_pts[:, 0], 0.0, atol=1e-12)
    assert lengths(stable).sum() == pytest.approx(2 * box, abs=1e-9)
    # W^u: every sample on the closed-form curve, and the curve covered
    u = np.concatenate([p.samples for p in unstable])
    on_line = np.abs(u[:, 1] - 2 * c / 3 * u[:, 0]) < 1e-12
    on_vertical = (np.abs(np.abs(u[:, 0]) - 2) < 1e-12) & (np.abs(u[:, 1]) <= 4 * c + 1e-12)
    assert np.all(on_line | on_vertical)
    xs = np.linspace(-2, 2, 101)
    curve = np.concatenate([np.stack([xs, 2 * c / 3 * xs], 1),
                            [[2.0, y] for y in np.linspace(4 * c / 3, 4 * c - 1e-6, 50)],
                            [[-2.0, -y] for y in np.linspace(4 * c / 3, 4 * c - 1e-6, 50)]])
    assert np.max(res.distance(curve, "unstable")) < 1e-9


def test_one_dimensional_map_repeller_and_attractor_manifolds():
    # f(x) = 2x for |x| < 1, slope 1/2 outside: repeller 0 with W^u = (-3, 3), attractors ±3 with
    # W^s(3) = (0, inf) and W^s(-3) = (-inf, 0) (their basins)
    system = PLSystem(np.array([[1.0], [-1.0]]), np.array([-1.0, -1.0]), np.array([[2.0]]),
                      np.zeros(1), np.array([[-1.5, 1.5]]))
    res = find_manifolds(system, [np.zeros(1), [3.0], [-3.0]], box=10.0, max_depth=60,
                         nonsaddles=True)
    assert [s.status for s in res.saddles] == ["ok"] * 3
    ends = lambda ps: np.concatenate([p.points(p.vertices) for p in ps]).ravel()  # noqa: E731
    wu = res.select("unstable", 0)
    assert ends(wu).min() == pytest.approx(-3.0, abs=1e-8) and ends(wu).max() == pytest.approx(3.0, abs=1e-8)
    assert lengths(wu).sum() == pytest.approx(6.0, abs=1e-8)
    ws = res.select("stable", 1)
    assert ends(ws).min() == pytest.approx(0.0, abs=1e-8) and ends(ws).max() == pytest.approx(10.0)
    assert lengths(ws).sum() == pytest.approx(10.0, abs=1e-8)
    assert not res.select("stable", 0) and not res.select("unstable", 1)
    # without nonsaddles only saddles get manifolds
    plain = find_manifolds(system, [np.zeros(1)], box=10.0)
    assert plain.saddles[0].status == "not_saddle" and plain.n_pieces == 0


def test_stable_manifold_of_an_attractor_is_its_basin():
    system = PLSystem(np.array([[1.0, 0.0], [-1.0, 0.0]]), np.array([-1.0, -1.0]),
                      np.array([[2.0, 0.0], [0.3, 0.5]]), np.zeros(2), np.array([[-1.5, 1.5], [0, 0]]))
    res = find_manifolds(system, [np.array([3.0, 1.8])], kind="stable", box=5.0, max_depth=30,
                         nonsaddles=True)
    from scipy.spatial import ConvexHull

    assert all(p.dim == 2 for p in res.pieces)
    # the basin of (3, 1.8) is the half plane x > 0: area 50 of the box [-5, 5]^2
    assert sum(ConvexHull(p.vertices).volume for p in res.pieces) == pytest.approx(50.0, abs=1e-3)
    assert np.all(np.concatenate([p.samples for p in res.pieces])[:, 0] > 0)


def test_eigenvector_directions_of_the_seed():
    res = find_manifolds(bistable(0.3), [np.zeros(2)], box=5.0, max_depth=2)
    seeds = [p for p in res.pieces if p.parent == -1]
    by_kind = {p.kind: p.basis[:, 0] for p in seeds}
    v_u = np.array([1.0, 0.2]) / np.hypot(1.0, 0.2)  # eigenvector of J = [[2, 0], [c, .5]], λ = 2
    assert abs(abs(by_kind["unstable"] @ v_u) - 1) < 1e-12
    assert abs(abs(by_kind["stable"] @ np.array([0.0, 1.0])) - 1) < 1e-12


def test_two_dimensional_stable_manifold_is_the_plane():
    # 3-D: x' = f(x) as above, y' = 0.5 y, w' = -0.4 w: W^s of 0 is the plane x = 0
    base = bistable(0.0)
    lin = np.zeros((3, 3))
    lin[:2, :2] = base.linear
    lin[2, 2] = -0.4
    system = PLSystem(np.hstack([base.normals, np.zeros((2, 1))]), base.offsets, lin, np.zeros(3),
                      np.vstack([base.mixing, np.zeros((1, 2))]))
    res = find_manifolds(system, [np.zeros(3)], kind="stable", box=2.0, max_depth=40)
    from scipy.spatial import ConvexHull

    stable = res.select("stable")
    assert all(p.dim == 2 for p in stable)
    pts = np.concatenate([p.points(p.vertices) for p in stable])
    np.testing.assert_allclose(pts[:, 0], 0.0, atol=1e-12)
    area = sum(ConvexHull(p.vertices).volume for p in stable)
    assert area == pytest.approx(16.0, rel=1e-9)  # the square [-2, 2]^2, covered once


def test_spiral_saddle_two_dimensional_unstable_manifold():
    # complex unstable pair (|λ| = 1.3) rotating in the (x, y) plane, saturating at x, y = 1;
    # w' = 0.4 w: the unstable manifold lies in the invariant plane w = 0
    th, r = 0.7, 1.3
    lin = np.array([[r * np.cos(th), -r * np.sin(th), 0], [r * np.sin(th), r * np.cos(th), 0],
                    [0, 0, 0.4]])
    system = PLSystem(np.array([[1.0, 0, 0], [0, 1.0, 0]]), np.array([-1.0, -1.0]), lin, np.zeros(3),
                      np.array([[-0.8, 0.0], [0.0, -0.8], [0.0, 0.0]]))
    res = find_manifolds(system, [np.zeros(3)], kind="unstable", box=3.0, max_depth=5)
    unstable = res.select("unstable")
    assert len(unstable) > 5 and all(p.dim == 2 for p in unstable)
    pts = np.concatenate([p.points(p.vertices) for p in unstable])
    np.testing.assert_allclose(pts[:, 2], 0.0, atol=1e-12)
    inner = np.concatenate([p.samples for p in unstable if p.depth < 4])
    assert np.max(res.distance(system.step(inner), "unstable")) < 1e-9
    # the seed and its images cover a disc around the saddle
    ring = 0.05 * np.stack([np.cos(np.linspace(0, 6, 20)), np.sin(np.linspace(0, 6, 20)),
                            np.zeros(20)], 1)
    assert np.max(res.distance(ring, "unstable")) < 1e-9


def test_saddle_cycle_from_find_cycles():
    from neurodyn.analysis.plrnn import find_cycles

    model = flip_cycle_model()
    cycles = find_cycles(model, max_order=2, exhaustive=True)
    res = find_manifolds(model, cycles, box=5.0, max_depth=40)
    two = [i for i, s in enumerate(res.saddles) if len(s.points) == 2 and s.status == "ok"]
    assert len(two) == 1
    unstable, stable = res.select("unstable", two[0]), res.select("stable", two[0])
    u = np.concatenate([p.points(p.vertices) for p in unstable])
    np.testing.assert_allclose(np.abs(u[:, 0]), 3.0, atol=1e-12)
    assert np.all(np.abs(u[:, 1]) < 3.0 + 1e-12)
    assert lengths(unstable).sum() == pytest.approx(12.0, abs=1e-6)  # two segments of length 6
    s = np.concatenate([p.points(p.vertices) for p in stable])
    np.testing.assert_allclose(s[:, 1], 0.0, atol=1e-12)
    assert lengths(stable).sum() == pytest.approx(10.0, abs=1e-6)  # y = 0 minus the point x = 0
    # a saddle fixed point and the repeller are listed with their status
    assert {s.status for s in res.saddles} >= {"ok", "not_saddle"}


def test_pieces_are_invariant_on_the_lozi_map():
    model = lozi_plrnn()
    x = 1 / (1 + 1.7 - 0.5)
    fp = np.array([x, 0.5 * x])
    res = find_manifolds(model, [fp], box=3.0, max_depth=8, max_pieces=400, seed=0)
    from neurodyn.models import pl_system

    F = pl_system(model).step
    # unstable pieces map onto the unstable manifold
    inner = [p for p in res.select("unstable") if p.depth < 7]
    u = np.concatenate([p.samples for p in inner])
    assert np.max(res.distance(F(u), "unstable")) < 1e-9
    # stable pieces: forward orbits converge to the saddle (distance falls to ~1e-8 or below)
    s = np.concatenate([p.samples for p in res.select("stable") if p.depth <= 5])
    d0 = np.linalg.norm(s - fp, axis=1)
    z, best = s.copy(), d0.copy()
    for _ in range(40):
        z = F(z)
        best = np.minimum(best, np.linalg.norm(z - fp, axis=1))
    assert np.all(best < 1e-8)
    assert np.max([p.residual for p in res.select("stable")]) < 1e-9
    assert not any("self-consistency" in w for w in res.warnings)


def test_noninvertible_region_is_reported():
    # y' = 0.5 y for y <= 1 but y' = 0.5 for y > 1 (J singular there); that region maps onto (0, 0.5)
    system = PLSystem(np.array([[0.0, 1.0]]), np.array([-1.0]), np.diag([2.0, 0.5]), np.zeros(2),
                      np.array([[0.0], [-0.5]]))
    with pytest.warns(RuntimeWarning, match="not invertible in region"):
        res = find_manifolds(system, [np.zeros(2)], kind="stable", box=4.0, max_depth=20)
    assert any("not invertible in region [1]" in w for w in res.warnings)
    # the part of W^s = {x = 0} with y > 1 comes only through that region and is missing
    pts = np.concatenate([p.points(p.vertices) for p in res.select("stable")])
    np.testing.assert_allclose(pts[:, 0], 0.0, atol=1e-12)
    assert pts[:, 1].max() == pytest.approx(1.0) and pts[:, 1].min() == pytest.approx(-4.0)


def test_xarray_roundtrip_and_same_seed(tmp_path):
    import xarray as xr

    from neurodyn.analysis.plrnn.manifold_result import ManifoldResult

    r1 = find_manifolds(lozi_plrnn(), [np.array([1 / 2.2, 0.5 / 2.2])], box=3.0, max_depth=4)
    r2 = find_manifolds(lozi_plrnn(), [np.array([1 / 2.2, 0.5 / 2.2])], box=3.0, max_depth=4)
    assert r1.n_pieces == r2.n_pieces
    np.testing.assert_array_equal(np.concatenate([p.samples for p in r1.pieces]),
                                  np.concatenate([p.samples for p in r2.pieces]))
    path = tmp_path / "m.nc"
    r1.save(path)
    back = ManifoldResult.from_xarray(xr.load_dataset(path, engine="h5netcdf"))
    assert back.n_pieces == r1.n_pieces
    for a, b in zip(back.pieces, r1.pieces):
        assert (a.kind, a.depth, a.parent, a.saddle) == (b.kind, b.depth, b.parent, b.saddle)
        np.testing.assert_array_equal(a.basis, b.basis)
        np.testing.assert_array_equal(a.vertices, b.vertices)
        np.testing.assert_array_equal(a.region, b.region)


def test_caps_and_bad_inputs():
    res = find_manifolds(lozi_plrnn(), [np.array([1 / 2.2, 0.5 / 2.2])], box=3.0, max_depth=30,
                         max_pieces=10)
    assert res.truncated[(0, "unstable")] and len(res.select("unstable")) == 10
    res = find_manifolds(lozi_plrnn(), [np.array([1 / 2.2, 0.5 / 2.2])], box=3.0, max_depth=30,
                         max_seconds=1e-9)  # passed at the first check: the seed pieces are kept
    assert res.truncated[(0, "unstable")] and res.truncated[(0, "stable")]
    assert 0 < res.n_pieces < 10 and res.attrs["max_seconds"] == 1e-9
    with pytest.raises(ValueError, match="max_seconds"):
        find_manifolds(bistable(), [np.zeros(2)], max_seconds=0.0)
    with pytest.raises(ValueError, match="kind"):
        find_manifolds(bistable(), [np.zeros(2)], kind="both-ways")
    with pytest.raises(ValueError, match="not a cycle"):
        find_manifolds(bistable(), [np.ones(2)])
    with pytest.raises(ValueError, match="NaN"):
        find_manifolds(bistable(), [np.array([np.nan, 0.0])])
    with pytest.raises(ValueError, match="u applies to models only"):
        find_manifolds(bistable(), [np.zeros(2)], u=np.zeros(1))
    with pytest.raises(ValueError, match="box"):
        find_manifolds(bistable(), [np.zeros(2)], box=-1.0)
    with pytest.raises(TypeError, match="PLRNN"):
        from neurodyn.models import LeakyRNN

        find_manifolds(LeakyRNN(0, 2, 1), [np.zeros(2)])


def test_constant_input_is_folded_into_the_map():
    # Lozi map with an input on x: x' = 1 + u + y - a|x|; the saddle moves to x = (1 + u) / 2.2
    model = PLRNN.from_arrays(np.array([[1.7, 1.0], [0.5, 0.0]]), np.array([[-3.4, 0.0], [0.0, 0.0]]),
                              np.array([1.0, 0.0]), C=np.array([[1.0], [0.0]]))
    saddle = np.array([1.1, 0.55]) / 2.2
    res = find_manifolds(model, [saddle], u=np.array([0.1]), box=3.0, max_depth=3)
    assert res.saddles[0].status == "ok" and res.n_pieces > 0
    with pytest.raises(ValueError, match="not a cycle"):
        find_manifolds(model, [saddle], box=3.0)  # without the input it is no fixed point


def _geometry(pieces):
    return [(p.depth, p.region.tobytes(), np.round(p.base, 12).tobytes(), np.round(p.vertices, 12).tobytes())
            for p in pieces]


@pytest.mark.parametrize("unstable, stable", [((30, 25), (2, 2000)), ((4, 2000), (6, 40))])
def test_per_kind_caps_match_the_shared_caps_of_each_kind(unstable, stable, tmp_path):
    # growth of one kind does not depend on the other: a per-kind run must give, kind by kind, the
    # pieces of a shared-cap run with that kind's caps
    lozi, saddle = lozi_plrnn(), [np.array([1 / 2.2, 0.5 / 2.2])]
    (du, pu), (ds, ps) = unstable, stable
    both = find_manifolds(lozi, saddle, box=3.0, max_depth={"unstable": du, "stable": ds},
                          max_pieces={"unstable": pu, "stable": ps})
    only_u = find_manifolds(lozi, saddle, box=3.0, max_depth=du, max_pieces=pu)
    only_s = find_manifolds(lozi, saddle, box=3.0, max_depth=ds, max_pieces=ps)
    assert _geometry(both.select("unstable")) == _geometry(only_u.select("unstable"))
    assert _geometry(both.select("stable")) == _geometry(only_s.select("stable"))
    assert both.truncated[(0, "unstable")] == only_u.truncated[(0, "unstable")]
    assert both.truncated[(0, "stable")] == only_s.truncated[(0, "stable")]
    assert both.attrs["max_pieces"] == ({"unstable": pu, "stable": ps} if pu != ps else pu)
    path = tmp_path / "m.nc"
    both.save(path)
    from neurodyn.io import load

    assert load(path).attrs["max_depth"] == {"unstable": du, "stable": ds}


def test_per_kind_piece_cap_is_honoured_exactly():
    lozi, saddle = lozi_plrnn(), [np.array([1 / 2.2, 0.5 / 2.2])]
    for cap in (7, 25, 60):
        res = find_manifolds(lozi, saddle, box=3.0, max_depth={"unstable": 200, "stable": 1},
                             max_pieces={"unstable": cap, "stable": 10_000})
        assert len(res.select("unstable")) == cap and res.truncated[(0, "unstable")]
        assert not res.truncated[(0, "stable")]
        assert max(p.depth for p in res.select("stable")) == 1
    # a time cap on one kind only: the stable manifold is cut at its first check, the unstable not
    res = find_manifolds(lozi, saddle, box=3.0, max_depth=6,
                         max_seconds={"unstable": None, "stable": 1e-9})
    assert res.truncated[(0, "stable")] and not res.truncated[(0, "unstable")]
    assert res.attrs["max_seconds"] == {"unstable": -1.0, "stable": 1e-9}


def test_per_kind_caps_bad_inputs():
    with pytest.raises(ValueError, match="keys 'unstable' and 'stable'"):
        find_manifolds(bistable(), [np.zeros(2)], max_pieces={"unstable": 10})
    with pytest.raises(ValueError, match=r"max_pieces >= 1 \(stable"):
        find_manifolds(bistable(), [np.zeros(2)], max_pieces={"unstable": 10, "stable": 0})
    with pytest.raises(ValueError, match=r"max_seconds .*\(unstable"):
        find_manifolds(bistable(), [np.zeros(2)], max_seconds={"unstable": -1.0, "stable": None})


def test_stable_seed_of_a_strongly_contracting_saddle_is_clipped_to_its_regions():
    # y' = 1e-20 y + c x: the local preimage of any seed cube is far too long to fit in the saddle's
    # region |x| < 1, so the seed is sized by its forward images and the shell is clipped to the
    # region; W^s is still exactly the segment x = 0, |y| <= 3 of the box
    system = PLSystem(normals=np.array([[1.0, 0.0], [-1.0, 0.0]]), offsets=np.array([-1.0, -1.0]),
                      linear=np.array([[2.0, 0.0], [0.3, 1e-20]]), bias=np.zeros(2),
                      mixing=np.array([[-2.0, 2.0], [0.0, 0.0]]))
    with pytest.warns(RuntimeWarning, match="not invertible"):  # det 2e-20 in the saddle's region
        res = find_manifolds(system, [np.zeros(2)], box=3.0, max_depth=4, kind="stable")
    pieces = res.select("stable")
    assert pieces and not res.truncated[(0, "stable")]
    pts = np.concatenate([p.points(p.vertices) for p in pieces])
    np.testing.assert_allclose(pts[:, 0], 0.0, atol=1e-12)
    assert pts[:, 1].min() == pytest.approx(-3.0) and pts[:, 1].max() == pytest.approx(3.0)
    for p in pieces:  # invariance: the pieces map into the stable manifold and shrink onto the saddle
        np.testing.assert_allclose(system.step(p.samples)[:, 0], 0.0, atol=1e-12)


def _plane_system():
    """3-D: x' = f(x) of :func:`bistable`, y' = 0.5 y, w' = -0.4 w; saddle at 0."""
    base = bistable(0.0)
    lin = np.zeros((3, 3))
    lin[:2, :2] = base.linear
    lin[2, 2] = -0.4
    return PLSystem(np.hstack([base.normals, np.zeros((2, 1))]), base.offsets, lin, np.zeros(3),
                    np.vstack([base.mixing, np.zeros((1, 2))]))


BOX_FORM = r"^box must be a positive half-width or \(low, high\) with one value per latent dimension \(3\)"


@pytest.mark.parametrize("box, got", [
    (np.array([[-1.0, 1.0]] * 3), r"got an array of shape \(3, 2\); for one \(low, high\) row per dimension "
                                  r"pass box=\(rows\[:, 0\], rows\[:, 1\]\)$"),
    ((1, 2, 3), r"got \(1, 2, 3\)$"),
    (-1.0, "got -1.0$"), (0, "got 0$"), (float("inf"), "got inf$"), (float("nan"), "got nan$"),
    ("2", "got '2'$"), (True, "got True$"), ([2.0], r"got \[2.0\]$"),
    ((np.zeros(2), np.ones(2)), r"got \(array\(\[0., 0.\]\), array\(\[1., 1.\]\)\)$"),
    ((1.0, -1.0), r"got \(1.0, -1.0\)$"), ((-1.0, [1.0, np.inf, 1.0]), "got "),
])
def test_a_malformed_box_is_refused_in_one_line(box, got):
    with pytest.raises(ValueError, match=BOX_FORM + ".*" + got) as info:
        find_manifolds(_plane_system(), [np.zeros(3)], kind="stable", box=box, max_depth=1)
    assert "\n" not in str(info.value)


def test_every_documented_box_form_gives_the_same_box_and_pieces():
    system = _plane_system()
    forms = [2.0, np.float64(2.0), np.array(2.0), (-2.0, 2.0), (np.full(3, -2.0), np.full(3, 2.0)),
             ([-2.0, -2.0, -2.0], 2.0), np.array([[-2.0] * 3, [2.0] * 3])]
    results = [find_manifolds(system, [np.zeros(3)], kind="stable", box=b, max_depth=1) for b in forms]
    for res in results:
        np.testing.assert_array_equal(res.box[0], np.full(3, -2.0))
        np.testing.assert_array_equal(res.box[1], np.full(3, 2.0))
        assert len(res.pieces) == len(results[0].pieces) > 0
        for p, q in zip(res.pieces, results[0].pieces):
            np.testing.assert_array_equal(p.vertices, q.vertices)
    rows = np.array([[-1.0, 2.0], [-3.0, 0.5], [-2.0, 2.0]])  # a per-dimension table, transposed
    table = find_manifolds(system, [np.zeros(3)], kind="stable", box=(rows[:, 0], rows[:, 1]), max_depth=1)
    np.testing.assert_array_equal(table.box[0], rows[:, 0])
    np.testing.assert_array_equal(table.box[1], rows[:, 1])
