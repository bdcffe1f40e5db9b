"""Integration of discrete evidence pulses towards a ±1 decision (after Brunton, Botvinick & Brody 2013)."""

from __future__ import annotations

from dataclasses import dataclass

from neurodyn._lazy import numpy as np
from neurodyn._seed import network_trial_uniforms, trial_uniforms
from neurodyn.tasks._base import TaskBatch, build_networks
from neurodyn.tasks._binary import BinaryTask, binary_targets
from neurodyn.tasks._checks import durations, within
from neurodyn.tasks._registry import register_task
from neurodyn.tasks._timeline import in_period

__all__ = ["EvidenceIntegration"]


@register_task
@dataclass(frozen=True)
class EvidenceIntegration(BinaryTask):
    """Count cue pulses on two channels, hold the count through a delay, answer ±1 after a go cue.

    Periods: fixation, stimulus, delay, response. During the stimulus each step carries a pulse
    with probability ``p_pulse``; a pulse goes to the trial's side (channel 1 for +1, channel 0 for
    -1) with probability ``p_correct``, to the other channel otherwise. Channel 2 is the go cue (1
    for ``go_ms`` at the start of the response). The output must hold the ideal observer's answer,
    the sign of (pulses on channel 1) - (pulses on channel 0), ties going to the trial's side,
    during the response period; the loss mask is 1 there and 0 elsewhere.

    Parameters
    ----------
    delay_ms : float
        Delay between the last cue and the go cue in ms: the complexity knob.
    stimulus_ms, fixation_ms, response_ms, go_ms : float
        Durations in ms.
    p_pulse : float
        Probability of a cue pulse per stimulus step, in (0, 1].
    p_correct : float
        Probability that a pulse is on the trial's side, in [0.5, 1].
    dt : float
        Time step in ms.

    Notes
    -----
    ``ood()`` doubles ``delay_ms``. Per-trial params: ``side`` (±1), ``n_left``, ``n_right`` (pulse
    counts on channels 0 and 1), ``label`` (the answer).

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.tasks import EvidenceIntegration
    >>> task = EvidenceIntegration(delay_ms=100.0, stimulus_ms=200.0)
    >>> batch = task.sample(3, seed=0)
    >>> batch.inputs.shape, batch.targets.shape  # (trial, time, channel): 50 + 200 + 100 + 50 ms / 10 ms
    ((3, 40, 3), (3, 40, 1))
    >>> p = batch.trial_params
    >>> bool(np.all(batch.inputs[..., 1].sum(1) == p["n_right"])), p["label"].tolist()
    (True, [1.0, -1.0, -1.0])
    >>> task.evaluate(batch.targets, batch)["accuracy"]
    1.0
    """

    name = "evidence_integration"
    n_inputs = 3
    delay_ms: float = 200.0
    stimulus_ms: float = 200.0
    fixation_ms: float = 50.0
    response_ms: float = 50.0
    go_ms: float = 50.0
    p_pulse: float = 0.4
    p_correct: float = 0.7
    dt: float = 10.0
    checks = (durations("delay_ms", "fixation_ms", whole_steps=("stimulus_ms", "response_ms", "go_ms")),
              within("p_pulse", 0, 1, open_low=True), within("p_correct", 0.5, 1))
    timeline = {"fixation": "fixation_ms", "stimulus": "stimulus_ms", "delay": "delay_ms",
                "response": "response_ms"}

    def _sample(self, n_trials: int, seed: int, first_trial: int) -> TaskBatch:
        inputs, periods, params = self._trials(trial_uniforms(seed, n_trials, first_trial, self._draws))
        return self._binary_batch(inputs, periods, seed=seed, first_trial=first_trial, trial_params=params)

    def _sample_networks(self, n_trials: int, seeds: list[int], first_trial: int):
        def arrays(u: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            inputs, periods, params = self._trials(u)
            return (inputs, *binary_targets(periods["response"], params["label"], self.n_steps))

        blocks = network_trial_uniforms(seeds, n_trials, first_trial, self._draws)
        return build_networks(len(seeds), n_trials, blocks, arrays)

    @property
    def _draws(self) -> tuple[int]:
        """Shape of one trial's uniforms: the side's, then the pulse and the agreement uniforms per step."""
        return (1 + 2 * self.n_steps,)

    def _trials(self, u: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray], dict[str, np.ndarray]]:
        """Inputs (trial, time, channel), float32, periods and per-trial params of the trials whose
        uniforms are ``u`` (trial, *self._draws)."""
        n_steps = self.n_steps
        periods = self._periods(u.shape[0])
        side = np.where(u[:, 0] < 0.5, -1.0, 1.0)
        pulse = u[:, 1:1 + n_steps] < self.p_pulse
        pulse &= in_period(periods["stimulus"], n_steps)
        agree = u[:, 1 + n_steps:] < self.p_correct
        right = pulse & (agree == (side[:, None] > 0))
        left = pulse & ~right
        n_left, n_right = left.sum(1), right.sum(1)
        label = np.where(n_right == n_left, side, np.sign(n_right - n_left)).astype(np.float64)
        inputs = np.stack([left, right, self._go_cue(periods, n_steps)], axis=-1).astype(np.float32)
        return inputs, periods, {"side": side, "n_left": n_left, "n_right": n_right, "label": label}
