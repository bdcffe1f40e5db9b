"""The Newton search's gradient start (large states) and the leading mode of ``spectra``."""

import numpy as np
import pytest
import torch
from problems import BistableTanh

import neurodyn.analysis.fixed_points._newton as newton
from neurodyn.analysis.fixed_points._search import SearchSettings
from neurodyn.analysis.fixed_points._stability import spectra

SETTINGS = SearchSettings(tol_q=1e-24, tol_dq=0.0, max_iters=200, lr_init=1.0)


@pytest.fixture
def starts(monkeypatch) -> list[int]:
    """The gradient steps of each gradient start the Newton search runs."""
    calls = []
    real = newton._gradient_start

    def spy(*args, **kwargs):
        calls.append(kwargs["n_steps"])
        return real(*args, **kwargs)

    monkeypatch.setattr(newton, "_gradient_start", spy)
    return calls


def _lattice_distance(states: np.ndarray, h: float) -> np.ndarray:
    """Max-abs distance of each row to the nearest point of {−h*, 0, h*}^state."""
    return np.abs(states[..., None] - np.array([-h, 0.0, h])).min(-1).max(-1)


def test_gradient_start_on_a_large_state_reaches_exact_points(starts):
    """64 independent bistable units (3^64 fixed points, coordinates in {−h*, 0, h*}): the search
    takes its gradient start by default at this size, in float64 and on a float32 copy of the
    map, and every candidate converges to an exact point."""
    problem = BistableTanh(2.0)
    x0 = torch.as_tensor(np.random.default_rng(0).uniform(-1.5, 1.5, size=(32, 64)))

    def jacobian(h):  # diagonal, in closed form
        return torch.diag_embed(2.0 * (1.0 - torch.tanh(2.0 * h).pow(2)))

    for single in (None, lambda h: torch.tanh(2.0 * h)):
        out = newton.minimise_newton(problem, x0, SETTINGS, tol_unique=1e-3, jacobian=jacobian,
                                     single_map=single)
        assert out.converged.all() and out.states.dtype == torch.float64
        q = 0.5 * (problem(out.states) - out.states).pow(2).sum(-1)
        assert (q < 1e-24).all()
        assert (_lattice_distance(out.states.numpy(), problem.h_star) < 1e-10).all()
        assert (out.iterations >= 1).all()
    assert starts == [newton.GRADIENT_START] * 2


def test_small_states_keep_the_damped_start(starts):
    """Below GRADIENT_START_MIN_STATE dims no gradient start runs unless asked for; both starts reach
    exact points of three bistable units."""
    problem = BistableTanh(2.0)
    x0 = torch.as_tensor(np.random.default_rng(1).uniform(-1.5, 1.5, size=(40, 3)))
    for steps in (None, 5):
        out = newton.minimise_newton(problem, x0, SETTINGS, tol_unique=1e-3, gradient_steps=steps)
        assert out.converged.all()
        assert (_lattice_distance(out.states.numpy(), problem.h_star) < 1e-10).all()
    assert starts == [5]


def test_leading_mode_is_lapacks_eigenvector():
    """The inverse-iteration leading mode equals the eigenvector of ``numpy.linalg.eig`` for the
    largest-modulus eigenvalue, scaled to unit norm with its largest component real and positive
    (real leading eigenvalues, complex pairs, and a diagonal matrix)."""
    rng = np.random.default_rng(0)
    jac = rng.normal(size=(6, 20, 20)) / 4.5
    jac[1] = jac[1] + jac[1].T  # symmetric: real spectrum
    jac[2] = np.diag(np.arange(20.0)[::-1] / 10)
    eig, mode = spectra(jac)
    w, v = np.linalg.eig(jac)
    for i in range(jac.shape[0]):
        j = np.argmin(np.abs(w[i] - eig[i, 0]))
        ref = v[i][:, j] / v[i][np.abs(v[i][:, j]).argmax(), j]
        ref = ref.real / np.linalg.norm(ref.real)
        np.testing.assert_allclose(mode[i], ref, atol=1e-9)
        np.testing.assert_allclose(np.sort_complex(eig[i]), np.sort_complex(w[i]), atol=1e-10)
    assert np.iscomplex(eig[:, 0]).any()  # a complex leading pair is covered
