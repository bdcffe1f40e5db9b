"""Jacobians of a model's one-step map at many states: closed forms per family, autodiff otherwise."""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from typing import Any

import torch

from neurodyn._budget import check_memory
from neurodyn._checks import check_finite
from neurodyn.models._family import Family, family_of, is_ensemble, lift

__all__ = ["jacobians"]

_WRT = ("state", "input")


def _as_states(states: Any) -> torch.Tensor:
    x = torch.as_tensor(states.detach() if isinstance(states, torch.Tensor) else states)
    if x.dtype not in (torch.float32, torch.float64):
        raise ValueError(f"states must be float32 or float64, got {x.dtype}; convert them with .double()")
    if x.ndim < 1:
        raise ValueError("states must have shape (..., state), got a scalar")
    return x


def _check_size(h: torch.Tensor, inputs: Any, wrt: str) -> None:
    """Refuse (one line, before allocating) Jacobians that do not fit in the memory available."""
    n_state = h.shape[-1]
    n_cols = n_state if wrt == "state" or inputs is None else int(getattr(inputs, "shape", (1,))[-1] or 1)
    n_rows = h.numel() // max(1, n_state)
    check_memory("jacobians", float(n_rows) * n_state * n_cols * h.element_size(),
                 f"{n_rows} Jacobians of {n_state} x {n_cols} in {str(h.dtype).replace('torch.', '')}",
                 "pass fewer states or call it in chunks", device=h.device)


def _as_inputs(inputs: Any, h: torch.Tensor, n_inputs: int | None) -> torch.Tensor | None:
    """``inputs`` in the dtype and device of ``h``, one vector ``(input,)`` expanded to
    ``(*h.shape[:-1], input)``; any other shape (a last dim of the wrong width included) is refused."""
    if inputs is None:
        return None
    u = torch.as_tensor(inputs.detach() if isinstance(inputs, torch.Tensor) else inputs)
    if n_inputs == 0 and u.numel() > 0:
        raise ValueError(f"the model takes no inputs but inputs of shape {tuple(u.shape)} were given; "
                         "drop inputs=")
    n_in = (u.shape[-1] if u.ndim else 1) if n_inputs is None else n_inputs
    want = (*h.shape[:-1], n_in)
    if u.ndim == 0 or (u.shape[-1] != n_in) or (u.ndim > 1 and tuple(u.shape) != want):
        raise ValueError(f"inputs must have shape (input,) or (..., input) = {want} with input = {n_in}, "
                         f"got {tuple(u.shape)}")
    u = u.to(dtype=h.dtype, device=h.device)
    check_finite(u, "inputs", "pass finite inputs")
    return u.expand(want)


def probe_map(step: Callable, n_state: int, u: torch.Tensor | None, dtype: torch.dtype, device,
              fix: str = "check F or state_size") -> None:
    """One-line ``ValueError`` unless a plain callable maps a probe batch of two states to a tensor
    (2, n_state), checked before any work (``u``: one input row (1, input) or None)."""
    h = torch.zeros((2, n_state), dtype=dtype, device=device)
    with torch.no_grad():
        out = step(h, None if u is None else u.expand(2, -1))
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != (2, n_state):
        got = f"shape {tuple(out.shape)}" if isinstance(out, torch.Tensor) else type(out).__name__
        raise ValueError(f"F must return a tensor of shape (batch, state_size) = (2, {n_state}) for states "
                         f"(2, {n_state}), got {got}; {fix}")


def _check_result(jac: torch.Tensor, is_callable: bool) -> torch.Tensor:
    """``jac`` unless some entry is NaN or Inf (at states already checked finite): then a one-line
    ``ValueError`` blaming the map, whose parameters most likely diverged in training."""
    if not bool(torch.isfinite(jac).all()):
        where = ("F returns NaN or Inf derivatives there; check F (NaN or Inf in what it computes with, e.g. "
                 "weights from a diverged training run)") if is_callable else (
                 "the model parameters contain NaN or Inf (training likely diverged; load an earlier "
                 "checkpoint or retrain with a lower learning rate or gradient clipping)")
        raise ValueError(f"the Jacobians contain NaN or Inf at finite states: {where}")
    return jac


