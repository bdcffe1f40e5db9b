"""One seed type for the whole package, normalised in one place.

Every stochastic function in neurodyn takes ``seed: SeedLike``, which may be

* an ``int`` (the reproducible choice; stored in checkpoints and result attributes),
* a :class:`numpy.random.Generator` (one integer is drawn from it),
* a :class:`torch.Generator` (one integer is drawn from it),
* ``None`` (fresh OS entropy; the integer actually used is still recorded).

Library code never seeds or draws from global random number generators.
"""

from __future__ import annotations

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
    equals the same trials sampled in several smaller calls (``first_trial`` offsets).
    """
    return [numpy_rng(seed, 0, first_trial + i) for i in range(n_trials)]
