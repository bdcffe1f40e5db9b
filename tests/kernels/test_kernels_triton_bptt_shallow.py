"""The shallow-PLRNN Triton training kernels (forward + BPTT, state forcing) in Triton's CPU interpreter.

``TRITON_INTERPRET=1`` must be set before Triton is imported, so the cases run in one child process
(as in ``test_kernels_triton_bptt_pl.py``) and this module checks the numbers it reports. Two oracles,
both float32: the fused Numba path (``backend="numba"``) and autograd through the torch reference
(``forced_rollout(..., backend="torch")``, the model's own step with the forcing after it).
"""

from __future__ import annotations

import pytest
import torch
from _triton_child import assert_within_tolerance, run_interpreted

pytest.importorskip("triton", reason="the Triton backend is the 'gpu' extra: pip install 'neurodyn[gpu]'")

CHILD = r"""
import numpy as np
import neurodyn.kernels._triton_backend as tb
from neurodyn.kernels import _fused_autograd as fa
from neurodyn.kernels import fused_backend, fused_states, stack_params
from neurodyn.models import PLRNN, ShallowPLRNN, shplrnn_step
from neurodyn.tasks import FlipFlop
from neurodyn.training import fit_teacher_forcing, train
from neurodyn.training.teacher_forcing import forced_rollout

out = {}
calls = counting(tb, forward="shallow_train_forward", backward="shallow_train_backward")
FIELDS = ("a", "W1", "W2", "h1", "h2", "C")

def make(n_in, n, n_hid, clipped, seed):
    model = ShallowPLRNN(n_in, n, 1, n_hidden=n_hid, clipped=clipped, seed=seed)
    with torch.no_grad():  # biases of both signs, so that the ReLUs switch
        model.h2.copy_(0.5 * torch.randn(n_hid, generator=torch.Generator().manual_seed(seed + 7)))
    return model

def run(model, z0, x, noise, forcing, backend):
    model.zero_grad()
    z0, x = z0.clone().requires_grad_(), x.clone().requires_grad_()
    if backend == "torch":
        target, alphas, mask = forcing
        preds = forced_rollout(model, z0, target, alphas, torch.tensor(mask), x, noise, backend="torch")
    else:
        preds = fused_states(model.params(), z0, x, noise=noise, forcing=forcing, backend=backend)
    loss(preds).backward()
    grads = {name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None}
    return {"preds": preds.detach(), "z0": z0.grad, "inputs": x.grad, **grads}

def record(key, got, refs):
    for oracle, ref in refs.items():
        out[f"{key}|{oracle}"] = {name: excess(got[name], ref[name]) for name in ref}
        out[f"{key}|{oracle}"]["_names"] = sorted(ref)
        out[f"{key}|{oracle}"]["_scale"] = max(v.abs().max().item() for v in ref.values())

gen = torch.Generator().manual_seed(0)
# latent, hidden, clipped, batch, steps, noise
cases = [(5, 12, False, 5, 6, False), (5, 12, False, 5, 6, True), (5, 12, True, 5, 6, False),
         (5, 12, True, 5, 6, True), (64, 64, True, 3, 3, True), (7, 40, False, 17, 4, True)]
for i, (n, n_hid, clipped, batch, steps, noisy) in enumerate(cases):
    model = make(2, n, n_hid, clipped, i)
    x, z0 = torch.randn(batch, steps, 2, generator=gen), torch.randn(batch, n, generator=gen)
    noise = 0.1 * torch.randn(batch, steps, n, generator=gen) if noisy else None
    target = torch.randn(batch, steps, n, generator=gen)
    alphas = (0.1 + 0.8 * torch.rand(steps, generator=gen)).tolist()  # in (0, 1)
    mask = [float(j % 3 != 1) for j in range(n)]  # a partial mask
    forcing = (target, alphas, mask)
    got = run(model, z0, x, noise, forcing, "triton")
    record(f"{n}x{n_hid}{'_clipped' if clipped else ''}_{batch}x{steps}{'_noise' if noisy else ''}", got,
           {o: run(model, z0, x, noise, forcing, o) for o in ("numba", "torch")})
out["one_network_calls"] = dict(calls)

# a stack of 3 clipped networks under forcing, through the autograd Functions (time-major)
nets = [make(2, 5, 12, True, 20 + s) for s in range(3)]
p = stack_params(nets)
p = p._replace(**{f: getattr(p, f).detach().requires_grad_() for f in FIELDS})
xs, z0s = torch.randn(3, 6, 5, 2, generator=gen), torch.randn(3, 5, 5, generator=gen)
noise = 0.1 * torch.randn(3, 6, 5, 5, generator=gen)
target = torch.randn(3, 6, 5, 5, generator=gen)
alphas = 0.1 + 0.8 * torch.rand(6, generator=gen)
mask = torch.tensor([1.0, 0.0, 1.0, 1.0, 0.0])
got = {}
for backend in ("triton", "numba", "torch"):
    for f in FIELDS:
        getattr(p, f).grad = None
    z0, x = z0s.clone().requires_grad_(), xs.clone().requires_grad_()
    if backend == "torch":
        preds = []
        for e in range(3):
            pe = p._replace(**{f: getattr(p, f)[e] for f in FIELDS})
            z, seq = z0[e], []
            for t in range(6):
                z = shplrnn_step(pe, z, x[e, t])
                seq.append(z)
                z = z + noise[e, t]
                z = z + (alphas[t] * mask) * (target[e, t] - z)
            preds.append(torch.stack(seq))
        preds = torch.stack(preds)
    else:
        fn = fa.shallow_triton if backend == "triton" else fa.shallow
        preds = fn(p, z0, x, noise, target, alphas, mask)
    loss(preds).backward()
    got[backend] = {"preds": preds.detach(), "z0": z0.grad, "inputs": x.grad,
                    **{f: getattr(p, f).grad.clone() for f in FIELDS}}
record("stack_forced", got["triton"], {o: got[o] for o in ("numba", "torch")})

# the same stack unforced through fused_states (backend="triton" takes ensembles)
for f in FIELDS:
    getattr(p, f).grad = None
got = {}
for backend in ("triton", "numba"):
    for f in FIELDS:
        getattr(p, f).grad = None
    z0, x = z0s.clone().requires_grad_(), xs.transpose(1, 2).clone().requires_grad_()
    states = fused_states(p, z0, x, noise=noise.transpose(1, 2), backend=backend)
    loss(states).backward()
    got[backend] = {"preds": states.detach(), "z0": z0.grad, "inputs": x.grad,
                    **{f: getattr(p, f).grad.clone() for f in FIELDS}}
record("stack_free", got["triton"], {"numba": got["numba"]})

# fit_teacher_forcing(backend="triton"): two epochs equal the torch fit, the Triton launches counted
t = np.arange(400) * 0.1
data = np.stack([np.sin(t), np.cos(t), np.sin(2 * t)], 1)
kw = dict(n_epochs=2, batches_per_epoch=3, batch_size=4, seq_len=10, alpha=0.2, process_noise=0.05, lr=1e-2,
          progress=False, seed=1)
calls.update(forward=0, backward=0)
fits = {}
for b in ("triton", "torch"):
    fits[b] = fit_teacher_forcing(ShallowPLRNN(0, 5, 3, n_hidden=12, clipped=True, seed=0), data, backend=b,
                                  **kw)
    if b == "triton":
        out["fit_calls"] = dict(calls)
out["fit_backend"] = [fits[b].config["backend"] for b in ("triton", "torch")]
out["fit_loss"] = [fits[b].history["loss"] for b in ("triton", "torch")]
pairs = zip(fits["triton"].model.parameters(), fits["torch"].model.parameters())
out["fit_weights"] = max(excess(a.detach(), b.detach()) for a, b in pairs if b.numel())

# train(backend="triton"): 2 Adam steps of a clipped shallow PLRNN (noise on) equal the torch loop's
task = FlipFlop(n_bits=2, n_steps=10)
kw = dict(n_iterations=2, batch_size=5, lr=1e-2, eval_every=0, progress=False, seed=3)
calls.update(forward=0, backward=0)
fits = {}
for b in ("triton", "torch"):
    model = ShallowPLRNN(2, 6, 2, n_hidden=10, clipped=True, noise_std=0.1, train_h0=True, seed=0)
    fits[b] = train(model, task, backend=b, **kw)
    if b == "triton":
        out["train_calls"] = dict(calls)
out["train_backend"] = fits["triton"].config["backend"]
out["train_loss"] = [fits[b].history["loss"] for b in ("triton", "torch")]
pairs = zip(fits["triton"].model.parameters(), fits["torch"].model.parameters())
out["train_weights"] = max(excess(a.detach(), b.detach()) for a, b in pairs if b.numel())

# dispatch and refusals
out["backend_triton"] = [fused_backend(ShallowPLRNN(1, 8, 1, n_hidden=16).params(), backend="triton"),
                         fused_backend(ShallowPLRNN(1, 8, 1, n_hidden=16).params(), backend="triton",
                                       forcing=True)]
ens = stack_params([ShallowPLRNN(1, 3, 1, n_hidden=4, seed=s) for s in range(2)])
out["refusals"] = refusals({
    "float64": lambda: fused_backend(ShallowPLRNN(1, 8, 1).params(), backend="triton", dtype=torch.float64),
    "latent": lambda: fused_backend(ShallowPLRNN(1, 65, 1, n_hidden=8).params(), backend="triton"),
    "hidden": lambda: fused_backend(ShallowPLRNN(1, 8, 1, n_hidden=65).params(), backend="triton"),
    "ensemble_forced": lambda: fused_backend(ens, backend="triton", forcing="state"),
    "plrnn_forced": lambda: fused_backend(PLRNN(1, 8, 1).params(), backend="triton", forcing=True),
    "shallow_readout": lambda: fused_backend(ShallowPLRNN(1, 8, 1).params(), backend="triton",
                                             forcing="readout"),
})
print(json.dumps(out))
"""