def _autodiff(step: Callable, h: torch.Tensor, u: torch.Tensor | None, wrt: str) -> torch.Tensor:
    """Forward-mode Jacobians of ``step`` (batch in, batch out), one state at a time under vmap."""
    lead, hf = h.shape[:-1], h.reshape(-1, h.shape[-1])

    def one(hi, ui):
        return step(hi[None], None if ui is None else ui[None])[0]

    with warnings.catch_warnings():
        # torch's forward-mode AD loads its decompositions with torch.jit.script on first use
        warnings.filterwarnings("ignore", "`torch.jit.script` is deprecated", DeprecationWarning)
        if u is None:
            jac = torch.func.vmap(torch.func.jacfwd(lambda hi: one(hi, None)))(hf)
        else:
            argnums = 0 if wrt == "state" else 1
            jac = torch.func.vmap(torch.func.jacfwd(one, argnums=argnums))(hf, u.reshape(-1, u.shape[-1]))
    return jac.detach().reshape(*lead, *jac.shape[-2:])


def _family_jacobians(family: Family, params: Any, h: torch.Tensor, inputs: Any, wrt: str) -> torch.Tensor:
    params = type(params)(*(
        v.detach().to(device=h.device, dtype=h.dtype) if isinstance(v, torch.Tensor) else v for v in params
    ))
    n_state = family.n_state(params)
    if h.shape[-1] != n_state:
        raise ValueError(f"states must have shape (..., {n_state}), got {tuple(h.shape)}")
    if is_ensemble(params, family):
        n_net = getattr(params, family.recurrent).shape[0]
        if h.ndim != 3 or h.shape[0] != n_net:
            raise ValueError(f"ensemble params ({n_net} networks) need states of shape (network, batch, "
                             f"{n_state}), got {tuple(h.shape)}")
    n_in = family.n_inputs(params)
    u = _as_inputs(inputs, h, n_in)
    if wrt == "input" and u is None:
        u = h.new_zeros((*h.shape[:-1], n_in))
    closed = family.jacobian if wrt == "state" else family.input_jacobian
    if closed is not None:
        return closed(lift(params, family), h, u)
    if not is_ensemble(params, family):
        return _autodiff(lambda x, v: family.step(params, x, v), h, u, wrt)
    out = []
    for e in range(len(h)):  # a family without closed forms: one network at a time
        p = type(params)(*(v[e] if isinstance(v, torch.Tensor) else v for v in params))
        out.append(_autodiff(lambda x, v, p=p: family.step(p, x, v), h[e], None if u is None else u[e], wrt))
    return torch.stack(out)


