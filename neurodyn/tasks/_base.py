"""Task protocol shared by all tasks: a frozen config with a vectorised, seeded ``sample``."""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from neurodyn._budget import check_memory
from neurodyn._lazy import numpy as np
from neurodyn._seed import SeedLike, resolve_seed
from neurodyn.tasks._checks import Check


@dataclass(frozen=True)
class TaskBatch:
    """A batch of trials.

    Attributes
    ----------
    inputs : ndarray, shape (trial, time, input), float32
    targets : ndarray, shape (trial, time, output), float32 (class indices stored as floats
        for cross-entropy tasks, shape (trial, time, 1))
    mask : ndarray, shape (trial, time, output) or (trial, time, 1), float32
        1 where the loss counts, 0 elsewhere.
    dt : float
        Time step in ms.
    seed : int
        The resolved integer seed the batch was drawn with.
    first_trial : int
        Index of the first trial in the task's deterministic trial stream.
    trial_params : dict[str, ndarray]
        Per-trial parameters, each of shape (trial, ...).
    periods : dict[str, ndarray]
        Period boundaries, each of shape (trial, 2) as [start, stop) time-step indices.

    Examples
    --------
    >>> from neurodyn.tasks import FlipFlop
    >>> batch = FlipFlop(n_bits=2, n_steps=10).sample(4, seed=0)
    >>> batch.inputs.shape, batch.targets.shape, batch.mask.shape  # (trial, time, channel)
    ((4, 10, 2), (4, 10, 2), (4, 10, 2))
    >>> batch.n_trials, batch.n_steps, batch.dt, batch.seed
    (4, 10, 10.0, 0)
    >>> inputs, targets, mask = batch.to_torch()
    >>> tuple(inputs.shape), str(inputs.dtype)
    ((4, 10, 2), 'torch.float32')
    """

    inputs: np.ndarray
    targets: np.ndarray
    mask: np.ndarray
    dt: float
    seed: int
    first_trial: int = 0
    trial_params: dict[str, np.ndarray] = field(default_factory=dict)
    periods: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def n_trials(self) -> int:
        return int(self.inputs.shape[0])

    @property
    def n_steps(self) -> int:
        return int(self.inputs.shape[1])

    def to_torch(self, device: Any = "cpu", dtype: Any = None):
        """Return ``(inputs, targets, mask)`` as torch tensors on ``device``."""
        import torch

        dtype = dtype or torch.float32
        return tuple(
            torch.as_tensor(a, dtype=dtype, device=device)
            for a in (self.inputs, self.targets, self.mask)
        )


