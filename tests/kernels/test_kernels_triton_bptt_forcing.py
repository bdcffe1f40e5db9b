"""The Triton leaky-RNN training kernels under forcing through the readout (error and teacher forcing),
against torch autograd, in Triton's CPU interpreter.

``TRITON_INTERPRET=1`` must be set before Triton is imported, so the cases run in one child process
(as in ``test_kernels_triton_bptt.py``) and this module checks the numbers it reports. The oracle is
autograd through the torch step (:func:`~neurodyn.models.leaky_rnn_step` plus the given noise) followed
by the training layer's :func:`~neurodyn.training.forcing.forcing_step`, in float32, on the same
effective parameters; the states compared are those before forcing.
"""

from __future__ import annotations

import pytest
from _triton_child import assert_train_matches_torch, assert_within_tolerance, run_interpreted

pytest.importorskip("triton", reason="the Triton backend is the 'gpu' extra: pip install 'neurodyn[gpu]'")

CHILD = r"""
import itertools

from neurodyn.kernels import fused_backend, fused_states, stack_params
from neurodyn.kernels.fused import ReadoutForcing
from neurodyn.models import GRU, LeakyRNN, leaky_rnn_step
from neurodyn.tasks import FlipFlop
from neurodyn.training import train
from neurodyn.training.forcing import forcing_step
from neurodyn.training.observation import readout_pinv
import neurodyn.kernels._triton_backend as tb

out = {}
gen = torch.Generator().manual_seed(0)
calls = counting(tb, n="leaky_train_forward")

def leaves(p):
    # the effective weights as leaves of their own, so both paths differentiate the same tensors
    return p._replace(**{k: getattr(p, k).detach().clone().requires_grad_() for k in ("w_rec", "w_in", "b")})

def forcing_for(p, method, per_output, strength, n_batch, n_steps):
    # random targets, a 0/1 mask (per output or shared) leaving some steps unforced, a ridge pinv
    w_out, b_out = p.w_out.detach(), p.b_out.detach()
    pinv, _ = readout_pinv(w_out, ridge=1e-3)
    n_out = w_out.shape[0]
    targets = torch.randn(n_batch, n_steps, n_out, generator=gen)
    mask = (torch.rand(n_batch, n_steps, n_out if per_output else 1, generator=gen) > 0.3).float()
    return ReadoutForcing(method, strength, targets, mask, w_out, b_out, pinv)

def reference(p, h, x, noise, f):
    states = []
    for t in range(x.shape[1]):
        h = leaky_rnn_step(p, h, x[:, t]) + (0 if noise is None else noise[:, t])
        states.append(h)
        h = forcing_step(h, h.detach() @ f.w_out.mT + f.b_out, f.targets[:, t], f.mask[:, t], method=f.method,
                         strength=f.strength, pinv=f.pinv, bias=f.b_out)
    return torch.stack(states, dim=1)

def run(rollout, p, h0, x):
    q, h, u = leaves(p), h0.clone().requires_grad_(), x.clone().requires_grad_()
    states = rollout(q, h, u)
    loss(states).backward()
    grads = {k: getattr(q, k).grad for k in ("w_rec", "w_in", "b")}
    return {"states": states.detach(), **grads, "h0": h.grad, "inputs": u.grad}

def fused(noise, f):
    return lambda q, h, u: fused_states(q, h, u, noise=noise, forcing=f, backend="triton")

def label(per_output):
    return "per_output" if per_output else "shared"

def record(key, got, ref, free):
    out[key] = {name: excess(got[name], ref[name]) for name in ref}
    out[key]["_scale"] = max(v.abs().max().item() for v in ref.values())
    out[key]["_grad_count"] = len(ref) - 1
    out[key]["_forced"] = (ref["states"] - free).abs().max().item()  # how far the forcing moved the states

def draw(lead, n_batch, n_steps, n_in, n, noisy):
    x = torch.randn(*lead, n_batch, n_steps, n_in, generator=gen)
    h0 = torch.randn(*lead, n_batch, n, generator=gen)
    return x, h0, 0.1 * torch.randn(*lead, n_batch, n_steps, n, generator=gen) if noisy else None

# one network: every method, mask kind, strength, with and without noise; 9 units (padded to 16) or 16
for i, (method, per_output, strength, noisy) in enumerate(
        itertools.product(("error", "teacher"), (True, False), (0.6, 1.0), (True, False))):
    n, n_batch = (9, 3) if i % 2 == 0 else (16, 4)
    p = LeakyRNN(2, n, 3, alpha=0.3, gain=0.9, dale=i % 4 == 1, seed=i).params()
    x, h0, noise = draw((), n_batch, 6, 2, n, noisy)
    f = forcing_for(p, method, per_output, strength, n_batch, 6)
    got = run(fused(noise, f), p, h0, x)
    ref = run(lambda q, h, u: reference(q, h, u, noise, f), p, h0, x)
    free = fused_states(p, h0, x, noise=noise, backend="triton")
    record(f"{method}_{label(per_output)}_{strength}_{'noise' if noisy else 'clean'}", got, ref, free)

# ensembles of 3 and 2 networks, each forced through its own readout towards its own targets
for k, (method, per_output, strength, noisy, n_net) in enumerate(
        [("error", True, 0.6, True, 3), ("error", False, 1.0, False, 2),
         ("teacher", True, 1.0, False, 3), ("teacher", False, 0.6, True, 2)]):
    nets = [LeakyRNN(2, 9, 2, alpha=0.3, gain=0.9, seed=10 * k + s) for s in range(n_net)]
    p = stack_params(nets)
    x, h0, noise = draw((n_net,), 3, 5, 2, 9, noisy)
    fs = [forcing_for(net.params(), method, per_output, strength, 3, 5) for net in nets]
    f = fs[0]._replace(**{a: torch.stack([getattr(g, a) for g in fs])
                          for a in ("targets", "mask", "w_out", "b_out", "pinv")})
    got = run(fused(noise, f), p, h0, x)
    free = fused_states(p, h0, x, noise=noise, backend="triton")
    key = f"ensemble_{n_net}_{method}_{label(per_output)}"
    for e, net in enumerate(nets):
        xi = None if noise is None else noise[e]
        ref = run(lambda q, h, u: reference(q, h, u, xi, fs[e]), net.params(), h0[e], x[e])
        record(f"{key}_{e}", {name: v[e] for name, v in got.items()}, ref, free[e])

# dispatch under the interpreter, and one-line refusals
leaky = LeakyRNN(1, 8, 2).params()
out["backend_triton"] = [fused_backend(leaky, backend="triton", forcing="readout"),
                         fused_backend(stack_params([LeakyRNN(1, 8, 2, seed=s) for s in range(2)]),
                                       backend="triton", forcing="readout")]
gru = GRU(1, 8, 2).params()
f_gru = forcing_for(gru, "error", True, 0.6, 3, 4)
out["refusals"] = refusals({
    "gru": lambda: fused(None, f_gru)(gru, torch.zeros(3, 8), torch.zeros(3, 4, 1)),
    "outputs": lambda: fused_backend(LeakyRNN(1, 8, 33).params(), backend="triton", forcing="readout"),
})

# train with error forcing: 3 Adam steps on the Triton rollout (noise on) equal the torch loop's
task = FlipFlop(n_bits=2, n_steps=8)
kw = dict(n_iterations=3, batch_size=4, lr=1e-2, eval_every=0, progress=False, seed=3, forcing="error",
          forcing_strength=0.5)
before = calls["n"]
fits = {b: train(LeakyRNN(2, 12, 2, alpha=0.2, noise_std=0.1, dale=True, train_h0=True, seed=0), task,
                 backend=b, **kw) for b in ("triton", "torch")}
fit_record(out, "train", fits)
out["train_triton_calls"] = calls["n"] - before

# train_ensemble with teacher forcing: 2 steps of 2 networks in one forced Triton launch each, as torch
from neurodyn.training import train_ensemble

before = calls["n"]
ens = {b: train_ensemble(lambda seed: LeakyRNN(2, 12, 2, alpha=0.2, noise_std=0.1, seed=seed), task,
                         n_networks=2, n_iterations=2, batch_size=4, lr=1e-2, eval_every=0, progress=False,
                         forcing="teacher", forcing_strength=0.5, backend=b) for b in ("triton", "torch")}
fit_record(out, "ensemble", ens)
out["ensemble_triton_calls"] = calls["n"] - before
print(json.dumps(out))
"""