def jacobians(model: Any, states: Any, inputs: Any = None, *, wrt: str = "state") -> torch.Tensor:
    """Jacobians of the one-step map ``F(h, u)`` at many states, ``dF/dh`` or ``dF/du``.

    Every built-in model family has exact closed forms (registered as ``Family.jacobian`` and
    ``Family.input_jacobian`` next to its step in :mod:`neurodyn.models`): the leaky RNN with
    any activation, leak and constraints (Dale's law, masks and low rank act in ``params()``),
    GRU, LSTM (on the joined state ``[h, c]``), PLRNN, ALRNN and the (clipped) shallow PLRNN,
    whose piecewise-linear units take ``relu'(0) = 0`` as autograd does. Anything else falls
    back to forward-mode autodiff (``torch.func.jacfwd`` under ``torch.func.vmap``).

    Parameters
    ----------
    model : RecurrentModel, params NamedTuple or callable
        A model, its ``params()`` (one network, or an ensemble from
        :func:`neurodyn.kernels.stack_params`), or a callable ``F(h, u)`` that maps states
        (batch, state) and inputs (batch, input) or None to next states (batch, state).
    states : Tensor or array, shape (..., state)
        States at which to differentiate, e.g. (batch, state); ensemble params take
        (network, batch, state).
    inputs : Tensor or array, shape (input,) or (..., input), optional
        External input: one vector for all states or one per state. None means no input
        (``u = 0``); ``wrt="input"`` then differentiates at ``u = 0`` (a callable needs inputs).
    wrt : {"state", "input"}
        Differentiate with respect to the state or the input.

    Returns
    -------
    Tensor, shape (..., state, state) or (..., state, input)
        ``J[..., i, j] = dF_i / dh_j`` (or ``dF_i / du_j``), in the dtype and on the device of
        ``states``: float32 states give float32 Jacobians, float64 states float64 ones. The
        parameters are cast to that dtype (float32 weights are widened exactly); no gradient
        flows back to them or to the states.

    Raises
    ------
    ValueError
        On an unknown ``wrt``, states that are not float32/float64 or of the wrong length, NaN or
        Inf in the states or inputs, inputs of the wrong shape (neither one vector of the model's
        input width nor one such vector per state; a last dim of 1 is not stretched) or given to a
        model without inputs, ensemble params with states not shaped (network, batch, state),
        Jacobians estimated at more than the memory available (the message gives the estimate), a
        callable ``F`` that does not return a tensor (batch, state) for a probe batch of two states,
        or Jacobians that contain NaN or Inf at the finite states (NaN/Inf model parameters, as after
        a diverged training run, or a callable that returns them).
    TypeError
        For params of a type no family is registered for (register it with
        :func:`neurodyn.kernels.register_family`, or pass a callable ``F(h, u)``).

    Examples
    --------
    >>> import torch
    >>> from neurodyn.analysis import jacobians
    >>> from neurodyn.models import LeakyRNN
    >>> model = LeakyRNN(2, 4, 1, alpha=0.5, seed=0)
    >>> h = torch.zeros(3, 4, dtype=torch.float64)
    >>> J = jacobians(model, h)                  # (batch, state, state), float64 like h
    >>> J.shape, J.dtype
    (torch.Size([3, 4, 4]), torch.float64)
    >>> w = model.params().w_rec.double()        # at h = 0, tanh'(0) = 1: J = (1 - a) I + a W
    >>> torch.allclose(J[0], 0.5 * torch.eye(4, dtype=torch.float64) + 0.5 * w)
    True
    >>> jacobians(model, h, torch.ones(2), wrt="input").shape
    torch.Size([3, 4, 2])
    >>> jacobians(lambda h, u: 0.5 * h ** 2, torch.ones(5, 3))[0].diagonal()
    tensor([1., 1., 1.])
    """
    return _jacobians(model, states, inputs, wrt, checked=True)


def jacobians_unchecked(model: Any, states: Any, inputs: Any = None, *, wrt: str = "state") -> torch.Tensor:
    """:func:`jacobians` without probing a callable or checking that the Jacobians are finite: for
    searches that probe the map once up front and drop the candidates where they are not (see
    :mod:`neurodyn.analysis.fixed_points`)."""
    return _jacobians(model, states, inputs, wrt, checked=False)


def _jacobians(model: Any, states: Any, inputs: Any, wrt: str, *, checked: bool) -> torch.Tensor:
    """:func:`jacobians`; ``checked``: probe a callable first and refuse non-finite Jacobians."""
    if wrt not in _WRT:
        raise ValueError(f"wrt must be 'state' or 'input', got {wrt!r}")
    h = _as_states(states)
    _check_size(h, inputs, wrt)
    check_finite(h, "states", "drop those rows before computing Jacobians")
    is_model = isinstance(model, torch.nn.Module) and hasattr(model, "params")
    params = model.params() if is_model else model
    family = family_of(params)
    if family is not None:
        jac = _family_jacobians(family, params, h, inputs, wrt)
        return _check_result(jac, is_callable=False) if checked else jac
    if is_model:
        ref = next(model.parameters(), None)
        if ref is not None and ref.dtype != h.dtype:
            model = copy.deepcopy(model).to(h.dtype)
        step = model.step
    elif callable(model) and not isinstance(model, tuple):
        step = model
    else:
        raise TypeError(f"jacobians does not know params of type {type(model).__name__}; register its family "
                        "with neurodyn.kernels.register_family or pass a callable F(h, u)")
    u = _as_inputs(inputs, h, getattr(model, "n_inputs", None) if is_model else None)
    if wrt == "input" and u is None and is_model:
        u = h.new_zeros((*h.shape[:-1], model.n_inputs))
    if wrt == "input" and u is None:
        raise ValueError("wrt='input' with a callable model needs inputs (one vector or one per state)")
    if checked and not is_model:
        probe_map(step, h.shape[-1], None if u is None else u.reshape(-1, u.shape[-1])[:1], h.dtype, h.device,
                  "check F or the length of the states")
    jac = _autodiff(step, h, u, wrt)
    return _check_result(jac, is_callable=not is_model) if checked else jac
