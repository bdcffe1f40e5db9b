"""Shared timeline of the tasks that answer after a variable delay (DMS, Romo, continuous report)."""

from __future__ import annotations

from typing import Any

from neurodyn._lazy import numpy as np
from neurodyn.tasks._timeline import Timeline, per_trial


class DelayedResponse(Timeline):
    """Mixin of the tasks whose trial is a fixed sequence of periods, one of them a variable delay.

    A subclass lists its periods in ``timeline``, in order: period name → the field holding its
    duration in ms. The ``"delay"`` period (field ``delay_max_ms``) lasts a per-trial duration drawn
    in ``[delay_min_ms, delay_max_ms]`` ms, and trials are padded to the longest delay. ``ood()``
    returns the task with delays between 2x and 3x ``delay_max_ms``.
    """

    def _delays_and_noise(
        self, rngs: list[np.random.Generator]
    ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """Draw each trial's delay, then its input noise, from the per-trial generators ``rngs``.

        Returns
        -------
        delay_ms : ndarray, shape (trial,)
            The delays in ms, uniform in ``[delay_min_ms, delay_max_ms]``.
        noise : ndarray, shape (trial, time, input)
            Gaussian input noise of standard deviation ``input_noise``.
        periods : dict name → ndarray, shape (trial, 2)
            ``[start, stop)`` steps of each period of ``timeline``.
        """
        delay = per_trial(rngs, lambda r: r.uniform(self.delay_min_ms, self.delay_max_ms))
        noise = per_trial(rngs, lambda r: r.standard_normal((self.n_steps, self.n_inputs)))
        return delay, self.input_noise * noise, self._periods(len(rngs), delay=delay)

    def ood(self) -> Any:
        return self.replace(delay_min_ms=2 * self.delay_max_ms, delay_max_ms=3 * self.delay_max_ms)
