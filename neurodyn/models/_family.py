"""Model families: one step map, its input drive and its closed-form Jacobians per params type.

A *family* is identified by the type of a model's :meth:`~neurodyn.models.RecurrentModel.params`
NamedTuple. Its tensors hold one network, or an ensemble when every tensor field carries a leading
``network`` dimension (see :func:`neurodyn.kernels.stack_params`). Non-tensor fields (``alpha``,
``activation``, ``n_relu``, ``clipped``, ...) are shared by all networks of an ensemble.

Every map of a family broadcasts over leading dims: ``h`` (..., state) with weights (rows, cols)
for one network, or ``h`` (network, batch, state) with *lifted* ensemble params (:func:`lift`:
weights (network, rows, cols), per-unit vectors (network, 1, n)). Products are written
``x @ w.mT`` so both cases run the same code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import torch


class Family(NamedTuple):
    """How models, kernels and analyses treat one params type.

    name : short family name (``"leaky"``, ``"gru"``, ...), the key of the kernel tables
    recurrent : field holding the recurrent weight (its ``ndim`` tells one network from an ensemble)
    vectors : per-unit vector fields (unsqueezed to ``(network, 1, n)`` by :func:`lift`)
    step : ``(params, h, u) -> h'``, the one-step map ``F(h, u)``; ``u`` is None or (..., input)
    drive : ``(params, u) -> d``, the state-independent part of the pre-activation, (..., n_drive)
    noise_scale : ``params -> float``, the per-step state-noise std the model itself uses
    n_inputs : ``params -> int``, the number of external inputs
    jacobian : ``(params, h, u) -> dF/dh`` of shape (..., state, state), or None (autodiff then)
    input_jacobian : ``(params, h, u) -> dF/du`` of shape (..., state, input), or None
    state_size : ``params -> int``; None means the last dim of the ``recurrent`` weight
    step_vjp : ``(params, h, u) -> (F(h, u), pull)`` with ``pull(v) = vᵀ ∂F/∂h`` (..., state) in
        closed form, or None (autodiff then); what gradient descent on a fixed-point speed uses

    Examples
    --------
    >>> import torch
    >>> from neurodyn.kernels import FAMILIES
    >>> from neurodyn.models import LSTM
    >>> params = LSTM(2, 5, 1, seed=0).params()
    >>> family = FAMILIES[type(params)]  # a family is looked up by its params type
    >>> family.name, family.n_state(params), family.n_inputs(params)  # an LSTM's state is [h, c]
    ('lstm', 10, 2)
    >>> s = torch.zeros(3, 10)
    >>> tuple(family.step(params, s, None).shape), tuple(family.jacobian(params, s, None).shape)
    ((3, 10), (3, 10, 10))
    """

    name: str
    recurrent: str
    vectors: tuple[str, ...]
    step: Callable[..., torch.Tensor]
    drive: Callable[..., torch.Tensor]
    noise_scale: Callable[[Any], float]
    n_inputs: Callable[[Any], int]
    jacobian: Callable[..., torch.Tensor] | None = None
    input_jacobian: Callable[..., torch.Tensor] | None = None
    state_size: Callable[[Any], int] | None = None
    step_vjp: Callable[..., tuple[torch.Tensor, Callable[[torch.Tensor], torch.Tensor]]] | None = None

    def n_state(self, params: Any) -> int:
        """Length of the state vector of ``params``."""
        if self.state_size is not None:
            return int(self.state_size(params))
        return int(getattr(params, self.recurrent).shape[-1])


#: params type -> Family; the model modules add theirs when they are imported
FAMILIES: dict[type, Family] = {}


def family_of(params: Any) -> Family | None:
    """The :class:`Family` of a params NamedTuple, or None when no family is registered for it."""
    return FAMILIES.get(type(params))


def is_ensemble(params: Any, family: Family) -> bool:
    """True when the params carry a leading ``network`` dimension."""
    return getattr(params, family.recurrent).ndim == 3


def lift(params: Any, family: Family) -> Any:
    """Ensemble params with per-unit vectors shaped ``(network, 1, n)`` so they broadcast."""
    if not is_ensemble(params, family):
        return params
    return params._replace(**{
        f: getattr(params, f).unsqueeze(-2) for f in family.vectors if getattr(params, f) is not None
    })


def mm(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """``x @ w.mT``: (..., cols) times (rows, cols) or (network, rows, cols) → (..., rows)."""
    return x @ w.mT


def affine(w: torch.Tensor, x: torch.Tensor | None, b: torch.Tensor) -> torch.Tensor:
    """``x @ w.mT + b``, or ``b`` alone when there is no input (``x`` None or ``w`` with 0 columns)."""
    if x is None or w.shape[-1] == 0:
        return b
    return mm(x, w) + b


def per_state(w: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    """A matrix (..., rows, cols) viewed so that it broadcasts against per-state Jacobians.

    ``h`` (..., state) with one network's ``w`` (rows, cols) needs nothing; an ensemble's ``w``
    (network, rows, cols) against ``h`` (network, batch, state) becomes (network, 1, rows, cols).
    """
    extra = (h.ndim - 1) - (w.ndim - 2)
    if w.ndim == 2 or extra <= 0:
        return w
    return w.reshape(*w.shape[:-2], *([1] * extra), *w.shape[-2:])


def scale_rows(d: torch.Tensor, w: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    """``diag(d) @ w`` per state: ``d`` (..., rows), ``w`` (rows, cols) → (..., rows, cols)."""
    return d.unsqueeze(-1) * per_state(w, h)


def scale_cols(w: torch.Tensor, d: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    """``w @ diag(d)`` per state: ``w`` (rows, cols), ``d`` (..., cols) → (..., rows, cols)."""
    return per_state(w, h) * d.unsqueeze(-2)


def broadcast_to_states(j: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    """A state-independent Jacobian (..., rows, cols) expanded to the leading dims of ``h``."""
    return per_state(j, h).expand(*h.shape[:-1], *j.shape[-2:])
