"""The GRU Triton training kernels (forward + BPTT) against autograd, in Triton's CPU interpreter.

``TRITON_INTERPRET=1`` must be set before Triton is imported, so the cases run in one child process
(as in ``test_kernels_triton_bptt.py``) and this module checks the numbers it reports. The oracle is
autograd through the model's torch step (``gru_step`` plus the given noise), in float32.
"""

from __future__ import annotations

import pytest
import torch
from _triton_child import (
    assert_dispatch,
    assert_train_matches_torch,
    assert_within_tolerance,
    run_interpreted,
)

pytest.importorskip("triton", reason="the Triton backend is the 'gpu' extra: pip install 'neurodyn[gpu]'")

CHILD = r"""
import neurodyn.kernels._triton_backend as tb
from neurodyn.kernels import fused_backend, fused_states, stack_params
from neurodyn.models import GRU, gru_step
from neurodyn.tasks import FlipFlop
from neurodyn.training import train, train_ensemble

out = {}

def make(n_in, n, seed):
    model = GRU(n_in, n, 1, seed=seed)
    with torch.no_grad():  # twice the default init, so that the gates saturate a little
        for p in model.parameters():
            p.mul_(2.0)
    return model

def run(model, h0, x, noise, backend):
    model.zero_grad()
    h0, x = h0.clone().requires_grad_(), x.clone().requires_grad_()
    if backend == "torch":
        states = torch_states(model.step, h0, x, noise)
    else:
        states = fused_states(model.params(), h0, x, noise=noise, backend=backend)
    loss(states).backward()
    grads = {name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None}
    got = {"states": states.detach(), "h0": h0.grad, "inputs": x.grad, **grads}
    return {k: v for k, v in got.items() if v is not None and v.numel() > 0}

def record(key, a, b):
    out[key] = {name: excess(a[name], b[name]) for name in b}
    out[key]["_scale"] = max(v.abs().max().item() for v in b.values())
    out[key]["_names"] = sorted(b)

gen = torch.Generator().manual_seed(0)
# units, batch (16 rows a block), steps, noise
cases = [(12, 5, 6, False), (12, 5, 6, True), (12, 17, 5, True), (7, 3, 4, False), (64, 3, 4, True)]
for i, (n, batch, steps, noisy) in enumerate(cases):
    model = make(3, n, i)
    x, h0 = torch.randn(batch, steps, 3, generator=gen), torch.randn(batch, n, generator=gen)
    noise = 0.1 * torch.randn(batch, steps, n, generator=gen) if noisy else None
    record(f"gru_{n}_{batch}x{steps}{'_noise' if noisy else ''}", run(model, h0, x, noise, "triton"),
           run(model, h0, x, noise, "torch"))

# stacks of 3 networks in one call, against autograd through each network's torch step
fields = ("w_ih", "w_hh", "b_ih", "b_hh")
for noisy in (True, False):
    p = stack_params([make(2, 12, 20 + s) for s in range(3)])
    p = p._replace(**{f: getattr(p, f).detach().requires_grad_() for f in fields})
    xs, h0s = torch.randn(3, 5, 6, 2, generator=gen), torch.randn(3, 5, 12, generator=gen)
    noise = 0.1 * torch.randn(3, 5, 6, 12, generator=gen) if noisy else None
    got = {}
    for backend in ("triton", "torch"):
        for f in fields:
            getattr(p, f).grad = None
        h0, x = h0s.clone().requires_grad_(), xs.clone().requires_grad_()
        if backend == "triton":
            states = fused_states(p, h0, x, noise=noise, backend="triton")
        else:
            nets = [p._replace(**{f: getattr(p, f)[e] for f in fields}) for e in range(3)]
            states = torch.stack([torch_states(lambda h, u, q=q: gru_step(q, h, u), h0[e], x[e],
                                               None if noise is None else noise[e])
                                  for e, q in enumerate(nets)])
        loss(states).backward()
        got[backend] = {"states": states.detach(), "h0": h0.grad, "inputs": x.grad,
                        **{f: getattr(p, f).grad.clone() for f in fields}}
    record(f"stack{'_noise' if noisy else ''}", got["triton"], got["torch"])

# dispatch: under the interpreter the CPU may take backend="triton"; what it does not cover raises
stacked = stack_params([GRU(1, 8, 1, seed=s) for s in range(3)])
out["backend_triton"] = [fused_backend(GRU(1, 8, 1).params(), backend="triton"),
                         fused_backend(stacked, backend="triton")]
out["refusals"] = refusals({
    "float64": lambda: fused_backend(GRU(1, 8, 1).params(), backend="triton", dtype=torch.float64),
    "units": lambda: fused_backend(GRU(1, 65, 1).params(), backend="triton"),
})

# train: 2 Adam steps on the Triton rollout equal the torch loop's (the GRU draws no state noise)
task = FlipFlop(n_bits=2, n_steps=10)
kw = dict(n_iterations=2, batch_size=5, lr=1e-2, eval_every=0, progress=False, seed=3)
fits = {b: train(GRU(2, 12, 2, train_h0=True, seed=0), task, backend=b, **kw) for b in ("triton", "torch")}
fit_record(out, "train", fits)

# train_ensemble(backend="triton") runs the Triton kernels (counted) and equals the torch ensemble
calls = counting(tb, n="gru_train_forward")
ens = {b: train_ensemble(lambda seed: GRU(2, 12, 2, seed=seed), task, n_networks=2, n_iterations=2,
                         batch_size=5, lr=1e-2, eval_every=0, progress=False, backend=b)
       for b in ("triton", "torch")}
fit_record(out, "ensemble", ens)
out["ensemble_triton_calls"] = calls["n"]
print(json.dumps(out))
"""

