"""A marginal fixed point is reported once, not as several nearby converged points; a line attractor's
points and distinct fixed points are kept apart."""

from __future__ import annotations

import numpy as np
import torch

from neurodyn.analysis import find_fixed_points
from neurodyn.analysis.fixed_points._unique import merge_bracketing


def test_isolated_marginal_point_is_one_point():
    # h -> h - h^3: one fixed point at 0 with Jacobian 1; q = h^6 / 2 falls so slowly that searches from
    # both sides stop at q < tol_q about 3e-3 away, farther apart than tol_unique
    x0 = np.linspace(-0.5, 0.5, 10)[:, None]
    res = find_fixed_points(lambda h, u: h - h**3, state_size=1, initial_states=x0)
    assert res.n_points == 1 and res.converged.all() and res.stability.tolist() == ["marginal"]
    assert abs(res.states[0, 0]) < 1e-3  # closer to the true point 0 than either search ended


def test_marginal_point_in_two_dims_approached_from_every_side():
    x0 = np.random.default_rng(0).uniform(-0.5, 0.5, (20, 2))
    res = find_fixed_points(lambda h, u: h - 0.5 * h**3, state_size=2, initial_states=x0)
    assert res.n_points == 1 and np.abs(res.states).max() < 1e-3


def test_line_attractor_points_stay_apart():
    a = torch.tensor([[1.0, 0.0], [0.0, 0.5]], dtype=torch.float64)
    x0 = np.random.default_rng(0).uniform(-0.5, 0.5, (6, 2))
    res = find_fixed_points(lambda h, u: h @ a.T, state_size=2, initial_states=x0)
    assert res.n_points == 6 and np.allclose(np.sort(res.states[:, 0]), np.sort(x0[:, 0]), atol=1e-6)


def test_distinct_fixed_points_stay_apart():
    res = find_fixed_points(lambda h, u: h + 0.1 * (h - h**3), state_size=1,
                            initial_states=np.linspace(-2, 2, 9)[:, None])
    assert np.allclose(np.sort(res.states[:, 0]), [-1.0, 0.0, 1.0], atol=1e-9)


def test_merge_bracketing_oracle():
    def qfun(s):
        return 0.5 * (s[:, 0] ** 3) ** 2

    pts = np.array([[-0.01], [0.011], [0.5]])
    q = qfun(pts)
    keep, states = merge_bracketing(pts, q, qfun, tol_q=1e-10, floor=1e-30)
    # the first two bracket 0 (q dips between them); the third is separated by q > tol_q
    assert keep.tolist() == [0, 2] and abs(states[0, 0]) < 1e-3 and states[1, 0] == 0.5
