"""Fused leaky-RNN forward + BPTT against autograd on the torch reference."""

from __future__ import annotations

import pytest
import torch
from _autograd_reference import assert_forced_like_torch, assert_stack_matches, gradients

from neurodyn.kernels import fused_backend, fused_states
from neurodyn.kernels.fused import ReadoutForcing
from neurodyn.models import LSTM, LeakyRNN

pytest.importorskip("numba", reason="the fused kernels need numba (a core dependency)")

ACTIVATIONS = ["tanh", "relu", "softplus", "sigmoid", "linear"]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_fused_gradients_match_autograd(activation, dtype):
    # Dale's law, a connectivity mask and noise act outside / inside the kernel respectively
    gen = torch.Generator().manual_seed(0)
    mask = (torch.rand(9, 9, generator=gen) > 0.3).float()
    model = LeakyRNN(2, 9, 1, activation=activation, alpha=0.3, gain=0.8, dale=True, rec_mask=mask,
                     seed=1).to(dtype)
    x = torch.randn(5, 40, 2, generator=gen, dtype=dtype)
    h0 = 0.5 * torch.randn(5, 9, generator=gen, dtype=dtype)
    noise = 0.1 * torch.randn(5, 40, 9, generator=gen, dtype=dtype)
    weights = torch.randn(5, 40, 9, generator=gen, dtype=dtype)
    got_states, got = gradients(model, h0, x, noise, weights, fused=True)
    ref_states, ref = gradients(model, h0, x, noise, weights, fused=False)
    rtol = 1e-5 if dtype == torch.float32 else 1e-10
    torch.testing.assert_close(got_states, ref_states, rtol=rtol, atol=rtol * ref_states.abs().max())
    assert set(got) == {"w_in", "w_rec", "b", "h0"}
    for name in got:  # relative to each gradient's scale (float32 sums in another order)
        torch.testing.assert_close(got[name], ref[name], rtol=rtol, atol=rtol * ref[name].abs().max(),
                                   msg=lambda m, name=name: f"{name}: {m}")


def _readout_forcing(model, method, per_output, gen, n_batch, n_steps, strength=0.6):
    """Forcing of ``model`` through its (detached) readout towards random targets, with a 0/1 mask
    per output or per step that leaves some steps unforced."""
    from neurodyn.training.observation import affine_readout, readout_pinv

    dtype = next(model.parameters()).dtype
    w_out, b_out = (t.detach() for t in affine_readout(model))
    pinv, _ = readout_pinv(w_out, ridge=1e-3)
    n_out = w_out.shape[0]
    targets = torch.randn(n_batch, n_steps, n_out, generator=gen, dtype=dtype)
    mask = (torch.rand(n_batch, n_steps, n_out if per_output else 1, generator=gen) > 0.3).to(dtype)
    return ReadoutForcing(method, strength, targets, mask, w_out, b_out, pinv)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("per_output", [True, False])
@pytest.mark.parametrize("method", ["error", "teacher"])
def test_fused_forced_gradients_match_autograd(method, per_output, dtype):
    # forcing through the readout after the noise, Dale's law and a connectivity mask; the readout
    # gets no gradient through the forcing (its correction is detached), on either path
    gen = torch.Generator().manual_seed(3)
    mask = (torch.rand(9, 9, generator=gen) > 0.3).float()
    model = LeakyRNN(2, 9, 3, alpha=0.3, gain=0.8, dale=True, rec_mask=mask, seed=2).to(dtype)
    x = torch.randn(5, 40, 2, generator=gen, dtype=dtype)
    h0 = 0.5 * torch.randn(5, 9, generator=gen, dtype=dtype)
    noise = 0.1 * torch.randn(5, 40, 9, generator=gen, dtype=dtype)
    weights = torch.randn(5, 40, 9, generator=gen, dtype=dtype)
    forcing = _readout_forcing(model, method, per_output, gen, 5, 40)
    assert_forced_like_torch(model, h0, x, noise, weights, forcing, {"w_in", "w_rec", "b", "h0"})


