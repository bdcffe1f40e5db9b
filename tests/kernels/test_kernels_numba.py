"""Numba kernels against the torch reference: families, dtypes, shapes, noise, ensembles."""

from __future__ import annotations

import pytest
import torch
from _kernel_cases import CASES, N_IN, N_UNIT, make_case, tolerances

from neurodyn.kernels import rollout, stack_params

pytest.importorskip("numba", reason="the numba backend needs numba (a core dependency)")


def _compare(model, h0, x, *, n_steps=None, **kw):
    ref = rollout(model, h0=h0, inputs=x, n_steps=n_steps, backend="torch", **kw)
    got = rollout(model, h0=h0, inputs=x, n_steps=n_steps, backend="numba", **kw)
    assert got.backend == "numba"
    tol = tolerances(h0.dtype)
    if ref.states is None:
        assert got.states is None
    else:
        torch.testing.assert_close(got.states, ref.states, **tol)
    torch.testing.assert_close(got.final, ref.final, **tol)
    return ref


# float64 kernels compile separately (about 10 s each on a cold cache): the default run covers
# float64 with the leaky kernels, the other families' float64 runs are marked slow.
DTYPE_CASES = [(name, torch.float32) for name in CASES] + [
    pytest.param(name, torch.float64, marks=() if name.startswith("leaky") else pytest.mark.slow)
    for name in CASES
]


@pytest.mark.parametrize("name,dtype", DTYPE_CASES)
def test_numba_matches_reference_time_varying_inputs(name, dtype):
    model = make_case(name).to(dtype)
    gen = torch.Generator().manual_seed(1)
    h0 = torch.randn(6, N_UNIT, generator=gen, dtype=dtype)
    x = torch.randn(6, 100, N_IN, generator=gen, dtype=dtype)
    ref = _compare(model, h0, x)
    assert ref.states.abs().max() < 50  # contracting: the comparison is not of blown-up values


@pytest.mark.parametrize("name", ["leaky_tanh", "gru", "plrnn", "shplrnn_clipped"])
def test_numba_constant_inputs_every_and_final_only(name):
    model = make_case(name)
    h0, u = torch.randn(5, N_UNIT), torch.randn(5, N_IN)
    _compare(model, h0, u, n_steps=40, every=7)
    _compare(model, h0, u, n_steps=40, return_trajectory=False)
    _compare(model, h0, None, n_steps=10)


@pytest.mark.parametrize("name", ["leaky_tanh", "gru", "alrnn", "shplrnn"])
def test_numba_noise_is_the_reference_noise(name):
    model = make_case(name)
    h0, x = torch.randn(3, N_UNIT), torch.randn(3, 50, N_IN)
    ref = _compare(model, h0, x, noise_std=0.2, seed=7, every=3)
    quiet = rollout(model, h0=h0, inputs=x, backend="torch")
    assert (ref.states - quiet.states[:, 2::3]).abs().max() > 0.05  # the noise is really there


@pytest.mark.parametrize("name", ["leaky_relu", "gru", "plrnn", "shplrnn"])
def test_numba_ensemble_matches_reference(name):
    models = [make_case(name, seed=s) for s in range(3)]
    ens = stack_params(models)
    h0, x = torch.randn(3, 5, N_UNIT), torch.randn(3, 5, 60, N_IN)
    _compare(ens, h0, x, every=2)
    _compare(ens, h0, x, noise_std=0.1, seed=3, return_trajectory=False)


def test_auto_picks_numba_on_cpu_and_ignores_autograd():
    import numba

    threads = numba.get_num_threads()
    h0 = torch.zeros(2, N_UNIT, requires_grad=True)
    res = rollout(make_case("leaky_tanh"), h0=h0, inputs=torch.ones(2, 3, N_IN, requires_grad=True))
    assert res.backend == "numba" and not res.final.requires_grad
    assert numba.get_num_threads() == threads  # a one-block batch runs on one thread, then restores them


# every BLAS-blocked kernel is another cold-cache compile: two families by default, the rest slow
GEMM_CASES = [("leaky_softplus", torch.float32), ("gru", torch.float32)] + [
    pytest.param(name, dtype, marks=pytest.mark.slow)
    for name, dtype in (("alrnn", torch.float32), ("shplrnn_clipped", torch.float32),
                        ("leaky_softplus", torch.float64), ("gru", torch.float64),
                        ("plrnn", torch.float64), ("shplrnn", torch.float64))
]


@pytest.mark.parametrize("name,dtype", GEMM_CASES)
def test_numba_large_batch_blas_path_matches_reference(name, dtype):
    from neurodyn.kernels._numba_backend import GEMM_MIN_BATCH

    model = make_case(name).to(dtype)
    n_batch = GEMM_MIN_BATCH + 6  # one full and one partial block
    h0, x = torch.randn(n_batch, N_UNIT, dtype=dtype), torch.randn(n_batch, 30, N_IN, dtype=dtype)
    _compare(model, h0, x, noise_std=0.1, seed=4, every=4)
    ens = stack_params([make_case(name, seed=s).to(dtype) for s in range(2)])
    _compare(ens, torch.randn(2, n_batch, N_UNIT, dtype=dtype), None, n_steps=20)