ONE = [f"{m}_{k}_{s}_{n}" for m in ("error", "teacher") for k in ("per_output", "shared") for s in (0.6, 1.0)
       for n in ("noise", "clean")]
ENSEMBLES = [f"ensemble_{n}_{m}_{k}" for n, m, k in ((3, "error", "per_output"), (2, "error", "shared"),
                                                     (3, "teacher", "per_output"), (2, "teacher", "shared"))]


@pytest.fixture(scope="module")
def interpreted():
    return run_interpreted(CHILD)


def _check(case: dict, key: str) -> None:
    assert case["_forced"] > 1e-3, f"{key}: the forcing does not act"
    assert case["_grad_count"] == 5  # w_rec, w_in, b, h0, inputs
    assert_within_tolerance(case, key)


@pytest.mark.parametrize("key", ONE)
def test_forced_triton_bptt_matches_autograd(interpreted, key):
    _check(interpreted[key], key)


@pytest.mark.parametrize("key", ENSEMBLES)
def test_forced_triton_ensemble_matches_autograd_per_network(interpreted, key):
    n_net = int(key.split("_")[1])
    for e in range(n_net):
        _check(interpreted[f"{key}_{e}"], f"{key} network {e}")


def test_forced_triton_dispatch(interpreted):
    assert interpreted["backend_triton"] == ["triton", "triton"]
    refusals = interpreted["refusals"]
    assert "through the readout is fused for the leaky RNN only, not 'gru'" in refusals["gru"]
    assert "at most 32 outputs on chip (got 33)" in refusals["outputs"]
    assert all("\n" not in message for message in refusals.values())


def test_train_with_error_forcing_on_triton_matches_torch(interpreted):
    assert_train_matches_torch(interpreted)
    assert interpreted["train_triton_calls"] == 3  # one forced forward launch per optimiser step


def test_train_ensemble_with_teacher_forcing_on_triton_matches_torch(interpreted):
    assert_train_matches_torch(interpreted, "ensemble")
    assert interpreted["ensemble_triton_calls"] == 2  # one launch for both networks per step
