"""The harness of the Triton interpreter tests (``test_kernels_triton_bptt*.py``).

``TRITON_INTERPRET=1`` must be set before Triton is imported, so each test module runs its cases in one
child process: its ``CHILD`` source, after :data:`PRELUDE`, prints one JSON line of results, which
:func:`run_interpreted` returns and the module's tests check.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

#: helpers every child script starts with
PRELUDE = r"""
import json
import torch

def excess(a, b):
    # > 0 where |a - b| exceeds rtol 1e-5 + atol 1e-6 (atol scaled by the largest |b| when above 1)
    atol = 1e-6 * max(1.0, b.abs().max().item())
    return ((a - b).abs() - (atol + 1e-5 * b.abs())).max().item()

def loss(states):
    return (states.sin() * torch.linspace(-1, 2, states.shape[-1])).sum()

def torch_states(step, h0, x, noise):
    h, states = h0, []
    for t in range(x.shape[-2]):
        h = step(h, x[..., t, :]) + (0 if noise is None else noise[..., t, :])
        states.append(h)
    return torch.stack(states, dim=-2)

def counting(module, **names):
    # replace module.<name> by a wrapper counting its calls in calls[<key>], for each key=name
    calls = dict.fromkeys(names, 0)
    for key, name in names.items():
        def counted(*args, _fn=getattr(module, name), _key=key, **kwargs):
            calls[_key] += 1
            return _fn(*args, **kwargs)
        setattr(module, name, counted)
    return calls

def refusals(calls):
    # the one-line ValueError message of each call (None where it did not raise)
    out = {}
    for name, call in calls.items():
        try:
            call()
            out[name] = None
        except ValueError as err:
            out[name] = str(err)
    return out

def fit_record(out, prefix, fits):
    # the backend, loss histories and largest weight excess of two results keyed "triton" and "torch"
    single = hasattr(fits["triton"], "model")  # one network, or an ensemble's result
    models = {b: [f.model] if single else f.models for b, f in fits.items()}
    out[prefix + "_backend"] = fits["triton"].config["backend"]
    if single:
        out[prefix + "_loss"] = [fits[b].history["loss"] for b in ("triton", "torch")]
    out[prefix + "_weights"] = max(excess(a.detach(), b.detach()) for ma, mb in
                                   zip(models["triton"], models["torch"])
                                   for a, b in zip(ma.parameters(), mb.parameters()))
"""


def run_interpreted(child: str) -> dict:
    """The JSON line that ``PRELUDE + child`` prints, run in a child process under ``TRITON_INTERPRET=1``."""
    root = Path(__file__).parents[2]
    env = {**os.environ, "TRITON_INTERPRET": "1", "OMP_NUM_THREADS": "1", "PYTHONPATH": str(root)}
    proc = subprocess.run([sys.executable, "-c", PRELUDE + child], capture_output=True, text=True, env=env,
                          cwd=root, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def assert_within_tolerance(case: dict, key: str, max_scale: float = 1e3) -> None:
    """A case of ``excess`` values (and ``_``-prefixed metadata, its ``_scale`` in (0, ``max_scale``)):
    none exceeds rtol 1e-5 / atol 1e-6."""
    assert 0 < case["_scale"] < max_scale
    bad = {k: v for k, v in case.items() if not k.startswith("_") and v > 0}
    assert not bad, f"{key}: exceeds rtol 1e-5 / atol 1e-6 by {bad}"


def assert_dispatch(interpreted: dict) -> None:
    """``backend_triton`` (one network, an ensemble) both ``"triton"``; float64 and 65 units each refused in
    one line naming the reason."""
    assert interpreted["backend_triton"] == ["triton", "triton"]
    refusals = interpreted["refusals"]
    assert "float32" in refusals["float64"] and "\n" not in refusals["float64"]
    assert "at most 64 units on chip (got 65)" in refusals["units"] and "\n" not in refusals["units"]


def assert_train_matches_torch(interpreted: dict, prefix: str = "train") -> None:
    """A ``fit_record`` of a Triton and a torch run: Triton ran, same losses, same weights."""
    assert interpreted[prefix + "_backend"] == "triton"
    if prefix + "_loss" in interpreted:
        fused, ref = interpreted[prefix + "_loss"]
        assert fused == pytest.approx(ref, rel=1e-5)
    assert interpreted[prefix + "_weights"] <= 0
