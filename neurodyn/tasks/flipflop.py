"""N-bit flip-flop (Sussillo & Barak 2013, Neural Computation 25(3))."""

from __future__ import annotations

from dataclasses import dataclass

from neurodyn._lazy import numpy as np
from neurodyn._seed import network_trial_uniforms, trial_uniforms
from neurodyn.tasks._base import Task, TaskBatch, build_networks, size_of
from neurodyn.tasks._checks import at_least, within
from neurodyn.tasks._registry import register_task

__all__ = ["FlipFlop"]


@register_task
@dataclass(frozen=True)
class FlipFlop(Task):
    """N-bit flip-flop: remember the sign of the last pulse on each of ``n_bits`` channels.

    Each input channel carries pulses of +1 or -1 arriving independently with probability
    ``p_pulse`` per time step; the target of output ``i`` is the sign of the most recent pulse on
    channel ``i``. Every trial starts with a pulse on every channel at t = 0, so the target is
    defined from the first step (the semantics of FixedPointFinder's flip-flop generator).
    A trained network stores the 2**n_bits sign patterns as stable fixed points.

    Parameters
    ----------
    n_bits : int
        Number of independent bits (the complexity knob).
    n_steps : int
        Trial length in time steps.
    p_pulse : float
        Probability of a pulse per channel per time step, in (0, 1].
    dt : float
        Time step in ms (recorded only; the task is defined in steps).

    Raises
    ------
    ValueError
        At construction, for a field that breaks its rule: ``n_bits`` or ``n_steps`` < 1, ``p_pulse`` outside
        (0, 1]; the count fields (``n_bits``, ``n_steps``) must be integers (a fraction, NaN, a bool or a
        string is refused; a whole float such as ``4.0`` is stored as ``4``).

    Notes
    -----
    ``ood()`` returns trials four times longer with twice the pulse rate (at most 1): more flips, each
    with less time to settle, over longer memory spans. It is harder than training for trained networks
    (a 3-bit, 32-unit network: loss 1.2e-3 vs 4.0e-4 in distribution), where the earlier variant, half
    the pulse rate, was easier (1.4e-4).

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.tasks import FlipFlop
    >>> task = FlipFlop(n_bits=3, n_steps=32, p_pulse=0.2)
    >>> batch = task.sample(5, seed=0)
    >>> batch.inputs.shape, batch.targets.shape  # (trial, time, bit)
    ((5, 32, 3), (5, 32, 3))
    >>> sorted(np.unique(batch.targets).tolist())  # every target is a sign
    [-1.0, 1.0]
    >>> task.evaluate(batch.targets, batch)["accuracy"]
    1.0
    >>> task.ood().n_steps, task.ood().p_pulse  # out of distribution: 4x longer, twice the pulses
    (128, 0.4)
    """

    name = "flipflop"
    n_bits: int = 3
    n_steps: int = 64
    p_pulse: float = 0.1
    dt: float = 10.0
    checks = (at_least("n_bits", 1), at_least("n_steps", 1), within("p_pulse", 0.0, 1.0, open_low=True))
    n_inputs = n_outputs = size_of("n_bits")

    def _sample(self, n_trials: int, seed: int, first_trial: int) -> TaskBatch:
        inputs, targets, n_pulses = self._trials(trial_uniforms(seed, n_trials, first_trial, self._draws))
        return self._batch(
            inputs, targets, np.ones_like(targets), seed=seed, first_trial=first_trial,
            trial_params={"n_pulses": n_pulses},
            periods={"response": np.tile([0, self.n_steps], (n_trials, 1))},
        )

    def _sample_networks(self, n_trials: int, seeds: list[int], first_trial: int):
        blocks = network_trial_uniforms(seeds, n_trials, first_trial, self._draws)
        inputs, targets = build_networks(len(seeds), n_trials, blocks, lambda u: self._trials(u)[:2])
        return inputs, targets, np.ones_like(targets)

    @property
    def _draws(self) -> tuple[int, int, int]:
        """Shape of one trial's uniforms: its pulse uniforms, then its sign uniforms (time, bit)."""
        return (2, self.n_steps, self.n_bits)

    def _trials(self, uniforms: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Inputs and targets (trial, time, bit), float32, and pulse counts (trial, bit), int64, of the
        trials whose uniforms are ``uniforms`` (trial, *self._draws); one compiled loop
        (:func:`~neurodyn.tasks._flipflop_kernel.flipflop_trials`)."""
        from neurodyn.tasks._flipflop_kernel import flipflop_trials

        n_trials = uniforms.shape[0]
        inputs = np.empty((n_trials, self.n_steps, self.n_bits), np.float32)
        targets = np.empty_like(inputs)
        n_pulses = np.empty((n_trials, self.n_bits), np.int64)
        flipflop_trials(uniforms, float(self.p_pulse), inputs, targets, n_pulses)
        return inputs, targets, n_pulses

    def ood(self) -> FlipFlop:
        return self.replace(n_steps=4 * self.n_steps, p_pulse=min(1.0, 2 * self.p_pulse))

    def evaluate(self, outputs: np.ndarray, batch: TaskBatch) -> dict[str, float]:
        """Fraction of bits whose output sign equals the target, plus the masked MSE."""
        out = np.asarray(outputs)
        correct = (np.sign(out) == batch.targets) * batch.mask
        metrics = super().evaluate(out, batch)
        metrics["accuracy"] = float(correct.sum() / batch.mask.sum())
        return metrics
