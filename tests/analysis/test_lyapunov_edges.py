"""Lyapunov spectra at the edges of floating point: strong contraction, underflow, NaN exponents."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neurodyn.analysis.lyapunov import LyapunovResult, lyapunov_spectrum
from neurodyn.io import load
from neurodyn.models import LeakyRNN, PLSystem


def linear_system(a):
    n = len(a)
    return PLSystem(np.zeros((0, n)), np.zeros(0), np.asarray(a, float), np.zeros(n), np.zeros((n, 0)))


@pytest.mark.parametrize("backend", ["torch", "numba"])
def test_strong_contraction_keeps_its_exact_rate(backend):
    # |J q| ~ 1e-170 per step: the squares of the entries underflow, the rate is log(1e-170) exactly
    rates = np.array([1e-170, 1e-200])
    res = lyapunov_spectrum(linear_system(np.diag(rates)), h0=[1.0, 1.0], n_steps=2000, n_transient=10,
                            backend=backend, seed=0)
    assert res.status.tolist() == ["finite"] and res.finite.all()
    np.testing.assert_allclose(res.exponents[0], np.log(rates), rtol=1e-9)


def test_numba_kernel_agrees_with_lapack_on_tiny_and_huge_jacobians():
    from neurodyn.analysis.lyapunov._qr_numba import qr_chunk

    rng = np.random.default_rng(1)
    for scale in (1e-250, 1e-160, 1.0, 1e160):
        J = scale * rng.standard_normal((5, 2, 4, 4))
        q0 = np.linalg.qr(rng.standard_normal((2, 4, 3)))[0]
        ref, _ = qr_chunk(J, q0.copy(), "torch")
        got, _ = qr_chunk(J, q0.copy(), "numba")
        assert np.all(np.isfinite(ref))
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-9)


def relu_contraction(rate=0.5):
    """h' = relu(rate h): linear on the positive orthant; the state underflows to 0 after ~1100 steps,
    where relu'(0) = 0 makes the Jacobian exactly zero."""
    model = LeakyRNN(0, 2, 1, activation="relu", alpha=1.0, seed=0)
    with torch.no_grad():
        model.w_rec.copy_(rate * torch.eye(2))
        model.b.zero_()
    return model


@pytest.mark.parametrize("backend", ["torch", "numba"])
def test_an_orbit_that_underflows_is_reported_not_flagged_finite(backend, tmp_path):
    res = lyapunov_spectrum(relu_contraction(), h0=[1.0, 2.0], n_steps=3000, n_transient=0, backend=backend,
                            n_checkpoints=30)
    assert res.status.tolist() == ["underflow"]
    assert not res.finite[0]
    assert np.all(np.isneginf(res.exponents[0]))
    # the running estimates before the collapse (about step 1075) hold the true rate log 0.5
    before = res.steps < 1000
    np.testing.assert_allclose(res.running[0, before], np.log(0.5), atol=0.01)
    assert res.kaplan_yorke_dimension()[0] == 0.0  # a point attractor
    back = load(res.save(tmp_path / "lyap.nc"))
    assert back.status.tolist() == ["underflow"] and not back.finite[0]


def test_the_same_orbit_measured_before_the_underflow_is_finite():
    res = lyapunov_spectrum(relu_contraction(), h0=[1.0, 2.0], n_steps=500, n_transient=0)
    assert res.status.tolist() == ["finite"]
    np.testing.assert_allclose(res.exponents[0], np.log(0.5), atol=0.01)


def _result(exponents, finite):
    exponents = np.asarray(exponents, float)
    return LyapunovResult(exponents, exponents[:, None, :], np.array([10]), np.asarray(finite), "analytic",
                          10, 0, 0)


def test_kaplan_yorke_dimension_of_nan_exponents_is_nan():
    res = _result([[np.nan, np.nan], [0.47, -1.16], [-0.1, -0.2], [0.3, np.inf]], [False, True, True, True])
    dim = res.kaplan_yorke_dimension()
    assert np.isnan(dim[0]) and np.isnan(dim[3])
    assert dim[1] == pytest.approx(1 + 0.47 / 1.16)
    assert dim[2] == 0.0
    assert res.status.tolist()[:3] == ["diverged", "finite", "finite"]


def test_kaplan_yorke_dimension_with_a_collapsed_direction():
    res = _result([[0.2, -np.inf]], [False])
    assert res.kaplan_yorke_dimension()[0] == 1.0  # 1 + 0.2 / inf
    assert res.status.tolist() == ["underflow"]


@pytest.mark.parametrize("backend", ["torch", "numba"])
@pytest.mark.parametrize("bad", [0, -1, 2.5, None])
def test_n_checkpoints_below_one_is_refused_first(backend, bad):
    with pytest.raises(ValueError, match=r"^n_checkpoints must be an integer >= 1, got"):
        lyapunov_spectrum(LeakyRNN(1, 4, 1), n_steps=50, n_transient=10, n_checkpoints=bad, backend=backend)


@pytest.mark.parametrize("kw, match", [
    ({"n_steps": 2.5}, r"^n_steps must be an integer >= 1, got 2.5"),
    ({"n_steps": True}, r"^n_steps must be an integer >= 1, got True"),
    ({"n_steps": "100"}, r"^n_steps must be an integer >= 1, got '100'"),
    ({"n_transient": 1.5}, r"^n_transient must be an integer >= 0, got 1.5"),
    ({"n_transient": float("nan")}, r"^n_transient must be an integer >= 0, got nan"),
    ({"n_exponents": 1.5}, r"^n_exponents must be an integer in \[1, 4\], got 1.5"),
    ({"n_exponents": True}, r"^n_exponents must be an integer in \[1, 4\], got True"),
    ({"n_exponents": 5}, r"^n_exponents must be an integer in \[1, 4\], got 5"),
    ({"h0": np.zeros((0, 4))}, r"^h0 must have shape .* at least one trajectory, got \(0, 4\)"),
])
def test_counts_that_are_not_whole_numbers_and_empty_batches_are_refused(kw, match):
    with pytest.raises(ValueError, match=match):
        lyapunov_spectrum(LeakyRNN(1, 4, 1), **{"n_steps": 50, "n_transient": 10, **kw})


def test_whole_float_counts_give_the_integer_result_and_a_non_model_is_a_type_error():
    model = LeakyRNN(1, 4, 1, seed=0)
    ref = lyapunov_spectrum(model, n_steps=50, n_transient=10, n_exponents=2)
    res = lyapunov_spectrum(model, n_steps=50.0, n_transient=10.0, n_exponents=2.0)
    np.testing.assert_array_equal(res.exponents, ref.exponents)
    assert res.n_steps == 50 and isinstance(res.n_steps, int)
    with pytest.raises(TypeError, match="model must be a RecurrentModel .*got ndarray"):
        lyapunov_spectrum(np.eye(3), n_steps=10)
