"""Lyapunov spectra of large networks: the memory estimate, chunking by time and trajectory, and
tangent products (``jacobian="jvp"``) that never form a Jacobian."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

from neurodyn.analysis.lyapunov import lyapunov_spectrum
from neurodyn.models import GRU, LSTM, PLRNN, LeakyRNN, ShallowPLRNN

MIB = 2 ** 20


def diagonal_linear(n, top=(0.9, 0.8), rest=0.5):
    """h' = W h with W = diag(top..., rest, ...): exponents log(top) exactly."""
    model = LeakyRNN(0, n, 1, activation="linear", alpha=1.0, seed=0)
    eig = torch.full((n,), rest, dtype=torch.float64)
    eig[: len(top)] = torch.tensor(top, dtype=torch.float64)
    with torch.no_grad():
        model.w_rec.copy_(torch.diag(eig))
    return model


def test_one_jacobian_over_the_budget_is_refused_in_one_line_with_the_estimate():
    model = LeakyRNN(0, 3000, 1, seed=0)
    with pytest.raises(ValueError) as err:
        lyapunov_spectrum(model, n_exponents=2, jacobian="analytic", max_memory=100 * MIB)
    msg = str(err.value)
    assert "\n" not in msg
    assert "0.201 GiB" in msg  # 3 copies of a 3000 x 3000 float64 Jacobian: 3 * 72e6 bytes
    assert "jacobian='jvp'" in msg and "max_memory" in msg
    with pytest.raises(ValueError, match="lower n_exponents"):  # products of 3000 tangent vectors
        lyapunov_spectrum(model, jacobian="jvp", max_memory=100 * MIB)
    with pytest.raises(ValueError, match="max_memory must be a positive"):
        lyapunov_spectrum(model, max_memory=0)


def test_auto_takes_tangent_products_for_few_exponents_of_many_units():
    res = lyapunov_spectrum(diagonal_linear(400), n_exponents=2, n_steps=200, n_transient=50, seed=0)
    assert res.jacobian == "jvp"
    np.testing.assert_allclose(res.exponents[0], np.log([0.9, 0.8]), rtol=1e-4)
    small = lyapunov_spectrum(diagonal_linear(40), n_exponents=2, n_steps=200, n_transient=50, seed=0)
    assert small.jacobian == "analytic"  # below 256 units the batched Jacobians are faster


@pytest.mark.parametrize("max_memory", [40 * 1024, 400 * 1024])
def test_chunks_in_time_and_trajectory_give_the_same_exponents(max_memory):
    model = LeakyRNN(0, 12, 1, gain=1.8, seed=3)
    h0 = 0.3 * np.random.default_rng(0).standard_normal((5, 12))
    kw = dict(h0=h0, n_steps=300, n_transient=20, seed=1, jacobian="analytic")
    ref = lyapunov_spectrum(model, **kw)
    got = lyapunov_spectrum(model, max_memory=max_memory, **kw)  # 40 KiB: 2 trajectories, 9 steps a chunk
    # round-off only: matrix products of other sizes may round differently
    np.testing.assert_allclose(got.exponents, ref.exponents, rtol=0, atol=1e-13)
    np.testing.assert_allclose(got.running, ref.running, rtol=0, atol=1e-13)


@pytest.mark.parametrize("model", [
    LeakyRNN(2, 6, 1, gain=2.0, alpha=0.5, activation="softplus", seed=0), GRU(2, 5, 1, seed=1),
    LSTM(2, 3, 1, seed=2), PLRNN(2, 4, 1, seed=3), ShallowPLRNN(2, 4, 1, n_hidden=6, clipped=True, seed=4),
], ids=["leaky", "gru", "lstm", "plrnn", "shplrnn"])
def test_tangent_products_equal_the_closed_form_jacobians(model):
    u = 0.5 * np.sin(np.arange(260) / 5.0)[:, None] * np.ones(2)
    kw = dict(n_steps=200, n_transient=60, inputs=u, seed=0, h0=0.1 * np.ones((2, model.state_size)),
              n_exponents=2)
    exact = lyapunov_spectrum(model, jacobian="analytic", **kw)
    prod = lyapunov_spectrum(model, jacobian="jvp", max_memory=4096, **kw)  # one trajectory at a time
    assert prod.jacobian == "jvp"
    np.testing.assert_allclose(prod.exponents, exact.exponents, atol=1e-10)


def test_a_diverging_trajectory_on_the_product_path_is_flagged():
    res = lyapunov_spectrum(diagonal_linear(8, top=(3.0,)), h0=np.ones((2, 8)), n_steps=2000,
                            n_transient=0, jacobian="jvp")
    assert res.status.tolist() == ["diverged", "diverged"] and np.isnan(res.exponents).all()


def test_a_run_of_hours_warns_in_one_line_before_it_starts():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(RuntimeWarning, match=r"floating-point operations .* lower n_exponents"):
            lyapunov_spectrum(LeakyRNN(0, 400, 1, seed=0), n_steps=10 ** 6)


_SCRIPT = """
import resource, numpy as np, torch
from neurodyn.analysis.lyapunov import lyapunov_spectrum
from neurodyn.models import LeakyRNN
model = LeakyRNN(0, 3000, 1, gain=1.5, seed=0)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
res = lyapunov_spectrum(model, n_exponents=2, n_steps=30, n_transient=10, seed=0)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(res.jacobian, res.status[0], (after - before) // 1024)
"""


@pytest.mark.slow
def test_two_exponents_of_three_thousand_units_stay_small():
    # the Jacobians of one chunk of 256 steps would take 18 GB; tangent products take a few MiB
    out = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True, timeout=600,
                         env={"OMP_NUM_THREADS": "1", **__import__("os").environ})
    assert out.returncode == 0, out.stderr
    kind, status, grown_mib = out.stdout.split()
    assert (kind, status) == ("jvp", "finite")
    assert int(grown_mib) < 300, out.stdout  # the float64 copy of the weights is 72 MB