def test_fused_readout_forcing_errors():
    model = LeakyRNN(1, 4, 2, seed=0)
    gen = torch.Generator().manual_seed(0)
    forcing = _readout_forcing(model, "error", True, gen, 3, 5)
    h0, x = torch.zeros(3, 4), torch.zeros(3, 5, 1)
    with pytest.raises(ValueError, match=r"ReadoutForcing.targets must have shape \(3, 5, 2\)"):
        fused_states(model.params(), h0, x, forcing=forcing._replace(targets=torch.zeros(3, 4, 2)))
    with pytest.raises(ValueError, match="unknown forcing method 'errors'"):
        fused_states(model.params(), h0, x, forcing=forcing._replace(method="errors"))
    from neurodyn.kernels import stack_params

    with pytest.raises(ValueError, match=r"ReadoutForcing.w_out must have shape \(2, 2, 4\), got \(2, 4\)"):
        fused_states(stack_params([model, model]), torch.zeros(2, 3, 4), torch.zeros(2, 3, 5, 1),
                     forcing=_stack_forcings([forcing, forcing])._replace(w_out=forcing.w_out))
    assert fused_backend(model.params(), forcing="readout") == "numba"
    assert fused_backend(stack_params([model, model]), forcing="readout") == "numba"
    with pytest.raises(ValueError, match="model family 'lstm' has no fused training kernel"):
        from neurodyn.models import LSTM

        fused_backend(LSTM(1, 4, 1).params(), backend="numba", forcing="readout")


def test_fused_gradcheck_float64():
    model = LeakyRNN(2, 3, 1, alpha=0.5, seed=0).double()
    p = model.params()
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(2, 4, 2, generator=gen, dtype=torch.float64, requires_grad=True)  # input gradients too
    h0 = torch.randn(2, 3, generator=gen, dtype=torch.float64, requires_grad=True)
    w, w_in, b = (t.detach().clone().requires_grad_(True) for t in (p.w_rec, p.w_in, p.b))

    def run(w, w_in, b, h0, x):
        return fused_states(p._replace(w_rec=w, w_in=w_in, b=b), h0, x)

    assert torch.autograd.gradcheck(run, (w, w_in, b, h0, x), eps=1e-6, atol=1e-8)


def test_fused_backend_choice_and_errors():
    leaky, lstm = LeakyRNN(1, 4, 1).params(), LSTM(1, 4, 1).params()
    assert fused_backend(leaky) == "numba"
    assert fused_backend(leaky, state_hook=lambda t, h: h) == "torch"
    assert fused_backend(leaky, dtype=torch.float16) == "torch"
    assert fused_backend(lstm) == "torch"
    with pytest.raises(ValueError, match="'lstm' has no fused training kernel"):
        fused_backend(lstm, backend="numba")
    with pytest.raises(ValueError, match="unknown training backend 'jax'"):
        fused_backend(leaky, backend="jax")
    with pytest.raises(ValueError, match=r"noise must have shape \(2, 3, 4\)"):
        fused_states(leaky, torch.zeros(2, 4), torch.zeros(2, 3, 1), noise=torch.zeros(2, 3, 3))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("clipped", [False, True])
