"""Stacked parameters of an ensemble: raw leaves, effective params through ``vmap``, size masks."""

from __future__ import annotations

import copy

import torch

from neurodyn.models._base import RecurrentModel

__all__ = ["effective", "readout", "stack_raw", "unstack"]

#: raw parameters whose state columns a size mask zeroes (the outgoing weights of a unit)
MASKED = {"leaky": ("w_rec", "w_out"), "gru": ("w_hh", "w_out"), "plrnn": ("A", "W", "B"),
          "alrnn": ("A", "W", "B"), "shplrnn": ("W2", "B")}


def stack_raw(models, device):
    """Stacked raw parameters (leaves with gradients) and buffers, each ``(network, ...)``."""
    raw = {k: torch.stack([dict(m.named_parameters())[k].detach() for m in models]).to(device)
           for k, _ in models[0].named_parameters()}
    bufs = {k: torch.stack([dict(m.named_buffers())[k] for m in models]).to(device)
            for k, b in models[0].named_buffers() if b is not None}
    return {k: v.clone().requires_grad_(True) for k, v in raw.items()}, bufs


class _ParamsOf(torch.nn.Module):
    """Calls ``model.params()`` as ``forward`` so ``torch.func`` can map it over networks."""

    def __init__(self, model: RecurrentModel) -> None:
        super().__init__()
        self.model = model

    def forward(self) -> tuple[torch.Tensor, ...]:
        return tuple(v for v in self.model.params() if isinstance(v, torch.Tensor))


def effective(template, raw, bufs, mask, family):
    """Ensemble params (tensor fields stacked over networks) from the stacked raw parameters."""
    if mask is not None:
        raw = {k: (v * (mask if v.ndim == 2 else mask[:, None, :]) if k in MASKED[family.name] else v)
               for k, v in raw.items()}
    wrapper = _ParamsOf(template)
    names = {**{f"model.{k}": v for k, v in raw.items()}, **{f"model.{k}": v for k, v in bufs.items()}}
    tensors = iter(torch.func.vmap(lambda d: torch.func.functional_call(wrapper, d, ()))(names))
    p0 = template.params()
    return type(p0)(*(next(tensors) if isinstance(v, torch.Tensor) else v for v in p0)), raw


def readout(p, states):
    """Linear readout of ensemble states (network, trial, time, unit); identity when there is none."""
    w = getattr(p, "w_out", None) if hasattr(p, "w_out") else p.B
    if w is None:
        return states
    return states @ w.unsqueeze(1).mT + p.b_out[:, None, None, :]


def unstack(template, raw, bufs, mask, family) -> list[RecurrentModel]:
    """One model per network, the size mask baked into its raw weights."""
    with torch.no_grad():
        if mask is not None:
            raw = {k: (v * (mask if v.ndim == 2 else mask[:, None, :]) if k in MASKED[family.name] else v)
                   for k, v in raw.items()}
        out = []
        for e in range(next(iter(raw.values())).shape[0]):
            m = copy.deepcopy(template)
            m.load_state_dict({**{k: v[e] for k, v in raw.items()}, **{k: v[e] for k, v in bufs.items()}},
                              strict=False)
            out.append(m.eval())
        return out
