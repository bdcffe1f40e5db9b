"""Fused GRU, PLRNN, ALRNN and shallow-PLRNN forward + BPTT (one network and stacked ensembles) against
autograd through the models' own step."""

from __future__ import annotations

import pytest
import torch
from _autograd_reference import assert_forced_like_torch, assert_stack_matches, gradients, reference_states

from neurodyn.kernels import fused_backend, fused_states
from neurodyn.models import ALRNN, GRU, PLRNN, LeakyRNN, ShallowPLRNN

pytest.importorskip("numba", reason="the fused kernels need numba (a core dependency)")

# every option that changes the recurrence: trained h0, no inputs, full A, W with a diagonal, an
# identity readout, ReLU on none / some / all ALRNN units, clipped shPLRNN; batch 6 is not a
# multiple of the kernels' 4-row blocks
MODELS = {
    "gru": lambda: GRU(2, 7, 1, train_h0=True, seed=0),
    "gru_no_input": lambda: GRU(0, 5, 2, seed=1),
    "plrnn": lambda: PLRNN(2, 7, 1, gain=1.5, seed=0),
    "plrnn_full_A": lambda: PLRNN(2, 6, 6, full_A=True, w_diagonal=True, observation="identity",
                                  train_h0=True, gain=1.5, seed=2),
    "alrnn": lambda: ALRNN(2, 7, 1, n_relu=3, gain=1.5, seed=0),
    "alrnn_linear": lambda: ALRNN(2, 5, 1, n_relu=0, seed=3),
    "alrnn_all_relu": lambda: ALRNN(0, 5, 2, n_relu=5, full_A=True, gain=1.5, seed=4),
    "shplrnn_clipped": lambda: ShallowPLRNN(2, 5, 1, n_hidden=11, clipped=True, seed=0),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("case", list(MODELS))
@pytest.mark.parametrize("with_noise", [False, True])
def test_fused_family_gradients_match_autograd(case, dtype, with_noise):
    model = MODELS[case]().to(dtype)
    n, n_in = model.state_size, model.n_inputs
    gen = torch.Generator().manual_seed(7)
    with torch.no_grad():  # non-zero biases (GRU, PL h) and trained h0
        for name, p in model.named_parameters():
            if name in ("b_ih", "b_hh", "h", "h0", "h1"):
                p.copy_(0.3 * torch.randn(p.shape, generator=gen, dtype=dtype))
    x = torch.randn(6, 30, n_in, generator=gen, dtype=dtype)
    h0 = 0.5 * torch.randn(6, n, generator=gen, dtype=dtype)
    noise = (0.1 if with_noise else 0.0) * torch.randn(6, 30, n, generator=gen, dtype=dtype)
    weights = torch.randn(6, 30, n, generator=gen, dtype=dtype)
    got_states, got = gradients(model, h0, x, noise if with_noise else None, weights, fused=True)
    ref_states, ref = gradients(model, h0, x, noise, weights, fused=False)
    rtol = 1e-5 if dtype == torch.float32 else 1e-10
    torch.testing.assert_close(got_states, ref_states, rtol=rtol, atol=rtol * ref_states.abs().max())
    assert set(got) == set(ref) and "h0" in got
    for name in got:  # relative to each gradient's scale (float32 sums in another order)
        torch.testing.assert_close(got[name], ref[name], rtol=rtol, atol=rtol * ref[name].abs().max(),
                                   msg=lambda m, name=name: f"{name}: {m}")


@pytest.mark.parametrize("case", ["gru", "alrnn"])
def test_fused_family_gradcheck_float64(case):
    # tiny (few finite differences): 3 GRU units, 4 ALRNN units of which 2 ReLU
    model = (GRU(2, 3, 1, seed=0) if case == "gru" else ALRNN(2, 4, 1, n_relu=2, gain=1.5, seed=0)).double()
    p = model.params()
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(2, 4, 2, generator=gen, dtype=torch.float64)
    h0 = torch.randn(2, model.state_size, generator=gen, dtype=torch.float64, requires_grad=True)
    rec = "w_hh" if case == "gru" else "W"
    w = getattr(p, rec).detach().clone().requires_grad_(True)
    assert torch.autograd.gradcheck(lambda w, h0: fused_states(p._replace(**{rec: w}), h0, x),
                                    (w, h0), eps=1e-6, atol=1e-8)


def test_fused_family_backend_and_errors():
    for make in MODELS.values():
        assert fused_backend(make().params()) == "numba"
    gru = GRU(1, 4, 1).params()
    assert fused_backend(gru, forcing=True) == "torch"  # teacher forcing: the PL family only
    with pytest.raises(ValueError, match="teacher-forced rollouts are fused for the shallow PLRNN, the PLRNN "
                                         "and the ALRNN only, not 'gru'; use backend='auto'"):
        fused_backend(gru, backend="numba", forcing=True)
    with pytest.raises(ValueError, match="forcing is fused for the shallow PLRNN, PLRNN and ALRNN only; "
                                         "drop it for a 'gru'"):
        fused_states(gru, torch.zeros(2, 4), torch.zeros(2, 5, 1),
                     forcing=(torch.zeros(2, 5, 4), [0.1] * 5, [1.0] * 4))


@pytest.mark.parametrize("case", ["gru", "alrnn"])
def test_fused_family_same_result_on_more_threads(case, monkeypatch):
    # a row's arithmetic does not depend on which thread runs its block: bit-identical results. The
    # weight gradients are torch GEMMs of the kernels' outputs, on one torch thread here: MKL may pick
    # another thread count (and summation order) from one call to the next on a loaded machine
    from neurodyn._threads import one_thread
    from neurodyn.kernels import _fused_autograd as fa

    with one_thread():
        _same_result_on_more_threads(MODELS[case](), fa, monkeypatch)


def _same_result_on_more_threads(model, fa, monkeypatch):
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(10, 12, 2, generator=gen)
    out = []
    for rows in (fa.ROWS_PER_THREAD, 1):  # one thread, then one thread per row (as many as Numba has)
        monkeypatch.setattr(fa, "ROWS_PER_THREAD", rows)
        model.zero_grad()
        h0 = model.initial_state(10).detach().requires_grad_(True)
        states = fused_states(model.params(), h0, x)
        states.square().sum().backward()
        grads = [p.grad.clone() for p in model.parameters() if p.grad is not None]
        out.append([states.detach(), h0.grad, *grads])
    for a, b in zip(*out):
        assert torch.equal(a, b)


def _stack_with_graph(models):
    """Ensemble params whose tensor fields keep each model's autograd graph."""
    ps = [m.params() for m in models]
    return type(ps[0])(*(torch.stack([getattr(p, f) for p in ps]) if isinstance(v, torch.Tensor) else v
                         for f, v in zip(ps[0]._fields, ps[0])))


ENSEMBLES = {
    "gru": lambda s: GRU(2, 7, 1, train_h0=True, seed=s),
    "plrnn_full_A": lambda s: PLRNN(2, 6, 1, full_A=True, w_diagonal=True, gain=1.5, seed=s),
    "alrnn": lambda s: ALRNN(2, 7, 1, n_relu=3, gain=1.5, seed=s),
    "shplrnn_clipped": lambda s: ShallowPLRNN(2, 5, 1, n_hidden=11, clipped=True, seed=s),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("case", list(ENSEMBLES))
def test_fused_family_ensemble_matches_autograd_per_network(case, dtype):
    # three networks in one stacked call (batch 6: a partial 4-row block), against each network's
    # own step under autograd: states, weight gradients and the initial-state gradient
    models = [ENSEMBLES[case](s).to(dtype) for s in range(3)]
    n, n_in = models[0].state_size, models[0].n_inputs
    gen = torch.Generator().manual_seed(3)
    with torch.no_grad():  # non-zero biases
        for model in models:
            for name, p in model.named_parameters():
                if name in ("b_ih", "b_hh", "h", "h1"):
                    p.copy_(0.3 * torch.randn(p.shape, generator=gen, dtype=dtype))
    x = torch.randn(3, 6, 12, n_in, generator=gen, dtype=dtype)
    h0 = (0.5 * torch.randn(3, 6, n, generator=gen, dtype=dtype)).requires_grad_(True)
    noise = 0.1 * torch.randn(3, 6, 12, n, generator=gen, dtype=dtype)
    weights = torch.randn(3, 6, 12, n, generator=gen, dtype=dtype)
    params = _stack_with_graph(models)
    assert fused_backend(params, dtype=dtype) == "numba"
    states = fused_states(params, h0, x, noise=noise)
    assert states.shape == (3, 6, 12, n)
    (states * weights).sum().backward()
    assert_stack_matches(models, states, h0, x, noise, weights, dtype)


def test_fused_family_ensemble_errors():
    from neurodyn.kernels import stack_params

    shallow = stack_params([ShallowPLRNN(0, 3, 3, n_hidden=4, seed=s) for s in range(2)])
    assert fused_backend(shallow) == "numba" and fused_backend(shallow, forcing=True) == "torch"
    with pytest.raises(ValueError, match="forced rollouts are fused for one network, not an ensemble"):
        fused_states(shallow, torch.zeros(2, 4, 3), forcing=(torch.zeros(2, 4, 5, 3), [0.5] * 5, [1.0] * 3))
    gru = stack_params([GRU(1, 4, 1, seed=s) for s in range(3)])
    with pytest.raises(ValueError, match=r"h0 must have shape \(network, batch, state\) with 3 networks"):
        fused_states(gru, torch.zeros(2, 5, 4), torch.zeros(3, 5, 6, 1))


@pytest.mark.parametrize("make", [
    lambda seed: LeakyRNN(2, 8, 1, alpha=0.5, seed=seed),
    lambda seed: GRU(2, 8, 1, seed=seed), lambda seed: PLRNN(2, 8, 1, seed=seed),
    lambda seed: ALRNN(2, 8, 1, n_relu=3, seed=seed),
    lambda seed: ShallowPLRNN(2, 8, 1, n_hidden=5, seed=seed),
], ids=["leaky", "gru", "plrnn", "alrnn", "shplrnn"])
@pytest.mark.parametrize("ensemble", [False, True])
def test_fused_states_refuses_wrong_widths_and_types(make, ensemble):
    from neurodyn.kernels import stack_params

    params = stack_params([make(s).double() for s in range(2)]) if ensemble else make(0).double().params()
    lead = (2,) if ensemble else ()
    x = torch.randn(*lead, 3, 5, 2, dtype=torch.float64)
    for width in (7, 64):
        with pytest.raises(ValueError, match=r"h0 must have shape .* with state = 8 .*got") as err:
            fused_states(params, torch.zeros(*lead, 3, width, dtype=torch.float64), x)
        assert "\n" not in str(err.value)
    h0 = torch.zeros(*lead, 3, 8, dtype=torch.float64)
    for bad in (torch.cat([x, torch.ones_like(x[..., :1])], -1), x[..., :1]):
        with pytest.raises(ValueError, match=r"inputs must have shape .*time, 2\) .*input count"):
            fused_states(params, h0, bad)
    for name, kwargs in {"inputs": dict(h0=h0, inputs=x.numpy()), "h0": dict(h0=h0.numpy(), inputs=x),
                         "noise": dict(h0=h0, inputs=x, noise=torch.zeros(*lead, 3, 5, 8).numpy())}.items():
        with pytest.raises(TypeError, match=f"^{name} must be a torch.Tensor, got ndarray"):
            fused_states(params, **kwargs)
    for dtype in (torch.float16, torch.int64):
        with pytest.raises(ValueError, match=f"kernels run float32 or float64, not {dtype}; convert h0"):
            fused_states(params, h0.to(dtype), x)
    assert fused_states(params, h0, x).shape == (*lead, 3, 5, 8)


FORCED = {"plrnn": lambda n_in: PLRNN(n_in, 6, 3, gain=1.5, seed=0),
          "alrnn": lambda n_in: ALRNN(n_in, 6, 3, n_relu=3, gain=1.5, seed=1)}


def _forced_gradients(model, z0, zhat, alphas, mask, u, eps, weights, backend):
    """``(predictions, {parameter name or "z0": gradient})`` of ``sum(predictions * weights)`` under
    teacher forcing through ``forced_rollout`` on ``backend``."""
    from neurodyn.training.teacher_forcing import forced_rollout

    model.zero_grad()
    h0 = z0.clone().requires_grad_(True)
    preds = forced_rollout(model, h0, zhat, alphas, mask, u, eps, backend=backend)
    (preds * weights).sum().backward()
    grads = {k: p.grad.clone() for k, p in model.named_parameters() if p.grad is not None}
    return preds.detach(), {**grads, "z0": h0.grad}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("case", list(FORCED))
@pytest.mark.parametrize("method", ["gtf", "sparse"])
@pytest.mark.parametrize("with_noise", [False, True])
@pytest.mark.parametrize("n_in", [0, 2])
def test_fused_forced_plrnn_alrnn_match_autograd(case, method, with_noise, n_in, dtype):
    # teacher forcing inside the PL kernels against autograd through forced_rollout on torch: GTF with
    # a constant alpha or sparse forcing every tau = 4 steps, two of six latent units unobserved,
    # state noise on or off, with or without inputs; batch 6 is not a multiple of the 4-row blocks
    model = FORCED[case](n_in).to(dtype)
    gen = torch.Generator().manual_seed(5)
    with torch.no_grad():  # a non-zero bias h
        model.h.copy_(0.3 * torch.randn(model.h.shape, generator=gen, dtype=dtype))
    n_batch, n_steps, n = 6, 25, model.state_size
    u = torch.randn(n_batch, n_steps, n_in, generator=gen, dtype=dtype) if n_in else None
    zhat = torch.randn(n_batch, n_steps, n, generator=gen, dtype=dtype)
    eps = 0.1 * torch.randn(n_batch, n_steps, n, generator=gen, dtype=dtype) if with_noise else None
    weights = torch.randn(n_batch, n_steps, n, generator=gen, dtype=dtype)
    z0 = torch.randn(n_batch, n, generator=gen, dtype=dtype)
    sparse = [1.0 if (t + 1) % 4 == 0 else 0.0 for t in range(n_steps)]
    alphas = [0.3] * n_steps if method == "gtf" else sparse
    mask = torch.tensor([1.0, 1.0, 0.0, 1.0, 0.0, 1.0], dtype=dtype)
    assert fused_backend(model.params(), dtype=dtype, forcing=True) == "numba"
    got_p, got = _forced_gradients(model, z0, zhat, alphas, mask, u, eps, weights, "numba")
    ref_p, ref = _forced_gradients(model, z0, zhat, alphas, mask, u, eps, weights, "torch")
    free_p, _ = _forced_gradients(model, z0, zhat, [0.0] * n_steps, mask, u, eps, weights, "torch")
    assert not torch.allclose(ref_p, free_p)  # the forcing acts
    rtol = 1e-5 if dtype == torch.float32 else 1e-10
    torch.testing.assert_close(got_p, ref_p, rtol=rtol, atol=rtol * ref_p.abs().max())
    assert set(got) == set(ref) and {"A", "W", "h", "z0"} | ({"C"} if n_in else set()) <= set(got)
    for name in got:  # relative to each gradient's scale (float32 sums in another order)
        torch.testing.assert_close(got[name], ref[name], rtol=rtol, atol=rtol * ref[name].abs().max(),
                                   msg=lambda m, name=name: f"{name}: {m}")


def test_fused_forced_plrnn_dispatch_and_refusals():
    from neurodyn.kernels import stack_params

    for case, make in FORCED.items():
        p = make(1).params()
        assert fused_backend(p, forcing=True) == fused_backend(p, forcing="state") == "numba"
        assert fused_backend(p, forcing=True, dtype=torch.float16) == "torch"
        assert fused_backend(p, forcing=True, device="cuda") == "torch"  # Triton: the shallow PLRNN only
        refusal = f"teacher-forced rollouts are fused for the shallow PLRNN only, not '{case}'"
        with pytest.raises(ValueError, match=f"^backend='triton' cannot train this model: {refusal}") as err:
            fused_backend(p, backend="triton", forcing=True)
        assert "\n" not in str(err.value)
    ens = stack_params([PLRNN(0, 4, 2, seed=s) for s in range(2)])
    assert fused_backend(ens) == "numba" and fused_backend(ens, forcing=True) == "torch"
    with pytest.raises(ValueError, match="state-forced rollouts are fused for one network, not an ensemble"):
        fused_backend(ens, backend="numba", forcing=True)
    with pytest.raises(ValueError, match="forced rollouts are fused for one network, not an ensemble"):
        fused_states(ens, torch.zeros(2, 3, 4), forcing=(torch.zeros(2, 3, 5, 4), [0.5] * 5, [1.0] * 4))
    p, z0 = PLRNN(0, 4, 2).params(), torch.zeros(3, 4)
    with pytest.raises(ValueError, match="forcing needs 5 alphas"):
        fused_states(p, z0, forcing=(torch.zeros(3, 5, 4), [0.1] * 4, [1.0] * 4))
    with pytest.raises(ValueError, match=r"forcing targets must have shape \(3, 5, 4\)"):
        fused_states(p, z0, torch.zeros(3, 5, 0), forcing=(torch.zeros(3, 6, 4), [0.1] * 6, [1.0] * 4))


# forcing through the readout (error and teacher forcing of task training): a PLRNN with inputs and an
# ALRNN with ReLU on some latents, each with a non-affine-identity readout of 2 outputs
READOUT_FORCED = {"plrnn": lambda s: PLRNN(2, 6, 2, gain=1.5, seed=s),
                  "alrnn": lambda s: ALRNN(2, 7, 2, n_relu=3, gain=1.5, seed=s)}


def _pl_model(case, seed, dtype, gen):
    model = READOUT_FORCED[case](seed).to(dtype)
    with torch.no_grad():  # a non-zero bias h
        model.h.copy_(0.3 * torch.randn(model.h.shape, generator=gen, dtype=dtype))
    return model


SHALLOW_READOUT = {"plain": lambda s: ShallowPLRNN(2, 5, 2, n_hidden=11, seed=s),
                   "clipped": lambda s: ShallowPLRNN(2, 5, 2, n_hidden=11, clipped=True, seed=s)}
SHALLOW_NAMES = {"a", "W1", "W2", "h1", "h2", "C", "h0"}


def _shallow_model(case, seed, dtype, gen):
    model = SHALLOW_READOUT[case](seed).to(dtype)
    with torch.no_grad():  # non-zero biases h1 and h2
        model.h1.copy_(0.3 * torch.randn(model.h1.shape, generator=gen, dtype=dtype))
        model.h2.copy_(0.3 * torch.randn(model.h2.shape, generator=gen, dtype=dtype))
    return model


def _forced_model(case, seed, dtype, gen):
    """A PLRNN / ALRNN of ``READOUT_FORCED`` or a shallow PLRNN of ``SHALLOW_READOUT``, and the names of
    its parameter gradients."""
    if case in READOUT_FORCED:
        return _pl_model(case, seed, dtype, gen), {"A", "W", "h", "C", "h0"}
    return _shallow_model(case, seed, dtype, gen), SHALLOW_NAMES


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("case", [*READOUT_FORCED, *SHALLOW_READOUT])
@pytest.mark.parametrize("method", ["error", "teacher"])
@pytest.mark.parametrize("per_output", [True, False])
@pytest.mark.parametrize("strength", [0.6, 1.0])
@pytest.mark.parametrize("with_noise", [False, True])
def test_fused_readout_forced_pl_family_matches_autograd(case, method, per_output, strength, with_noise,
                                                         dtype):
    # forcing through the readout after the step and its noise, with a 0/1 mask per output or per
    # step: the states before forcing and the gradients of every parameter (PLRNN / ALRNN: A, W, h,
    # C, z0; shallow PLRNN: a, W1, W2, h1, h2, C, z0) against autograd through the forced torch
    # rollout; batch 6 is not a multiple of the PL kernels' 4-row blocks
    from test_fused import _readout_forcing

    gen = torch.Generator().manual_seed(6)
    model, names = _forced_model(case, 0, dtype, gen)
    n = model.state_size
    x = torch.randn(6, 25, 2, generator=gen, dtype=dtype)
    h0 = 0.5 * torch.randn(6, n, generator=gen, dtype=dtype)
    noise = 0.1 * torch.randn(6, 25, n, generator=gen, dtype=dtype) if with_noise else None
    weights = torch.randn(6, 25, n, generator=gen, dtype=dtype)
    forcing = _readout_forcing(model, method, per_output, gen, 6, 25, strength=strength)
    assert fused_backend(model.params(), dtype=dtype, forcing="readout") == "numba"
    assert_forced_like_torch(model, h0, x, noise, weights, forcing, names)


def test_fused_readout_forced_plrnn_dispatch_and_refusals():
    from test_fused import _readout_forcing

    from neurodyn.kernels import stack_params

    for case, make in READOUT_FORCED.items():
        p, ens = make(0).params(), stack_params([make(s) for s in range(2)])
        assert fused_backend(p, forcing="readout") == fused_backend(ens, forcing="readout") == "numba"
        assert fused_backend(p, forcing="readout", device="cuda") == "torch"  # Triton: the leaky RNN only
        refusal = f"forcing through the readout is fused for the leaky RNN only, not '{case}'"
        with pytest.raises(ValueError, match=f"^backend='triton' cannot train this model: {refusal}") as err:
            fused_backend(p, backend="triton", forcing="readout")
        assert "\n" not in str(err.value)
    model = PLRNN(0, 4, 2, seed=0)  # no inputs: the forcing targets set the number of steps
    forcing = _readout_forcing(model, "error", True, torch.Generator().manual_seed(0), 3, 5)
    assert fused_states(model.params(), torch.zeros(3, 4), forcing=forcing).shape == (3, 5, 4)
    with pytest.raises(ValueError, match=r"ReadoutForcing.targets must have shape \(3, 5, 2\)"):
        fused_states(model.params(), torch.zeros(3, 4), torch.zeros(3, 5, 0),
                     forcing=forcing._replace(targets=torch.zeros(3, 4, 2)))



def test_fused_readout_forced_shplrnn_dispatch_and_refusals():
    from test_fused import _readout_forcing

    from neurodyn.kernels import stack_params

    for make in SHALLOW_READOUT.values():
        p, ens = make(0).params(), stack_params([make(s) for s in range(2)])
        assert fused_backend(p, forcing="readout") == fused_backend(ens, forcing="readout") == "numba"
        assert fused_backend(p, forcing="readout", device="cuda") == "torch"  # Triton: the leaky RNN only
        refusal = "forcing through the readout is fused for the leaky RNN only, not 'shplrnn'"
        with pytest.raises(ValueError, match=f"^backend='triton' cannot train this model: {refusal}") as err:
            fused_backend(p, backend="triton", forcing="readout")
        assert "\n" not in str(err.value)
    model = ShallowPLRNN(0, 4, 2, n_hidden=3, seed=0)  # no inputs: the forcing targets set the steps
    forcing = _readout_forcing(model, "teacher", True, torch.Generator().manual_seed(0), 3, 5)
    assert fused_states(model.params(), torch.zeros(3, 4), forcing=forcing).shape == (3, 5, 4)
    with pytest.raises(ValueError, match=r"ReadoutForcing.targets must have shape \(3, 5, 2\)"):
        fused_states(model.params(), torch.zeros(3, 4), torch.zeros(3, 5, 0),
                     forcing=forcing._replace(targets=torch.zeros(3, 4, 2)))


@pytest.mark.parametrize("case", [*READOUT_FORCED, *SHALLOW_READOUT])
@pytest.mark.parametrize("method", ["error", "teacher"])
def test_fused_readout_forced_pl_family_input_gradient_matches_autograd(case, method):
    # the gradient of the inputs too (a mask per step, float64)
    from test_fused import _readout_forcing

    gen = torch.Generator().manual_seed(8)
    model, _ = _forced_model(case, 1, torch.float64, gen)
    x = torch.randn(5, 15, 2, generator=gen, dtype=torch.float64)
    forcing = _readout_forcing(model, method, False, gen, 5, 15)
    grads = []
    for fused in (True, False):
        xg = x.clone().requires_grad_(True)
        h0 = model.initial_state(5)
        states = (fused_states(model.params(), h0, xg, forcing=forcing) if fused
                  else reference_states(model, h0, xg, None, forcing))
        states.square().sum().backward()
        grads.append(xg.grad)
    torch.testing.assert_close(grads[0], grads[1], rtol=1e-10, atol=1e-10 * grads[1].abs().max())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("case", [*READOUT_FORCED, *SHALLOW_READOUT])
@pytest.mark.parametrize("method", ["error", "teacher"])
def test_fused_readout_forced_pl_family_ensemble_matches_autograd_per_network(case, method, dtype):
    # three networks, each forced through its own readout towards its own targets after the noise
    # (per-output masks for error forcing, shared ones for teacher forcing), in one stacked call:
    # against autograd through each network's forced torch rollout, and network e equal to the
    # same network forced alone by the one-network kernel
    from test_fused import _readout_forcing, _stack_forcings

    gen = torch.Generator().manual_seed(9)
    built = [_forced_model(case, s, dtype, gen) for s in range(3)]
    models, names = [m for m, _ in built], built[0][1]
    n = models[0].state_size
    x = torch.randn(3, 6, 12, 2, generator=gen, dtype=dtype)
    h0 = (0.5 * torch.randn(3, 6, n, generator=gen, dtype=dtype)).requires_grad_(True)
    noise = 0.1 * torch.randn(3, 6, 12, n, generator=gen, dtype=dtype)
    weights = torch.randn(3, 6, 12, n, generator=gen, dtype=dtype)
    forcings = [_readout_forcing(m, method, method == "error", gen, 6, 12) for m in models]
    params = _stack_with_graph(models)
    assert fused_backend(params, dtype=dtype, forcing="readout") == "numba"
    states = fused_states(params, h0, x, noise=noise, forcing=_stack_forcings(forcings))
    assert not torch.allclose(states, fused_states(params, h0, x, noise=noise))  # the forcing acts
    for e, model in enumerate(models):
        with torch.no_grad():
            alone = fused_states(model.params(), h0[e], x[e], noise=noise[e], forcing=forcings[e])
        rtol = 1e-6 if dtype == torch.float32 else 1e-12
        torch.testing.assert_close(states[e].detach(), alone, rtol=rtol, atol=rtol * alone.abs().max())
    (states * weights).sum().backward()
    assert_stack_matches(models, states, h0, x, noise, weights, dtype, names=names, forcings=forcings)
