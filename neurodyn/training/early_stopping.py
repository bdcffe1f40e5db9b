"""Early stopping on a held-out metric, and which direction counts as better for a metric."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from neurodyn._checks import check_setting

__all__ = ["EarlyStopping"]

_LOWER_IS_BETTER = ("loss", "mse", "error", "nll", "distance")


def metric_mode(name: str) -> str:
    """``"min"`` for losses and errors (names containing loss, mse, error, nll, distance), else ``"max"``."""
    return "min" if any(k in name.lower() for k in _LOWER_IS_BETTER) else "max"


def reached(value: float, threshold: float, mode: str) -> bool:
    """Whether ``value`` meets ``threshold`` in direction ``mode`` (NaN never does)."""
    if math.isnan(value):
        return False
    return value <= threshold if mode == "min" else value >= threshold


@dataclass(frozen=True)
class EarlyStopping:
    """Stop when a held-out metric has not improved for ``patience`` evaluations.

    Parameters
    ----------
    metric : str
        A key of ``task.evaluate`` (e.g. ``"accuracy"``) or ``"loss"`` (the training loss on the
        held-out batch, without regularisers).
    patience : int >= 1
        Number of consecutive evaluations (every ``eval_every`` iterations) without improvement
        after which training stops.
    mode : {"min", "max"}, optional
        Direction of improvement; inferred from the name by :func:`metric_mode` when omitted.
    min_delta : float >= 0
        Improvement smaller than this does not count.
    restore_best : bool
        Return the weights of the best evaluation rather than the last.

    Raises
    ------
    ValueError
        For a ``patience`` that is not an integer >= 1, a negative or non-finite ``min_delta`` (a
        negative one would count stagnation as improvement, so training never stopped) or an unknown
        ``mode``.

    Examples
    --------
    >>> from neurodyn.training import EarlyStopping
    >>> rule = EarlyStopping("loss", patience=3)
    >>> rule.direction, EarlyStopping("accuracy", 3).direction  # inferred from the metric's name
    ('min', 'max')
    >>> EarlyStopping.coerce(("accuracy", 5)) == EarlyStopping("accuracy", 5)
    True
    >>> EarlyStopping("loss", patience=0)
    Traceback (most recent call last):
    ...
    ValueError: early stopping patience must be an integer >= 1, got 0
    """

    metric: str
    patience: int
    mode: str | None = None
    min_delta: float = 0.0
    restore_best: bool = True

    def __post_init__(self) -> None:
        check_setting("early stopping patience", self.patience, 1, integer=True)
        check_setting("early stopping min_delta", self.min_delta, 0.0)
        object.__setattr__(self, "patience", int(self.patience))
        if self.mode not in (None, "min", "max"):
            raise ValueError(f"early stopping mode must be 'min' or 'max', got {self.mode!r}")

    @property
    def direction(self) -> str:
        return self.mode or metric_mode(self.metric)

    @classmethod
    def coerce(cls, spec: Any) -> EarlyStopping | None:
        """Accept ``None``, an :class:`EarlyStopping` or a tuple ``(metric, patience[, mode])``."""
        if spec is None or isinstance(spec, EarlyStopping):
            return spec
        if isinstance(spec, (tuple, list)) and 2 <= len(spec) <= 3:
            return cls(str(spec[0]), spec[1], *(spec[2:]))
        raise ValueError(f"early_stopping must be (metric, patience) or EarlyStopping, got {spec!r}")