def test_fused_forced_shallow_plrnn_matches_autograd(clipped, dtype):
    from neurodyn.models import ShallowPLRNN
    from neurodyn.training.teacher_forcing import forced_rollout

    model = ShallowPLRNN(2, 5, 3, n_hidden=13, clipped=clipped, seed=0).to(dtype)
    gen = torch.Generator().manual_seed(0)
    n_batch, n_steps = 6, 25
    u = torch.randn(n_batch, n_steps, 2, generator=gen, dtype=dtype)
    zhat = torch.randn(n_batch, n_steps, 5, generator=gen, dtype=dtype)
    eps = 0.1 * torch.randn(n_batch, n_steps, 5, generator=gen, dtype=dtype)
    weights = torch.randn(n_batch, n_steps, 5, generator=gen, dtype=dtype)
    z0 = torch.randn(n_batch, 5, generator=gen, dtype=dtype)
    alphas = [0.0 if t % 4 == 3 else 0.3 for t in range(n_steps)]  # some unforced steps
    mask = torch.tensor([1.0, 1.0, 0.0, 1.0, 0.0], dtype=dtype)  # partly observed
    out = []
    for backend in ("numba", "torch"):
        model.zero_grad()
        h0 = z0.clone().requires_grad_(True)
        preds = forced_rollout(model, h0, zhat, alphas, mask, u, eps, backend=backend)
        (preds * weights).sum().backward()
        grads = {k: p.grad.clone() for k, p in model.named_parameters() if p.grad is not None}
        out.append((preds.detach(), {**grads, "z0": h0.grad}))
    (got_p, got), (ref_p, ref) = out
    rtol = 1e-5 if dtype == torch.float32 else 1e-10
    torch.testing.assert_close(got_p, ref_p, rtol=rtol, atol=rtol * ref_p.abs().max())
    assert set(got) == set(ref) and {"a", "W1", "W2", "h1", "h2", "C", "z0"} <= set(got)
    for name in got:
        torch.testing.assert_close(got[name], ref[name], rtol=rtol, atol=rtol * ref[name].abs().max(),
                                   msg=lambda m, name=name: f"{name}: {m}")


def test_fused_forcing_errors():
    from neurodyn.models import ShallowPLRNN

    p = ShallowPLRNN(0, 3, 3, n_hidden=4, seed=0).params()
    z0, target = torch.zeros(2, 3), torch.zeros(2, 5, 3)
    with pytest.raises(ValueError, match="forcing needs 5 alphas"):
        fused_states(p, z0, forcing=(target, [0.1] * 4, [1.0] * 3))
    with pytest.raises(ValueError, match="must not require grad"):
        fused_states(p, z0, forcing=(target.requires_grad_(), [0.1] * 5, [1.0] * 3))
    with pytest.raises(ValueError, match="shallow PLRNN, PLRNN and ALRNN only"):
        fused_states(LeakyRNN(1, 3, 1).params(), z0, torch.zeros(2, 5, 1),
                     forcing=(target, [0.1] * 5, [1.0] * 3))
    assert fused_backend(LeakyRNN(1, 3, 1).params(), forcing=True) == "torch"


def _stacked(models):
    """Ensemble params whose recurrence fields keep each model's autograd graph."""
    ps = [m.params() for m in models]
    return ps[0]._replace(**{f: torch.stack([getattr(p, f) for p in ps]) for f in ("w_in", "w_rec", "b")})


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_fused_ensemble_gradients_match_autograd_per_network(dtype):
    # three Dale networks with masks, softplus (no rational tanh), noise; the stack against each alone
    gen = torch.Generator().manual_seed(2)
    models = [LeakyRNN(2, 9, 1, activation="softplus", alpha=0.3, dale=True, seed=s,
                       rec_mask=(torch.rand(9, 9, generator=gen) > 0.3).float()).to(dtype) for s in range(3)]
    x = torch.randn(3, 5, 30, 2, generator=gen, dtype=dtype)
    h0 = (0.5 * torch.randn(3, 5, 9, generator=gen, dtype=dtype)).requires_grad_(True)
    noise = 0.1 * torch.randn(3, 5, 30, 9, generator=gen, dtype=dtype)
    weights = torch.randn(3, 5, 30, 9, generator=gen, dtype=dtype)
    states = fused_states(_stacked(models), h0, x, noise=noise)
    (states * weights).sum().backward()
    assert_stack_matches(models, states, h0, x, noise, weights, dtype, names={"w_in", "w_rec", "b", "h0"})


