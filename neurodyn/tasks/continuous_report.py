"""Continuous-report (delayed estimation) working memory, e.g. Wilken & Ma 2004 (J. Vis. 4(12));
two items with a retro-cue for swap errors as in Bays, Catalao & Husain 2009 (J. Vis. 9(10))."""

from __future__ import annotations

from dataclasses import dataclass

from neurodyn._lazy import numpy as np
from neurodyn._seed import trial_rngs
from neurodyn.tasks._base import Task, TaskBatch
from neurodyn.tasks._checks import at_least, delayed_response, integers, non_negative, rule
from neurodyn.tasks._delayed import DelayedResponse
from neurodyn.tasks._registry import register_task
from neurodyn.tasks._timeline import (
    before_period,
    decode_ring,
    in_period,
    per_trial,
    ring_code,
    scored_steps,
)

__all__ = ["ContinuousReport"]


def wrap_angle(x: np.ndarray) -> np.ndarray:
    """Wrap angles (radians) to ``[-pi, pi)``."""
    return (np.asarray(x) + np.pi) % (2 * np.pi) - np.pi


@register_task
@dataclass(frozen=True)
class ContinuousReport(DelayedResponse, Task):
    """Remember one or two ring-coded angles and report the cued one as (cos, sin).

    Periods: fixation, stimulus, delay, cue, response. Inputs: a fixation cue (1 until the
    response period); ``n_items`` rings of ``n_ring`` von Mises tuned units (concentration
    ``kappa``), each showing its item's angle during the stimulus period; with two items, two cue
    channels, one of which is on during the cue period to select the item to report; plus
    Gaussian noise. Targets: (0, 0) before the response, ``(cos, sin)`` of the cued angle during
    it (``loss = "mse"``); the first ``grace_ms`` of the response are unmasked. With
    ``output_ring = N`` the report is ring-coded instead: ``N`` outputs (0 before the response),
    the von Mises code of the cued angle (concentration ``kappa``) during it, decoded by the
    population vector.

    Parameters
    ----------
    n_items : int
        1 or 2 items (the complexity knob; 2 allows swap errors).
    n_ring : int
        Units per stimulus ring.
    kappa : float
        Tuning concentration of the ring code.
    min_separation_deg : float
        Minimum angular distance between the two items, in degrees.
    fixation_ms, stimulus_ms, cue_ms, response_ms : float
        Period durations in ms.
    delay_min_ms, delay_max_ms : float
        The delay is uniform in ``[delay_min_ms, delay_max_ms]`` ms.
    grace_ms : float
        Unpenalised time at the start of the response, in ms.
    tolerance_deg : float
        A report within this many degrees of the target counts as correct in :meth:`evaluate`.
    output_ring : int
        0: report ``(cos, sin)``; ``N >= 3``: report on a ring of ``N`` von Mises tuned outputs.
    input_noise : float
        Standard deviation of the Gaussian input noise.
    dt : float
        Time step in ms.

    Raises
    ------
    ValueError
        At construction, for a field that breaks its rule, e.g. ``n_items`` not 1 or 2 or ``n_ring`` < 3; the
        count fields (``n_items``, ``n_ring``, ``output_ring``) must be integers (a fraction, NaN, a bool or a
        string is refused; a whole float such as ``4.0`` is stored as ``4``).

    Notes
    -----
    ``ood()`` returns the task with delays between 2x and 3x ``delay_max_ms``.
    Per-trial params: ``angles`` (trial, item) in radians, ``cue`` (index of the reported item),
    ``target_angle``, ``delay_ms``.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.tasks import ContinuousReport
    >>> task = ContinuousReport(n_items=2, n_ring=8, delay_min_ms=100.0, delay_max_ms=200.0)
    >>> task.n_inputs, task.n_outputs  # fixation + 2 rings of 8 + 2 cues; (cos, sin)
    (19, 2)
    >>> batch = task.sample(3, seed=0)
    >>> batch.inputs.shape
    (3, 50, 19)
    >>> batch.trial_params["angles"].shape  # (trial, item), radians
    (3, 2)
    >>> task.evaluate(batch.targets, batch)["accuracy"]  # reporting the target is always correct
    1.0
    """

    name = "continuous_report"
    n_items: int = 1
    n_ring: int = 16
    kappa: float = 2.0
    min_separation_deg: float = 60.0
    fixation_ms: float = 100.0
    stimulus_ms: float = 200.0
    delay_min_ms: float = 300.0
    delay_max_ms: float = 1000.0
    cue_ms: float = 200.0
    response_ms: float = 300.0
    grace_ms: float = 60.0
    tolerance_deg: float = 20.0
    output_ring: int = 0
    input_noise: float = 0.05
    dt: float = 20.0
    timeline = {"fixation": "fixation_ms", "stimulus": "stimulus_ms", "delay": "delay_max_ms",
                "cue": "cue_ms", "response": "response_ms"}
    checks = (
        non_negative("input_noise"),
        integers("n_items", "output_ring"),
        rule(lambda t: t.n_items not in (1, 2), "n_items must be 1 or 2, got {t.n_items}"),
        at_least("n_ring", 3),
        rule(lambda t: not t.kappa >= 0 or t.kappa == float("inf"),
             "kappa (von Mises concentration) must be finite and >= 0, got {t.kappa}"),
        rule(lambda t: not 0 <= t.min_separation_deg < 180, "min_separation_deg must be in [0, 180)"),
        rule(lambda t: t.output_ring != 0 and t.output_ring < 3,
             "output_ring must be 0 ((cos, sin) outputs) or >= 3, got {t.output_ring}"),
        rule(lambda t: t.output_ring and t.kappa == 0,
             "output_ring needs kappa > 0 (a flat ring code carries no angle)"),
        delayed_response(positive=("stimulus_ms", "response_ms"), answer="response"),
    )

    @property
    def n_inputs(self) -> int:
        return 1 + self.n_items * self.n_ring + (2 if self.n_items == 2 else 0)

    @property
    def n_outputs(self) -> int:
        return self.output_ring or 2

    def _sample(self, n_trials: int, seed: int, first_trial: int) -> TaskBatch:
        rngs = trial_rngs(seed, n_trials, first_trial)
        n_steps, sep = self.n_steps, np.deg2rad(self.min_separation_deg)
        first = per_trial(rngs, lambda r: r.uniform(0, 2 * np.pi))
        offset = per_trial(rngs, lambda r: r.uniform(sep, 2 * np.pi - sep))
        cue = per_trial(rngs, lambda r: r.integers(self.n_items))
        delay, noise, periods = self._delays_and_noise(rngs)
        angles = np.stack([first, (first + offset) % (2 * np.pi)], axis=1)[:, : self.n_items]
        resp = periods["response"]
        stim = in_period(periods["stimulus"], n_steps)[..., None]
        rings = [stim * ring_code(angles[:, k], self.n_ring, self.kappa)[:, None]
                 for k in range(self.n_items)]
        parts = [before_period(resp, n_steps)[..., None], *rings]
        if self.n_items == 2:
            parts.append(in_period(periods["cue"], n_steps)[..., None] * np.eye(2)[cue][:, None])
        inputs = np.concatenate(parts, axis=-1) + noise
        target_angle = angles[np.arange(n_trials), cue]
        inside = in_period(resp, n_steps)
        report = (ring_code(target_angle, self.output_ring, self.kappa) if self.output_ring
                  else np.stack([np.cos(target_angle), np.sin(target_angle)], axis=-1))[:, None]
        targets = inside[..., None] * report
        mask = scored_steps(resp, n_steps, grace_ms=self.grace_ms, dt=self.dt)[..., None]
        return self._batch(inputs, targets, mask, seed=seed, first_trial=first_trial, periods=periods,
                           trial_params={"angles": angles, "cue": cue, "target_angle": target_angle,
                                         "delay_ms": delay})

    def items(self, batch: TaskBatch) -> tuple[np.ndarray, np.ndarray]:
        """The cued and the uncued items of ``batch``, in ``[-pi, pi)``, as the swap model takes them.

        Returns ``targets`` (trial,) and ``non_targets`` (trial, non_target), with no column for one item;
        e.g. ``fit_mixture_model(task.reports(outputs, batch), *task.items(batch))``.

        Examples
        --------
        >>> from neurodyn.tasks import ContinuousReport
        >>> task = ContinuousReport(n_items=2, n_ring=8, delay_max_ms=400.0)
        >>> targets, non_targets = task.items(task.sample(5, seed=0))
        >>> targets.shape, non_targets.shape
        ((5,), (5, 1))
        """
        angles, cue = wrap_angle(batch.trial_params["angles"]), batch.trial_params["cue"]
        rows = np.arange(len(cue))
        others = angles[rows, 1 - cue][:, None] if angles.shape[1] == 2 else np.zeros((len(cue), 0))
        return angles[rows, cue], others

    def reports(self, outputs: np.ndarray, batch: TaskBatch) -> np.ndarray:
        """The reported angle (trial,), radians in ``[-pi, pi]``, of ``outputs`` (trial, time, output).

        ``atan2`` of the mean output over the masked response steps (the population vector of the
        mean for ring-coded outputs), as :meth:`evaluate` scores it; e.g. the responses to give
        :func:`~neurodyn.tasks.fit_mixture_model`.

        Examples
        --------
        >>> import numpy as np
        >>> from neurodyn.tasks import ContinuousReport
        >>> task = ContinuousReport(n_items=2, n_ring=8, output_ring=12, delay_max_ms=400.0)
        >>> batch = task.sample(4, seed=0)
        >>> target = batch.trial_params["target_angle"]  # in [0, 2 pi)
        >>> wrapped = target - 2 * np.pi * (target > np.pi)
        >>> bool(np.allclose(task.reports(batch.targets, batch), wrapped, atol=1e-3))
        True
        """
        out = np.asarray(outputs, dtype=np.float64)
        resp = (batch.mask[..., 0] > 0) & (np.abs(batch.targets).sum(-1) > 0)
        mean = (out * resp[..., None]).sum(1) / np.maximum(resp.sum(1), 1)[:, None]
        return decode_ring(mean) if self.output_ring else np.arctan2(mean[:, 1], mean[:, 0])

    def evaluate(self, outputs: np.ndarray, batch: TaskBatch) -> dict[str, float]:
        """Report errors of ``outputs`` (trial, time, output).

        The reported angle is ``atan2`` of the mean output over the masked response steps (the
        population vector of the mean for ring-coded outputs).
        Returns ``mse``, ``mean_abs_error_deg``, ``accuracy`` (fraction of reports within
        ``tolerance_deg`` of the target) and, with two items, ``swap_rate`` (fraction of reports
        within ``tolerance_deg`` of the non-cued item).
        """
        out = np.asarray(outputs, dtype=np.float64)
        metrics = super().evaluate(out, batch)
        reported = self.reports(out, batch)
        err = np.abs(wrap_angle(reported - batch.trial_params["target_angle"]))
        tol = np.deg2rad(self.tolerance_deg)
        metrics["mean_abs_error_deg"] = float(np.rad2deg(err.mean()))
        metrics["accuracy"] = float(np.mean(err < tol))
        angles = batch.trial_params["angles"]
        if angles.shape[1] == 2:
            other = angles[np.arange(len(err)), 1 - batch.trial_params["cue"]]
            metrics["swap_rate"] = float(np.mean(np.abs(wrap_angle(reported - other)) < tol))
        return metrics
