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
