"""Curriculum learning over one task parameter (e.g. a delay that grows once the task is learnt)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from neurodyn.tasks._base import Task
from neurodyn.training.early_stopping import metric_mode, reached

__all__ = ["Curriculum"]


@dataclass(frozen=True)
class Curriculum:
    """Train on ``task.replace(**{param: values[k]})`` for stages ``k = 0, 1, ...``.

    Training moves to the next stage when the held-out metric meets the threshold of
    ``advance_when`` at an evaluation (every ``eval_every`` iterations); the last stage is kept
    until the end of training. Early stopping and ``target_metric`` act on the last stage only.

    Parameters
    ----------
    param : str
        Name of a field of the task dataclass (e.g. ``"n_steps"``, ``"delay_max_ms"``).
    values : sequence
        The parameter's value at each stage, easiest first.
    advance_when : (metric, threshold)
        Advance when ``metric`` (a key of ``task.evaluate`` or ``"loss"``) reaches
        ``threshold``: at most it for losses and errors, at least it otherwise
        (see :func:`~neurodyn.training.early_stopping.metric_mode`).

    Raises
    ------
    ValueError
        If ``values`` is empty or a string, or ``advance_when`` is not a (name, number) pair.

    Examples
    --------
    >>> from neurodyn.tasks import FlipFlop
    >>> from neurodyn.training import Curriculum
    >>> curriculum = Curriculum("n_steps", [10, 20, 40], advance_when=("accuracy", 0.9))
    >>> curriculum.n_stages, curriculum.task_at(FlipFlop(), 2).n_steps
    (3, 40)
    >>> curriculum.ready({"accuracy": 0.95}), curriculum.ready({"accuracy": 0.5})
    (True, False)
    >>> curriculum.task_at(FlipFlop(), 0).replace(n_bits=2) == FlipFlop(n_bits=2, n_steps=10)
    True
    """

    param: str
    values: tuple[Any, ...]
    advance_when: tuple[str, float]

    def __post_init__(self) -> None:
        if isinstance(self.values, (str, bytes)):
            raise ValueError(f"curriculum values must be a sequence of values, one per stage, got the string "
                             f"{self.values!r}; wrap one value in a list")
        object.__setattr__(self, "values", tuple(self.values))
        if not self.values:
            raise ValueError("a curriculum needs at least one value")
        if not (isinstance(self.advance_when, (tuple, list)) and len(self.advance_when) == 2):
            raise ValueError(f"advance_when must be (metric, threshold), got {self.advance_when!r}")
        threshold = float(self.advance_when[1])
        if not math.isfinite(threshold):
            raise ValueError(f"advance_when threshold must be finite, got {threshold}")
        object.__setattr__(self, "advance_when", (str(self.advance_when[0]), threshold))

    @property
    def n_stages(self) -> int:
        return len(self.values)

    def task_at(self, task: Task, stage: int) -> Task:
        """The task of stage ``stage``.

        Raises
        ------
        ValueError
            If ``stage`` is out of range, ``param`` is not a field of the task, or the value changes the
            task's input or output size (the network could not be trained on it).
        """
        if not 0 <= stage < self.n_stages:
            raise ValueError(f"stage {stage} is out of range; the curriculum has stages "
                             f"0..{self.n_stages - 1}")
        names = [f.name for f in dataclasses.fields(task)]
        if self.param not in names:
            raise ValueError(f"curriculum parameter {self.param!r} is not a field of {type(task).__name__} "
                             f"(fields: {', '.join(names)})")
        new = task.replace(**{self.param: self.values[stage]})
        if (new.n_inputs, new.n_outputs) != (task.n_inputs, task.n_outputs):
            raise ValueError(f"curriculum value {self.param}={self.values[stage]!r} changes the task's "
                             "input/output sizes; only parameters that keep them can be scheduled")
        return new

    def ready(self, metrics: dict[str, float]) -> bool:
        """Whether ``metrics`` meet ``advance_when``.

        Raises
        ------
        ValueError
            If the metric is not among ``metrics`` (the message lists those available).
        """
        name, threshold = self.advance_when
        if name not in metrics:
            raise ValueError(f"curriculum metric {name!r} is not evaluated; available: {', '.join(metrics)}")
        return reached(metrics[name], threshold, metric_mode(name))

    def describe(self) -> dict[str, Any]:
        return {"param": self.param, "values": list(self.values), "advance_when": list(self.advance_when)}
