"""Greedy de-duplication of fixed-point candidates against the point-by-point reference."""

import numpy as np
import pytest

from neurodyn.analysis.fixed_points._unique import unique_cycles, unique_points


def greedy_reference(orbits, rank, tol):
    """Visit candidates by rank; keep one unless its first point is within tol of a kept orbit point."""
    kept, kept_points = [], np.empty((0, orbits.shape[-1]))
    for i in np.argsort(rank, kind="stable"):
        if len(kept_points) and (np.abs(kept_points - orbits[i, 0]).max(-1) < tol).any():
            continue
        kept.append(int(i))
        kept_points = np.vstack([kept_points, orbits[i]])
    return kept


@pytest.mark.parametrize("seed", range(4))
def test_same_representatives_as_point_by_point_greedy(seed):
    rng = np.random.default_rng(seed)
    for _ in range(25):
        n, k, dim = rng.integers(0, 40), rng.integers(1, 4), rng.integers(1, 4)
        orbits = np.round(rng.normal(size=(n, k, dim)) * 2) / 4 + rng.normal(size=(n, k, dim)) * 0.01
        rank = np.where(rng.random(n) < 0.3, 0.0, rng.normal(size=n))  # ties keep input order
        assert unique_cycles(orbits, rank, 0.3).tolist() == greedy_reference(orbits, rank, 0.3)
        points = orbits[:, 0]
        assert unique_points(points, rank, 0.3).tolist() == greedy_reference(points[:, None], rank, 0.3)


def test_unique_points_keep_points_under_other_inputs_apart():

    points = np.array([[0.0, 0.5], [1e-5, 0.5], [0.0, 0.5 + 1e-9]])  # state, input
    assert sorted(unique_points(points, np.arange(3), 1e-3).tolist()) == [0]
    assert sorted(unique_points(points, np.arange(3), 1e-3, n_cond=1).tolist()) == [0, 2]


def test_result_order_ignores_q_below_round_off():
    """Rows whose q is at round-off are ordered by their states, so noise in those q (thread count,
    memory alignment) cannot swap them; q above round-off still orders the rows, converged first."""
    from neurodyn.analysis.fixed_points._unique import result_order

    states = np.array([[0.9, -0.6], [-0.9, 0.6], [0.0, 1e-18], [0.5, 0.5], [0.1, 0.2]])
    converged = np.array([True, True, True, True, False])
    for noise in ([2e-31, 3e-31, 1e-32], [3e-31, 2e-31, 0.0]):
        q = np.array([*noise, 1e-14, 1e-20])
        assert result_order(states, q, converged).tolist() == [1, 2, 0, 3, 4]
    # rows permuted: the same states in the same order
    perm = np.array([3, 0, 4, 2, 1])
    q = np.array([2e-31, 3e-31, 1e-32, 1e-14, 1e-20])
    order = result_order(states[perm], q[perm], converged[perm])
    assert perm[order].tolist() == [1, 2, 0, 3, 4]


def test_point_rows_do_not_depend_on_candidate_order():
    """The same points in the same rows whichever order the initial states come in."""
    import torch

    from neurodyn.analysis import find_fixed_points
    from neurodyn.models import LeakyRNN

    model = LeakyRNN(0, 32, 1, gain=1.5, seed=0)
    starts = np.random.default_rng(0).uniform(-1.0, 1.0, (128, 32))
    with torch.no_grad():
        a = find_fixed_points(model, initial_states=starts, seed=0)
        b = find_fixed_points(model, initial_states=starts[::-1].copy(), seed=0)
    assert a.n_points == b.n_points >= 2
    np.testing.assert_allclose(a.states, b.states, atol=1e-10)


def test_collect_keeps_the_best_candidate_of_each_group():
    """A group of candidates within tol_unique of one point is represented by its best candidate:
    converged before not converged, then the lowest q (the rule the docs state), whatever their
    order. Oracle: the brute-force choice."""
    import torch

    from neurodyn.analysis.fixed_points._find import _collect
    from neurodyn.analysis.fixed_points._search import SearchState

    def F(x):
        return torch.tanh(2.0 * x)

    h = 0.9575040240772687  # tanh(2 h) = h
    states = torch.tensor([[h + 1e-4], [h + 2e-4], [h + 3e-4]], dtype=torch.float64)
    q = torch.tensor([3e-9, 1e-5, 2e-9], dtype=torch.float64)
    converged = torch.tensor([True, False, True])
    found = SearchState(states, q, torch.tensor([5, 9, 7]), converged, ~converged)
    counts = {"n_outliers": 0}
    part = _collect(F, 1, found, states.numpy(), 1e-3, float("inf"), counts, None, 1e-8)
    assert part["converged"].tolist() == [True]
    assert part["iterations"].tolist() == [7]  # the converged candidate with the lowest q
    assert abs(part["orbits"][0, 0, 0] - h) < 1e-12


def test_one_slow_point_reached_by_several_candidates_is_reported_once():
    """F(x) = x + 0.1 + x² has no fixed point and one slow point at 0 (q = 0.005). Stalled candidates
    a few 1e-3 apart around it are one slow point, the lowest q representing it; a stalled candidate
    0.5 away (beyond SLOW_REACH) stays apart."""
    import torch

    from neurodyn.analysis.fixed_points._find import _collect
    from neurodyn.analysis.fixed_points._newton import SLOW_REACH
    from neurodyn.analysis.fixed_points._search import SearchState

    def F(x):
        return x + 0.1 + x * x

    states = torch.tensor([[0.004], [0.001], [-0.002], [0.5], [0.5 + 2 * SLOW_REACH]], dtype=torch.float64)
    q = 0.5 * (0.1 + states[:, 0] ** 2) ** 2
    stalled = torch.ones(5, dtype=torch.bool)
    found = SearchState(states, q, torch.arange(5), ~stalled, stalled)
    part = _collect(F, 1, found, states.numpy(), 1e-3, float("inf"), {"n_outliers": 0}, None, 1e-12)
    assert part["status"].tolist() == ["slow_point"] * 3
    np.testing.assert_allclose(part["orbits"][:, 0, 0], [0.001, 0.5, 0.5 + 2 * SLOW_REACH])