@dataclass(frozen=True)
class Task:
    """Base class of all tasks.

    Subclasses are frozen dataclasses that define ``name``, ``n_inputs``, ``n_outputs`` (class
    constants, or properties where the sizes depend on fields), ``loss`` (``"mse"`` or
    ``"cross_entropy"``) and ``_sample(n_trials, seed, first_trial)``, and list the rules their fields
    must obey in ``checks`` (built with :mod:`neurodyn.tasks._checks`; the first broken one raises its
    one-line ``ValueError`` when the task is made). A subclass that can build the trials of several seeds
    at once overrides ``_sample_networks(n_trials, seeds, first_trial)`` (by default one ``_sample`` per
    seed, stacked), which ``sample_networks`` calls.
    Durations are given in ms together with ``dt`` (ms per time step) unless a field is named
    ``n_steps``.

    Examples
    --------
    A task is a frozen dataclass; ``sample`` is seeded and the trial stream does not depend on how
    it is split into batches:

    >>> import numpy as np
    >>> from neurodyn.tasks import FlipFlop
    >>> task = FlipFlop(n_bits=2, n_steps=20)
    >>> whole = task.sample(6, seed=3)
    >>> tail = task.sample(2, seed=3, first_trial=4)
    >>> bool(np.array_equal(whole.inputs[4:], tail.inputs))
    True
    >>> task.config()
    {'n_bits': 2, 'n_steps': 20, 'p_pulse': 0.1, 'dt': 10.0}
    >>> task.replace(n_bits=3).n_inputs
    3
    >>> task.evaluate(whole.targets, whole)["mse"]  # the targets themselves score zero error
    0.0
    """

    name: ClassVar[str] = "task"
    loss: ClassVar[str] = "mse"
    checks: ClassVar[tuple[Check, ...]] = ()

    def __post_init__(self) -> None:
        dt = getattr(self, "dt", None)  # every task's time step (ms), checked before its own rules
        if dt is not None and not (isinstance(dt, numbers.Real) and not isinstance(dt, bool)
                                   and 0 < dt < math.inf):
            raise ValueError(f"dt must be a finite number > 0 (ms per time step), got {dt!r}")
        for check in self.checks:
            check(self)

    @property
    def n_inputs(self) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def n_outputs(self) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def sample(self, n_trials: int, *, seed: SeedLike = None, first_trial: int = 0) -> TaskBatch:
        """Draw ``n_trials`` trials.

        Trial ``first_trial + i`` depends only on ``seed`` and its index, so the same seed gives
        bit-identical trials whatever the batch is split into.

        Raises
        ------
        TypeError
            If ``n_trials`` or ``first_trial`` is not an integer (``2.5`` is not rounded).
        ValueError
            If ``n_trials < 1`` or ``first_trial < 0``, or the batch would take more than the memory
            available now (estimated before anything is drawn).
        """
        n_trials, first_trial = self._trial_range(n_trials, first_trial)
        return self._sample(n_trials, resolve_seed(seed), first_trial)

    def sample_networks(self, n_trials: int, seeds: Sequence[SeedLike], *,
                        first_trial: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Draw the same ``n_trials`` trials of every seed in ``seeds``: one batch per network of an ensemble.

        Network ``e`` gets exactly the trials of ``self.sample(n_trials, seed=seeds[e],
        first_trial=first_trial)``, bit for bit, without a :class:`TaskBatch` per seed. Tasks whose trials
        draw only uniforms (``FlipFlop``, ``EvidenceIntegration``) draw the uniforms of all seeds' trials
        with one compiled generator and build the ``network * trial`` trials in blocks that stay in the
        CPU cache, with the code their ``sample`` runs; the others sample seed by seed and stack.

        Parameters
        ----------
        n_trials : int
            Trials per network, at least 1.
        seeds : sequence of SeedLike
            One seed per network (``int``, ``numpy.random.Generator``, ``torch.Generator`` or ``None``,
            each resolved as ``sample`` resolves its seed), at least one.
        first_trial : int
            Index of the first trial in each seed's trial stream, at least 0.

        Returns
        -------
        inputs : ndarray, shape (network, trial, time, input), float32
        targets : ndarray, shape (network, trial, time, output), float32 (class indices stored as floats,
            shape (network, trial, time, 1), for cross-entropy tasks)
        mask : ndarray, shape (network, trial, time, output) or (network, trial, time, 1), float32
            All three C-contiguous.

        Raises
        ------
        TypeError
            If ``n_trials`` or ``first_trial`` is not an integer, ``seeds`` is not a sequence, or one of
            its entries is not a seed.
        ValueError
            If ``n_trials < 1``, ``first_trial < 0``, ``seeds`` is empty or holds a negative seed, the
            batches of all seeds would take more than the memory available now, or
            the task's batches differ in shape between seeds.

        Examples
        --------
        >>> import numpy as np
        >>> from neurodyn.tasks import FlipFlop
        >>> task = FlipFlop(n_bits=2, n_steps=10)
        >>> inputs, targets, mask = task.sample_networks(4, [0, 1, 2], first_trial=8)
        >>> inputs.shape, targets.shape, mask.shape  # (network, trial, time, channel)
        ((3, 4, 10, 2), (3, 4, 10, 2), (3, 4, 10, 2))
        >>> alone = task.sample(4, seed=1, first_trial=8)  # network 1 draws what seed 1 draws
        >>> bool(np.array_equal(inputs[1], alone.inputs) and np.array_equal(targets[1], alone.targets))
        True
        """
        n_trials, first_trial = _trial_range(n_trials, first_trial)
        seeds = _resolve_seeds(seeds)
        n_trials, first_trial = self._trial_range(n_trials, first_trial, len(seeds), "sample_networks")
        arrays = self._sample_networks(n_trials, seeds, first_trial)
        return tuple(np.ascontiguousarray(a, dtype=np.float32) for a in arrays)

    def _trial_range(self, n_trials: Any, first_trial: Any, n_networks: int = 1,
                     what: str = "sample") -> tuple[int, int]:
        """:func:`_trial_range`, then the batch's bytes estimated before anything is drawn: a one-line
        ``ValueError`` above the memory available now (float32 inputs, targets and mask of
        ``n_steps`` steps, plus the generator state a task may build per trial)."""
        n_trials, first_trial = _trial_range(n_trials, first_trial)
        n_steps = getattr(self, "n_steps", None)
        n_steps = n_steps if isinstance(n_steps, (int, np.integer)) else 1
        trials = n_networks * n_trials
        channels = self.n_inputs + 2 * self.n_outputs  # the mask has at most the targets' width
        check_memory(f"{type(self).__name__}.{what}", trials * (n_steps * channels * 4 + _TRIAL_STATE_BYTES),
                     f"{trials} trials of {n_steps} steps x {channels} channels, float32",
                     "lower n_trials / batch_size")
        return n_trials, first_trial

    def _sample(self, n_trials: int, seed: int, first_trial: int) -> TaskBatch:  # pragma: no cover
        raise NotImplementedError

    def _sample_networks(self, n_trials: int, seeds: list[int],
                         first_trial: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(inputs, targets, mask)``, each (network, trial, time, channel), of ``sample_networks``: one
        ``_sample`` per seed, stacked. Tasks that can draw all seeds' trials at once override it."""
        batches = [self._sample(n_trials, seed, first_trial) for seed in seeds]
        shapes = {(b.inputs.shape, b.targets.shape, b.mask.shape) for b in batches}
        if len(shapes) > 1:
            raise ValueError(f"{type(self).__name__} gave batches of different shapes for different seeds "
                             f"{sorted(shapes)}; sample_networks needs trials padded to one length "
                             "(task.n_steps): sample each seed with task.sample instead")
        return tuple(np.stack([getattr(b, name) for b in batches]) for name in ("inputs", "targets", "mask"))

    def _batch(self, inputs: np.ndarray, targets: np.ndarray, mask: np.ndarray, *, seed: int,
               first_trial: int, trial_params: dict[str, np.ndarray],
               periods: dict[str, np.ndarray]) -> TaskBatch:
        """The :class:`TaskBatch` that ``_sample`` returns: ``inputs``, ``targets`` and ``mask`` as
        C-contiguous float32 arrays, the task's ``dt``."""
        def as32(a: np.ndarray) -> np.ndarray:
            return np.ascontiguousarray(a, dtype=np.float32)

        return TaskBatch(inputs=as32(inputs), targets=as32(targets), mask=as32(mask), dt=self.dt, seed=seed,
                         first_trial=first_trial, trial_params=trial_params, periods=periods)

    def config(self) -> dict[str, Any]:
        """Constructor arguments as a plain dict (stored in checkpoints)."""
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}

    def replace(self, **changes: Any) -> Task:
        """A copy with some fields changed (e.g. for a curriculum)."""
        return dataclasses.replace(self, **changes)

    def ood(self) -> Task:
        """The task's out-of-distribution variant (documented per task)."""
        raise NotImplementedError(f"{type(self).__name__} has no out-of-distribution variant")

    def evaluate(self, outputs: np.ndarray, batch: TaskBatch) -> dict[str, float]:
        """Task performance of network ``outputs`` (trial, time, output) on ``batch``.

        Raises
        ------
        ValueError
            If ``outputs`` does not have the shape of ``batch.targets``.
        """
        outputs = outputs_like_targets(outputs, batch)
        err = (outputs - batch.targets) ** 2 * batch.mask
        return {"mse": float(err.sum() / max(batch.mask.sum(), 1.0))}


