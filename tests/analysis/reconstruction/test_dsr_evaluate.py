"""evaluate_reconstruction with external inputs: a generator scores 0, the ARX baseline is exact."""

import numpy as np
import pytest

from neurodyn.analysis.reconstruction import (
    ReconstructionResult,
    evaluate_reconstruction,
    fit_linear_baseline,
)
from neurodyn.models import PLRNN

A, W = np.array([0.6, 0.7]), np.array([[0.0, 0.2], [-0.3, 0.0]])
H, C = np.array([0.05, -0.1]), np.array([[1.0], [-0.5]])


def simulate(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """x[t] = F(x[t-1], u[t]) of the input-driven PLRNN above, x[0] = 0; (x, u) each (time, .)."""
    u = np.random.default_rng(seed).standard_normal((n, 1))
    z, xs = np.zeros(2), [np.zeros(2)]
    for t in range(1, n):
        z = A * z + W @ np.maximum(z, 0) + H + C @ u[t]
        xs.append(z)
    return np.array(xs), u


def test_arx_baseline_recovers_a_linear_input_driven_system_exactly():
    rng = np.random.default_rng(1)
    a_true, b_true = np.array([[0.8, 0.1], [-0.2, 0.7]]), np.array([0.3, -0.1])
    c_true = rng.standard_normal((2, 3))
    u = rng.standard_normal((400, 3))
    x = np.zeros((400, 2))
    for t in range(1, 400):
        x[t] = a_true @ x[t - 1] + c_true @ u[t] + b_true
    lin = fit_linear_baseline(x, u)
    np.testing.assert_allclose(lin.A, a_true, atol=1e-10)
    np.testing.assert_allclose(lin.C, c_true, atol=1e-10)
    np.testing.assert_allclose(lin.c, b_true, atol=1e-10)
    np.testing.assert_allclose(lin.run(x[0], 399, u[1:]), x[1:], atol=1e-9)
    np.testing.assert_allclose(lin.predict(x, 5, u), x[5:], atol=1e-9)
    shape = r"inputs must be \(time, input\) with the 400 time points"
    for bad_u, match in ((u[:-1], shape), (u[:, 0], shape), (np.where(u > 2, np.nan, u), "NaN")):
        with pytest.raises(ValueError, match=match):
            fit_linear_baseline(x, bad_u)
    with pytest.raises(ValueError, match="at least 2 time points"):
        fit_linear_baseline(x[:1])
    var = fit_linear_baseline(x)  # without the inputs it is a plain VAR(1)
    assert var.C.shape == (2, 0)
    assert np.abs(var.predict(x, 1) - x[1:]).max() > 0.1


def test_generator_with_inputs_scores_zero_and_beats_baselines():
    model = PLRNN.from_arrays(A, W, H, C=C)
    x_tr, u_tr = simulate(600, 0)
    x_te, u_te = simulate(300, 1)
    res = evaluate_reconstruction(model, x_tr, x_te, observation="identity", n_transient=20, pe_steps=5,
                                  smoothing=1.0, n_bins=8, inputs_train=u_tr, inputs_test=u_te,
                                  lyapunov=True)
    assert res.models == ("fitted", "linear", "mean")
    assert res.d_stsp[0] == pytest.approx(0.0, abs=1e-9)
    assert res.d_h[0] == pytest.approx(0.0, abs=1e-7)
    assert res.pe[0] == pytest.approx(0.0, abs=1e-20)
    np.testing.assert_allclose(res.generated, x_te[21:], atol=1e-12)  # driven run after the transient
    assert res.pe[1] > 1e-4 and res.pe[2] > res.pe[1]  # the linear ARX model cannot be exact here
    assert res.settings["n_inputs"] == 1
    # every linear region's Jacobian has spectral radius <= 0.7: the driven system is contracting
    assert res.max_lyapunov < 0


def test_inputs_are_required_and_checked():
    model = PLRNN.from_arrays(A, W, H, C=C)
    x, u = simulate(100, 0)
    kw = {"observation": "identity", "n_transient": 5, "pe_steps": 2}
    with pytest.raises(ValueError, match="pass inputs_test"):
        evaluate_reconstruction(model, x, x, **kw)
    with pytest.raises(ValueError, match="pass inputs_train"):
        evaluate_reconstruction(model, x, x, inputs_test=u, **kw)
    evaluate_reconstruction(model, x, x, inputs_test=u, baselines=False, **kw)
    with pytest.raises(ValueError, match=r"shape \(time, input\) = \(100, 1\)"):
        evaluate_reconstruction(model, x, x, inputs_train=u, inputs_test=u[:50], **kw)
    bad = u.copy()
    bad[3] = np.nan
    with pytest.raises(ValueError, match="inputs_test contains NaN"):
        evaluate_reconstruction(model, x, x, inputs_train=u, inputs_test=bad, **kw)
    with pytest.raises(ValueError, match="lower n_transient to at most 89"):
        evaluate_reconstruction(model, x, x, inputs_train=u, inputs_test=u, observation="identity",
                                n_transient=91, pe_steps=2)
    with pytest.raises(ValueError, match="n_transient must be an integer >= 0"):
        evaluate_reconstruction(model, x, x, inputs_train=u, inputs_test=u, observation="identity",
                                n_transient=-5, pe_steps=2)
    with pytest.raises(ValueError, match="give more held-out data"):
        evaluate_reconstruction(model, x, x[:5], inputs_train=u, inputs_test=u[:5], observation="identity",
                                n_transient=0, pe_steps=2)
    plain = PLRNN.from_arrays(A, W, H)
    with pytest.raises(ValueError, match="takes no external inputs"):
        evaluate_reconstruction(plain, x, x, inputs_test=u, **kw)


def test_poisson_scores_compare_counts_with_counts():
    rates = np.array([2.0, 5.0])
    rng = np.random.default_rng(0)
    x_tr, x_te = rng.poisson(rates, (4000, 2)).astype(float), rng.poisson(rates, (4000, 2)).astype(float)
    # z' = h, rates softplus(z): the exact homogeneous Poisson generator of the data
    model = PLRNN.from_arrays(np.zeros(2), np.zeros((2, 2)), np.log(np.expm1(rates)))
    kw = {"observation": "poisson", "n_transient": 10, "pe_steps": 1, "smoothing": 1.0, "method": "binned",
          "n_bins": 12, "bin_range": (-0.5, 11.5)}
    counts = evaluate_reconstruction(model, x_tr, x_te, **kw)
    np.testing.assert_allclose(counts.generated[-1], rates)  # the stored trajectory holds the rates
    assert counts.generated_kind == "rate"
    assert ReconstructionResult.from_xarray(counts.to_xarray()).generated_kind == "rate"
    # two samples of one law: only the finite-sample bias of the binned KL, as for the mean baseline
    assert counts.d_stsp[0] < 0.1 and abs(counts.d_stsp[0] - counts.d_stsp[2]) < 0.05
    assert counts.settings["sample_counts"] == 1
    np.testing.assert_allclose(counts.pe[0], np.mean((x_te[1:] - rates) ** 2))  # PE on expected counts
    as_rates = evaluate_reconstruction(model, x_tr, x_te, sample_counts=False, **kw)
    assert as_rates.d_stsp[0] > 1.0  # a constant rate is not a count distribution
    again = evaluate_reconstruction(model, x_tr, x_te, **kw)
    np.testing.assert_array_equal(again.d_stsp, counts.d_stsp)  # seeded draws
