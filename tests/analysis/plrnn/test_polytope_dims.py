"""Polytopes above HULL_MAX_DIM piece dimensions: the half-space path agrees with the hull path."""

from __future__ import annotations

import numpy as np
import pytest

from neurodyn.analysis.plrnn import _polytope as pt


def sorted_rows(x):
    return x[np.lexsort(np.round(x, 9).T[::-1])]


def cube_cut(k):
    """The cube [-1, 1]^k with one corner cut off and a redundant row."""
    A = np.vstack([np.eye(k), -np.eye(k), np.ones((1, k)), np.ones((1, k))])
    b = np.concatenate([np.ones(2 * k), [k - 0.5, k + 3.0]])
    return A, b


@pytest.mark.parametrize("k", [4, 5])
def test_reduce_and_clip_agree_with_the_hull_path(k, monkeypatch):
    A, b = cube_cut(k)
    cut = np.r_[1.0, -0.5, np.zeros(k - 2)], 0.3
    fast = pt.reduce(A, b)
    fast_cut = pt.clip(fast, *cut)
    fast_all = pt.clip_all(fast, np.vstack([cut[0], -cut[0]]), np.array([cut[1], 0.2]))
    monkeypatch.setattr(pt, "HULL_MAX_DIM", k)
    hull = pt.reduce(A, b)
    hull_cut = pt.clip(hull, *cut)
    hull_all = pt.clip_all(hull, np.vstack([cut[0], -cut[0]]), np.array([cut[1], 0.2]))
    assert len(fast.vertices) == 2**k - 1 + k and len(fast.b) == 2 * k + 1  # redundant row dropped
    for f, h in ((fast, hull), (fast_cut, hull_cut), (fast_all, hull_all)):
        np.testing.assert_allclose(sorted_rows(f.vertices), sorted_rows(h.vertices), atol=1e-12)
        np.testing.assert_allclose(np.c_[f.A, f.b], np.c_[h.A, h.b], atol=1e-12)


def test_high_dimensional_clip_to_nothing_and_distinct_vertices():
    A, b = cube_cut(6)
    poly = pt.reduce(A, b)
    assert pt.clip(poly, np.ones(6), -6.5) is None
    assert pt.clip_all(poly, np.vstack([np.ones(6), -np.ones(6)]), np.array([-6.5, 7.0])) is None
    # a degenerate vertex (the apex of a pyramid over a square, in 4-D over a cube) is kept once
    k = 4
    A = np.vstack([np.c_[np.eye(k - 1), np.ones(k - 1)], np.c_[-np.eye(k - 1), np.ones(k - 1)],
                   np.r_[np.zeros(k - 1), -1.0][None]])
    pyramid = pt.reduce(A, np.r_[np.ones(2 * (k - 1)), 0.0])
    assert len(pyramid.vertices) == 2 ** (k - 1) + 1 and len(pyramid.b) == 2 * (k - 1) + 1
