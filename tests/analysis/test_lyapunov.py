"""Lyapunov spectrum: linear maps (closed form), the Lozi map (published value), invariances."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from problems import RotationModel

from neurodyn.analysis.lyapunov import lyapunov_spectrum
from neurodyn.models import GRU, LSTM, PLRNN, LeakyRNN, PLSystem


def lozi(a=1.7, b=0.5):
    """Lozi map x' = 1 + y - a|x|, y' = b x with |x| = 2 relu(x) - x."""
    return PLSystem(normals=np.array([[1.0, 0.0]]), offsets=np.zeros(1),
                    linear=np.array([[a, 1.0], [b, 0.0]]), bias=np.array([1.0, 0.0]),
                    mixing=np.array([[-2 * a], [0.0]]))


def lozi_plrnn(a=1.7, b=0.5):
    """The Lozi map as a PLRNN with a full A and a diagonal W entry."""
    return PLRNN.from_arrays(np.array([[a, 1.0], [b, 0.0]]), np.array([[-2 * a, 0.0], [0.0, 0.0]]),
                             np.array([1.0, 0.0]))


def linear_system(a):
    n = len(a)
    return PLSystem(np.zeros((0, n)), np.zeros(0), np.asarray(a, float), np.zeros(n), np.zeros((n, 0)))


def test_linear_map_exponents_are_log_abs_eigenvalues():
    model = LeakyRNN(0, 3, 1, activation="linear", alpha=1.0, seed=0)
    w = np.array([[0.9, 0.2, 0.0], [0.0, -0.5, 0.1], [0.0, 0.0, 1.3]])
    with torch.no_grad():
        model.w_rec.copy_(torch.as_tensor(w))
    res = lyapunov_spectrum(model, h0=np.ones(3), n_steps=300, n_transient=50, seed=1)
    auto = lyapunov_spectrum(model, h0=np.ones(3), n_steps=300, n_transient=50, seed=1, jacobian="autograd")
    expected = np.sort(np.log(np.abs(np.linalg.eigvals(w))))[::-1]
    assert (res.jacobian, auto.jacobian) == ("analytic", "autograd")
    np.testing.assert_allclose(res.exponents[0], expected, atol=0.02)
    np.testing.assert_allclose(res.exponents, auto.exponents, atol=1e-12)


def test_linear_pl_system_matches_closed_form_and_autograd():
    a = np.array([[0.5, -0.8], [0.8, 0.5]])  # rotation-scaling: both exponents log(|lambda|)
    system = linear_system(a)
    res = lyapunov_spectrum(system, h0=[1.0, 0.0], n_steps=200, n_transient=0, seed=0)
    assert res.jacobian == "analytic"
    np.testing.assert_allclose(res.exponents[0], [np.log(np.hypot(0.5, 0.8))] * 2, atol=1e-10)


def test_lozi_map_published_exponent_and_volume_contraction():
    res = lyapunov_spectrum(lozi(), h0=[[0.1, 0.1], [-0.2, 0.05]], n_steps=100_000,
                            n_transient=1_000, seed=0)
    lam = res.exponents
    assert np.all(res.finite)
    # Sprott (2003), Chaos and Time-Series Analysis, table of maps: Lozi a=1.7, b=0.5: 0.4703, -1.1634
    np.testing.assert_allclose(lam[:, 0], 0.4703, atol=0.005)
    # |det J| = b everywhere, so the exponents sum to log b exactly
    np.testing.assert_allclose(lam.sum(axis=1), np.log(0.5), atol=1e-9)
    # the running estimate has settled: last checkpoint vs half-way within 0.01
    assert np.all(np.abs(res.running[:, -1, 0] - res.running[:, len(res.steps) // 2, 0]) < 0.01)
    assert res.kaplan_yorke_dimension()[0] == pytest.approx(1 + 0.4703 / 1.1634, abs=0.02)


def test_plrnn_analytic_jacobians_agree_with_plsystem_and_autograd():
    model = lozi_plrnn()
    # short runs: round-off differences between the torch and numpy maps grow like exp(0.47 t)
    kw = dict(h0=[0.1, 0.1], n_steps=40, n_transient=0, seed=0)
    exact = lyapunov_spectrum(model, **kw)
    auto = lyapunov_spectrum(model, jacobian="autograd", **kw)
    plain = lyapunov_spectrum(lozi(), **kw)
    assert (exact.jacobian, auto.jacobian) == ("analytic", "autograd")
    np.testing.assert_allclose(exact.exponents, plain.exponents, atol=1e-10)
    np.testing.assert_allclose(exact.exponents, auto.exponents, atol=1e-8)


def test_time_varying_input_analytic_equals_autograd():
    model = PLRNN.from_arrays(np.array([[1.7, 1.0], [0.5, 0.0]]), np.array([[-3.4, 0.0], [0.0, 0.0]]),
                              np.array([1.0, 0.0]), C=np.array([[1.0], [0.0]]))
    u = 0.05 * np.sin(np.arange(600) / 7.0)[:, None]
    kw = dict(h0=[0.1, 0.1], n_steps=500, n_transient=100, inputs=u, seed=0)
    exact = lyapunov_spectrum(model, **kw)
    auto = lyapunov_spectrum(model, jacobian="autograd", **kw)
    assert (exact.jacobian, auto.jacobian) == ("analytic", "autograd")
    # same trajectory (both roll the same params out), Jacobians equal to round-off
    np.testing.assert_allclose(exact.exponents, auto.exponents, atol=1e-10)
    assert exact.exponents[0, 0] > 0.3


def test_same_seed_same_result_and_xarray_roundtrip(tmp_path):
    import xarray as xr

    r1 = lyapunov_spectrum(lozi(), n_steps=500, n_transient=10, seed=3)
    r2 = lyapunov_spectrum(lozi(), n_steps=500, n_transient=10, seed=3)
    np.testing.assert_array_equal(r1.exponents, r2.exponents)
    path = tmp_path / "lyap.nc"
    r1.to_xarray().to_netcdf(path, engine="h5netcdf")
    back = xr.load_dataset(path, engine="h5netcdf")
    np.testing.assert_array_equal(back["exponents"].values, r1.exponents)


def test_diverging_trajectory_is_flagged_not_raised():
    system = linear_system(np.diag([3.0, 0.5]))
    res = lyapunov_spectrum(system, h0=[1.0, 1.0], n_steps=2000, n_transient=0)
    assert not res.finite[0] and np.all(np.isnan(res.exponents[0]))


def test_bad_inputs_raise_clear_errors():
    with pytest.raises(ValueError, match="h0 must have shape"):
        lyapunov_spectrum(lozi(), h0=np.zeros(3))
    with pytest.raises(ValueError, match="NaN"):
        lyapunov_spectrum(lozi(), h0=[np.nan, 0.0])
    with pytest.raises(ValueError, match="n_exponents"):
        lyapunov_spectrum(lozi(), n_exponents=5)
    with pytest.raises(ValueError, match="jacobian"):
        lyapunov_spectrum(RotationModel(), jacobian="analytic")
    with pytest.raises(ValueError, match="Triton"):
        lyapunov_spectrum(lozi(), backend="triton")
    with pytest.raises(ValueError, match="no inputs"):
        lyapunov_spectrum(lozi(), inputs=np.ones(1))


def test_numba_qr_kernel_and_rollout_match_the_reference():
    from neurodyn.analysis.lyapunov._qr_numba import qr_chunk

    rng = np.random.default_rng(0)
    J = rng.standard_normal((50, 3, 4, 4))
    q0 = np.linalg.qr(rng.standard_normal((3, 4, 2)))[0]
    logs_ref, q_ref = qr_chunk(J, q0.copy(), "torch")
    logs_nb, q_nb = qr_chunk(J, q0.copy(), "numba")
    np.testing.assert_allclose(logs_nb, logs_ref, atol=1e-10)
    # frames agree up to the sign of each column
    np.testing.assert_allclose(np.abs(np.sum(q_nb * q_ref, axis=1)), 1.0, atol=1e-10)
    system = lozi()
    z0 = np.array([[0.1, 0.1], [-0.2, 0.05]])
    a = lyapunov_spectrum(system, h0=z0, n_steps=30, n_transient=0, backend="torch")
    b = lyapunov_spectrum(system, h0=z0, n_steps=30, n_transient=0, backend="numba")
    assert (a.backend, b.backend) == ("torch", "numba")
    np.testing.assert_allclose(a.exponents, b.exponents, atol=1e-9)
    with pytest.warns(DeprecationWarning, match="backend='torch'"):
        old = lyapunov_spectrum(system, h0=z0, n_steps=30, n_transient=0, backend="numpy")
    assert old.backend == "torch"
    np.testing.assert_array_equal(old.exponents, a.exponents)


@pytest.mark.parametrize("system", [lozi(), linear_system(np.array([[0.5, -0.8], [0.8, 0.5]]))],
                         ids=["lozi", "linear"])
def test_a_pl_system_rolls_out_as_family_params(system):
    from neurodyn.kernels import rollout
    from neurodyn.models.piecewise import system_params

    params = system_params(system)
    z = np.array([[0.1, 0.1], [-0.2, 0.05]])
    res = rollout(params, h0=torch.as_tensor(z), n_steps=30, backend="numba")
    for t in range(30):
        z = system.step(z)
        np.testing.assert_allclose(res.states[:, t].numpy(), z, atol=1e-9)


def test_a_pl_system_no_family_holds_steps_in_numpy():
    from neurodyn.models.piecewise import system_params

    # the Lozi map written with relu(2 x) / 2: a full linear part and a normal that is no unit vector
    scaled = lozi()._replace(normals=np.array([[2.0, 0.0]]), mixing=np.array([[-1.7], [0.0]]))
    assert system_params(scaled) is None
    res = lyapunov_spectrum(scaled, h0=[0.1, 0.1], n_steps=20_000, n_transient=100, seed=0)
    assert res.jacobian == "analytic" and res.backend == "numba" and np.all(res.finite)
    np.testing.assert_allclose(res.exponents[0, 0], 0.4703, atol=0.02)  # Sprott (2003), as above
    np.testing.assert_allclose(res.exponents.sum(), np.log(0.5), atol=1e-9)


def test_a_model_without_a_family_uses_its_step_and_autograd():
    res = lyapunov_spectrum(RotationModel(rho=0.9), h0=[1.0, 0.0], n_steps=200, n_transient=0)
    assert res.jacobian == "autograd" and res.backend == "numba"
    np.testing.assert_allclose(res.exponents[0], [np.log(0.9)] * 2, atol=1e-12)


@pytest.mark.parametrize("model", [LeakyRNN(2, 5, 1, gain=2.0, alpha=0.5, activation="softplus", seed=0),
                                   GRU(2, 4, 1, seed=1), LSTM(2, 3, 1, seed=2)], ids=["leaky", "gru", "lstm"])
def test_closed_form_jacobians_with_inputs_equal_autograd(model):
    u = 0.5 * np.sin(np.arange(300) / 5.0)[:, None] * np.ones(2)
    kw = dict(n_steps=250, n_transient=50, inputs=u, seed=0, h0=0.1 * np.ones((2, model.state_size)))
    exact = lyapunov_spectrum(model, **kw)
    auto = lyapunov_spectrum(model, jacobian="autograd", **kw)
    assert (exact.jacobian, auto.jacobian) == ("analytic", "autograd")
    np.testing.assert_allclose(exact.exponents, auto.exponents, atol=1e-10)
