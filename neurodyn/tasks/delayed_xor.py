"""Delayed XOR of two sign pulses (the error-forcing benchmark of Sağtekin, Bredenberg & Savin 2025)."""

from __future__ import annotations

from dataclasses import dataclass

from neurodyn._lazy import numpy as np
from neurodyn._seed import trial_rngs
from neurodyn.tasks._base import TaskBatch
from neurodyn.tasks._binary import BinaryTask, binary_targets, go_cue
from neurodyn.tasks._checks import durations
from neurodyn.tasks._registry import register_task
from neurodyn.tasks._timeline import build_periods, in_period, per_trial, total_steps

__all__ = ["DelayedXOR"]


@register_task
@dataclass(frozen=True)
class DelayedXOR(BinaryTask):
    """Delayed XOR: two ±1 pulses ``delay_ms`` apart, then after a go cue answer whether they differ.

    Periods: fixation, pulse 1, delay, pulse 2, wait, response. Input channel 0 carries the pulses
    (``a``, then ``b``, each ±1 for ``pulse_ms``), channel 1 the go cue (1 for ``go_ms`` at the
    start of the response period), both with Gaussian noise of std ``input_noise``. The wait is
    jittered, uniform in ``[wait_ms, wait_ms + jitter_ms]``, so the answer cannot be timed from
    the second pulse. The one output must hold ``-a b`` (+1: the pulses differ, -1: they agree)
    during the response period; the loss mask is 1 there and 0 elsewhere (padding included).

    Parameters
    ----------
    delay_ms : float
        Delay between the pulses in ms: the complexity knob (the first sign must be held).
    pulse_ms, go_ms : float
        Durations of each pulse and of the go cue, in ms.
    fixation_ms, wait_ms, jitter_ms, response_ms : float
        Durations in ms (see above).
    input_noise : float
        Standard deviation of the input noise.
    dt : float
        Time step in ms.

    Notes
    -----
    ``ood()`` doubles ``delay_ms``. Per-trial params: ``a``, ``b`` (±1), ``label`` (``-a b``),
    ``wait_ms``. Trials are padded to the longest wait.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.tasks import DelayedXOR
    >>> task = DelayedXOR(delay_ms=100.0, dt=10.0)
    >>> batch = task.sample(4, seed=0)
    >>> batch.inputs.shape, batch.targets.shape  # (50 + 50 + 100 + 50 + 100 + 50) ms / 10 ms
    ((4, 40, 2), (4, 40, 1))
    >>> p = batch.trial_params
    >>> p["a"].tolist(), p["b"].tolist(), p["label"].tolist()  # label = -a b
    ([1.0, -1.0, -1.0, -1.0], [1.0, 1.0, -1.0, -1.0], [-1.0, 1.0, -1.0, -1.0])
    >>> task.evaluate(batch.targets, batch)["accuracy"]
    1.0
    """

    name = "delayed_xor"
    n_inputs = 2
    delay_ms: float = 200.0
    pulse_ms: float = 50.0
    go_ms: float = 50.0
    fixation_ms: float = 50.0
    wait_ms: float = 50.0
    jitter_ms: float = 50.0
    response_ms: float = 50.0
    input_noise: float = 0.0
    dt: float = 10.0
    checks = (durations("delay_ms", "fixation_ms", "wait_ms", "jitter_ms", "input_noise",
                        whole_steps=("pulse_ms", "go_ms", "response_ms")),)

    @property
    def n_steps(self) -> int:
        """Padded trial length in steps (longest wait)."""
        return total_steps((self.fixation_ms, self.pulse_ms, self.delay_ms, self.pulse_ms,
                            self.wait_ms + self.jitter_ms, self.response_ms), self.dt)

    def _sample(self, n_trials: int, seed: int, first_trial: int) -> TaskBatch:
        rngs = trial_rngs(seed, n_trials, first_trial)
        n_steps = self.n_steps
        signs = per_trial(rngs, lambda r: np.where(r.random(2) < 0.5, -1.0, 1.0))
        wait = per_trial(rngs, lambda r: self.wait_ms + r.uniform(0.0, self.jitter_ms))
        noise = per_trial(rngs, lambda r: r.standard_normal((n_steps, 2)))
        periods, _ = build_periods({
            "fixation": self.fixation_ms, "pulse1": self.pulse_ms, "delay": self.delay_ms,
            "pulse2": self.pulse_ms, "wait": wait, "response": self.response_ms,
        }, self.dt, n_trials=n_trials)
        a, b = signs[:, 0], signs[:, 1]
        go = go_cue(periods["response"], n_steps, go_ms=self.go_ms, dt=self.dt)
        pulses = (in_period(periods["pulse1"], n_steps) * a[:, None]
                  + in_period(periods["pulse2"], n_steps) * b[:, None])
        inputs = np.stack([pulses, go], axis=-1) + self.input_noise * noise
        label = -a * b
        targets, mask = binary_targets(periods["response"], label, n_steps)
        return self._batch(inputs, targets, mask, seed=seed, first_trial=first_trial, periods=periods,
                           trial_params={"a": a, "b": b, "label": label, "wait_ms": wait})
