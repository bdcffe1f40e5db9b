"""Fused GRU forward + BPTT forced through the readout (error and teacher forcing; one network and a
stacked ensemble) against autograd through the model's own step and the training layer's forcing step."""

from __future__ import annotations

import pytest
import torch
from _autograd_reference import reference_states

from neurodyn.kernels import fused_backend, fused_states, stack_params
from neurodyn.kernels.fused import ReadoutForcing
from neurodyn.models import GRU

pytest.importorskip("numba", reason="the fused kernels need numba (a core dependency)")

N_BATCH, N_STEPS, N_UNIT = 6, 20, 7  # batch 6: not a multiple of the kernels' 4-row blocks


def _gru(seed, dtype):
    """A GRU with 3 outputs and non-zero biases."""
    model = GRU(2, N_UNIT, 3, seed=seed).to(dtype)
    gen = torch.Generator().manual_seed(10 + seed)
    with torch.no_grad():
        for name in ("b_ih", "b_hh"):
            p = getattr(model, name)
            p.copy_(0.3 * torch.randn(p.shape, generator=gen, dtype=dtype))
    return model


def _forcing(model, method, per_output, strength, gen):
    """Forcing of ``model`` through its (detached) readout towards random targets, with a 0/1 mask
    per output or shared by the outputs (…, 1) that leaves some steps unforced."""
    from neurodyn.training.observation import affine_readout, readout_pinv

    dtype = next(model.parameters()).dtype
    w_out, b_out = (t.detach() for t in affine_readout(model))
    pinv, _ = readout_pinv(w_out, ridge=1e-3)
    targets = torch.randn(N_BATCH, N_STEPS, 3, generator=gen, dtype=dtype)
    mask = (torch.rand(N_BATCH, N_STEPS, 3 if per_output else 1, generator=gen) > 0.3).to(dtype)
    return ReadoutForcing(method, strength, targets, mask, w_out, b_out, pinv)


def _data(gen, dtype, lead=()):
    x = torch.randn(*lead, N_BATCH, N_STEPS, 2, generator=gen, dtype=dtype)
    h0 = 0.5 * torch.randn(*lead, N_BATCH, N_UNIT, generator=gen, dtype=dtype)
    noise = 0.1 * torch.randn(*lead, N_BATCH, N_STEPS, N_UNIT, generator=gen, dtype=dtype)
    weights = torch.randn(*lead, N_BATCH, N_STEPS, N_UNIT, generator=gen, dtype=dtype)
    return x, h0, noise, weights


def _reference(model, h0, x, noise, weights, forcing):
    """States and the gradients (every parameter, ``h0``, ``inputs``) of ``sum(states * weights)``
    through the forced torch rollout of ``model`` alone."""
    model.zero_grad()
    h0, x = h0.clone().requires_grad_(True), x.clone().requires_grad_(True)
    states = reference_states(model, h0, x, noise, forcing)
    (states * weights).sum().backward()
    grads = {k: p.grad.clone() for k, p in model.named_parameters() if p.grad is not None}
    return states.detach(), {**grads, "h0": h0.grad, "inputs": x.grad}


def _assert_close(got_states, got, ref_states, ref, dtype, where=""):
    rtol = 1e-5 if dtype == torch.float32 else 1e-10
    torch.testing.assert_close(got_states, ref_states, rtol=rtol, atol=rtol * ref_states.abs().max())
    assert set(got) == set(ref) == {"w_ih", "w_hh", "b_ih", "b_hh", "h0", "inputs"}
    for name in got:  # relative to each gradient's scale (float32 sums in another order)
        torch.testing.assert_close(got[name], ref[name], rtol=rtol, atol=rtol * ref[name].abs().max(),
                                   msg=lambda m, name=name: f"{where}{name}: {m}")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("with_noise", [True, False])
@pytest.mark.parametrize("strength", [0.6, 1.0])
@pytest.mark.parametrize("per_output", [True, False])
@pytest.mark.parametrize("method", ["error", "teacher"])
def test_fused_forced_gru_matches_autograd(method, per_output, strength, with_noise, dtype):
    gen = torch.Generator().manual_seed(5)
    model = _gru(0, dtype)
    x, h0, noise, weights = _data(gen, dtype)
    noise = noise if with_noise else None
    forcing = _forcing(model, method, per_output, strength, gen)
    ref_states, ref = _reference(model, h0, x, noise, weights, forcing)
    model.zero_grad()
    h0_f, x_f = h0.clone().requires_grad_(True), x.clone().requires_grad_(True)
    states = fused_states(model.params(), h0_f, x_f, noise=noise, forcing=forcing)
    (states * weights).sum().backward()
    got = {k: p.grad.clone() for k, p in model.named_parameters() if p.grad is not None}
    _assert_close(states.detach(), {**got, "h0": h0_f.grad, "inputs": x_f.grad}, ref_states, ref, dtype)
    free = fused_states(model.params(), h0, x, noise=noise)
    assert not torch.allclose(states, free)  # the forcing acts


