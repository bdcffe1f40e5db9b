"""The leaky RNN's readout formed inside the fused loops (``fused_states(..., outputs=True)``) against the
readout applied to the states afterwards, with autograd through it (the oracle)."""

from __future__ import annotations

import pytest
import torch

from neurodyn.kernels import fused_states, stack_params
from neurodyn.kernels.fused import ReadoutForcing, fuses_outputs
from neurodyn.models import GRU, LeakyRNN

pytest.importorskip("numba", reason="the fused kernels need numba (a core dependency)")

FIELDS = ("w_rec", "w_in", "b", "w_out", "b_out")


def _leaf(params):
    """``params`` with every floating tensor field a fresh leaf that requires grad."""
    return type(params)(*(v.detach().clone().requires_grad_(True)
                          if isinstance(v, torch.Tensor) and v.is_floating_point() else v for v in params))


def _run(params, h0, x, noise, forcing, fused, state_weight):
    """Outputs and gradients of a loss of the outputs (and, with ``state_weight``, of the states)."""
    p = _leaf(params)
    if fused:
        states, out = fused_states(p, h0, x, noise=noise, forcing=forcing, outputs=True)
    else:
        states = fused_states(p, h0, x, noise=noise, forcing=forcing)
        lead = p.w_out.ndim - 2  # 1 for an ensemble: (network, 1, output, unit) against (network, batch, ...)
        w_out = p.w_out[:, None] if lead else p.w_out
        b_out = p.b_out[:, None, None] if lead else p.b_out
        out = states @ w_out.mT + b_out
    gen = torch.Generator().manual_seed(9)
    loss = (out * torch.randn(out.shape, generator=gen, dtype=out.dtype)).sum()
    if state_weight:
        loss = loss + state_weight * states.square().sum()
    loss.backward()
    return states.detach(), out.detach(), {f: getattr(p, f).grad for f in FIELDS}


def _forcing(model, n_batch, n_steps, gen, lead=()):
    from neurodyn.training.observation import affine_readout, readout_pinv

    dtype = next(model.parameters()).dtype
    w_out, b_out = (t.detach() for t in affine_readout(model))
    pinv, _ = readout_pinv(w_out, ridge=1e-3)
    targets = torch.randn(n_batch, n_steps, w_out.shape[0], generator=gen, dtype=dtype)
    mask = (torch.rand(n_batch, n_steps, 1, generator=gen) > 0.3).to(dtype)
    return ReadoutForcing("teacher", 0.6, targets, mask, w_out, b_out, pinv)


@pytest.mark.parametrize("state_weight", [0.0, 0.3])
@pytest.mark.parametrize("forced", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_fused_outputs_equal_the_readout_of_the_states_with_its_gradients(dtype, forced, state_weight):
    gen = torch.Generator().manual_seed(0)
    model = LeakyRNN(2, 9, 3, alpha=0.3, gain=0.8, dale=True, output_scale=1.5, seed=1).to(dtype)
    x = torch.randn(5, 30, 2, generator=gen, dtype=dtype)
    h0 = 0.5 * torch.randn(5, 9, generator=gen, dtype=dtype)
    noise = 0.1 * torch.randn(5, 30, 9, generator=gen, dtype=dtype)
    forcing = _forcing(model, 5, 30, gen) if forced else None
    got = _run(model.params(), h0, x, noise, forcing, True, state_weight)
    ref = _run(model.params(), h0, x, noise, forcing, False, state_weight)
    rtol = 1e-5 if dtype == torch.float32 else 1e-10
    torch.testing.assert_close(got[0], ref[0], rtol=0, atol=0)  # the same states
    torch.testing.assert_close(got[1], ref[1], rtol=rtol, atol=rtol * ref[1].abs().max())
    torch.testing.assert_close(got[1], model.readout(got[0]), rtol=rtol, atol=rtol * ref[1].abs().max())
    for name in FIELDS:
        scale = ref[2][name].abs().max()
        torch.testing.assert_close(got[2][name], ref[2][name], rtol=rtol, atol=rtol * scale,
                                   msg=lambda m, name=name: f"{name}: {m}")


@pytest.mark.parametrize("forced", [False, True])
def test_fused_outputs_of_an_ensemble_match_each_network_alone(forced):
    gen = torch.Generator().manual_seed(1)
    models = [LeakyRNN(2, 7, 2, alpha=0.4, seed=s).double() for s in range(3)]
    x = torch.randn(3, 4, 20, 2, generator=gen, dtype=torch.float64)
    h0 = torch.zeros(3, 4, 7, dtype=torch.float64)
    forcings = [_forcing(m, 4, 20, gen) for m in models] if forced else None
    fields = ("targets", "mask", "w_out", "b_out", "pinv")
    stacked = None if forcings is None else forcings[0]._replace(
        **{f: torch.stack([getattr(r, f) for r in forcings]) for f in fields})
    got = _run(stack_params(models), h0, x, None, stacked, True, 0.0)
    ref = _run(stack_params(models), h0, x, None, stacked, False, 0.0)
    for e, model in enumerate(models):
        alone = _run(model.params(), h0[e], x[e], None, None if forcings is None else forcings[e], True, 0.0)
        torch.testing.assert_close(got[1][e], alone[1], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(got[1], ref[1], rtol=1e-10, atol=1e-12)
    for name in FIELDS:
        torch.testing.assert_close(got[2][name], ref[2][name], rtol=1e-10, atol=1e-12)


def test_fused_outputs_gradcheck_float64():
    model = LeakyRNN(2, 3, 2, alpha=0.5, seed=0).double()
    p = model.params()
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(2, 4, 2, generator=gen, dtype=torch.float64)
    h0 = torch.randn(2, 3, generator=gen, dtype=torch.float64, requires_grad=True)
    w, w_out, b_out = (t.detach().clone().requires_grad_(True) for t in (p.w_rec, p.w_out, p.b_out))

    def run(w, w_out, b_out, h0):
        states, out = fused_states(p._replace(w_rec=w, w_out=w_out, b_out=b_out), h0, x, outputs=True)
        return out, states

    assert torch.autograd.gradcheck(run, (w, w_out, b_out, h0), eps=1e-6, atol=1e-8)


def test_fused_outputs_only_where_fused():
    leaky, gru = LeakyRNN(1, 4, 1).params(), GRU(1, 4, 1).params()
    assert fuses_outputs(leaky, "numba") and not fuses_outputs(leaky, "triton")
    assert not fuses_outputs(gru, "numba") and not fuses_outputs(leaky, "torch")
    with pytest.raises(ValueError, match="fused for the leaky RNN on Numba only, not a 'gru'"):
        fused_states(gru, torch.zeros(2, 4), torch.zeros(2, 3, 1), outputs=True)
