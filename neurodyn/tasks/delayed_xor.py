"""Delayed XOR of two sign pulses (the error-forcing benchmark of Sağtekin, Bredenberg & Savin 2025)."""

from __future__ import annotations

from dataclasses import dataclass

from neurodyn._lazy import numpy as np
from neurodyn._seed import trial_rngs
from neurodyn.tasks._base import TaskBatch
from neurodyn.tasks._binary import BinaryTask
from neurodyn.tasks._checks import durations
from neurodyn.tasks._registry import register_task
from neurodyn.tasks._timeline import in_period, per_trial

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
    timeline = {"fixation": "fixation_ms", "pulse1": "pulse_ms", "delay": "delay_ms", "pulse2": "pulse_ms",
                "wait": ("wait_ms", "jitter_ms"), "response": "response_ms"}

    def _sample(self, n_trials: int, seed: int, first_trial: int) -> TaskBatch:
        rngs = trial_rngs(seed, n_trials, first_trial)
        n_steps = self.n_steps
        signs = per_trial(rngs, lambda r: np.where(r.random(2) < 0.5, -1.0, 1.0))
        wait = per_trial(rngs, lambda r: self.wait_ms + r.uniform(0.0, self.jitter_ms))
        noise = per_trial(rngs, lambda r: r.standard_normal((n_steps, 2)))
        periods = self._periods(n_trials, wait=wait)
        a, b = signs[:, 0], signs[:, 1]
        pulses = (in_period(periods["pulse1"], n_steps) * a[:, None]
                  + in_period(periods["pulse2"], n_steps) * b[:, None])
        inputs = np.stack([pulses, self._go_cue(periods, n_steps)], axis=-1) + self.input_noise * noise
        return self._binary_batch(inputs, periods, seed=seed, first_trial=first_trial,
                                  trial_params={"a": a, "b": b, "label": -a * b, "wait_ms": wait})