def _stack_with_graph(models):
    """Ensemble params whose tensor fields keep each model's autograd graph."""
    ps = [m.params() for m in models]
    return type(ps[0])(*(torch.stack([getattr(p, f) for p in ps]) if isinstance(v, torch.Tensor) else v
                         for f, v in zip(ps[0]._fields, ps[0])))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("case", [("error", True, 0.6, True), ("error", False, 1.0, False),
                                  ("teacher", True, 1.0, True), ("teacher", False, 0.6, False)])
def test_fused_forced_gru_ensemble_matches_each_network_alone(case, dtype):
    # three networks, each forced through its own readout towards its own targets: network e of the
    # stack against autograd through its forced torch rollout alone, input gradients included
    method, per_output, strength, with_noise = case
    gen = torch.Generator().manual_seed(6)
    models = [_gru(s, dtype) for s in range(3)]
    x, h0, noise, weights = _data(gen, dtype, (3,))
    noise = noise if with_noise else None
    forcings = [_forcing(m, method, per_output, strength, gen) for m in models]
    stacked = forcings[0]._replace(**{f: torch.stack([getattr(r, f) for r in forcings])
                                      for f in ("targets", "mask", "w_out", "b_out", "pinv")})
    h0_f, x_f = h0.clone().requires_grad_(True), x.clone().requires_grad_(True)
    states = fused_states(_stack_with_graph(models), h0_f, x_f, noise=noise, forcing=stacked)
    (states * weights).sum().backward()
    got = [{k: p.grad.clone() for k, p in m.named_parameters() if p.grad is not None} for m in models]
    for e, model in enumerate(models):
        ref_states, ref = _reference(model, h0[e], x[e], None if noise is None else noise[e], weights[e],
                                     forcings[e])
        _assert_close(states[e].detach(), {**got[e], "h0": h0_f.grad[e], "inputs": x_f.grad[e]}, ref_states,
                      ref, dtype, f"network {e} ")


def test_forced_gru_dispatch_and_refusals():
    gru, stack = GRU(1, 4, 2).params(), stack_params([GRU(1, 4, 2, seed=s) for s in range(2)])
    assert fused_backend(gru, forcing="readout") == "numba"
    assert fused_backend(stack, forcing="readout") == "numba"
    assert fused_backend(gru, backend="numba", forcing="readout") == "numba"
    assert fused_backend(gru, device="cuda", forcing="readout") == "torch"  # no Triton forcing of the GRU
    with pytest.raises(ValueError, match="fused for the leaky RNN only, not 'gru', in Triton") as err:
        fused_backend(stack, backend="triton", forcing="readout")
    assert "\n" not in str(err.value)
    # a forced rollout of a CPU GRU under backend='triton' is refused by the same one-line reason
    model = GRU(1, 4, 2, seed=0)
    forcing = _forcing_small(model)
    with pytest.raises(ValueError, match="fused for the leaky RNN only, not 'gru', in Triton"):
        fused_states(model.params(), torch.zeros(3, 4), torch.zeros(3, 5, 1), forcing=forcing,
                     backend="triton")
    with pytest.raises(ValueError, match=r"ReadoutForcing.targets must have shape \(3, 5, 2\)"):
        fused_states(model.params(), torch.zeros(3, 4), torch.zeros(3, 5, 1),
                     forcing=forcing._replace(targets=torch.zeros(3, 4, 2)))


def _forcing_small(model):
    """Error forcing of a (1 input, 4 unit, 2 output) model over 3 trials of 5 steps."""
    from neurodyn.training.observation import affine_readout, readout_pinv

    w_out, b_out = (t.detach() for t in affine_readout(model))
    pinv, _ = readout_pinv(w_out, ridge=1e-3)
    return ReadoutForcing("error", 0.5, torch.ones(3, 5, 2), torch.ones(3, 5, 2), w_out, b_out, pinv)
