"""The PLRNN / ALRNN Triton training kernels (forward + BPTT) against autograd, in Triton's CPU interpreter.

``TRITON_INTERPRET=1`` must be set before Triton is imported, so the cases run in one child process
(as in ``test_kernels_triton_bptt.py``) and this module checks the numbers it reports. The oracle is
autograd through the model's torch step (``plrnn_step`` / ``alrnn_step`` plus the given noise), in
float32.
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
from neurodyn.kernels import fused_backend, fused_states, stack_params
from neurodyn.kernels._families import family_of
from neurodyn.models import ALRNN, PLRNN
from neurodyn.tasks import FlipFlop
from neurodyn.training import train

out = {}

def make(kind, n_in, n, seed, n_relu=None, full_A=False):
    kw = dict(seed=seed, gain=0.9, full_A=full_A)
    model = PLRNN(n_in, n, 1, **kw) if kind == "plrnn" else ALRNN(n_in, n, 1, n_relu=n_relu, **kw)
    with torch.no_grad():  # a non-zero bias, so that the ReLU units switch
        model.h.copy_(0.3 * torch.randn(n, generator=torch.Generator().manual_seed(seed + 7)))
        if full_A:
            model.A.add_(0.05 * torch.randn(n, n, generator=torch.Generator().manual_seed(seed + 8)))
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

def compare(key, model, h0, x, noise):
    a, b = run(model, h0, x, noise, "triton"), run(model, h0, x, noise, "torch")
    out[key] = {name: excess(a[name], b[name]) for name in b}
    out[key]["_scale"] = max(v.abs().max().item() for v in b.values())
    out[key]["_grad_count"] = len(b) - 1
    out[key]["_names"] = sorted(b)

gen = torch.Generator().manual_seed(0)
# kind, latent, n_relu, full A, batch (16 rows a block), steps, noise
cases = [("plrnn", 12, None, False, 5, 6, False), ("plrnn", 12, None, False, 5, 6, True),
         ("alrnn", 12, 4, False, 5, 6, True), ("alrnn", 12, 4, False, 17, 5, False),
         ("alrnn", 7, 0, True, 3, 4, True), ("plrnn", 64, None, False, 3, 4, True)]
for i, (kind, n, n_relu, full, batch, steps, noisy) in enumerate(cases):
    model = make(kind, 3, n, i, n_relu, full)
    x, h0 = torch.randn(batch, steps, 3, generator=gen), torch.randn(batch, n, generator=gen)
    noise = 0.1 * torch.randn(batch, steps, n, generator=gen) if noisy else None
    compare(f"{kind}_{n}_relu{model.n_relu if kind == 'alrnn' else n}{'_fullA' if full else ''}"
            f"_{batch}x{steps}{'_noise' if noisy else ''}", model, h0, x, noise)

# stacks of 3 networks in one call, against autograd through each network's torch step
for kind, noisy in (("plrnn", True), ("alrnn", False)):
    nets = [make(kind, 2, 12, 20 + s, 5) for s in range(3)]
    p = stack_params(nets)
    p = p._replace(**{f: getattr(p, f).detach().requires_grad_() for f in ("A", "W", "h", "C")})
    xs, h0s = torch.randn(3, 5, 6, 2, generator=gen), torch.randn(3, 5, 12, generator=gen)
    noise = 0.1 * torch.randn(3, 5, 6, 12, generator=gen) if noisy else None
    got = {}
    for backend in ("triton", "torch"):
        for f in ("A", "W", "h", "C"):
            getattr(p, f).grad = None
        h0, x = h0s.clone().requires_grad_(), xs.clone().requires_grad_()
        if backend == "triton":
            states = fused_states(p, h0, x, noise=noise, backend="triton")
        else:
            step = family_of(nets[0].params()).step
            states = torch.stack([
                torch_states(lambda h, u, e=e: step(p._replace(A=p.A[e], W=p.W[e], h=p.h[e], C=p.C[e]), h, u),
                             h0[e], x[e], None if noise is None else noise[e]) for e in range(3)])
        loss(states).backward()
        got[backend] = {"states": states.detach(), "h0": h0.grad, "inputs": x.grad,
                        **{f: getattr(p, f).grad.clone() for f in ("A", "W", "h", "C")}}
    key = f"stack_{kind}{'_noise' if noisy else ''}"
    out[key] = {name: excess(got["triton"][name], ref) for name, ref in got["torch"].items()}
    out[key]["_scale"] = max(v.abs().max().item() for v in got["torch"].values())
    out[key]["_grad_count"] = len(got["torch"]) - 1
    out[key]["_names"] = sorted(got["torch"])

# dispatch: under the interpreter the CPU may take backend="triton"; what it does not cover raises
out["backend_triton"] = [fused_backend(PLRNN(1, 8, 1).params(), backend="triton"),
                         fused_backend(stack_params([ALRNN(1, 8, 1, n_relu=2, seed=s) for s in range(3)]),
                                       backend="triton")]
out["refusals"] = refusals({
    "float64": lambda: fused_backend(PLRNN(1, 8, 1).params(), backend="triton", dtype=torch.float64),
    "units": lambda: fused_backend(ALRNN(1, 65, 1, n_relu=3).params(), backend="triton"),
})

# train: 2 Adam steps on the Triton rollout (noise on) equal the torch loop's
task = FlipFlop(n_bits=2, n_steps=10)
kw = dict(n_iterations=2, batch_size=5, lr=1e-2, eval_every=0, progress=False, seed=3)
fits = {b: train(PLRNN(2, 12, 2, noise_std=0.1, train_h0=True, seed=0), task, backend=b, **kw)
        for b in ("triton", "torch")}
fit_record(out, "train", fits)
print(json.dumps(out))
"""