def build_networks(n_networks: int, n_trials: int, blocks: Iterable[tuple[int, np.ndarray]],
                   build: Callable[[np.ndarray], tuple[np.ndarray, ...]]) -> tuple[np.ndarray, ...]:
    """The arrays ``build(uniforms)`` makes of every block of :func:`~neurodyn._seed.network_trial_uniforms`,
    joined: ``build`` maps a block's uniforms (trial, ...) to arrays (trial, ...); returns them as float32
    arrays (network, trial, ...), C-contiguous."""
    out: list[np.ndarray] = []
    for start, uniforms in blocks:
        arrays = build(uniforms)
        if not out:
            out = [np.empty((n_networks * n_trials, *a.shape[1:]), np.float32) for a in arrays]
        for whole, part in zip(out, arrays):
            whole[start:start + len(part)] = part
    return tuple(a.reshape(n_networks, n_trials, *a.shape[1:]) for a in out)


#: bytes of the generator state a task may build per trial (``trial_rngs``), for the memory estimate
_TRIAL_STATE_BYTES = 1024


def check_task(task: Any, fix: str = "") -> None:
    """Raise a one-line ``TypeError`` unless ``task`` is a :class:`Task`; ``fix`` ends the message.

    Examples
    --------
    >>> check_task("flipflop")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: task must be a neurodyn Task, e.g. FlipFlop(...), got str (...make_task('flipflop'))
    """
    if not isinstance(task, Task):
        hint = f" (make one with neurodyn.tasks.make_task({task!r}))" if isinstance(task, str) else ""
        raise TypeError(f"task must be a neurodyn Task, e.g. FlipFlop(...), got {type(task).__name__}{hint}"
                        + (f"; {fix}" if fix else ""))


