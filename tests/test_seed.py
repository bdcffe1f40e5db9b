import numpy as np
import pytest
import torch

from neurodyn._seed import numpy_rng, resolve_seed, torch_generator, trial_rngs


def test_int_seed_is_identity():
    assert resolve_seed(7) == 7
    assert resolve_seed(np.int64(7)) == 7


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True])
def test_bad_seeds_raise(bad):
    with pytest.raises((TypeError, ValueError)):
        resolve_seed(bad)


def test_generators_are_consumed_reproducibly():
    a = resolve_seed(np.random.default_rng(3))
    b = resolve_seed(np.random.default_rng(3))
    assert a == b
    g1, g2 = torch.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    assert resolve_seed(g1) == resolve_seed(g2)


def test_none_gives_fresh_seed():
    assert resolve_seed(None) != resolve_seed(None)


def test_streams_are_reproducible_and_distinct():
    assert numpy_rng(1).random() == numpy_rng(1).random()
    assert numpy_rng(1).random() != numpy_rng(2).random()
    assert numpy_rng(1, 0).random() != numpy_rng(1, 1).random()
    x = torch.randn(3, generator=torch_generator(4))
    y = torch.randn(3, generator=torch_generator(4))
    assert torch.equal(x, y)


def test_trial_streams_do_not_depend_on_batch_split():
    full = [r.random() for r in trial_rngs(9, 6)]
    split = [r.random() for r in trial_rngs(9, 2)] + [r.random() for r in trial_rngs(9, 4, first_trial=2)]
    assert full == split


@pytest.mark.parametrize("seed", [0, 3, 2**40 + 5, 2**130 + 7])
def test_trial_streams_equal_numpy_seed_sequences(seed):
    # the vectorised hashing against numpy's SeedSequence, trial by trial, bit for bit
    for first in (0, 64, 10**9, 2**32 - 2):
        got = [r.integers(0, 2**63, 3) for r in trial_rngs(seed, 4, first_trial=first)]
        ref = [numpy_rng(seed, 0, first + i).integers(0, 2**63, 3) for i in range(4)]
        assert all(np.array_equal(g, r) for g, r in zip(got, ref)), (seed, first)
