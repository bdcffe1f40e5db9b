"""Shared timeline of the tasks that answer after a variable delay (DMS, Romo, continuous report)."""

from __future__ import annotations

from typing import Any, ClassVar

from neurodyn._lazy import numpy as np
from neurodyn.tasks._timeline import build_periods, total_steps


class DelayedResponse:
    """Mixin of the tasks whose trial is a fixed sequence of periods, one of them a variable delay.

    A subclass lists its periods in ``timeline``, in order: period name → the field holding its
    duration in ms. The ``"delay"`` period (field ``delay_max_ms``) lasts a per-trial duration drawn
    in ``[delay_min_ms, delay_max_ms]`` ms, and trials are padded to the longest delay. ``ood()``
    returns the task with delays between 2x and 3x ``delay_max_ms``.
    """

    timeline: ClassVar[dict[str, str]] = {}

    @property
    def n_steps(self) -> int:
        """Padded trial length in steps (longest delay)."""
        return total_steps((getattr(self, field) for field in self.timeline.values()), self.dt)

    def _periods(self, delay_ms: np.ndarray, n_trials: int) -> dict[str, np.ndarray]:
        """``[start, stop)`` steps (trial, 2) of each period, for per-trial delays ``delay_ms`` (trial,)."""
        durations = {name: delay_ms if name == "delay" else getattr(self, field)
                     for name, field in self.timeline.items()}
        return build_periods(durations, self.dt, n_trials=n_trials)[0]

    def ood(self) -> Any:
        return self.replace(delay_min_ms=2 * self.delay_max_ms, delay_max_ms=3 * self.delay_max_ms)
