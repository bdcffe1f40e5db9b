"""Parametric working memory / delayed frequency discrimination (Romo et al. 1999, Nature 399).

A monkey feels a vibrotactile flutter at frequency f1, holds it through a delay, feels f2 and
reports whether f1 > f2. The default frequency pairs are the standard set of Romo et al. (1999),
also used by Barak et al. (2013) and Song et al. (2016): f1 in 10–34 Hz in 4 Hz steps paired with
f2 = f1 ± 8 Hz within the same range (10 pairs).
"""

from __future__ import annotations

from dataclasses import dataclass

from neurodyn._lazy import numpy as np
from neurodyn._seed import trial_rngs
from neurodyn.tasks._base import TaskBatch
from neurodyn.tasks._checks import delayed_response, non_negative, rule
from neurodyn.tasks._decision import DecisionTask
from neurodyn.tasks._delayed import DelayedResponse
from neurodyn.tasks._registry import register_task
from neurodyn.tasks._timeline import (
    before_period,
    in_period,
    per_trial,
)

__all__ = ["DelayedDiscrimination"]


def romo_pairs(f_min: float, f_max: float, f_step: float, delta_f: float) -> np.ndarray:
    """All (f1, f2) pairs with f1 on the grid ``f_min, f_min + f_step, ..., f_max`` and
    ``f2 = f1 ± delta_f`` inside ``[f_min, f_max]``; shape (pair, 2), Hz."""
    f1 = np.arange(f_min, f_max + 1e-9, f_step)
    pairs = [(a, a + s * delta_f) for a in f1 for s in (-1, 1) if f_min <= a + s * delta_f <= f_max]
    return np.asarray(pairs, dtype=np.float64)


@register_task
@dataclass(frozen=True)
class DelayedDiscrimination(DelayedResponse, DecisionTask):
    """Romo delayed discrimination: decide whether f1 > f2 after a variable delay.

    Periods: fixation, f1, delay, f2, decision. Inputs (3 channels): fixation cue (1 until the
    decision period), and the current frequency as a push–pull pair ``(f - f_min) / (f_max -
    f_min)`` and ``(f_max - f) / (f_max - f_min)`` during the two stimulus periods, plus Gaussian
    noise. Outputs: 3 logits (fixate, "f1 > f2", "f1 < f2"), ``loss = "cross_entropy"``.
    Trials are padded to the longest possible delay (mask 0 on padding).

    Parameters
    ----------
    f_min, f_max, f_step : float
        Range and grid of f1 in Hz.
    delta_f : float
        |f1 - f2| in Hz (the complexity knob: smaller is harder).
    fixation_ms, stimulus_ms, decision_ms : float
        Period durations in ms (``stimulus_ms`` for each of f1 and f2).
    delay_min_ms, delay_max_ms : float
        The delay is uniform in ``[delay_min_ms, delay_max_ms]`` ms.
    grace_ms : float
        Unpenalised time at the start of the decision period, in ms.
    input_noise : float
        Standard deviation of the Gaussian input noise.
    dt : float
        Time step in ms.

    Notes
    -----
    ``ood()`` returns the task with closer pairs and more input noise (see :meth:`ood`).
    Per-trial params: ``f1``, ``f2`` (Hz), ``delay_ms``, ``label`` (1 if f1 > f2 else 2).

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.tasks import DelayedDiscrimination
    >>> task = DelayedDiscrimination(delay_min_ms=100.0, delay_max_ms=200.0)
    >>> task.n_inputs, task.n_outputs, task.loss
    (3, 3, 'cross_entropy')
    >>> batch = task.sample(4, seed=0)
    >>> batch.inputs.shape  # padded to the longest delay: (200 + 200 + 200 + 200 + 200) ms / 20 ms
    (4, 50, 3)
    >>> p = batch.trial_params
    >>> bool(np.all((p["f1"] > p["f2"]) == (p["label"] == 1))), bool(np.all(abs(p["f1"] - p["f2"]) == 8.0))
    (True, True)
    """

    name = "romo"
    n_inputs = 3
    f_min: float = 10.0
    f_max: float = 34.0
    f_step: float = 4.0
    delta_f: float = 8.0
    fixation_ms: float = 200.0
    stimulus_ms: float = 200.0
    delay_min_ms: float = 500.0
    delay_max_ms: float = 1500.0
    decision_ms: float = 200.0
    grace_ms: float = 60.0
    input_noise: float = 0.05
    dt: float = 20.0
    timeline = {"fixation": "fixation_ms", "f1": "stimulus_ms", "delay": "delay_max_ms", "f2": "stimulus_ms",
                "decision": "decision_ms"}
    checks = (
        non_negative("input_noise"),
        rule(lambda t: not 0 < t.f_min < t.f_max, "need 0 < f_min < f_max, got {t.f_min}, {t.f_max}"),
        rule(lambda t: len(t.pairs) == 0,
             "no frequency pairs with delta_f={t.delta_f} inside [{t.f_min}, {t.f_max}]"),
        delayed_response(positive=("fixation_ms", "stimulus_ms", "decision_ms"), answer="decision"),
    )

    @property
    def pairs(self) -> np.ndarray:
        """The (f1, f2) pairs in Hz, shape (pair, 2)."""
        return romo_pairs(self.f_min, self.f_max, self.f_step, self.delta_f)

    def _sample(self, n_trials: int, seed: int, first_trial: int) -> TaskBatch:
        rngs = trial_rngs(seed, n_trials, first_trial)
        pairs, n_steps = self.pairs, self.n_steps
        pair_idx = per_trial(rngs, lambda r: r.integers(len(pairs)))
        delay, noise, periods = self._delays_and_noise(rngs)
        f1, f2 = pairs[pair_idx, 0], pairs[pair_idx, 1]
        span = self.f_max - self.f_min
        freq = (in_period(periods["f1"], n_steps) * f1[:, None]
                + in_period(periods["f2"], n_steps) * f2[:, None])
        on = in_period(periods["f1"], n_steps) | in_period(periods["f2"], n_steps)
        inputs = np.stack([
            before_period(periods["decision"], n_steps),
            on * (freq - self.f_min) / span,
            on * (self.f_max - freq) / span,
        ], axis=-1) + noise
        label = np.where(f1 > f2, 1, 2)
        return self._decision_batch(inputs, periods, seed=seed, first_trial=first_trial, trial_params={
            "f1": f1, "f2": f2, "delay_ms": delay, "label": label})

    def ood(self) -> DelayedDiscrimination:
        """The out-of-distribution variant: pairs twice as close (``delta_f / 2``, new f2 values) and four
        times the input noise, the delays unchanged.

        It is harder than training by the masked mean loss, the behaviour level of solution degeneracy
        (:func:`~neurodyn.analysis.compute_solution_degeneracy`), and by accuracy. Longer delays alone
        (the earlier variant) lowered the mean loss of networks still near chance on the choice: their
        extra, easy fixation steps dilute the few decision steps.

        Examples
        --------
        >>> from neurodyn.tasks import DelayedDiscrimination
        >>> ood = DelayedDiscrimination(delta_f=8.0, input_noise=0.05).ood()
        >>> ood.delta_f, ood.input_noise, ood.delay_max_ms
        (4.0, 0.2, 1500.0)
        """
        return self.replace(delta_f=self.delta_f / 2, input_noise=4 * self.input_noise)

