"""Trial timelines: period durations in ms → per-trial step boundaries and period masks."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from neurodyn._lazy import numpy as np


def ms_to_steps(duration_ms: np.ndarray | float, dt: float) -> np.ndarray:
    """Durations in ms → whole time steps (rounded to nearest, never negative)."""
    return np.maximum(np.rint(np.asarray(duration_ms, dtype=np.float64) / dt), 0).astype(np.int64)


def total_steps(durations_ms: Iterable[float], dt: float) -> int:
    """Length in steps of consecutive periods: the sum of each duration (ms) in whole steps of ``dt``."""
    return int(sum(ms_to_steps(d, dt) for d in durations_ms))


def build_periods(
    durations_ms: dict[str, np.ndarray | float], dt: float, *, n_trials: int
) -> tuple[dict[str, np.ndarray], int]:
    """Consecutive periods from per-trial durations.

    Parameters
    ----------
    durations_ms : dict name → ndarray, shape (trial,), or float
        Durations in ms, in the order the periods follow each other; a number is the same in every trial.
    dt : float
        Time step in ms.
    n_trials : int
        Number of trials.

    Returns
    -------
    periods : dict name → ndarray, shape (trial, 2), int64
        ``[start, stop)`` time-step indices of each period.
    n_steps : int
        Length of the longest trial (shorter trials are padded at the end).
    """
    start = None
    periods: dict[str, np.ndarray] = {}
    for name, dur in durations_ms.items():
        steps = ms_to_steps(np.broadcast_to(np.asarray(dur, dtype=np.float64), (n_trials,)), dt)
        start = np.zeros_like(steps) if start is None else start
        periods[name] = np.stack([start, start + steps], axis=1)
        start = start + steps
    return periods, int(start.max())


class Timeline:
    """Mixin of the tasks whose trial is a fixed sequence of periods, some of them of per-trial length.

    A subclass lists its periods in ``timeline``, in order: period name → the field holding its
    duration in ms, or a tuple of fields whose sum is its longest duration (a period that varies
    from trial to trial lasts at most that long). Trials are padded to the longest of every period.
    """

    timeline: ClassVar[dict[str, str | tuple[str, ...]]] = {}

    def _longest_ms(self, period: str) -> float:
        """The longest duration in ms of ``period``: its field, or the sum of its fields."""
        fields = self.timeline[period]
        return sum(getattr(self, field) for field in ((fields,) if isinstance(fields, str) else fields))

    @property
    def n_steps(self) -> int:
        """Padded trial length in steps (every period at its longest)."""
        return total_steps((self._longest_ms(period) for period in self.timeline), self.dt)

    def _periods(self, n_trials: int, **per_trial_ms: np.ndarray) -> dict[str, np.ndarray]:
        """``[start, stop)`` steps (trial, 2) of each period; ``per_trial_ms`` gives the durations (trial,)
        in ms of the periods that vary from trial to trial, by name, the others last their longest."""
        durations = {period: per_trial_ms[period] if period in per_trial_ms else self._longest_ms(period)
                     for period in self.timeline}
        return build_periods(durations, self.dt, n_trials=n_trials)[0]


def in_period(bounds: np.ndarray, n_steps: int) -> np.ndarray:
    """Boolean mask ``(trial, time)`` that is True inside ``[start, stop)`` of each trial."""
    t = np.arange(n_steps)[None, :]
    return (t >= bounds[:, :1]) & (t < bounds[:, 1:2])


def before_period(bounds: np.ndarray, n_steps: int) -> np.ndarray:
    """Boolean mask ``(trial, time)`` that is True before ``start`` of each trial's ``[start, stop)``."""
    return np.arange(n_steps)[None, :] < bounds[:, :1]


def scored_steps(bounds: np.ndarray, n_steps: int, *, grace_ms: float, dt: float) -> np.ndarray:
    """Loss mask ``(trial, time)`` of a trial that answers in the period ``bounds`` (trial, 2).

    True before the answer period and inside it after its first ``grace_ms`` (time to commit); False
    during the grace time and after the period (padding).
    """
    t = np.arange(n_steps)[None, :]
    graced = in_period(bounds, n_steps) & (t >= bounds[:, :1] + ms_to_steps(grace_ms, dt))
    return before_period(bounds, n_steps) | graced


def per_trial(rngs: list[np.random.Generator], draw) -> np.ndarray:
    """Stack ``draw(rng)`` over the per-trial generators (one value or array per trial)."""
    return np.stack([np.asarray(draw(rng)) for rng in rngs])


def ring_code(angles: np.ndarray, n_units: int, kappa: float) -> np.ndarray:
    """Von Mises population code of ``angles`` (any shape, radians) on ``n_units`` preferred angles.

    Returns ``(..., n_units)`` activations ``exp(kappa (cos(theta - phi_k) - 1))`` in (0, 1], with
    preferred angles ``phi_k = 2 pi k / n_units``.
    """
    pref = 2 * np.pi * np.arange(n_units) / n_units
    return np.exp(kappa * (np.cos(np.asarray(angles)[..., None] - pref) - 1.0))


def decode_ring(activity: np.ndarray) -> np.ndarray:
    """Population-vector angle (radians, ``[-pi, pi]``) of ring activity ``(..., n_units)``.

    The angle of ``sum_k r_k exp(i phi_k)``: the inverse of :func:`ring_code` up to the aliasing of the
    code's harmonics ``n_units ± 1`` onto the first (errors below 1e-3 rad at 12 units, kappa <= 8).
    """
    a = np.asarray(activity, dtype=np.float64)
    pref = 2 * np.pi * np.arange(a.shape[-1]) / a.shape[-1]
    return np.arctan2((a * np.sin(pref)).sum(-1), (a * np.cos(pref)).sum(-1))
