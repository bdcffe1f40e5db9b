"""The Triton training kernels (leaky-RNN forward + BPTT) against torch autograd, in Triton's CPU interpreter.

``TRITON_INTERPRET=1`` must be set before Triton is imported, so the cases run in one child process
(as in ``test_kernels_triton.py``) and this module checks the numbers it reports. The oracle is
autograd through the torch step (:meth:`LeakyRNN.step` plus the given noise), in float32.
"""

from __future__ import annotations

import os

import pytest
import torch
from _triton_child import assert_train_matches_torch, assert_within_tolerance, run_interpreted

pytest.importorskip("triton", reason="the Triton backend is the 'gpu' extra: pip install 'neurodyn[gpu]'")

CHILD = r"""
from neurodyn.kernels import fused_backend, fused_states, stack_params
from neurodyn.models import LSTM, LeakyRNN
from neurodyn.tasks import FlipFlop
from neurodyn.training import train

out = {}

def make(n_in, n, act, alpha, seed, bias):
    model = LeakyRNN(n_in, n, 1, activation=act, alpha=alpha, gain=0.9, dale=seed % 2 == 1, seed=seed)
    with torch.no_grad():
        model.b.copy_(bias * torch.randn(n, generator=torch.Generator().manual_seed(seed + 7)))
    return model

def run(model, h0, x, noise, backend):
    model.zero_grad()
    h0, x = h0.clone().requires_grad_(), x.clone().requires_grad_()
    if backend == "torch":
        h, states = h0, []
        for t in range(x.shape[1]):
            h = model.step(h, x[:, t]) + (0 if noise is None else noise[:, t])
            states.append(h)
        states = torch.stack(states, dim=1)
    else:
        states = fused_states(model.params(), h0, x, noise=noise, backend=backend)
    (states.sin() * torch.linspace(-1, 2, states.shape[-1])).sum().backward()
    grads = {name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None}
    got = {"states": states.detach(), "h0": h0.grad, "inputs": x.grad, **grads}
    return {k: v for k, v in got.items() if v is not None and v.numel() > 0}  # nothing of 0 inputs

def compare(key, model, h0, x, noise):
    a, b = run(model, h0, x, noise, "triton"), run(model, h0, x, noise, "torch")
    out[key] = {name: excess(a[name], b[name]) for name in b}
    out[key]["_scale"] = max(v.abs().max().item() for v in b.values())
    out[key]["_grad_count"] = len(b) - 1

gen = torch.Generator().manual_seed(0)
cases = [("tanh", 5, 3, 4, 0.3, True, 0.5), ("relu", 20, 17, 7, 1.0, False, 0.5),
         ("softplus", 20, 3, 5, 0.2, True, 0.0), ("sigmoid", 5, 17, 6, 0.5, True, 0.5),
         ("linear", 20, 17, 4, 0.1, False, 0.5)]
for i, (act, n, batch, steps, alpha, noisy, bias) in enumerate(cases):
    model = make(3, n, act, alpha, i, bias)
    x, h0 = torch.randn(batch, steps, 3, generator=gen), torch.randn(batch, n, generator=gen)
    noise = 0.1 * torch.randn(batch, steps, n, generator=gen) if noisy else None
    compare(f"{act}_{n}x{batch}x{steps}", model, h0, x, noise)

# no inputs, 64 units (the largest resident tile)
compare("tanh_64_no_inputs", make(0, 64, "tanh", 0.3, 9, 0.5), torch.randn(3, 64, generator=gen),
        torch.zeros(3, 5, 0), None)

# deterministic: two backwards over 2 batch blocks give the same bits
model = make(3, 20, "tanh", 0.3, 1, 0.5)
x, h0 = torch.randn(33, 5, 3, generator=gen), torch.randn(33, 20, generator=gen)
first, second = run(model, h0, x, None, "triton"), run(model, h0, x, None, "triton")
out["deterministic"] = all(torch.equal(first[k], second[k]) for k in first)

# an ensemble in one call: network e gets what it gets alone
nets = [make(2, 9, "tanh", 0.3, s, 0.5) for s in range(3)]
xs, h0s = torch.randn(3, 4, 5, 2, generator=gen), torch.randn(3, 4, 9, generator=gen)
p = stack_params(nets)
p = p._replace(w_rec=p.w_rec.detach().requires_grad_(), w_in=p.w_in.detach().requires_grad_())
stack = fused_states(p, h0s, xs, backend="triton")
stack.square().sum().backward()
alone = []
for e, net in enumerate(nets):
    q = net.params()
    q = q._replace(w_rec=q.w_rec.detach().requires_grad_())
    s = fused_states(q, h0s[e], xs[e], backend="numba")
    s.square().sum().backward()
    alone.append((s.detach(), q.w_rec.grad))
out["ensemble"] = max(max(excess(stack[e].detach(), s), excess(p.w_rec.grad[e], g))
                      for e, (s, g) in enumerate(alone))

# dispatch: under the interpreter the CPU may take backend="triton"; what it does not cover raises
out["backend_triton"] = fused_backend(LeakyRNN(1, 8, 1).params(), backend="triton")
out["refusals"] = refusals({
    "lstm": lambda: fused_backend(LSTM(1, 8, 1).params(), backend="triton"),
    "float64": lambda: fused_backend(LeakyRNN(1, 8, 1).params(), backend="triton", dtype=torch.float64),
    "units": lambda: fused_backend(LeakyRNN(1, 65, 1).params(), backend="triton"),
    "forcing": lambda: fused_backend(LeakyRNN(1, 8, 33).params(), backend="triton", forcing="readout"),
})

# train: 3 Adam steps on the Triton rollout (noise on) equal the torch loop's
task = FlipFlop(n_bits=2, n_steps=12)
kw = dict(n_iterations=3, batch_size=8, lr=1e-2, eval_every=0, progress=False, seed=3)
fits = {b: train(LeakyRNN(2, 12, 2, alpha=0.2, noise_std=0.1, dale=True, train_h0=True, seed=0), task,
                 backend=b, **kw) for b in ("triton", "torch")}
fit_record(out, "train", fits)

# train_ensemble(backend="triton") runs the Triton kernels (counted) and equals the torch ensemble
import neurodyn.kernels._triton_backend as tb
from neurodyn.training import train_ensemble

calls = counting(tb, n="leaky_train_forward")
ens = {b: train_ensemble(lambda seed: LeakyRNN(2, 12, 2, alpha=0.2, seed=seed), task, n_networks=2,
                         n_iterations=2, batch_size=8, lr=1e-2, eval_every=0, progress=False, backend=b)
       for b in ("triton", "torch")}
fit_record(out, "ensemble", ens)
out["ensemble_triton_calls"] = calls["n"]
print(json.dumps(out))
"""