CASES = ["gru_12_5x6", "gru_12_5x6_noise", "gru_12_17x5_noise", "gru_7_3x4", "gru_64_3x4_noise",
         "stack_noise", "stack"]


@pytest.fixture(scope="module")
def interpreted():
    return run_interpreted(CHILD)


@pytest.mark.parametrize("key", CASES)
def test_triton_gru_bptt_matches_autograd(interpreted, key):
    case = interpreted[key]
    # states and dL/dh0, dL/dinputs, and the W_ih, W_hh, b_ih, b_hh gradients
    assert case["_names"] == ["b_hh", "b_ih", "h0", "inputs", "states", "w_hh", "w_ih"]
    assert_within_tolerance(case, key)


def test_triton_gru_training_dispatch(interpreted):
    assert_dispatch(interpreted)


def test_train_gru_on_triton_matches_torch(interpreted):
    assert_train_matches_torch(interpreted)


def test_gru_ensemble_on_triton_runs_the_triton_kernels_and_matches_torch(interpreted):
    assert_train_matches_torch(interpreted, "ensemble")
    assert interpreted["ensemble_triton_calls"] == 2  # one forward launch per optimiser step


def test_auto_picks_triton_for_gru_on_cuda():
    # fused_backend only inspects the device, so this runs without a GPU
    from neurodyn.kernels import fused_backend, stack_params
    from neurodyn.models import GRU

    gru = GRU(1, 64, 1).params()
    assert fused_backend(gru, device="cuda") == "triton"
    assert fused_backend(stack_params([GRU(1, 8, 1, seed=s) for s in range(3)]), device="cuda") == "triton"
    assert fused_backend(gru, device="cpu") == "numba"
    assert fused_backend(GRU(1, 65, 1).params(), device="cuda") == "torch"
    assert fused_backend(gru, device="cuda", dtype=torch.float64) == "torch"
    assert fused_backend(gru, device="cuda", state_hook=lambda t, h: h) == "torch"


def test_triton_gru_training_refusals_name_the_reason():
    from neurodyn.kernels._triton_backend import train_supports
    from neurodyn.models import GRU

    assert train_supports("gru", GRU(1, 64, 1).params(), torch.float32) is None
    assert train_supports("gru", GRU(1, 65, 1).params(), torch.float32) == (
        "the Triton training kernels hold at most 64 units on chip (got 65); use backend='torch'")
    assert train_supports("gru", GRU(1, 8, 1).params(), torch.float64) == (
        "the Triton kernels are float32 (got torch.float64); use backend='numba' or 'torch'")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="compiled Triton kernels need a CUDA GPU")
def test_train_gru_on_cuda_matches_numba_on_cpu():
    from neurodyn.models import GRU
    from neurodyn.tasks import FlipFlop
    from neurodyn.training import train

    task = FlipFlop(n_bits=2, n_steps=30)
    kw = dict(n_iterations=3, batch_size=64, lr=1e-2, eval_every=0, progress=False, seed=3)
    fits = {d: train(GRU(2, 48, 2, train_h0=True, seed=0), task, device=d, **kw) for d in ("cuda", "cpu")}
    assert fits["cuda"].config["backend"] == "triton" and fits["cpu"].config["backend"] == "numba"
    assert fits["cuda"].history["loss"] == pytest.approx(fits["cpu"].history["loss"], rel=1e-4)
    for p, q in zip(fits["cuda"].model.parameters(), fits["cpu"].model.parameters()):
        torch.testing.assert_close(p.detach().cpu(), q.detach().cpu(), rtol=1e-4, atol=1e-5)
