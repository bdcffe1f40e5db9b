"""One seed type for the whole package, normalised in one place.

Every stochastic function in neurodyn takes ``seed: SeedLike``, which may be

* an ``int`` (the reproducible choice; stored in checkpoints and result attributes),
* a :class:`numpy.random.Generator` (one integer is drawn from it),
* a :class:`torch.Generator` (one integer is drawn from it),
* ``None`` (fresh OS entropy; the integer actually used is still recorded).

Library code never seeds or draws from global random number generators.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Union

from neurodyn._lazy import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import torch

SeedLike = Union[int, "np.random.Generator", "torch.Generator", None]

_MAX_SEED = 2**63 - 1


def resolve_seed(seed: SeedLike) -> int:
    """Return a non-negative Python ``int`` for any accepted seed.

    Raises
    ------
    TypeError
        If ``seed`` is not one of ``int``, ``numpy.random.Generator``, ``torch.Generator``, ``None``.
    ValueError
        If an integer seed is negative.
    """
    if seed is None:
        return int(np.random.SeedSequence().entropy % _MAX_SEED)
    if isinstance(seed, bool):
        raise TypeError("seed must be an int, numpy.random.Generator, torch.Generator or None, not bool")
    if isinstance(seed, (int, np.integer)):
        if seed < 0:
            raise ValueError(f"seed must be non-negative, got {seed}")
        return int(seed)
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, _MAX_SEED))
    if type(seed).__name__ == "Generator" and type(seed).__module__.startswith("torch"):
        import torch

        return int(torch.randint(0, 2**62, (1,), generator=seed).item())
    raise TypeError(
        "seed must be an int, numpy.random.Generator, torch.Generator or None; "
        f"got {type(seed).__name__}"
    )


def numpy_rng(seed: SeedLike, *keys: int) -> np.random.Generator:
    """A NumPy generator for ``seed``; extra integer ``keys`` select independent sub-streams."""
    entropy = resolve_seed(seed)
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy, spawn_key=keys)))


def torch_generator(seed: SeedLike, *keys: int, device: Any = "cpu") -> torch.Generator:
    """A ``torch.Generator`` on ``device`` seeded from ``seed`` (and optional sub-stream ``keys``)."""
    import torch

    entropy = resolve_seed(seed)
    seq = np.random.SeedSequence(entropy, spawn_key=keys)
    gen = torch.Generator(device=device)
    gen.manual_seed(int(seq.generate_state(1, dtype=np.uint64)[0] % _MAX_SEED))
    return gen


def trial_rngs(seed: int, n_trials: int, first_trial: int = 0) -> list[np.random.Generator]:
    """Independent generators for trials ``first_trial .. first_trial + n_trials - 1``.

    Trial ``i`` always gets the same stream for a given ``seed``, so a batch sampled in one call
    equals the same trials sampled in several smaller calls (``first_trial`` offsets). Trial ``i``'s
    generator is ``numpy_rng(seed, 0, i)``, bit for bit; for trial indices below 2**32 the
    ``SeedSequence`` hashing of all trials runs in one compiled pass (:func:`_trial_states`),
    which makes building the generators cheaper than one ``SeedSequence`` per trial. Tasks that
    draw only uniforms take them from :func:`trial_uniforms` instead, with no generators at all.
    Public as ``neurodyn.tasks.trial_rngs``: what a custom task's ``_sample`` draws its trials from.

    Parameters
    ----------
    seed : SeedLike
        As :func:`resolve_seed` takes it (an int >= 0, a generator, or None for a fresh seed).
    n_trials, first_trial : int
        The trials ``first_trial .. first_trial + n_trials - 1`` of the seed's stream.

    Returns
    -------
    list of numpy.random.Generator
        One per trial, in trial order.

    Raises
    ------
    ValueError, TypeError
        For a seed :func:`resolve_seed` refuses.

    Examples
    --------
    >>> from neurodyn.tasks import trial_rngs
    >>> a = [g.random() for g in trial_rngs(3, 4)]
    >>> b = [g.random() for g in trial_rngs(3, 2)] + [g.random() for g in trial_rngs(3, 2, first_trial=2)]
    >>> a == b  # the same trials whatever the split
    True
    """
    seed = resolve_seed(seed)
    if first_trial + n_trials > 2**32:  # an index of two 32-bit words: numpy's own hashing
        return [numpy_rng(seed, 0, first_trial + i) for i in range(n_trials)]
    states = _trial_states(seed, first_trial, n_trials)
    hashed = _hashed_seed_type()
    return [np.random.Generator(np.random.PCG64(hashed(s))) for s in states]


def trial_uniforms(seed: int, n_trials: int, first_trial: int, shape: tuple[int, ...]) -> np.ndarray:
    """Uniform draws on [0, 1) of trials ``first_trial .. first_trial + n_trials - 1``, ``shape`` per trial.

    Equals ``np.stack([rng.random(shape) for rng in trial_rngs(seed, n_trials, first_trial)])`` bit for
    bit: trial ``i`` gets the first ``prod(shape)`` draws of ``numpy_rng(seed, 0, i)``, in C order. For
    trial indices below 2**32 a compiled kernel hashes every trial's ``SeedSequence`` and runs NumPy's
    ``PCG64`` (128-bit LCG, XSL RR output, ``(next64 >> 11) * 2**-53``) for all trials in one call,
    7-9x faster than building and running the generators (``benchmarks/bench_task_sampling.py``);
    beyond, it runs the generators. Numba is imported on the first call.

    Parameters
    ----------
    seed : int
        The run's seed (any :data:`SeedLike`, resolved by :func:`resolve_seed`).
    n_trials : int
        Number of trials, at least 0.
    first_trial : int
        Index of the first trial, at least 0.
    shape : tuple of int
        Shape of one trial's draws (``()``: one draw).

    Returns
    -------
    uniforms : ndarray, shape (trial, *shape), float64

    Raises
    ------
    ValueError
        If ``n_trials``, ``first_trial`` or an entry of ``shape`` is negative, or the seed is.
    TypeError
        If ``seed`` is not a seed.

    Examples
    --------
    >>> from neurodyn._seed import numpy_rng, trial_uniforms
    >>> u = trial_uniforms(0, 3, 5, (2, 4))
    >>> u.shape  # (trial, *shape)
    (3, 2, 4)
    >>> bool((u[1] == numpy_rng(0, 0, 6).random((2, 4))).all())  # trial 6's own generator
    True
    """
    seed = resolve_seed(seed)
    shape = _draw_shape(n_trials, first_trial, shape)
    if n_trials == 0:
        return np.empty((0, *shape))
    if first_trial + n_trials > 2**32:  # an index of two 32-bit words: numpy's own generators
        return np.stack([rng.random(shape) for rng in trial_rngs(seed, n_trials, first_trial)])
    from neurodyn._trial_uniforms import trial_uniforms_kernel

    n_draws = 1
    for n in shape:
        n_draws *= n
    draws = trial_uniforms_kernel(_seed_words(seed), first_trial, n_trials, n_draws)
    return draws.reshape((n_trials, *shape))


#: draws per block of :func:`network_trial_uniforms` (256 KiB of float64): a block and the arrays built
#: from it stay in the CPU cache, where building all networks' trials at once streams through memory
#: (building 32 flip-flop batches of 64 trials, 64 steps, 3 bits from their uniforms took 9.5 ms in blocks
#: of 128-256 trials, 16 ms all at once)
BLOCK_DRAWS = 2**15


def network_trial_uniforms(seeds: list[int], n_trials: int, first_trial: int, shape: tuple[int, ...], *,
                           block_draws: int = BLOCK_DRAWS) -> Iterator[tuple[int, np.ndarray]]:
    """:func:`trial_uniforms` of the same trials for several seeds (one per network), in blocks of trials.

    Yields ``(start, uniforms)``: ``uniforms`` (block, *shape), float64, are the draws of the trials
    ``start .. start + block - 1`` of the ``network * trial`` trials, network after network; joined, the
    blocks equal ``np.concatenate([trial_uniforms(s, n_trials, first_trial, shape) for s in seeds])``
    bit for bit. For trial indices below 2**32 every seed's trials are hashed apart once and the
    compiled ``PCG64`` draws about ``block_draws`` uniforms per block, whichever seeds they belong to;
    beyond, each block is one seed's :func:`trial_uniforms`.

    Parameters
    ----------
    seeds : list of int
        Resolved, non-negative seeds (see :func:`resolve_seed`).
    n_trials, first_trial : int
        Trials ``first_trial .. first_trial + n_trials - 1`` of each seed's stream, both at least 0.
    shape : tuple of int
        Shape of one trial's draws.
    block_draws : int
        Uniforms per block (at least one trial per block).

    Raises
    ------
    ValueError
        If ``n_trials``, ``first_trial`` or an entry of ``shape`` is negative.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn._seed import network_trial_uniforms, trial_uniforms
    >>> blocks = list(network_trial_uniforms([0, 7], 3, 5, (2,), block_draws=4))
    >>> [(start, u.shape) for start, u in blocks]  # (start, (trial, *shape)), two trials per block
    [(0, (2, 2)), (2, (2, 2)), (4, (2, 2))]
    >>> joined = np.concatenate([u for _, u in blocks])
    >>> bool(np.array_equal(joined[3:], trial_uniforms(7, 3, 5, (2,))))  # network 1's trials
    True
    """
    shape = _draw_shape(n_trials, first_trial, shape)
    if first_trial + n_trials > 2**32:  # an index of two 32-bit words: numpy's own generators
        for e, seed in enumerate(seeds):
            yield e * n_trials, trial_uniforms(seed, n_trials, first_trial, shape)
        return
    from neurodyn._trial_uniforms import pcg64_uniforms

    n_draws = 1
    for n in shape:
        n_draws *= n
    states = np.concatenate([_trial_states(resolve_seed(s), first_trial, n_trials) for s in seeds])
    step = max(1, block_draws // max(n_draws, 1))
    for start in range(0, len(states), step):
        block = states[start:start + step]
        yield start, pcg64_uniforms(block, n_draws).reshape((len(block), *shape))


def _draw_shape(n_trials: int, first_trial: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    """``shape`` as a tuple of ints; a ``ValueError`` unless it, ``n_trials`` and ``first_trial`` are
    non-negative."""
    shape = tuple(int(n) for n in shape)
    if n_trials < 0 or first_trial < 0 or any(n < 0 for n in shape):
        raise ValueError(f"n_trials, first_trial and shape must be non-negative, got {n_trials}, "
                         f"{first_trial}, {shape}")
    return shape


def _seed_words(seed: int) -> np.ndarray:
    """The run entropy ``SeedSequence(seed, spawn_key=...)`` hashes: the seed's 32-bit words, least
    significant first, padded with zeros to the pool size (4), as uint64."""
    words = [(seed >> (32 * k)) & 0xFFFFFFFF for k in range(max(1, (seed.bit_length() + 31) // 32))]
    return np.array(words + [0] * (4 - len(words)), dtype=np.uint64)


def _trial_states(seed: int, first_trial: int, n_trials: int) -> np.ndarray:
    """``SeedSequence(seed, spawn_key=(0, i)).generate_state(4, uint64)`` for every trial ``i``,
    (trial, 4) uint64, by the compiled hash; needs ``first_trial + n_trials <= 2**32``."""
    from neurodyn._trial_uniforms import seed_states

    return seed_states(_seed_words(seed), first_trial, n_trials)


@functools.cache
def _hashed_seed_type() -> type:
    """A seed-sequence type whose 4-word uint64 state is already hashed (what ``PCG64`` asks for);
    made on first use, as ``neurodyn.tasks`` imports NumPy only when it samples."""

    class HashedSeed(np.random.bit_generator.ISeedSequence):
        def __init__(self, state: np.ndarray) -> None:
            self._state = state

        def generate_state(self, n_words: int, dtype=np.uint32) -> np.ndarray:
            if n_words != 4 or np.dtype(dtype) != np.uint64:
                raise ValueError("a hashed trial seed serves PCG64's 4 uint64 words only")
            return self._state.copy()

    return HashedSeed
