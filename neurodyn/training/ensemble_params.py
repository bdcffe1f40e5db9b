"""Stacked parameters of an ensemble: raw leaves, effective params through ``vmap``, size masks."""

from __future__ import annotations

import copy

import torch

from neurodyn.kernels._workspace import empty
from neurodyn.models._base import RecurrentModel

__all__ = ["effective", "readout", "stack_raw", "unstack"]

#: raw parameters whose state columns a size mask zeroes (the outgoing weights of a unit)
MASKED = {"leaky": ("w_rec", "w_out"), "gru": ("w_hh", "w_out"), "plrnn": ("A", "W", "B"),
          "alrnn": ("A", "W", "B"), "shplrnn": ("W2", "B")}


def stack_raw(models, device):
    """Stacked raw parameters (leaves with gradients) and buffers, each ``(network, ...)``.

    Examples
    --------
    >>> from neurodyn.models import LeakyRNN
    >>> from neurodyn.training.ensemble_params import stack_raw
    >>> raw, buffers = stack_raw([LeakyRNN(1, 5, 1, seed=s) for s in range(3)], "cpu")
    >>> tuple(raw["w_rec"].shape), raw["w_rec"].requires_grad  # (network, unit, unit), a leaf to train
    ((3, 5, 5), True)
    """
    raw = {k: torch.stack([dict(m.named_parameters())[k].detach() for m in models]).to(device)
           for k, _ in models[0].named_parameters()}
    bufs = {k: torch.stack([dict(m.named_buffers())[k] for m in models]).to(device)
            for k, b in models[0].named_buffers() if b is not None}
    return {k: v.clone().requires_grad_(True) for k, v in raw.items()}, bufs


def _masked(raw, mask, family):
    """``raw`` with the size mask (network, unit) applied to the outgoing weights of each unit."""
    if mask is None:
        return raw
    return {k: (v * (mask if v.ndim == 2 else mask[:, None, :]) if k in MASKED[family.name] else v)
            for k, v in raw.items()}


class _ParamsOf(torch.nn.Module):
    """Calls ``model.params()`` as ``forward`` so ``torch.func`` can map it over networks."""

    def __init__(self, model: RecurrentModel) -> None:
        super().__init__()
        self.model = model

    def forward(self) -> tuple[torch.Tensor, ...]:
        return tuple(v for v in self.model.params() if isinstance(v, torch.Tensor))


def effective(template, raw, bufs, mask, family):
    """Ensemble params (tensor fields stacked over networks) from the stacked raw parameters.

    Examples
    --------
    >>> import torch
    >>> from neurodyn.kernels import FAMILIES
    >>> from neurodyn.models import LeakyRNN, LeakyRNNParams
    >>> from neurodyn.training.ensemble_params import effective, stack_raw
    >>> models = [LeakyRNN(1, 5, 1, dale=True, seed=s) for s in range(3)]
    >>> raw, buffers = stack_raw(models, "cpu")
    >>> params, _ = effective(models[0], raw, buffers, None, FAMILIES[LeakyRNNParams])
    >>> tuple(params.w_rec.shape), bool(torch.allclose(params.w_rec[2], models[2].params().w_rec))
    ((3, 5, 5), True)
    """
    raw = _masked(raw, mask, family)
    p0 = template.params()
    direct = _own_tensors(template, p0)
    if direct is not None:  # params() hands out the model's own tensors: the stacked ones are the params
        stacked = {**raw, **bufs}
        return type(p0)(*(stacked[direct[i]] if isinstance(v, torch.Tensor) else v
                          for i, v in enumerate(p0))), raw
    wrapper = _ParamsOf(template)
    names = {**{f"model.{k}": v for k, v in raw.items()}, **{f"model.{k}": v for k, v in bufs.items()}}
    tensors = iter(torch.func.vmap(lambda d: torch.func.functional_call(wrapper, d, ()))(names))
    return type(p0)(*(next(tensors) if isinstance(v, torch.Tensor) else v for v in p0)), raw


