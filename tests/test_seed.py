import numpy as np
import pytest
import torch

from neurodyn._seed import (
    _trial_states,
    network_trial_uniforms,
    numpy_rng,
    resolve_seed,
    torch_generator,
    trial_rngs,
    trial_uniforms,
)


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


def _generator_uniforms(seed, n_trials, first_trial, shape):
    return np.stack([rng.random(shape) for rng in trial_rngs(seed, n_trials, first_trial)])


@pytest.mark.parametrize("seed", [0, 1, 12345, 2**32 - 1, 2**32, 2**63 - 1, 2**64 + 7, 2**129 + 2**64 + 3])
def test_trial_uniforms_equal_the_generators_bit_for_bit(seed):
    # first_trial 2**32 - 3: 1 and 3 trials stay in the compiled path (up to index 2**32 - 1), 64 and 257
    # cross 2**32 and take the generators
    for n_trials in (1, 3, 64, 257):
        for first in (0, 5, 2**32 - 3):
            for shape in ((), (5,), (2, 7, 3)):
                got = trial_uniforms(seed, n_trials, first, shape)
                ref = _generator_uniforms(seed, n_trials, first, shape)
                assert got.shape == ref.shape == (n_trials, *shape) and got.dtype == np.float64
                same_bits = np.array_equal(got.view(np.uint64), ref.view(np.uint64))
                assert same_bits, (seed, n_trials, first, shape)


def test_trial_uniforms_are_each_trials_own_generator():
    got = trial_uniforms(2**40 + 5, 4, 10**9, (3, 2))
    for i in range(4):
        assert np.array_equal(got[i], numpy_rng(2**40 + 5, 0, 10**9 + i).random((3, 2)))
    split = np.concatenate([trial_uniforms(9, 2, 0, (4,)), trial_uniforms(9, 5, 2, (4,))])
    assert np.array_equal(split, trial_uniforms(9, 7, 0, (4,)))


def test_pcg64_kernel_equals_numpy_on_any_state():
    # states numpy's SeedSequence would rarely give: zeros, all ones, top bits set (the carry of
    # initseq << 1 into the increment's high half, and of initstate + first step into the state's)
    from neurodyn._seed import _hashed_seed_type
    from neurodyn._trial_uniforms import pcg64_uniforms

    top = np.uint64(2**63)
    states = np.concatenate([
        np.zeros((1, 4), np.uint64), np.full((1, 4), 2**64 - 1, np.uint64),
        np.array([[top, top, top, top], [0, 2**64 - 1, 0, 2**64 - 1]], np.uint64),
        np.random.default_rng(0).integers(0, 2**64, (60, 4), dtype=np.uint64, endpoint=False),
    ])
    got = pcg64_uniforms(states, 37)
    hashed = _hashed_seed_type()
    for s, row in zip(states, got):
        ref = np.random.Generator(np.random.PCG64(hashed(s))).random(37)
        assert np.array_equal(row.view(np.uint64), ref.view(np.uint64)), s


def test_trial_states_equal_numpy_seed_sequences():
    for seed in (0, 7, 2**32, 2**100 + 1):
        got = _trial_states(seed, 2**32 - 5, 5)
        ref = [np.random.SeedSequence(seed, spawn_key=(0, 2**32 - 5 + i)).generate_state(4, np.uint64)
               for i in range(5)]
        assert got.dtype == np.uint64 and np.array_equal(got, np.stack(ref))


def test_trial_uniforms_edge_sizes_and_errors():
    assert trial_uniforms(0, 0, 3, (2, 5)).shape == (0, 2, 5)
    assert trial_uniforms(0, 3, 0, (0, 4)).shape == (3, 0, 4)
    assert trial_uniforms(0, 0, 2**32, ()).shape == (0,)
    for bad in ((0, -1, 0, ()), (0, 2, -1, ()), (0, 2, 0, (3, -1)), (-1, 2, 0, ())):
        with pytest.raises(ValueError):
            trial_uniforms(*bad)


@pytest.mark.parametrize("first_trial", [3, 2**32 - 4])  # the compiled draws, and numpy's beyond 2**32
@pytest.mark.parametrize("block_draws", [1, 7, 40, 2**15])
def test_network_trial_uniforms_join_to_each_seeds_trial_uniforms(first_trial, block_draws):
    seeds, shape = [5, 2**70 + 5, 0], (2, 4)
    blocks = list(network_trial_uniforms(seeds, 6, first_trial, shape, block_draws=block_draws))
    assert [start for start, _ in blocks] == list(np.cumsum([0] + [len(u) for _, u in blocks[:-1]]))
    joined = np.concatenate([u for _, u in blocks])
    assert np.array_equal(joined, np.concatenate([trial_uniforms(s, 6, first_trial, shape) for s in seeds]))
    with pytest.raises(ValueError, match="must be non-negative"):
        next(network_trial_uniforms(seeds, 2, -1, shape))
