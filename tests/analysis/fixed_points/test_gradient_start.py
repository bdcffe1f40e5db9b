"""The Newton search's gradient start (large states) and the leading mode of ``spectra``."""

import numpy as np
import pytest
import torch
from problems import BistableTanh

import neurodyn.analysis.fixed_points._newton as newton
from neurodyn.analysis.fixed_points._search import SearchSettings, speed
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



def test_candidates_left_far_take_the_damped_start(monkeypatch):
    """A random 64-unit network (gain 1.5), eight free-rollout states: three are still far from any
    point after the gradient start (q ≥ GRADIENT_FAR_Q) and go back to the damped start from their
    initial states. The default search then converges the same candidates to the same points
    (q < 1e-10) as the damped start alone (``gradient_steps=0``), and more than when every
    candidate continues with Newton steps from where its gradient steps left it."""
    from neurodyn.analysis.fixed_points import _find
    from neurodyn.analysis.fixed_points._init import free_rollout_states
    from neurodyn.analysis.fixed_points._stability import power_jacobian
    from neurodyn.models import LeakyRNN

    model = LeakyRNN(0, 64, 1, gain=1.5, seed=2).double().eval().requires_grad_(False)
    x0 = torch.as_tensor(np.asarray(free_rollout_states(model.step, 64, None, 8, 0, "cpu", torch.float64)))

    def G(h):
        return model.step(h, None)

    jacobian = power_jacobian(G, 1, _find._step_jacobian(model, G, None))
    settings = SearchSettings(tol_q=1e-12, tol_dq=1e-20, max_iters=100, lr_init=1.0)
    marks = []
    real = newton._gradient_start

    def spy(G, out, rows, damped, **kwargs):
        marks.append(damped)
        return real(G, out, rows, damped, **kwargs)

    monkeypatch.setattr(newton, "_gradient_start", spy)
    out = newton.minimise_newton(G, x0, settings, jacobian=jacobian, tol_unique=1e-3)
    ref = newton.minimise_newton(G, x0, settings, jacobian=jacobian, tol_unique=1e-3, gradient_steps=0)
    monkeypatch.setattr(newton, "GRADIENT_FAR_Q", float("inf"))  # no candidate sent back
    kept = newton.minimise_newton(G, x0, settings, jacobian=jacobian, tol_unique=1e-3)
    far = marks[0]
    assert int(far.sum()) == 3
    conv = out.q < 1e-10
    assert torch.equal(conv, ref.q < 1e-10) and int(conv.sum()) > int((kept.q < 1e-10).sum())
    assert (speed(G, out.states[conv]) < 1e-10).all()
    # q < 1e-12 leaves each point an error of order 1e-6 (the search stops there, unpolished)
    np.testing.assert_allclose(out.states[conv].numpy(), ref.states[conv].numpy(), atol=1e-5)


@pytest.mark.parametrize("alpha,act", [(1.0, "tanh"), (0.3, "softplus")])
def test_closed_form_speed_gradient_equals_autograd(alpha, act):
    """A model map's q and ∇q in closed form (``ClosedFormMap``) equal autograd's on the same map."""
    from neurodyn.analysis.fixed_points._search import ClosedFormMap, speed_and_grad
    from neurodyn.models import LeakyRNN

    model = LeakyRNN(2, 9, 1, alpha=alpha, activation=act, gain=1.3, seed=0).double().requires_grad_(False)
    u = torch.tensor([[0.3, -0.2]], dtype=torch.float64)
    step_vjp = model.frozen_step_vjp()
    G = ClosedFormMap(lambda h: model.step(h, u.expand(h.shape[0], -1)), lambda h: step_vjp(h, u))
    x = torch.randn(7, 9, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    q_closed, g_closed = speed_and_grad(G, x)
    q_auto, g_auto = speed_and_grad(G.G, x)
    torch.testing.assert_close(q_closed, q_auto, rtol=1e-13, atol=1e-15)
    torch.testing.assert_close(g_closed, g_auto, rtol=1e-12, atol=1e-14)


def test_spectra_split_over_threads_equal_one_thread():
    """Spectra split over two threads are the same bits as on one (each point on its own)."""
    from neurodyn.analysis.fixed_points import _stability

    jac = np.random.default_rng(5).normal(size=(5, _stability.PARALLEL_SPECTRA_MIN_STATE, 48)) / 7.0
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        assert _stability._spectra_workers(5, 48) == 1
        one = spectra(jac)
        torch.set_num_threads(2)
        assert _stability._spectra_workers(5, 48) == 2 and _stability._spectra_workers(5, 16) == 1
        two = spectra(jac)
    finally:
        torch.set_num_threads(before)
    assert np.array_equal(one[0], two[0]) and np.array_equal(one[1], two[1])


def test_spectra_in_a_forked_child_after_the_parent_used_threads():
    """A child forked after the parent split spectra over threads makes its own threads (it would
    otherwise wait for workers it did not inherit)."""
    import multiprocessing

    from neurodyn.analysis.fixed_points import _stability

    jac = np.random.default_rng(6).normal(size=(4, 48, 48)) / 7.0
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        expected = spectra(jac)
        queue = multiprocessing.get_context("fork").Queue()
        child = multiprocessing.get_context("fork").Process(
            target=lambda: queue.put(np.array_equal(_stability.spectra(jac)[0], expected[0])))
        child.start()
        child.join(timeout=120)
        alive = child.is_alive()
        if alive:
            child.kill()
    finally:
        torch.set_num_threads(before)
    assert not alive and child.exitcode == 0 and queue.get(timeout=5)