def _own_tensors(template, p0) -> dict[int, str] | None:
    """The name of the parameter or buffer that each tensor field of ``p0 = template.params()`` is
    (field index -> name), when every one is such a tensor itself (no constraint, mask or scale
    applied: what a plain model's ``params()`` returns); else None. Then the ensemble's params are the
    stacked raw tensors, as :func:`effective`'s ``vmap`` of ``params()`` would give them (about 3 ms of
    an ensemble step of 32 networks saved)."""
    names = {id(t): k for k, t in (*template.named_parameters(), *template.named_buffers()) if t is not None}
    fields = {i: names.get(id(v)) for i, v in enumerate(p0) if isinstance(v, torch.Tensor)}
    return None if any(name is None for name in fields.values()) else fields


def readout(p, states):
    """Linear readout of ensemble states (network, trial, time, unit); identity when there is none.

    Any two middle dims work (time-major (network, time, trial, unit) too); contiguous states are
    read without a copy.

    Examples
    --------
    >>> import torch
    >>> from neurodyn.kernels import stack_params
    >>> from neurodyn.models import LeakyRNN
    >>> from neurodyn.training.ensemble_params import readout
    >>> models = [LeakyRNN(1, 5, 2, seed=s) for s in range(3)]
    >>> gen = torch.Generator().manual_seed(0)
    >>> states = torch.randn(3, 4, 6, 5, generator=gen)  # (network, trial, time, unit)
    >>> y = readout(stack_params(models), states)
    >>> tuple(y.shape), bool(torch.allclose(y[1], models[1].readout(states[1]), atol=1e-6))
    ((3, 4, 6, 2), True)
    """
    w = getattr(p, "w_out", None) if hasattr(p, "w_out") else p.B
    if w is None:
        return states
    flat = states.reshape(states.shape[0], -1, states.shape[-1])  # one product per network
    return _StackedReadout.apply(flat, w, p.b_out).reshape(*states.shape[:-1], w.shape[-2])


class _StackedReadout(torch.autograd.Function):
    """``(states (network, row, unit), W (network, output, unit), b (network, output)) -> states Wᵀ + b``
    with a backward that writes the (network, row, unit) state gradient into a buffer the training
    engine reuses (:mod:`neurodyn.kernels._workspace`; tens of MB for an ensemble, which page-fault
    when fresh) and forms ``W``'s gradient as ``gᵀ states``, the faster of the two GEMM orders here."""

    @staticmethod
    def forward(ctx, flat, w, b):  # type: ignore[override]
        ctx.save_for_backward(flat, w)
        return torch.baddbmm(b[:, None, :], flat, w.mT)

    @staticmethod
    def backward(ctx, grad):  # type: ignore[override]
        flat, w = ctx.saved_tensors
        grad_flat = grad_w = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_flat = (torch.bmm(grad, w, out=empty("readout.grad_states", tuple(flat.shape), flat.dtype))
                         if flat.device.type == "cpu" and not torch.is_grad_enabled() else grad @ w)
        if ctx.needs_input_grad[1]:
            grad_w = grad.mT @ flat
        if ctx.needs_input_grad[2]:
            grad_b = grad.sum(1)
        return grad_flat, grad_w, grad_b


def unstack(template, raw, bufs, mask, family) -> list[RecurrentModel]:
    """One model per network, the size mask baked into its raw weights.

    Examples
    --------
    >>> import torch
    >>> from neurodyn.kernels import FAMILIES
    >>> from neurodyn.models import LeakyRNN, LeakyRNNParams
    >>> from neurodyn.training.ensemble_params import stack_raw, unstack
    >>> models = [LeakyRNN(1, 4, 1, seed=s) for s in range(2)]
    >>> raw, buffers = stack_raw(models, "cpu")
    >>> mask = torch.tensor([[1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0]])  # network 0 acts as 2 units
    >>> back = unstack(models[0], raw, buffers, mask, FAMILIES[LeakyRNNParams])
    >>> float(back[0].w_rec.detach()[:, 2:].abs().sum()), bool(torch.equal(back[1].w_rec, models[1].w_rec))
    (0.0, True)
    """
    with torch.no_grad():
        raw = _masked(raw, mask, family)
        out = []
        for e in range(next(iter(raw.values())).shape[0]):
            m = copy.deepcopy(template)
            m.load_state_dict({**{k: v[e] for k, v in raw.items()}, **{k: v[e] for k, v in bufs.items()}},
                              strict=False)
            out.append(m.eval())
        return out
