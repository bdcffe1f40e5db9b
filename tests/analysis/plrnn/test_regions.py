"""Closed region walks (``cyclic_sequences``) against brute force over all sequences."""

import itertools

import numpy as np
import pytest

from neurodyn.analysis.plrnn.regions import cyclic_sequences


def _brute_force(adj: np.ndarray, k: int) -> list[tuple[int, ...]]:
    """Every closed walk of length k, primitive and in its lexicographically smallest rotation."""
    R, found = adj.shape[0], []
    for seq in itertools.product(range(R), repeat=k):
        closed = all(adj[seq[i], seq[(i + 1) % k]] for i in range(k))
        rotations = [seq[r:] + seq[:r] for r in range(1, k)]
        if closed and all(seq < rot for rot in rotations):
            found.append(seq)
    return found


@pytest.mark.parametrize("seed", range(6))
def test_sequences_are_the_primitive_closed_walks_in_minimal_rotation(seed):
    rng = np.random.default_rng(seed)
    R = int(rng.integers(2, 5))
    adj = rng.random((R, R)) < 0.6
    for k in range(1, 6):
        got = [tuple(s) for s in cyclic_sequences(adj, k, max_sequences=10_000).tolist()]
        assert got == _brute_force(adj, k), (seed, k)


def test_orders_beyond_the_interpreter_recursion_limit():
    # a directed ring of 1,500 regions has exactly one closed walk of that length, starting at region 0
    R = 1500
    adj = np.zeros((R, R), dtype=bool)
    adj[np.arange(R), (np.arange(R) + 1) % R] = True
    out = cyclic_sequences(adj, R, max_sequences=10)
    assert out.shape == (1, R) and np.array_equal(out[0], np.arange(R))
    assert cyclic_sequences(adj, R - 1, max_sequences=10).shape == (0, R - 1)


def test_too_many_sequences_are_refused():
    # 0 -> 0, 0 -> 1, 1 -> 0 has two primitive closed walks of length 5: 00001 and 00101
    adj = np.array([[True, True], [True, False]])
    assert cyclic_sequences(adj, 5, max_sequences=2).tolist() == [[0, 0, 0, 0, 1], [0, 0, 1, 0, 1]]
    with pytest.raises(ValueError, match="more than max_sequences=1 region sequences of order 5"):
        cyclic_sequences(adj, 5, max_sequences=1)
    with pytest.raises(ValueError, match="more than max_sequences=1 region sequences of order 3"):
        cyclic_sequences(np.ones((2, 2), dtype=bool), 3, max_sequences=1)  # the complete graph's path