def _stack_forcings(forcings):
    """One ReadoutForcing for an ensemble: every tensor field stacked over the networks."""
    return forcings[0]._replace(**{f: torch.stack([getattr(r, f) for r in forcings])
                                   for f in ("targets", "mask", "w_out", "b_out", "pinv")})


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("per_output", [True, False])
@pytest.mark.parametrize("method", ["error", "teacher"])
def test_fused_forced_ensemble_matches_autograd_per_network(method, per_output, dtype):
    # each network forced through its own readout towards its own targets, after the noise; the
    # stack against autograd through each network's forced torch rollout alone
    gen = torch.Generator().manual_seed(4)
    models = [LeakyRNN(2, 9, 3, alpha=0.3, gain=0.8, dale=True, seed=s,
                       rec_mask=(torch.rand(9, 9, generator=gen) > 0.3).float()).to(dtype) for s in range(3)]
    x = torch.randn(3, 5, 30, 2, generator=gen, dtype=dtype)
    h0 = (0.5 * torch.randn(3, 5, 9, generator=gen, dtype=dtype)).requires_grad_(True)
    noise = 0.1 * torch.randn(3, 5, 30, 9, generator=gen, dtype=dtype)
    weights = torch.randn(3, 5, 30, 9, generator=gen, dtype=dtype)
    forcings = [_readout_forcing(m, method, per_output, gen, 5, 30) for m in models]
    states = fused_states(_stacked(models), h0, x, noise=noise, forcing=_stack_forcings(forcings))
    free = fused_states(_stacked(models), h0, x, noise=noise)
    assert not torch.allclose(states, free)  # the forcing acts
    (states * weights).sum().backward()
    assert_stack_matches(models, states, h0, x, noise, weights, dtype, names={"w_in", "w_rec", "b", "h0"},
                         forcings=forcings)


def test_fused_ensemble_gradcheck_float64():
    models = [LeakyRNN(2, 2, 1, alpha=0.5, seed=s).double() for s in range(2)]  # tiny: few evaluations
    p = _stacked(models)
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(2, 1, 3, 2, generator=gen, dtype=torch.float64)
    h0 = torch.randn(2, 1, 2, generator=gen, dtype=torch.float64, requires_grad=True)
    w, b = (t.detach().clone().requires_grad_(True) for t in (p.w_rec, p.b))
    assert torch.autograd.gradcheck(lambda w, b, h0: fused_states(p._replace(w_rec=w, b=b), h0, x),
                                    (w, b, h0), eps=1e-6, atol=1e-8)


def test_fused_ensemble_shape_errors_and_backend():
    from neurodyn.kernels import stack_params
    from neurodyn.models import ShallowPLRNN

    p = stack_params([LeakyRNN(1, 4, 1, seed=s) for s in range(3)])
    with pytest.raises(ValueError, match=r"h0 must have shape \(network, batch, state\) with 3 networks"):
        fused_states(p, torch.zeros(2, 5, 4), torch.zeros(3, 5, 6, 1))
    with pytest.raises(ValueError, match=r"inputs must have shape \(3, 5\) \+ \(time, input\)"):
        fused_states(p, torch.zeros(3, 5, 4), torch.zeros(5, 6, 1))
    shallow = stack_params([ShallowPLRNN(0, 3, 3, n_hidden=4, seed=s) for s in range(2)])
    assert fused_backend(p) == "numba" and fused_backend(shallow) == "numba"  # every fused family
    with pytest.raises(ValueError, match="forced rollouts are fused for one network, not an ensemble"):
        fused_backend(shallow, backend="numba", forcing=True)


