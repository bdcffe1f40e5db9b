"""Delayed match-to-sample (e.g. Miller, Erickson & Desimone 1996, J. Neurosci. 16(16))."""

from __future__ import annotations

from dataclasses import dataclass

from neurodyn._lazy import numpy as np
from neurodyn._seed import trial_rngs
from neurodyn.tasks._base import TaskBatch
from neurodyn.tasks._checks import at_least, delayed_response, non_negative, within
from neurodyn.tasks._decision import DecisionTask
from neurodyn.tasks._delayed import DelayedResponse
from neurodyn.tasks._registry import register_task
from neurodyn.tasks._timeline import (
    before_period,
    in_period,
    per_trial,
)

__all__ = ["DelayedMatchToSample"]


@register_task
@dataclass(frozen=True)
class DelayedMatchToSample(DelayedResponse, DecisionTask):
    """Delayed match-to-sample: report whether the test stimulus equals the remembered sample.

    Periods: fixation, sample, delay, test, decision. Inputs: a fixation cue (1 until the
    decision period) and ``n_stimuli`` one-hot stimulus channels carrying the sample and then the
    test stimulus, plus Gaussian noise. Outputs: 3 logits (fixate, match, non-match),
    ``loss = "cross_entropy"``. On a non-match trial the test is uniform over the other stimuli.

    Parameters
    ----------
    n_stimuli : int
        Number of stimulus identities (the complexity knob), >= 2.
    p_match : float
        Probability of a match trial.
    fixation_ms, sample_ms, test_ms, decision_ms : float
        Period durations in ms.
    delay_min_ms, delay_max_ms : float
        The delay is uniform in ``[delay_min_ms, delay_max_ms]`` ms.
    grace_ms : float
        Unpenalised time at the start of the decision period, in ms.
    input_noise : float
        Standard deviation of the Gaussian input noise.
    dt : float
        Time step in ms.

    Raises
    ------
    ValueError
        At construction, for a field that breaks its rule, e.g. ``n_stimuli`` < 2 or ``p_match`` outside [0,
        1]; the count fields (``n_stimuli``) must be integers (a fraction, NaN, a bool or a string is refused;
        a whole float such as ``4.0`` is stored as ``4``).

    Notes
    -----
    ``ood()`` returns the task with delays between 2x and 3x ``delay_max_ms``.
    Per-trial params: ``sample``, ``test`` (stimulus indices), ``delay_ms``,
    ``label`` (1 = match, 2 = non-match).

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.tasks import DelayedMatchToSample
    >>> task = DelayedMatchToSample(n_stimuli=3, delay_min_ms=100.0, delay_max_ms=200.0)
    >>> task.n_inputs, task.n_outputs, task.loss  # fixation + 3 stimuli; fixate / match / non-match
    (4, 3, 'cross_entropy')
    >>> batch = task.sample(4, seed=0)
    >>> batch.inputs.shape, batch.targets.shape
    ((4, 50, 4), (4, 50, 1))
    >>> p = batch.trial_params
    >>> bool(np.all((p["sample"] == p["test"]) == (p["label"] == 1)))
    True
    """

    name = "dms"
    n_stimuli: int = 4
    p_match: float = 0.5
    fixation_ms: float = 200.0
    sample_ms: float = 200.0
    delay_min_ms: float = 300.0
    delay_max_ms: float = 1000.0
    test_ms: float = 200.0
    decision_ms: float = 200.0
    grace_ms: float = 60.0
    input_noise: float = 0.05
    dt: float = 20.0
    timeline = {"fixation": "fixation_ms", "sample": "sample_ms", "delay": "delay_max_ms", "test": "test_ms",
                "decision": "decision_ms"}
    checks = (
        non_negative("input_noise"), at_least("n_stimuli", 2), within("p_match", 0.0, 1.0),
        delayed_response(positive=("fixation_ms", "sample_ms", "test_ms", "decision_ms"), answer="decision"),
    )

    @property
    def n_inputs(self) -> int:
        return 1 + self.n_stimuli

    def _sample(self, n_trials: int, seed: int, first_trial: int) -> TaskBatch:
        rngs = trial_rngs(seed, n_trials, first_trial)
        n_stim, n_steps = self.n_stimuli, self.n_steps
        sample = per_trial(rngs, lambda r: r.integers(n_stim))
        match = per_trial(rngs, lambda r: r.random() < self.p_match)
        shift = per_trial(rngs, lambda r: r.integers(1, n_stim))
        delay, noise, periods = self._delays_and_noise(rngs)
        test = np.where(match, sample, (sample + shift) % n_stim)
        onehot = np.eye(n_stim)
        stim = (in_period(periods["sample"], n_steps)[..., None] * onehot[sample][:, None]
                + in_period(periods["test"], n_steps)[..., None] * onehot[test][:, None])
        fixation = before_period(periods["decision"], n_steps)
        inputs = np.concatenate([fixation[..., None], stim], axis=-1) + noise
        label = np.where(test == sample, 1, 2)
        return self._decision_batch(inputs, periods, seed=seed, first_trial=first_trial, trial_params={
            "sample": sample, "test": test, "delay_ms": delay, "label": label})
