"""Triton kernels against the torch reference, run in Triton's CPU interpreter.

``TRITON_INTERPRET=1`` must be set before Triton is imported, so the cases run in one child
process and this module checks the numbers it reports. Sizes are tiny: the interpreter is slow.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("triton", reason="the Triton backend is the 'gpu' extra: pip install 'neurodyn[gpu]'")

CHILD = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import torch
from _kernel_cases import CASES, N_IN, N_UNIT, make_case
from neurodyn.kernels import rollout, stack_params
from neurodyn.models import LeakyRNN
import neurodyn.kernels._triton_backend as tb

out = {}
gen = torch.Generator().manual_seed(0)

def compare(key, model, h0, x, **kw):
    a = rollout(model, h0, x, backend="triton", **kw)
    b = rollout(model, h0, x, backend="torch", **kw)
    pairs = [(a.final, b.final)] + ([(a.states, b.states)] if b.states is not None else [])
    excess = max(((p - q).abs() - (1e-6 + 1e-5 * q.abs())).max().item() for p, q in pairs)
    out[key] = {"backend": a.backend, "excess": excess, "scale": b.final.abs().max().item(),
                "shape": list((a.states if a.states is not None else a.final).shape)}

for name in CASES:
    h0, x = torch.randn(5, N_UNIT, generator=gen), torch.randn(5, 12, N_IN, generator=gen)
    compare(name, make_case(name).float(), h0, x, noise_std=0.1, seed=2, every=3)
compare("ensemble_gru", stack_params([make_case("gru", seed=s) for s in range(3)]),
        torch.randn(3, 4, N_UNIT, generator=gen), torch.randn(3, 4, 12, N_IN, generator=gen), every=2)
compare("ensemble_shplrnn_noise", stack_params([make_case("shplrnn", seed=s) for s in range(2)]),
        torch.randn(2, 3, N_UNIT, generator=gen), torch.randn(2, 3, N_IN, generator=gen), n_steps=12,
        noise_std=0.2, seed=5, return_trajectory=False)
compare("constant_plrnn", make_case("plrnn").float(), torch.randn(17, N_UNIT, generator=gen),
        torch.randn(17, N_IN, generator=gen), n_steps=12)
tb.MAX_RESIDENT, tb.TILED_BLOCK_N = 100, 16  # force the tiled kernel: 40 units in 16-wide tiles
compare("tiled_leaky", LeakyRNN(2, 40, 1, alpha=0.3, gain=0.8, activation="softplus"),
        torch.randn(5, 40, generator=gen), torch.randn(5, 8, 2, generator=gen), noise_std=0.1, seed=1)
try:
    rollout(make_case("gru").double(), torch.zeros(2, N_UNIT, dtype=torch.float64), n_steps=2,
            backend="triton")
except ValueError as err:
    out["float64_error"] = str(err)
print(json.dumps(out))
"""

KEYS = ["leaky_tanh", "leaky_relu", "leaky_softplus", "leaky_sigmoid", "gru", "plrnn", "alrnn", "shplrnn",
        "shplrnn_clipped", "ensemble_gru", "ensemble_shplrnn_noise", "constant_plrnn", "tiled_leaky"]


@pytest.fixture(scope="module")
def interpreted():
    here = Path(__file__).parent
    env = {**os.environ, "TRITON_INTERPRET": "1", "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-c", CHILD, str(here)], capture_output=True, text=True,
                          env=env, cwd=here.parents[1], timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("key", KEYS)
def test_triton_interpreter_matches_reference(interpreted, key):
    case = interpreted[key]
    assert case["backend"] == "triton"
    assert case["excess"] <= 0, f"{key}: exceeds rtol 1e-5 / atol 1e-6 by {case['excess']}"
    assert 0 < case["scale"] < 50


def test_triton_shapes_and_float64_refusal(interpreted):
    assert interpreted["leaky_tanh"]["shape"] == [5, 4, 9]  # 12 steps recorded every 3rd
    assert interpreted["ensemble_gru"]["shape"] == [3, 4, 6, 9]
    assert "float32" in interpreted["float64_error"]


def test_triton_on_cpu_without_interpreter_is_refused():
    if os.environ.get("TRITON_INTERPRET") == "1":
        pytest.skip("this process runs the interpreter")
    import torch

    from neurodyn.kernels import rollout
    from neurodyn.models import LeakyRNN

    with pytest.raises(ValueError, match="needs CUDA tensors"):
        rollout(LeakyRNN(0, 4, 1), h0=torch.zeros(2, 4), n_steps=2, backend="triton")


def _cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


@pytest.mark.skipif(not _cuda_available(), reason="compiled Triton kernels need a CUDA GPU")
@pytest.mark.parametrize("n_unit", [9, 64, 200])
def test_triton_on_cuda_matches_reference(n_unit):
    import torch
    from _kernel_cases import CASES, N_IN, make_case

    from neurodyn.kernels import rollout
    from neurodyn.models import LeakyRNN

    models = [make_case(name).cuda() for name in CASES] if n_unit == 9 else [
        LeakyRNN(N_IN, n_unit, 1, alpha=0.2, gain=0.8).cuda()]  # 200 units: the tiled kernel
    for model in models:
        h0 = torch.randn(300, model.n_units, device="cuda")
        x = torch.randn(300, 100, N_IN, device="cuda")
        a = rollout(model, h0=h0, inputs=x, backend="triton", noise_std=0.1, seed=0, every=5)
        b = rollout(model, h0=h0, inputs=x, backend="torch", noise_std=0.1, seed=0, every=5)
        torch.testing.assert_close(a.states, b.states, rtol=1e-5, atol=1e-5)