CASES = ["5x12_5x6", "5x12_5x6_noise", "5x12_clipped_5x6", "5x12_clipped_5x6_noise",
         "64x64_clipped_3x3_noise", "7x40_17x4_noise"]
NAMES = ["C", "W1", "W2", "a", "h1", "h2", "inputs", "preds", "z0"]


@pytest.fixture(scope="module")
def interpreted():
    return run_interpreted(CHILD)


def _check(case, key):
    # predictions and the gradients of z0, the inputs and every parameter
    assert case["_names"] == NAMES
    assert_within_tolerance(case, key, max_scale=1e4)


@pytest.mark.parametrize("oracle", ["numba", "torch"])
@pytest.mark.parametrize("key", CASES)
def test_triton_shallow_forced_bptt_matches_numba_and_autograd(interpreted, key, oracle):
    _check(interpreted[f"{key}|{oracle}"], key)


def test_one_network_runs_one_launch_each_way(interpreted):
    assert interpreted["one_network_calls"] == {"forward": len(CASES), "backward": len(CASES)}


@pytest.mark.parametrize("key", ["stack_forced|numba", "stack_forced|torch", "stack_free|numba"])
def test_triton_shallow_stack_matches(interpreted, key):
    _check(interpreted[key], key)


def test_fit_teacher_forcing_on_triton_matches_torch(interpreted):
    assert interpreted["fit_backend"] == ["triton", "torch"]
    # 2 epochs of 3 batches: one forward and one backward launch per batch
    assert interpreted["fit_calls"] == {"forward": 6, "backward": 6}
    fused, ref = interpreted["fit_loss"]
    assert fused == pytest.approx(ref, rel=1e-5)
    assert interpreted["fit_weights"] <= 0


