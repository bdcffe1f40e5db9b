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
    ``SeedSequence`` hashing of all trials runs as one vectorised pass (:func:`_trial_states`),
    which makes building the generators about 3x cheaper than one ``SeedSequence`` per trial.
    """
    seed = resolve_seed(seed)
    if first_trial + n_trials > 2**32:  # an index of two 32-bit words: numpy's own hashing
        return [numpy_rng(seed, 0, first_trial + i) for i in range(n_trials)]
    states = _trial_states(seed, first_trial, n_trials)
    hashed = _hashed_seed_type()
    return [np.random.Generator(np.random.PCG64(hashed(s))) for s in states]


# numpy's SeedSequence constants (M. O'Neill's seed_seq_fe hash, as numpy.random.SeedSequence uses it)
_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R, _POOL, _M32 = 0xCA01F9DD, 0x4973F715, 4, 0xFFFFFFFF


def _trial_states(seed: int, first_trial: int, n_trials: int) -> np.ndarray:
    """``SeedSequence(seed, spawn_key=(0, i)).generate_state(4, uint64)`` for every trial ``i``
    (trial, 4) in one pass over uint32 columns; needs ``first_trial + n_trials <= 2**32``."""
    words = [(seed >> (32 * k)) & _M32 for k in range(max(1, (seed.bit_length() + 31) // 32))]
    words += [0] * (_POOL - len(words))  # the run entropy is padded to the pool when a spawn key follows
    index = np.arange(first_trial, first_trial + n_trials, dtype=np.uint64).astype(np.uint32)
    columns = [np.full(n_trials, w, np.uint32) for w in words] + [np.zeros(n_trials, np.uint32), index]
    const = [_INIT_A]

    def hashmix(v: np.ndarray) -> np.ndarray:
        v = v ^ np.uint32(const[0])
        const[0] = (const[0] * _MULT_A) & _M32
        v = v * np.uint32(const[0])
        return v ^ (v >> np.uint32(16))

    def mix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        r = np.uint32(_MIX_L) * x - np.uint32(_MIX_R) * y
        return r ^ (r >> np.uint32(16))

    with np.errstate(over="ignore"):  # uint32 arithmetic wraps, as the hash intends
        pool = [hashmix(columns[i]) for i in range(_POOL)]
        for src in range(_POOL):
            for dst in range(_POOL):
                if src != dst:
                    pool[dst] = mix(pool[dst], hashmix(pool[src]))
        for col in columns[_POOL:]:
            for dst in range(_POOL):
                pool[dst] = mix(pool[dst], hashmix(col))
        out, const_b = np.empty((n_trials, 8), np.uint32), _INIT_B
        for i in range(8):
            v = pool[i % _POOL] ^ np.uint32(const_b)
            const_b = (const_b * _MULT_B) & _M32
            v = v * np.uint32(const_b)
            out[:, i] = v ^ (v >> np.uint32(16))
    return out.view("<u8")


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
