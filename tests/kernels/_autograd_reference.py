"""The reference the fused kernels are checked against: autograd through a model's own step."""

from __future__ import annotations

import torch

from neurodyn.kernels import fused_states


def reference_states(model, h0: torch.Tensor, x: torch.Tensor, noise: torch.Tensor | None) -> torch.Tensor:
    """States ``(batch, time, state)`` from ``model.step`` one step at a time, plus ``noise``."""
    h, states = h0, []
    for t in range(x.shape[1]):
        h = model.step(h, x[:, t])
        if noise is not None:
            h = h + noise[:, t]
        states.append(h)
    return torch.stack(states, dim=1)


def gradients(model, h0, x, noise, weights, fused: bool):
    """``(states, {parameter name or "h0": gradient})`` of ``sum(states * weights)``, fused or not."""
    model.zero_grad()
    h0 = h0.clone().requires_grad_(True)
    states = (fused_states(model.params(), h0, x, noise=noise) if fused
              else reference_states(model, h0, x, noise))
    (states * weights).sum().backward()
    named = {k: p.grad.clone() for k, p in model.named_parameters() if p.grad is not None}
    return states.detach(), {**named, "h0": h0.grad}