CASES = ["tanh_5x3x4", "relu_20x17x7", "softplus_20x3x5", "sigmoid_5x17x6", "linear_20x17x4",
         "tanh_64_no_inputs"]


@pytest.fixture(scope="module")
def interpreted():
    return run_interpreted(CHILD)


@pytest.mark.parametrize("key", CASES)
def test_triton_bptt_matches_autograd(interpreted, key):
    case = interpreted[key]
    # dL/dh0, dL/dinputs and the raw weights' w_in, w_rec, b (without inputs: dL/dh0, w_rec, b)
    assert case["_grad_count"] == (3 if key.endswith("no_inputs") else 5)
    assert_within_tolerance(case, key)


def test_triton_bptt_is_deterministic_and_ensembles_match_single_networks(interpreted):
    assert interpreted["deterministic"] is True
    assert interpreted["ensemble"] <= 0


def test_triton_training_dispatch(interpreted):
    assert interpreted["backend_triton"] == "triton"
    refusals = interpreted["refusals"]
    assert "leaky RNN, GRU, PLRNN, ALRNN and shallow PLRNN only, not" in refusals["lstm"]
    assert "float32" in refusals["float64"]
    assert "at most 64 units" in refusals["units"]
    assert "through the readout on Triton holds at most 32 outputs on chip (got 33)" in refusals["forcing"]


