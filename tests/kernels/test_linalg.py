"""Small batched solves (neurodyn.kernels.linalg) against NumPy's LAPACK solves, compiled and torch paths."""

import numpy as np
import pytest
import torch

from neurodyn.kernels import linalg
from neurodyn.kernels.linalg import (
    COMPILED_MAX_STATE,
    damped_directions,
    gathered_matvec,
    newton_directions,
    uses_compiled,
)

SIZES = [1, 3, 16, COMPILED_MAX_STATE, COMPILED_MAX_STATE + 8]  # the last runs torch's solvers
TOL = {torch.float64: 1e-11, torch.float32: 2e-4}


def _systems(n_sys, n, dtype, seed=0):
    rng = np.random.default_rng(seed)
    M = rng.normal(0.0, 0.4 / np.sqrt(n), (n_sys, n, n)) - np.eye(n)  # J − I of a contracting map
    r = rng.normal(size=(n_sys, n))
    return torch.as_tensor(M, dtype=dtype), torch.as_tensor(r, dtype=dtype)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("n", SIZES)
def test_newton_directions_match_lapack(n, dtype):
    M, r = _systems(37, n, dtype)
    expected = -np.linalg.solve(M.double().numpy(), r.double().numpy()[..., None])[..., 0]
    got = newton_directions(M, r)
    assert got.dtype == dtype and got.shape == r.shape
    np.testing.assert_allclose(got.double().numpy(), expected, rtol=TOL[dtype], atol=TOL[dtype])
    assert uses_compiled(M) == (n <= COMPILED_MAX_STATE)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("n", SIZES)
def test_damped_directions_match_normal_equations(n, dtype):
    M, r = _systems(29, n, dtype, seed=1)
    mu = torch.as_tensor(np.geomspace(1e-3, 10.0, 29), dtype=dtype)
    Md, rd = M.double().numpy(), r.double().numpy()
    A = Md.transpose(0, 2, 1) @ Md + mu.double().numpy()[:, None, None] * np.eye(n)
    expected = -np.linalg.solve(A, (Md.transpose(0, 2, 1) @ rd[..., None]))[..., 0]
    got = damped_directions(M, r, mu)
    np.testing.assert_allclose(got.double().numpy(), expected, rtol=10 * TOL[dtype], atol=10 * TOL[dtype])


@pytest.mark.parametrize("n", [4, COMPILED_MAX_STATE + 8])
def test_singular_and_non_finite_rows_give_zero_steps(n):
    M, r = _systems(4, n, torch.float64)
    M[1] = 0.0  # singular
    M[1, :, 0] = 1.0
    M[2, 0, 0] = float("nan")
    r[3, 0] = float("inf")
    good = newton_directions(M, r)
    assert torch.all(good[1:] == 0.0) and torch.all(torch.isfinite(good[0])) and bool(good[0].abs().sum() > 0)
    mu = torch.full((4,), 1e-2, dtype=torch.float64)
    damped = damped_directions(M, r, mu)
    assert torch.all(damped[2:] == 0.0) and torch.all(torch.isfinite(damped[:2]))
    # a singular M still has a positive definite normal matrix under damping: a finite, non-zero step
    assert bool(damped[1].abs().sum() > 0)


def test_non_positive_damping_fails_like_a_cholesky_factorisation():
    M = torch.zeros(2, 3, 3, dtype=torch.float64)
    M[:, 0, 0] = 1.0  # MᵀM = diag(1, 0, 0): positive definite only with mu > 0
    r = torch.ones(2, 3, dtype=torch.float64)
    got = damped_directions(M, r, torch.tensor([0.0, 1.0], dtype=torch.float64))
    assert got[0].tolist() == [0.0, 0.0, 0.0] and got[1].tolist() == [-0.5, 0.0, 0.0]


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("n", SIZES)
def test_gathered_matvec_matches_gather_then_product(n, dtype):
    A, _ = _systems(5, n, dtype, seed=2)
    _, r = _systems(41, n, dtype, seed=3)
    index = torch.as_tensor(np.random.default_rng(4).integers(0, 5, 41))
    expected = np.einsum("bij,bj->bi", A.double().numpy()[index.numpy()], r.double().numpy())
    np.testing.assert_allclose(gathered_matvec(A, index, r).double().numpy(), expected,
                               rtol=TOL[dtype], atol=TOL[dtype])


def test_torch_path_when_numba_is_missing(monkeypatch):
    M, r = _systems(6, 5, torch.float64)
    compiled = newton_directions(M, r)
    monkeypatch.setattr(linalg, "_NUMBA", False)
    assert not uses_compiled(M)
    torch.testing.assert_close(newton_directions(M, r), compiled, rtol=1e-12, atol=1e-12)


def test_autograd_inputs_take_the_torch_path():
    M, r = _systems(3, 4, torch.float64)
    assert not uses_compiled(M.requires_grad_(True))
    newton_directions(M, r).sum().backward()
    assert M.grad is not None and torch.isfinite(M.grad).all()


_MANY_THREADS_SCRIPT = """
import numpy as np, torch
torch.set_num_threads(2)
from neurodyn.analysis.fixed_points._chord import chord_inverses
from neurodyn.analysis.fixed_points._stability import spectra
from neurodyn.kernels.linalg import damped_directions, newton_directions
rng = np.random.default_rng(0)
M = torch.as_tensor(rng.normal(size=(4, 200, 200)) / 14.0)
r = torch.as_tensor(rng.normal(size=(4, 200)))
d = newton_directions(M, r)
assert torch.allclose(torch.linalg.solve(M[1], -r[1]), d[1])
assert torch.isfinite(damped_directions(M, r, torch.full((4,), 0.1, dtype=torch.float64))).all()
assert torch.isfinite(chord_inverses(lambda x: x @ M[0].T, torch.zeros(3, 200, dtype=torch.float64),
                                     lambda x: M[0].expand(x.shape[0], 200, 200))).all()
eig, mode = spectra(M.numpy())
assert np.isfinite(mode).all() and torch.get_num_threads() == 2
print("ok")
"""


def test_batched_lu_solves_on_two_threads_finish():
    """Torch's CPU batched LU fails and never returns on two threads from about 150 dims (an MKL
    fault in torch 2.13); the Newton, Levenberg–Marquardt, chord and eigenvector solves of 200-dim
    systems on two threads finish, with the caller's thread count kept (in a subprocess with a
    timeout, so that a regression fails instead of hanging)."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _MANY_THREADS_SCRIPT], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr[-2000:]