@pytest.mark.parametrize("family", ["leaky", "gru"])
@pytest.mark.parametrize("n_inputs", [0, 2])
def test_readout_forcing_without_inputs_runs_as_zero_inputs(family, n_inputs):
    # the forcing targets set the number of steps; no inputs is the same rollout as zero inputs
    from neurodyn.kernels import stack_params
    from neurodyn.kernels.fused import ReadoutForcing
    from neurodyn.models import GRU

    make = (lambda s: LeakyRNN(n_inputs, 6, 2, alpha=0.5, seed=s)) if family == "leaky" else \
        (lambda s: GRU(n_inputs, 6, 2, seed=s))
    model = make(0).double()
    p = model.params()
    targets = torch.randn(3, 5, 2, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    forcing = ReadoutForcing("teacher", 0.6, targets, torch.ones(3, 5, 1, dtype=torch.float64), p.w_out,
                             p.b_out, torch.linalg.pinv(p.w_out))
    h0 = model.initial_state(3)
    zeros = torch.zeros(3, 5, n_inputs, dtype=torch.float64)
    got = fused_states(p, h0, forcing=forcing)
    assert torch.equal(got, fused_states(p, h0, zeros, forcing=forcing))
    nets = [make(s).double() for s in range(2)]
    stacked = stack_params(nets)
    mask = torch.ones(2, 3, 5, 2, dtype=torch.float64)
    fs = ReadoutForcing("error", 1.0, targets.expand(2, -1, -1, -1), mask, stacked.w_out, stacked.b_out,
                        torch.linalg.pinv(stacked.w_out))
    h0s = h0.expand(2, -1, -1).contiguous()
    both = fused_states(stacked, h0s, forcing=fs)
    assert torch.equal(both, fused_states(stacked, h0s, zeros.expand(2, -1, -1, -1), forcing=fs))


def _plrnn_forcing(**change):
    from neurodyn.models import PLRNN

    model = PLRNN(2, 5, 3, seed=0).double()
    gen = torch.Generator().manual_seed(0)
    forcing = _readout_forcing(model, "error", True, gen, 3, 6, strength=0.5)
    forcing = forcing._replace(mask=torch.ones_like(forcing.targets), **change)
    return model, torch.randn(3, 6, 2, generator=gen, dtype=torch.float64), forcing


def test_readout_forcing_fields_get_one_line_errors_naming_the_field():
    model, x, forcing = _plrnn_forcing()
    p, h0 = model.params(), model.initial_state(3)
    with pytest.raises(ValueError, match=r"ReadoutForcing.w_out must have shape \(3, 5\), got \(5, 3\)"):
        fused_states(p, h0, x, forcing=forcing._replace(w_out=forcing.w_out.T))
    with pytest.raises(TypeError, match="ReadoutForcing.targets must be a torch.Tensor, got ndarray"):
        fused_states(p, h0, x, forcing=forcing._replace(targets=forcing.targets.numpy()))
    with pytest.raises(TypeError, match="ReadoutForcing.strength must be a number"):
        fused_states(p, h0, x, forcing=forcing._replace(strength="0.5"))
    with pytest.raises(TypeError, match="got tuple of 7 fields"):
        fused_states(p, h0, x, forcing=tuple(forcing))


def test_non_finite_targets_where_the_mask_is_zero_are_not_forced():
    # fused and torch alike: a NaN target the mask leaves out changes nothing; one it counts is refused
    from neurodyn.training.forcing import Forcing, forced_task_rollout

    model, x, forcing = _plrnn_forcing()
    mask = forcing.mask.clone()
    mask[0, 2, 1] = 0.0
    clean, dirty = forcing.targets.clone(), forcing.targets.clone()
    clean[0, 2, 1], dirty[0, 2, 1] = 0.0, float("nan")
    p, h0 = model.params(), model.initial_state(3)
    for method in ("error", "teacher"):
        got = fused_states(p, h0, x, forcing=forcing._replace(method=method, targets=dirty, mask=mask))
        assert torch.isfinite(got).all()
        assert torch.equal(got, fused_states(p, h0, x, forcing=forcing._replace(method=method, targets=clean,
                                                                                  mask=mask)))
        ref = forced_task_rollout(model, x, dirty, mask, forcing=Forcing(method, ridge=1e-3), strength=0.5,
                                  backend="torch")
        torch.testing.assert_close(ref.states, got, rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="NaN or infinite where the mask counts them"):
        fused_states(p, h0, x, forcing=forcing._replace(targets=dirty))


def test_inputs_in_another_dtype_run_in_the_rollout_dtype():
    from neurodyn.models import GRU, PLRNN

    for model in (PLRNN(2, 5, 3, seed=0), GRU(2, 5, 3, seed=0)):
        x = torch.randn(3, 6, 2, generator=torch.Generator().manual_seed(0))
        want = fused_states(model.params(), model.initial_state(3), x)
        got = fused_states(model.params(), model.initial_state(3), x.double())
        assert got.dtype == torch.float32 and torch.allclose(got, want, atol=1e-6)