def test_train_on_triton_matches_torch(interpreted):
    assert_train_matches_torch(interpreted)


def test_ensemble_on_triton_runs_the_triton_kernels_and_matches_torch(interpreted):
    assert_train_matches_torch(interpreted, "ensemble")
    assert interpreted["ensemble_triton_calls"] == 2  # one forward launch per optimiser step


def test_auto_picks_triton_for_cuda_where_covered():
    # fused_backend only inspects the device, so this runs without a GPU
    from neurodyn.kernels import fused_backend
    from neurodyn.models import GRU, LSTM, LeakyRNN, ShallowPLRNN

    leaky = LeakyRNN(1, 8, 1).params()
    assert fused_backend(leaky, device="cuda") == "triton"
    assert fused_backend(leaky, device="cpu") == "numba"
    assert fused_backend(ShallowPLRNN(1, 8, 1, n_hidden=16).params(), device="cuda") == "triton"
    assert fused_backend(LSTM(1, 8, 1).params(), device="cuda") == "torch"
    assert fused_backend(LeakyRNN(1, 65, 1).params(), device="cuda") == "torch"
    assert fused_backend(leaky, device="cuda", dtype=torch.float64) == "torch"
    assert fused_backend(leaky, device="cuda", forcing="readout") == "triton"
    assert fused_backend(LeakyRNN(1, 8, 33).params(), device="cuda", forcing="readout") == "torch"
    assert fused_backend(GRU(1, 8, 1).params(), device="cuda", forcing="readout") == "torch"
    assert fused_backend(leaky, device="cuda", state_hook=lambda t, h: h) == "torch"


def test_triton_training_on_cpu_without_interpreter_is_refused():
    if os.environ.get("TRITON_INTERPRET") == "1":
        pytest.skip("this process runs the interpreter")
    from neurodyn.kernels import fused_backend
    from neurodyn.models import LeakyRNN

    with pytest.raises(ValueError, match="need a CUDA device"):
        fused_backend(LeakyRNN(1, 8, 1).params(), backend="triton")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="compiled Triton kernels need a CUDA GPU")
def test_train_on_cuda_matches_numba_on_cpu():
    from neurodyn.tasks import FlipFlop
    from neurodyn.training import train

    task = FlipFlop(n_bits=2, n_steps=30)
    kw = dict(n_iterations=3, batch_size=64, lr=1e-2, eval_every=0, progress=False, seed=3)
    # without noise: CUDA and CPU generators draw different numbers
    fits = {d: train(_model(0.0), task, device=d, **kw) for d in ("cuda", "cpu")}
    assert fits["cuda"].config["backend"] == "triton" and fits["cpu"].config["backend"] == "numba"
    _assert_same_fit(fits["cuda"], fits["cpu"])
    # with noise, against the torch loop on the same CUDA generator
    noisy = {b: train(_model(0.1), task, device="cuda", backend=b, **kw) for b in ("auto", "torch")}
    assert noisy["auto"].config["backend"] == "triton"
    _assert_same_fit(noisy["auto"], noisy["torch"])


def _model(noise_std: float):
    from neurodyn.models import LeakyRNN

    return LeakyRNN(2, 48, 2, alpha=0.2, noise_std=noise_std, dale=True, train_h0=True, seed=0)


def _assert_same_fit(a, b) -> None:
    assert a.history["loss"] == pytest.approx(b.history["loss"], rel=1e-4)
    for p, q in zip(a.model.parameters(), b.model.parameters()):
        torch.testing.assert_close(p.detach().cpu(), q.detach().cpu(), rtol=1e-4, atol=1e-5)
