"""Homoclinic points: the Lozi map (known transversal homoclinic points) and a map without any."""

from __future__ import annotations

import numpy as np
import pytest

from neurodyn.analysis.plrnn.homoclinic import find_homoclinic_points
from neurodyn.analysis.plrnn.manifolds import find_manifolds
from neurodyn.models import PLRNN, PLSystem

A_LOZI, B_LOZI = 1.7, 0.5
SADDLE = np.array([1.0, B_LOZI]) / (1 + A_LOZI - B_LOZI)


def lozi_plrnn():
    return PLRNN.from_arrays(np.array([[A_LOZI, 1.0], [B_LOZI, 0.0]]),
                             np.array([[-2 * A_LOZI, 0.0], [0.0, 0.0]]), np.array([1.0, 0.0]))


@pytest.fixture(scope="module")
def lozi_manifolds():
    return find_manifolds(lozi_plrnn(), [SADDLE], box=3.0, max_depth=6, max_pieces=300)


def test_lozi_has_transversal_homoclinic_points(lozi_manifolds):
    # Misiurewicz (1980): for a = 1.7, b = 0.5 the Lozi attractor is the closure of the unstable
    # manifold of this saddle, which crosses its stable manifold transversally
    res = find_homoclinic_points(lozi_plrnn(), lozi_manifolds)
    assert len(res.points) > 5
    assert res.proves_chaos and "Smale-Birkhoff" in res.report()
    assert np.all(res.kind == "homoclinic") and np.all(res.transversal) and np.all(res.invertible)
    # each point lies on both manifolds and its forward orbit returns to the saddle
    assert np.max(lozi_manifolds.distance(res.points, "stable")) < 1e-9
    assert np.max(lozi_manifolds.distance(res.points, "unstable")) < 1e-9
    assert np.all(res.approach < 1e-8)
    assert np.all(np.linalg.norm(res.points - SADDLE, axis=1) > 1e-6)
    assert np.all((res.angle > 0.01) & (res.angle <= np.pi / 2 + 1e-12))


def test_backward_orbit_of_a_homoclinic_point_returns_to_the_saddle(lozi_manifolds):
    res = find_homoclinic_points(lozi_plrnn(), lozi_manifolds)
    # walk back along the unstable piece's parents: each parent maps onto its child's piece
    piece = lozi_manifolds.pieces[int(res.unstable_piece[0])]
    depth = piece.depth
    assert 0 < depth <= 6 and piece.kind == "unstable"
    chain = [piece]
    while chain[-1].parent >= 0:
        chain.append(lozi_manifolds.pieces[chain[-1].parent])
    assert chain[-1].depth == 0 and np.linalg.norm(chain[-1].base - SADDLE) < 1e-15


def test_tent_map_homoclinic_and_heteroclinic_points_are_the_preimages():
    # x' = tent(x) = 2x - 4 relu(x - 1/2), y' = y/2: saddles (0, 0) and (2/3, 0); the stable
    # manifolds are the vertical lines through the preimages of 0 (dyadic rationals) and of 2/3
    tent = PLSystem(np.array([[1.0, 0.0]]), np.array([-0.5]), np.diag([2.0, 0.5]), np.zeros(2),
                    np.array([[-4.0], [0.0]]))
    man = find_manifolds(tent, [np.zeros(2), np.array([2 / 3, 0.0])],
                         box=([-0.5, -1.0], [1.5, 1.0]), max_depth=5)
    res = find_homoclinic_points(tent, man)
    assert res.proves_chaos and np.all(res.transversal)
    np.testing.assert_allclose(res.points[:, 1], 0.0, atol=1e-12)
    target = np.array([0.0, 2 / 3])[res.stable_saddle]
    x, hit = res.points[:, 0].copy(), np.zeros(len(res.points), dtype=bool)
    for _ in range(8):  # every point reaches its stable saddle exactly within a few steps
        hit |= np.abs(x - target) < 1e-12
        x = 2 * x - 4 * np.maximum(x - 0.5, 0)
    assert np.all(hit)
    pairs = {(int(a), int(b)) for a, b in zip(res.stable_saddle, res.unstable_saddle)}
    assert pairs == {(0, 0), (0, 1), (1, 0), (1, 1)}
    assert set(res.kind[res.stable_saddle != res.unstable_saddle]) == {"heteroclinic"}
    # all dyadic preimages of 0 in (0, 1] up to depth 3 are found (1, 1/2, 1/4, 3/4, 1/8, ...)
    dyadic = {k / 8 for k in range(1, 9)}
    got = set(np.round(res.points[(res.stable_saddle == 0) & (res.unstable_saddle == 0), 0], 12))
    assert dyadic <= got


def test_no_homoclinic_point_in_a_bistable_map():
    system = PLSystem(np.array([[1.0, 0.0], [-1.0, 0.0]]), np.array([-1.0, -1.0]),
                      np.array([[2.0, 0.0], [0.3, 0.5]]), np.zeros(2),
                      np.array([[-2.0, 2.0], [0.0, 0.0]]))
    man = find_manifolds(system, [np.zeros(2)], box=5.0, max_depth=20)
    res = find_homoclinic_points(system, man)
    assert len(res.points) == 0 and not res.proves_chaos
    assert "does not rule out chaos" in res.report()


def test_xarray_and_errors(tmp_path, lozi_manifolds):
    import xarray as xr

    res = find_homoclinic_points(lozi_plrnn(), lozi_manifolds)
    path = tmp_path / "h.nc"
    res.to_xarray().to_netcdf(path, engine="h5netcdf")
    back = xr.load_dataset(path, engine="h5netcdf")
    np.testing.assert_array_equal(back["state"].values, res.points)
    assert back.attrs["proves_chaos"] == 1
    only_u = find_manifolds(lozi_plrnn(), [SADDLE], kind="unstable", box=3.0, max_depth=2)
    with pytest.raises(ValueError, match="kind='both'"):
        find_homoclinic_points(lozi_plrnn(), only_u)


def test_lozi_map_written_as_an_alrnn_gives_true_homoclinic_points():
    from neurodyn.models import ALRNN

    # state (y, x), relu only on the last unit x: y' = b x, x' = 1 + y + a x - 2a relu(x)
    alrnn = ALRNN.from_arrays(np.array([[0.0, B_LOZI], [1.0, A_LOZI]]),
                              np.array([[0.0, 0.0], [0.0, -2 * A_LOZI]]), np.array([0.0, 1.0]), n_relu=1)
    man = find_manifolds(alrnn, [SADDLE[::-1]], box=3.0, max_depth=6, max_pieces=300)
    res = find_homoclinic_points(alrnn, man)
    assert res.proves_chaos and len(res.points) > 5
    # oracle: the Lozi formulas and their inverse, in (x, y); orbits return to the saddle both ways
    x, y = res.points[:, 1].copy(), res.points[:, 0].copy()
    fwd = np.full(len(x), np.inf)
    for _ in range(60):
        x, y = 1 + y - A_LOZI * np.abs(x), B_LOZI * x
        fwd = np.minimum(fwd, np.hypot(x - SADDLE[0], y - SADDLE[1]))
    x, y = res.points[:, 1].copy(), res.points[:, 0].copy()
    bwd = np.full(len(x), np.inf)
    for _ in range(25):  # backward, round-off grows by 1/0.256 per step: ~1e-5 is the floor
        x, y = y / B_LOZI, x - 1 + A_LOZI * np.abs(y / B_LOZI)
        bwd = np.minimum(bwd, np.hypot(x - SADDLE[0], y - SADDLE[1]))
    assert np.all(fwd < 1e-7) and np.all(bwd < 1e-3)
