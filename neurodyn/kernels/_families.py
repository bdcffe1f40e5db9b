"""Model families the kernels understand: one-step maps, input drives and ensemble stacking.

A *family* is identified by the type of a model's :meth:`~neurodyn.models.RecurrentModel.params`
NamedTuple. Its tensors hold one network, or an ensemble when every tensor field carries a leading
``network`` dimension (built by :func:`stack_params`). Non-tensor fields (``alpha``,
``activation``, ``noise_std``, ...) are shared by all networks of an ensemble.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import torch

from neurodyn.models import ALRNNParams, GRUParams, LeakyRNNParams, PLRNNParams, ShallowPLRNNParams
from neurodyn.models._base import activation_fn


class Family(NamedTuple):
    """How the kernels treat one params type.

    name : short family name (``"leaky"``, ``"gru"``, ...)
    recurrent : field holding the recurrent weight whose last dim is the state size
    vectors : fields that are per-unit vectors (unsqueezed to ``(network, 1, n)`` in ensembles)
    step : ``(params, h, u) -> h`` op for op equal to the model's own step (batched matmuls)
    drive : ``(params, u) -> d`` the state-independent part of the pre-activation, ``u`` None or
        ``(..., input)`` giving ``(..., n_drive)``
    noise_scale : ``params -> float``, the per-step state-noise std the model itself uses
    n_inputs : ``params -> int``, the number of external inputs
    """

    name: str
    recurrent: str
    vectors: tuple[str, ...]
    step: Callable[..., torch.Tensor]
    drive: Callable[..., torch.Tensor]
    noise_scale: Callable[[Any], float]
    n_inputs: Callable[[Any], int]


def _mm(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return x @ w.mT


def _leaky_step(p: LeakyRNNParams, h: torch.Tensor, u: torch.Tensor | None) -> torch.Tensor:
    pre = _mm(h, p.w_rec) + p.b
    if u is not None and p.w_in.shape[-1] > 0:
        pre = pre + _mm(u, p.w_in)
    return (1.0 - p.alpha) * h + p.alpha * activation_fn(p.activation)(pre)


def _leaky_drive(p: LeakyRNNParams, u: torch.Tensor | None) -> torch.Tensor:
    if u is None or p.w_in.shape[-1] == 0:
        return p.b
    return _mm(u, p.w_in) + p.b


def _gru_step(p: GRUParams, h: torch.Tensor, u: torch.Tensor | None) -> torch.Tensor:
    gi = p.b_ih if u is None or p.w_ih.shape[-1] == 0 else _mm(u, p.w_ih) + p.b_ih
    gh = _mm(h, p.w_hh) + p.b_hh
    gi = gi.expand_as(gh) if gi.shape != gh.shape else gi
    i_r, i_z, i_n = gi.chunk(3, dim=-1)
    h_r, h_z, h_n = gh.chunk(3, dim=-1)
    r = torch.sigmoid(i_r + h_r)
    z = torch.sigmoid(i_z + h_z)
    n = torch.tanh(i_n + r * h_n)
    return (1.0 - z) * n + z * h


def _gru_drive(p: GRUParams, u: torch.Tensor | None) -> torch.Tensor:
    if u is None or p.w_ih.shape[-1] == 0:
        return p.b_ih
    return _mm(u, p.w_ih) + p.b_ih


def _pl_input(z_next: torch.Tensor, C: torch.Tensor, u: torch.Tensor | None) -> torch.Tensor:
    if u is None or C.shape[-1] == 0:
        return z_next
    return z_next + _mm(u, C)


def _plrnn_step(p: PLRNNParams, z: torch.Tensor, u: torch.Tensor | None) -> torch.Tensor:
    return _pl_input(_mm(z, p.A) + _mm(torch.relu(z), p.W) + p.h, p.C, u)


def _alrnn_phi(z: torch.Tensor, n_relu: int) -> torch.Tensor:
    if n_relu == 0:
        return z
    n_lin = z.shape[-1] - n_relu
    return torch.cat([z[..., :n_lin], torch.relu(z[..., n_lin:])], dim=-1)


def _alrnn_step(p: ALRNNParams, z: torch.Tensor, u: torch.Tensor | None) -> torch.Tensor:
    return _pl_input(_mm(z, p.A) + _mm(_alrnn_phi(z, p.n_relu), p.W) + p.h, p.C, u)


def _shplrnn_step(p: ShallowPLRNNParams, z: torch.Tensor, u: torch.Tensor | None) -> torch.Tensor:
    pre = _mm(z, p.W2)
    act = torch.relu(pre + p.h2)
    if p.clipped:
        act = act - torch.relu(pre)
    return _pl_input(p.a * z + _mm(act, p.W1) + p.h1, p.C, u)


def _pl_drive(bias: str):
    def drive(p: Any, u: torch.Tensor | None) -> torch.Tensor:
        b = getattr(p, bias)
        return b if u is None or p.C.shape[-1] == 0 else _mm(u, p.C) + b

    return drive


def _zero(p: Any) -> float:
    return 0.0


def _c_inputs(p: Any) -> int:
    return p.C.shape[-1]


FAMILIES: dict[type, Family] = {
    LeakyRNNParams: Family(
        "leaky", "w_rec", ("b", "b_out"), _leaky_step, _leaky_drive,
        lambda p: math.sqrt(2.0 * p.alpha) * p.noise_std, lambda p: p.w_in.shape[-1],
    ),
    GRUParams: Family(
        "gru", "w_hh", ("b_ih", "b_hh", "b_out"), _gru_step, _gru_drive, lambda p: 0.0,
        lambda p: p.w_ih.shape[-1],
    ),
    PLRNNParams: Family("plrnn", "A", ("h", "b_out"), _plrnn_step, _pl_drive("h"), _zero, _c_inputs),
    ALRNNParams: Family("alrnn", "A", ("h", "b_out"), _alrnn_step, _pl_drive("h"), _zero, _c_inputs),
    ShallowPLRNNParams: Family(
        "shplrnn", "W2", ("a", "h1", "h2", "b_out"), _shplrnn_step, _pl_drive("h1"), _zero, _c_inputs,
    ),
}


def register_family(params_type: type, family: Family) -> None:
    """Make the kernels accept ``params_type`` (used for model families added later)."""
    FAMILIES[params_type] = family


def family_of(params: Any) -> Family | None:
    """The :class:`Family` of a params NamedTuple, or None when the kernels do not know it."""
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


def cast(params: Any, *, dtype: torch.dtype, device: Any) -> Any:
    """Detached copy of every tensor field in ``dtype`` on ``device``."""
    return type(params)(*(
        v.detach().to(device=device, dtype=dtype) if isinstance(v, torch.Tensor) else v
        for v in params
    ))


def stack_params(params: Sequence[Any]) -> Any:
    """Stack the params of several networks of one family into ensemble params.

    Parameters
    ----------
    params : sequence of params NamedTuples (or ``RecurrentModel`` objects), all the same type and
        sizes, with equal non-tensor fields (activation, alpha, noise_std).

    Returns
    -------
    NamedTuple of the same type whose tensor fields have shape ``(network, *shape)``.

    Raises
    ------
    ValueError
        If ``params`` is empty, mixes types or sizes, or the non-tensor fields differ.
    """
    items = [p.params() if hasattr(p, "params") and callable(p.params) else p for p in params]
    if not items:
        raise ValueError("stack_params needs at least one network")
    kind = type(items[0])
    if any(type(p) is not kind for p in items):
        raise ValueError("stack_params: all networks must be of the same model family")
    fields = []
    for name, first in zip(kind._fields, items[0]):
        values = [getattr(p, name) for p in items]
        if isinstance(first, torch.Tensor):
            shapes = {tuple(v.shape) for v in values}
            if len(shapes) > 1:
                raise ValueError(f"stack_params: field {name!r} has different shapes {sorted(shapes)}")
            fields.append(torch.stack([v.detach() for v in values]))
        else:
            if any(v != first for v in values):
                raise ValueError(
                    f"stack_params: field {name!r} differs between networks ({values[:4]}...); "
                    "ensembles share it; roll such networks out separately"
                )
            fields.append(first)
    return kind(*fields)
