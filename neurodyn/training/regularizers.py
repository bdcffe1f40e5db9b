"""Weight and firing-rate penalties added to the training loss.

Each regulariser is a small frozen object called as ``reg(params, states) -> scalar tensor`` with
``params`` the model's effective :meth:`~neurodyn.models.RecurrentModel.params` and ``states`` the
rollout's states (trial, time, unit). Penalties are *means* over entries, as in Yang et al. 2019
(Nat Neurosci 22:297-306): ``l2_weight * sum_W mean(W**2)`` over the weight matrices and
``l2_rate * mean(r**2)`` over trials, time steps and units, so a strength does not depend on the
network size or the trial length.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import torch

__all__ = [
    "RatePenalty", "WeightPenalty", "l1_rate", "l1_weight", "l2_rate", "l2_weight", "make_regularizers",
]


@dataclass(frozen=True)
class WeightPenalty:
    """``strength * sum_W mean(|W|**p)`` over weight matrices of the effective params.

    strength : float >= 0
    p : 1 (L1, sparse weights) or 2 (L2)
    weights : names of params fields to penalise; ``None`` means every matrix (ndim >= 2), e.g.
        ``w_in``, ``w_rec`` and ``w_out`` of a leaky RNN (biases are never included by default).

    Examples
    --------
    >>> import torch
    >>> from neurodyn.models import LeakyRNN
    >>> from neurodyn.training import WeightPenalty
    >>> params = LeakyRNN(1, 4, 1, seed=0).params()
    >>> penalty = WeightPenalty(0.5, p=2, weights=("w_rec",))
    >>> value = penalty(params, torch.zeros(1, 1, 4))  # states do not enter a weight penalty
    >>> penalty.name, bool(torch.isclose(value, 0.5 * params.w_rec.pow(2).mean()))
    ('l2_weight', True)
    """

    strength: float
    p: int = 2
    weights: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.weights is not None:  # one name given as a string is one name, not its letters
            names = (self.weights,) if isinstance(self.weights, str) else tuple(self.weights)
            object.__setattr__(self, "weights", names)

    @property
    def name(self) -> str:
        return f"l{self.p}_weight"

    def __call__(self, params: Any, states: torch.Tensor) -> torch.Tensor:
        fields = params._asdict()
        names = self.weights
        if names is None:
            names = tuple(k for k, v in fields.items() if isinstance(v, torch.Tensor) and v.ndim >= 2)
        missing = [k for k in names if not isinstance(fields.get(k), torch.Tensor)]
        if missing:
            raise ValueError(f"{self.name}: params have no tensor {missing}; known: {', '.join(fields)}")
        total = states.new_zeros(())
        for k in names:
            total = total + fields[k].abs().pow(self.p).mean()
        return self.strength * total


@dataclass(frozen=True)
class RatePenalty:
    """``strength * mean(|r|**p)`` over (trial, time, unit) of the rollout states.

    For :class:`~neurodyn.models.LeakyRNN` and :class:`~neurodyn.models.LowRankRNN` the state is
    the firing rate. ``p = 1`` favours sparse activity, ``p = 2`` low-energy activity.

    Examples
    --------
    >>> import torch
    >>> from neurodyn.training import RatePenalty
    >>> states = torch.full((2, 3, 4), 0.5)  # (trial, time, unit)
    >>> RatePenalty(2.0, p=1)(None, states).item(), RatePenalty(2.0, p=2).name
    (1.0, 'l2_rate')
    """

    strength: float
    p: int = 2

    @property
    def name(self) -> str:
        return f"l{self.p}_rate"

    def __call__(self, params: Any, states: torch.Tensor) -> torch.Tensor:
        return self.strength * states.abs().pow(self.p).mean()


def l1_weight(strength: float, weights: tuple[str, ...] | None = None) -> WeightPenalty:
    """L1 penalty on weights (see :class:`WeightPenalty`).

    Examples
    --------
    >>> from neurodyn.training import WeightPenalty, l1_weight
    >>> l1_weight(1e-3) == WeightPenalty(1e-3, p=1)
    True
    """
    return WeightPenalty(strength, 1, weights)


def l2_weight(strength: float, weights: tuple[str, ...] | None = None) -> WeightPenalty:
    """L2 penalty on weights (see :class:`WeightPenalty`).

    Examples
    --------
    >>> from neurodyn.training import WeightPenalty, l2_weight
    >>> penalty = l2_weight(1e-3, weights=("w_rec",))
    >>> penalty == WeightPenalty(1e-3, p=2, weights=("w_rec",)), penalty.name
    (True, 'l2_weight')
    """
    return WeightPenalty(strength, 2, weights)


def l1_rate(strength: float) -> RatePenalty:
    """L1 penalty on firing rates (see :class:`RatePenalty`).

    Examples
    --------
    >>> import torch
    >>> from neurodyn.training import l1_rate
    >>> round(l1_rate(0.1)(None, torch.full((1, 2, 3), -2.0)).item(), 6)  # 0.1 * mean |r|
    0.2
    """
    return RatePenalty(strength, 1)


def l2_rate(strength: float) -> RatePenalty:
    """L2 penalty on firing rates (see :class:`RatePenalty`).

    Examples
    --------
    >>> import torch
    >>> from neurodyn.training import l2_rate
    >>> round(l2_rate(0.1)(None, torch.full((1, 2, 3), -2.0)).item(), 6)  # 0.1 * mean r**2
    0.4
    """
    return RatePenalty(strength, 2)


REGULARIZERS = {"l1_weight": l1_weight, "l2_weight": l2_weight, "l1_rate": l1_rate, "l2_rate": l2_rate}


def _strength(name: str, value: Any) -> float:
    """``value`` as a float; a one-line ``ValueError`` for a string, None or other non-number."""
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} strength must be finite and >= 0, got {value!r}") from None


def make_regularizers(spec: Mapping[str, float] | Iterable[Any] | None) -> tuple[Any, ...]:
    """Normalise ``regularizers=`` to a tuple of penalty objects.

    ``spec`` is ``None``, a dict of strengths keyed by ``"l1_weight"``, ``"l2_weight"``,
    ``"l1_rate"``, ``"l2_rate"``, or an iterable of penalty objects (any callable
    ``(params, states) -> scalar`` with a ``name``). Zero strengths are dropped.

    Raises
    ------
    ValueError
        For an unknown key, a negative or non-finite strength, or ``p`` other than 1 or 2.

    Examples
    --------
    >>> from neurodyn.training.regularizers import make_regularizers
    >>> [r.name for r in make_regularizers({"l2_weight": 1e-3, "l1_rate": 0.0, "l2_rate": 1e-2})]  # 0 drops
    ['l2_weight', 'l2_rate']
    >>> make_regularizers({"l3_weight": 1.0})
    Traceback (most recent call last):
    ...
    ValueError: unknown regularizer ['l3_weight']; choose from l1_weight, l2_weight, l1_rate, l2_rate
    """
    if spec is None:
        return ()
    if isinstance(spec, Mapping):
        unknown = set(spec) - set(REGULARIZERS)
        if unknown:
            raise ValueError(f"unknown regularizer {sorted(unknown)}; choose from {', '.join(REGULARIZERS)}")
        spec = [REGULARIZERS[k](_strength(k, v)) for k, v in spec.items()]
    regs = tuple(spec)
    for r in regs:
        strength = getattr(r, "strength", 0.0)
        if not (strength >= 0 and strength < float("inf")):
            raise ValueError(f"{getattr(r, 'name', r)} strength must be finite and >= 0, got {strength}")
        if getattr(r, "p", 1) not in (1, 2):
            raise ValueError(f"penalty exponent p must be 1 or 2, got {r.p}")
        if not callable(r) or not hasattr(r, "name"):
            raise ValueError(f"a regularizer must be callable with a name; got {r!r}")
    return tuple(r for r in regs if getattr(r, "strength", 1.0) != 0.0)


def describe(regs: tuple[Any, ...]) -> list[dict[str, Any]]:
    """Plain description of penalties for the training config (stored in checkpoints)."""
    out = []
    for r in regs:
        d: dict[str, Any] = {"name": r.name, "strength": float(getattr(r, "strength", float("nan")))}
        if getattr(r, "weights", None) is not None:
            d["weights"] = list(r.weights)
        out.append(d)
    return out