def _trial_range(n_trials: Any, first_trial: Any) -> tuple[int, int]:
    """``n_trials`` and ``first_trial`` as Python ints, checked: a one-line ``TypeError`` unless both are
    integers, a ``ValueError`` unless ``n_trials >= 1`` and ``first_trial >= 0``."""
    for name, value in (("n_trials", n_trials), ("first_trial", first_trial)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    if n_trials < 1:
        raise ValueError(f"n_trials must be >= 1, got {n_trials}")
    if first_trial < 0:
        raise ValueError(f"first_trial must be >= 0, got {first_trial}")
    return int(n_trials), int(first_trial)


def _resolve_seeds(seeds: Any) -> list[int]:
    """Each seed of a non-empty sequence resolved by :func:`resolve_seed`; errors name the bad entry."""
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, (Sequence, np.ndarray)) \
            or getattr(seeds, "ndim", 1) != 1:
        raise TypeError(f"seeds must be a sequence of seeds, one per network (e.g. [0, 1, 2]), "
                        f"got {type(seeds).__name__} {seeds!r}")
    if len(seeds) == 0:
        raise ValueError("seeds is empty: give one seed per network, e.g. seeds=[0, 1, 2]")
    resolved = []
    for e, seed in enumerate(seeds):
        try:
            resolved.append(resolve_seed(seed))
        except (TypeError, ValueError) as err:
            raise type(err)(f"seeds[{e}]: {err}") from None
    return resolved


def outputs_like_targets(outputs: np.ndarray, batch: TaskBatch, dtype: Any = None) -> np.ndarray:
    """``outputs`` as an array (of ``dtype``); a ``ValueError`` unless it has the shape of the targets."""
    out = np.asarray(outputs, dtype=dtype)
    if out.shape != batch.targets.shape:
        raise ValueError(f"outputs must have shape {batch.targets.shape} (trial, time, output), "
                         f"got {out.shape}")
    return out


def size_of(field_name: str) -> property:
    """An ``n_inputs`` / ``n_outputs`` property equal to the task's field ``field_name``."""
    return property(lambda task: getattr(task, field_name), doc=f"The task's ``{field_name}``.")


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value
