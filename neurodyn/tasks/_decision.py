"""Shared pieces of two-alternative decision tasks (fixate, then choose 1 or 2).

Outputs are three logits per step: class 0 = fixate, class 1 and class 2 = the two choices
(trained with ``loss = "cross_entropy"``). Targets are class indices stored as floats.
"""

from __future__ import annotations

from dataclasses import dataclass

from neurodyn._lazy import numpy as np
from neurodyn.tasks._base import Task, TaskBatch
from neurodyn.tasks._timeline import in_period, scored_steps


@dataclass(frozen=True)
class DecisionTask(Task):
    """Base of the two-alternative decision tasks: 3 logits, cross-entropy, :func:`evaluate_decision`.

    A subclass's ``_sample`` stores the correct choice (1 or 2) per trial as ``trial_params["label"]``.
    """

    loss = "cross_entropy"
    n_outputs = 3

    def evaluate(self, outputs: np.ndarray, batch: TaskBatch) -> dict[str, float]:
        """``accuracy`` (fraction of trials choosing ``label``) and ``fixation_accuracy``; see
        :func:`evaluate_decision`."""
        return evaluate_decision(outputs, batch)

    def _decision_batch(self, inputs: np.ndarray, periods: dict[str, np.ndarray], *, seed: int,
                        first_trial: int, trial_params: dict[str, np.ndarray]) -> TaskBatch:
        """The batch of ``inputs`` (trial, time, input) whose trials end in a ``"decision"`` period
        answered by ``trial_params["label"]``: targets and mask of :func:`decision_targets` with the
        task's ``grace_ms``."""
        targets, mask = decision_targets(periods, trial_params["label"], inputs.shape[1], self.dt,
                                         self.grace_ms)
        return self._batch(inputs, targets, mask, seed=seed, first_trial=first_trial, periods=periods,
                           trial_params=trial_params)


def decision_targets(
    periods: dict[str, np.ndarray], labels: np.ndarray, n_steps: int, dt: float, grace_ms: float
) -> tuple[np.ndarray, np.ndarray]:
    """Class-index targets and loss mask for a trial ending in a ``"decision"`` period.

    The target is 0 (fixate) before the decision period and ``labels`` (1 or 2) inside it. The
    mask is 1 before the decision, 0 for the first ``grace_ms`` of the decision period (time to
    commit) and after the trial's end (padding), 1 elsewhere in the decision.

    Returns
    -------
    targets, mask : ndarray, shape (trial, time, 1), float32
    """
    dec = periods["decision"]
    targets = np.where(in_period(dec, n_steps), labels[:, None], 0).astype(np.float32)
    mask = scored_steps(dec, n_steps, grace_ms=grace_ms, dt=dt).astype(np.float32)
    return targets[..., None], mask[..., None]


def evaluate_decision(outputs: np.ndarray, batch: TaskBatch) -> dict[str, float]:
    """Choice accuracy and fixation accuracy of logits ``outputs`` (trial, time, 3).

    The choice of a trial is the larger of the mean choice logits (classes 1, 2) over the
    masked part of its decision period; ``accuracy`` is the fraction of trials whose choice equals
    ``batch.trial_params["label"]``; ``fixation_accuracy`` the fraction of pre-decision steps
    whose arg-max class is 0. Non-finite logits count as wrong (a trial with any NaN/Inf logit
    in its decision period is an error, as is such a pre-decision step).

    Raises
    ------
    ValueError
        If ``outputs`` is not (trial, time, 3) matching the batch.
    """
    out = np.asarray(outputs, dtype=np.float64)
    if out.shape != (*batch.targets.shape[:2], 3):
        raise ValueError(
            f"outputs must have shape {(*batch.targets.shape[:2], 3)}, got {out.shape}"
        )
    mask = batch.mask[..., 0] > 0
    choose = mask & (batch.targets[..., 0] > 0)
    fix = mask & (batch.targets[..., 0] == 0)
    finite = np.isfinite(out).all(axis=-1)  # NaN/Inf logits (a diverged network) count as errors
    logits = np.where(choose[..., None], out[..., 1:], 0.0)
    mean_logit = logits.sum(1) / np.maximum(choose.sum(1), 1)[:, None]
    choice = 1 + np.argmax(mean_logit, axis=1)
    choice_ok = (choice == batch.trial_params["label"]) & np.all(finite | ~choose, axis=1)
    fix_ok = (np.argmax(out, axis=-1) == 0) & fix & finite
    return {
        "accuracy": float(np.mean(choice_ok)),
        "fixation_accuracy": float(fix_ok.sum() / max(fix.sum(), 1)),
    }
