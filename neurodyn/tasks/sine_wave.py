"""Sine-wave generation from a static input (Sussillo & Barak 2013, Neural Computation 25(3))."""

from __future__ import annotations

from dataclasses import dataclass

from neurodyn._lazy import numpy as np
from neurodyn._seed import trial_rngs
from neurodyn.tasks._base import Task, TaskBatch, size_of
from neurodyn.tasks._checks import integers, rule
from neurodyn.tasks._registry import register_task
from neurodyn.tasks._timeline import ms_to_steps, per_trial

__all__ = ["SineWave"]


@register_task
@dataclass(frozen=True)
class SineWave(Task):
    """Produce ``sin(2 pi f t)`` where a static input level selects the frequency ``f``.

    The trained frequencies are ``n_frequencies`` values evenly spaced in ``[f_min_hz, f_max_hz]``.
    Input channel ``k`` holds the level ``input_offset + (f_k - f_min_hz) / (f_max_hz - f_min_hz)``
    for the whole trial (as in Sussillo & Barak's ``j/51 + 0.25``), and output ``k`` must produce
    ``sin(2 pi f_k t)`` from phase 0 at ``t = 0``, with ``t = step * dt``. Each of the
    ``n_channels`` channels draws its frequency independently.

    Parameters
    ----------
    n_frequencies : int
        Number of trained frequencies (complexity knob).
    n_channels : int
        Number of simultaneous, independent input/output pairs (complexity knob).
    f_min_hz, f_max_hz : float
        Frequency range in Hz.
    duration_ms : float
        Trial length in ms.
    input_offset : float
        Input level of the lowest frequency.
    frequencies : {"trained", "ood"}
        ``"ood"`` draws frequencies half-way between the trained ones and half a grid step
        outside the range (inputs keep the trained level map, so they interpolate/extrapolate).
    r2_threshold : float
        :meth:`evaluate` counts a channel as correct when its R^2 exceeds this.
    dt : float
        Time step in ms.

    Raises
    ------
    ValueError
        At construction, for a field that breaks its rule, e.g. a count < 1 or ``f_min_hz`` > ``f_max_hz``;
        the count fields (``n_frequencies``, ``n_channels``) must be integers (a fraction, NaN, a bool or a
        string is refused; a whole float such as ``4.0`` is stored as ``4``).

    Notes
    -----
    ``ood()`` returns the task with ``frequencies="ood"``.
    Per-trial params: ``frequency_hz`` (trial, channel).

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.tasks import SineWave
    >>> task = SineWave(n_frequencies=4, duration_ms=500.0)
    >>> task.frequency_set().tolist()  # Hz
    [1.0, 2.0, 3.0, 4.0]
    >>> batch = task.sample(2, seed=0)
    >>> batch.inputs.shape, batch.targets.shape  # (trial, time, channel): 50 steps of 10 ms
    ((2, 50, 1), (2, 50, 1))
    >>> f = batch.trial_params["frequency_hz"][:, 0]
    >>> t = np.arange(50) * task.dt / 1000.0
    >>> bool(np.allclose(batch.targets[:, :, 0], np.sin(2 * np.pi * f[:, None] * t), atol=1e-6))
    True
    """

    name = "sine_wave"
    n_frequencies: int = 4
    n_channels: int = 1
    f_min_hz: float = 1.0
    f_max_hz: float = 4.0
    duration_ms: float = 1000.0
    input_offset: float = 0.25
    frequencies: str = "trained"
    r2_threshold: float = 0.9
    dt: float = 10.0
    checks = (
        integers("n_frequencies", "n_channels"),
        rule(lambda t: t.n_frequencies < 1 or t.n_channels < 1, "n_frequencies and n_channels must be >= 1"),
        rule(lambda t: not 0 < t.f_min_hz <= t.f_max_hz,
             "need 0 < f_min_hz <= f_max_hz, got {t.f_min_hz}, {t.f_max_hz}"),
        rule(lambda t: t.n_frequencies > 1 and t.f_min_hz == t.f_max_hz,
             "several frequencies need f_min_hz < f_max_hz"),
        rule(lambda t: t.frequencies not in ("trained", "ood"),
             "frequencies must be 'trained' or 'ood', got {t.frequencies!r}"),
        rule(lambda t: ms_to_steps(t.duration_ms, t.dt) < 2,
             "duration_ms must span at least two steps of dt"),
    )
    n_inputs = n_outputs = size_of("n_channels")

    @property
    def n_steps(self) -> int:
        return int(ms_to_steps(self.duration_ms, self.dt))

    def frequency_set(self) -> np.ndarray:
        """Frequencies (Hz) trials are drawn from: the trained grid, or the OOD set."""
        grid = np.linspace(self.f_min_hz, self.f_max_hz, self.n_frequencies)
        if self.frequencies == "trained":
            return grid
        step = (grid[1] - grid[0]) if len(grid) > 1 else 0.5 * self.f_min_hz
        inner = 0.5 * (grid[1:] + grid[:-1])
        return np.concatenate([[grid[0] - step / 2], inner, [grid[-1] + step / 2]])

    def input_level(self, f_hz: np.ndarray) -> np.ndarray:
        """Static input level that selects frequency ``f_hz`` (the trained affine map)."""
        span = self.f_max_hz - self.f_min_hz
        return self.input_offset + (np.asarray(f_hz) - self.f_min_hz) / (span if span > 0 else 1.0)

    def _sample(self, n_trials: int, seed: int, first_trial: int) -> TaskBatch:
        rngs = trial_rngs(seed, n_trials, first_trial)
        fset = self.frequency_set()
        idx = per_trial(rngs, lambda r: r.integers(len(fset), size=self.n_channels))
        freq = fset[idx]
        t_s = np.arange(self.n_steps) * self.dt / 1000.0
        targets = np.sin(2 * np.pi * freq[:, None, :] * t_s[None, :, None])
        inputs = np.broadcast_to(self.input_level(freq)[:, None, :], targets.shape)
        return self._batch(
            inputs, targets, np.ones_like(targets), seed=seed, first_trial=first_trial,
            trial_params={"frequency_hz": freq},
            periods={"response": np.tile([0, self.n_steps], (n_trials, 1))},
        )

    def ood(self) -> SineWave:
        return self.replace(frequencies="ood")

    def evaluate(self, outputs: np.ndarray, batch: TaskBatch) -> dict[str, float]:
        """``mse``, ``r2`` (pooled) and ``accuracy``: the fraction of (trial, channel) pairs whose
        R^2 against their sine exceeds ``r2_threshold``."""
        out = np.asarray(outputs, dtype=np.float64)
        metrics = super().evaluate(out, batch)
        y = batch.targets.astype(np.float64)
        sse = ((out - y) ** 2).sum(1)
        sst = ((y - y.mean(1, keepdims=True)) ** 2).sum(1)
        metrics["r2"] = float(1 - sse.sum() / sst.sum())
        metrics["accuracy"] = float(np.mean(1 - sse / np.maximum(sst, 1e-12) > self.r2_threshold))
        return metrics
