"""Shared pieces of tasks answered with one ±1 output after a go cue (delayed XOR, evidence integration)."""

from __future__ import annotations

from dataclasses import dataclass

from neurodyn._lazy import numpy as np
from neurodyn.tasks._base import Task, TaskBatch, outputs_like_targets
from neurodyn.tasks._timeline import Timeline, in_period, ms_to_steps


@dataclass(frozen=True)
class BinaryTask(Timeline, Task):
    """Base of the tasks answered with one ±1 output after a delay (field ``delay_ms``, the complexity knob).

    A subclass lists its periods in ``timeline`` (see :class:`~neurodyn.tasks._timeline.Timeline`), the
    last one ``"response"``, starting with a go cue of ``go_ms``. Its ``_sample`` stores the answer (±1)
    per trial as ``trial_params["label"]``; ``ood()`` doubles ``delay_ms``.
    """

    n_outputs = 1

    def ood(self) -> BinaryTask:
        return self.replace(delay_ms=2 * self.delay_ms)

    def evaluate(self, outputs: np.ndarray, batch: TaskBatch) -> dict[str, float]:
        """Masked ``mse`` and ``accuracy``: the sign of a trial's mean output over its response period
        equals ``batch.trial_params["label"]`` (non-finite outputs count as wrong)."""
        out = outputs_like_targets(outputs, batch, np.float64)
        mask = batch.mask[..., 0]
        with np.errstate(invalid="ignore"):
            mean = (out[..., 0] * mask).sum(1) / np.maximum(mask.sum(1), 1.0)
            err = ((out - batch.targets) ** 2 * batch.mask).sum() / max(batch.mask.sum(), 1.0)
        correct = np.isfinite(mean) & (np.sign(mean) == batch.trial_params["label"])
        return {"mse": float(err), "accuracy": float(correct.mean())}

    def _go_cue(self, periods: dict[str, np.ndarray], n_steps: int) -> np.ndarray:
        """Go cue ``(trial, time)``, bool: True for the first ``go_ms`` of the ``"response"`` period."""
        return go_cue(periods["response"], n_steps, go_ms=self.go_ms, dt=self.dt)

    def _binary_batch(self, inputs: np.ndarray, periods: dict[str, np.ndarray], *, seed: int,
                      first_trial: int, trial_params: dict[str, np.ndarray]) -> TaskBatch:
        """The batch of ``inputs`` (trial, time, input) answered by ``trial_params["label"]`` (±1) during
        the ``"response"`` period: targets and mask of :func:`binary_targets`."""
        targets, mask = binary_targets(periods["response"], trial_params["label"], inputs.shape[1])
        return self._batch(inputs, targets, mask, seed=seed, first_trial=first_trial, periods=periods,
                           trial_params=trial_params)


def go_cue(response: np.ndarray, n_steps: int, *, go_ms: float, dt: float) -> np.ndarray:
    """Go cue ``(trial, time)``, bool: True for the first ``go_ms`` of the ``response`` period (trial, 2)."""
    go = response.copy()
    go[:, 1] = go[:, 0] + ms_to_steps(go_ms, dt)
    return in_period(go, n_steps)


def binary_targets(response: np.ndarray, labels: np.ndarray, n_steps: int) -> tuple[np.ndarray, np.ndarray]:
    """Targets ``labels`` (±1) inside the ``response`` period (trial, 2), 0 elsewhere; mask 1 there only.

    Returns
    -------
    targets, mask : ndarray, shape (trial, time, 1), float32
    """
    inside = in_period(response, n_steps)
    targets = np.where(inside, labels[:, None], 0.0).astype(np.float32)
    return targets[..., None], inside.astype(np.float32)[..., None]