def test_train_shallow_plrnn_on_triton_matches_torch(interpreted):
    assert interpreted["train_backend"] == "triton"
    assert interpreted["train_calls"] == {"forward": 2, "backward": 2}
    fused, ref = interpreted["train_loss"]
    assert fused == pytest.approx(ref, rel=1e-5)
    assert interpreted["train_weights"] <= 0


def test_triton_shallow_dispatch_and_refusals(interpreted):
    assert interpreted["backend_triton"] == ["triton", "triton"]
    r = interpreted["refusals"]
    assert all(v is not None and "\n" not in v for v in r.values()), r
    assert "float32" in r["float64"]
    assert "at most 64 units on chip (got 65)" in r["latent"]
    assert "at most 64 hidden units on chip (got 65)" in r["hidden"]
    assert "state-forced rollouts are fused for one network, not an ensemble" in r["ensemble_forced"]
    assert "teacher-forced rollouts are fused for the shallow PLRNN only, not 'plrnn'" in r["plrnn_forced"]
    assert "through the readout is fused for the leaky RNN only, not 'shplrnn'" in r["shallow_readout"]


def test_auto_picks_triton_for_the_shallow_plrnn_on_cuda():
    # fused_backend only inspects the device, so this runs without a GPU
    from neurodyn.kernels import fused_backend, stack_params
    from neurodyn.models import ShallowPLRNN

    p = ShallowPLRNN(1, 8, 1, n_hidden=16, clipped=True).params()
    assert fused_backend(p, device="cuda") == "triton"
    assert fused_backend(p, device="cuda", forcing=True) == "triton"
    assert fused_backend(stack_params([ShallowPLRNN(1, 8, 1, n_hidden=16, seed=s) for s in range(3)]),
                         device="cuda") == "triton"
    assert fused_backend(ShallowPLRNN(1, 8, 1, n_hidden=65).params(), device="cuda") == "torch"
    assert fused_backend(p, device="cuda", dtype=torch.float64) == "torch"
    assert fused_backend(p, device="cpu", forcing=True) == "numba"


def test_triton_shallow_training_refusals_name_the_reason():
    from neurodyn.kernels._triton_backend import train_supports
    from neurodyn.models import ShallowPLRNN

    assert train_supports("shplrnn", ShallowPLRNN(1, 64, 1, n_hidden=64).params(), torch.float32) is None
    assert train_supports("shplrnn", ShallowPLRNN(1, 65, 1, n_hidden=8).params(), torch.float32) == (
        "the Triton training kernels hold at most 64 units on chip (got 65); use backend='torch'")
    assert train_supports("shplrnn", ShallowPLRNN(1, 8, 1, n_hidden=65).params(), torch.float32) == (
        "the Triton training kernels hold at most 64 hidden units on chip (got 65); use backend='torch'")
