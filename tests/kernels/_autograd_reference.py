"""The reference the fused kernels are checked against: autograd through a model's own step."""

from __future__ import annotations

import torch

from neurodyn.kernels import fused_states
from neurodyn.kernels.fused import ReadoutForcing


def reference_states(model, h0: torch.Tensor, x: torch.Tensor, noise: torch.Tensor | None,
                     forcing: ReadoutForcing | None = None) -> torch.Tensor:
    """States ``(batch, time, state)`` from ``model.step`` one step at a time, plus ``noise``; with
    ``forcing``, each state is recorded and then forced by the training layer's ``forcing_step``."""
    from neurodyn.training.forcing import forcing_step

    h, states = h0, []
    for t in range(x.shape[1]):
        h = model.step(h, x[:, t])
        if noise is not None:
            h = h + noise[:, t]
        states.append(h)
        if forcing is not None:
            f = forcing
            h = forcing_step(h, h.detach() @ f.w_out.mT + f.b_out, f.targets[:, t], f.mask[:, t],
                             method=f.method, strength=f.strength, pinv=f.pinv, bias=f.b_out)
    return torch.stack(states, dim=1)


def gradients(model, h0, x, noise, weights, fused: bool, forcing: ReadoutForcing | None = None):
    """``(states, {parameter name or "h0": gradient})`` of ``sum(states * weights)``, fused or not,
    forced through the readout with ``forcing`` (then the states are those before forcing)."""
    model.zero_grad()
    h0 = h0.clone().requires_grad_(True)
    states = (fused_states(model.params(), h0, x, noise=noise, forcing=forcing) if fused
              else reference_states(model, h0, x, noise, forcing))
    (states * weights).sum().backward()
    named = {k: p.grad.clone() for k, p in model.named_parameters() if p.grad is not None}
    return states.detach(), {**named, "h0": h0.grad}


def assert_stack_matches(models, states, h0, x, noise, weights, dtype, names=None, forcings=None) -> None:
    """Each network ``e`` of a fused ensemble call (``states`` with the gradients of
    ``(states * weights).sum()`` already in its models and in ``h0``) against autograd through
    ``models[e]`` alone, forced by ``forcings[e]`` when given: states and every gradient
    (``names``: the expected set, when given)."""
    rtol = 1e-5 if dtype == torch.float32 else 1e-10
    for e, model in enumerate(models):
        got = {k: p.grad.clone() for k, p in model.named_parameters() if p.grad is not None}
        ref_states, ref = gradients(model, h0[e].detach(), x[e], noise[e], weights[e], fused=False,
                                    forcing=None if forcings is None else forcings[e])
        torch.testing.assert_close(states[e].detach(), ref_states, rtol=rtol,
                                   atol=rtol * ref_states.abs().max())
        got["h0"] = h0.grad[e]
        assert set(got) == set(ref) and len(got) > 1
        assert names is None or set(got) == set(names)
        for name in got:
            torch.testing.assert_close(got[name], ref[name], rtol=rtol, atol=rtol * ref[name].abs().max(),
                                       msg=lambda m, name=name, e=e: f"network {e} {name}: {m}")


def assert_forced_like_torch(model, h0, x, noise, weights, forcing, names):
    """The fused forced rollout's states and the gradients ``names`` equal those of the torch forced
    rollout (rtol 1e-5 in float32, 1e-10 in float64, relative to each one's scale), and the forcing
    changes the states."""
    got_states, got = gradients(model, h0, x, noise, weights, fused=True, forcing=forcing)
    ref_states, ref = gradients(model, h0, x, noise, weights, fused=False, forcing=forcing)
    free_states, _ = gradients(model, h0, x, noise, weights, fused=False)
    assert not torch.allclose(ref_states, free_states)  # the forcing acts
    rtol = 1e-5 if h0.dtype == torch.float32 else 1e-10
    torch.testing.assert_close(got_states, ref_states, rtol=rtol, atol=rtol * ref_states.abs().max())
    assert set(got) == set(ref) == names
    for name in got:  # relative to each gradient's scale (float32 sums in another order)
        torch.testing.assert_close(got[name], ref[name], rtol=rtol, atol=rtol * ref[name].abs().max(),
                                   msg=lambda m, name=name: f"{name}: {m}")