CASES = ["plrnn_12_relu12_5x6", "plrnn_12_relu12_5x6_noise", "alrnn_12_relu4_5x6_noise",
         "alrnn_12_relu4_17x5", "alrnn_7_relu0_fullA_3x4_noise", "plrnn_64_relu64_3x4_noise",
         "stack_plrnn_noise", "stack_alrnn"]


@pytest.fixture(scope="module")
def interpreted():
    return run_interpreted(CHILD)


@pytest.mark.parametrize("key", CASES)
def test_triton_pl_bptt_matches_autograd(interpreted, key):
    case = interpreted[key]
    # states and dL/dh0, dL/dinputs, and the A, W, h (the drive's bias) and C (input weights) gradients
    assert case["_names"] == ["A", "C", "W", "h", "h0", "inputs", "states"]
    assert_within_tolerance(case, key)


def test_triton_pl_training_dispatch(interpreted):
    assert_dispatch(interpreted)


def test_train_plrnn_on_triton_matches_torch(interpreted):
    assert_train_matches_torch(interpreted)


def test_auto_picks_triton_for_pl_models_on_cuda():
    # fused_backend only inspects the device, so this runs without a GPU
    from neurodyn.kernels import fused_backend, stack_params
    from neurodyn.models import ALRNN, PLRNN, ShallowPLRNN

    pl, al = PLRNN(1, 8, 1).params(), ALRNN(1, 64, 1, n_relu=5).params()
    assert fused_backend(pl, device="cuda") == "triton" and fused_backend(al, device="cuda") == "triton"
    assert fused_backend(stack_params([PLRNN(1, 8, 1, seed=s) for s in range(3)]), device="cuda") == "triton"
    assert fused_backend(pl, device="cpu") == "numba"
    assert fused_backend(PLRNN(1, 65, 1).params(), device="cuda") == "torch"
    assert fused_backend(pl, device="cuda", dtype=torch.float64) == "torch"
    assert fused_backend(pl, device="cuda", state_hook=lambda t, h: h) == "torch"
    assert fused_backend(ShallowPLRNN(1, 8, 1, n_hidden=16).params(), device="cuda") == "triton"


def test_triton_pl_training_refusals_name_the_reason():
    from neurodyn.kernels._triton_backend import train_supports
    from neurodyn.models import ALRNN, PLRNN

    assert train_supports("plrnn", PLRNN(1, 64, 1).params(), torch.float32) is None
    assert train_supports("alrnn", ALRNN(1, 12, 1, n_relu=4).params(), torch.float32) is None
    assert train_supports("plrnn", PLRNN(1, 65, 1).params(), torch.float32) == (
        "the Triton training kernels hold at most 64 units on chip (got 65); use backend='torch'")
    assert train_supports("alrnn", ALRNN(1, 8, 1).params(), torch.float64) == (
        "the Triton kernels are float32 (got torch.float64); use backend='numba' or 'torch'")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="compiled Triton kernels need a CUDA GPU")
def test_train_pl_on_cuda_matches_numba_on_cpu():
    from neurodyn.models import ALRNN, PLRNN
    from neurodyn.tasks import FlipFlop
    from neurodyn.training import train

    task = FlipFlop(n_bits=2, n_steps=30)
    kw = dict(n_iterations=3, batch_size=64, lr=1e-2, eval_every=0, progress=False, seed=3)
    for make in (lambda: PLRNN(2, 48, 2, train_h0=True, seed=0), lambda: ALRNN(2, 48, 2, n_relu=12, seed=0)):
        fits = {d: train(make(), task, device=d, **kw) for d in ("cuda", "cpu")}  # without noise
        assert fits["cuda"].config["backend"] == "triton" and fits["cpu"].config["backend"] == "numba"
        assert fits["cuda"].history["loss"] == pytest.approx(fits["cpu"].history["loss"], rel=1e-4)
        for p, q in zip(fits["cuda"].model.parameters(), fits["cpu"].model.parameters()):
            torch.testing.assert_close(p.detach().cpu(), q.detach().cpu(), rtol=1e-4, atol=1e-5)
