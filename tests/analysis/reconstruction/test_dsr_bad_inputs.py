"""Reconstruction metrics, reference systems and baselines refuse bad input in one line, before any work."""

import warnings

import numpy as np
import pytest

from neurodyn.analysis.reconstruction import (
    evaluate_reconstruction,
    fit_linear_baseline,
    lorenz63,
    lorenz63_fixed_points,
    power_spectrum_distance,
    prediction_error,
    state_space_divergence,
    state_space_divergence_max,
)
from neurodyn.models import PLRNN


@pytest.fixture
def x():
    return np.random.default_rng(0).normal(size=(500, 2))


@pytest.mark.parametrize("n_points, kw, match", [
    (10, {"dt": float("nan")}, "dt must be a finite number > 0, got nan"),
    (10, {"dt": 0.0}, "dt must be a finite number > 0, got 0.0"),
    (10, {"dt": -0.1}, "dt must be a finite number > 0"),
    (0, {}, "n_points must be an integer >= 1, got 0"),
    (-1, {}, "n_points must be an integer >= 1, got -1"),
    (10.5, {}, "n_points must be an integer >= 1, got 10.5"),
    (10, {"rho": float("inf")}, "rho must be a finite number, got inf"),
])
def test_lorenz63_refuses_bad_settings(n_points, kw, match):
    with pytest.raises(ValueError, match=match):
        lorenz63(n_points, **kw)


def test_lorenz63_fixed_points_need_rho_above_one():
    with pytest.raises(ValueError, match=r"rho must be a finite number > 1, got 0.5 \(for rho <= 1"):
        lorenz63_fixed_points(rho=0.5)
    with pytest.raises(ValueError, match="beta must be a finite number > 0"):
        lorenz63_fixed_points(beta=-1.0)
    assert lorenz63(3.0).shape == (3, 3)


@pytest.mark.parametrize("kw, match", [
    ({"bin_range": (np.nan, 1.0)}, r"bin_range must be finite \(lo, hi\) or \(2, 2\) with hi > lo; got \(n"),
    ({"bin_range": (-np.inf, np.inf)}, "bin_range must be finite"),
    ({"bin_range": "wide"}, "bin_range must be finite"),
    ({"smoothing": np.nan}, "smoothing must be a finite number >= 0, got nan"),
    ({"smoothing": -0.1}, "smoothing must be a finite number >= 0, got -0.1"),
    ({"method": "gmm", "gmm_variance": np.nan}, "gmm_variance must be a finite number > 0, got nan"),
    ({"method": "gmm", "gmm_variance": 0.0}, "gmm_variance must be a finite number > 0"),
    ({"n_bins": 2.5}, "n_bins must be an integer >= 1, got 2.5"),
    ({"n_bins": np.nan}, "n_bins must be an integer >= 1, got nan"),
])
def test_state_space_divergence_refuses_bad_settings(x, kw, match):
    with pytest.raises(ValueError, match=match):
        state_space_divergence(x, x + 5, **{"n_bins": 10, **kw})
    with pytest.raises(ValueError, match=match):  # checked before a diverged x_gen returns inf
        state_space_divergence(x, np.full_like(x, np.nan), **{"n_bins": 10, **kw})


def test_state_space_divergence_max_refuses_bad_settings(x):
    with pytest.raises(ValueError, match="n_bins must be an integer >= 1, got 2.5"):
        state_space_divergence_max(x, 100, n_bins=2.5)
    with pytest.raises(ValueError, match=r"30\*\*20 cells overflow; use method='gmm'"):
        state_space_divergence_max(np.random.default_rng(0).normal(size=(50, 20)), 100)
    with pytest.raises(ValueError, match=r"n_gen must be an integer >= 2, got nan \(time points\)"):
        state_space_divergence_max(x, np.nan)
    with pytest.raises(ValueError, match="smoothing must be a finite number > 0"):
        state_space_divergence_max(x, 100, smoothing=np.nan)


@pytest.mark.parametrize("value", [0.3, 0.1, 0.0, 1e6])
def test_a_constant_channel_gets_a_nonzero_bin_width(x, value):
    xc = x.copy()
    xc[:, 1] = value
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert state_space_divergence(xc, xc + [0.0, 1e-12], n_bins=10) == pytest.approx(0.0, abs=1e-9)
        far = state_space_divergence(xc, xc + [0.0, 0.6 * max(abs(value), 1.0)], n_bins=10)
        d_max = state_space_divergence_max(xc, len(xc), n_bins=10)
    assert np.isfinite(d_max) and far == pytest.approx(d_max, rel=1e-6)  # outside the box: saturated


def test_power_spectrum_distance_refuses_a_kernel_beyond_memory(x):
    with pytest.raises(ValueError, match=r"power_spectrum_distance needs about .* GiB .*lower smoothing"):
        power_spectrum_distance(x, x, smoothing=1e12)


def _plrnn(n_inputs):
    import torch

    torch.manual_seed(0)
    return PLRNN(n_inputs, 6, 2)


def test_prediction_error_checks_inputs_like_evaluate(x):
    u = np.random.default_rng(1).normal(size=(len(x), 1))
    driven, plain = _plrnn(1), _plrnn(0)
    with pytest.raises(ValueError, match=r"the model takes 1 external inputs; pass inputs \(time, input\)"):
        prediction_error(driven, x, 2)
    with pytest.raises(ValueError, match=r"inputs must have shape \(time, input\) = \(500, 1\), got \(10,"):
        prediction_error(driven, x, 2, inputs=u[:10])
    with pytest.raises(ValueError, match="takes no external inputs .*; drop inputs"):
        prediction_error(plain, x, 2, inputs=u)
    assert np.isfinite(prediction_error(driven, x, 2, inputs=u))


def test_prediction_error_refuses_bad_data_and_settings(x):
    model = _plrnn(0)
    with pytest.raises(ValueError, match="unknown observation model 'nonsense'"):
        prediction_error(model, x, 2, observation="nonsense")
    bad = x.copy()
    bad[3, 0] = np.nan
    with pytest.raises(ValueError, match="x contains NaN or Inf"):
        prediction_error(model, bad, 2)
    with pytest.raises(ValueError, match=r"x must be \(time, channel\).*got shape \(1, 500, 2\)"):
        prediction_error(model, x[None], 2)
    with pytest.raises(ValueError, match=r"n_steps must be an integer in \[1, 499\], got True"):
        prediction_error(model, x, True)
    with pytest.raises(ValueError, match=r"n_steps must be an integer in \[1, 499\], got 2.5"):
        prediction_error(model, x, 2.5)
    with pytest.raises(TypeError, match="model must be a RecurrentModel .* got str"):
        prediction_error("m", x, 2)
    assert prediction_error(model, x, 2.0) == prediction_error(model, x, 2)


def test_evaluate_reconstruction_takes_whole_float_counts_and_names_a_wrong_model(x):
    model = _plrnn(0)
    kw = {"observation": "identity", "n_bins": 5}
    ref = evaluate_reconstruction(model, x[:50], x[50:80], pe_steps=2, n_transient=2, **kw)
    for counts in ({"pe_steps": 2.0, "n_transient": 2}, {"pe_steps": 2, "n_transient": 2.0}):
        res = evaluate_reconstruction(model, x[:50], x[50:80], **counts, **kw)
        np.testing.assert_array_equal(res.pe, ref.pe)
    with pytest.raises(ValueError, match="pe_steps must be an integer >= 1, got True"):
        evaluate_reconstruction(model, x[:50], x[50:80], pe_steps=True, **kw)
    with pytest.raises(TypeError, match="model must be a RecurrentModel .* got str"):
        evaluate_reconstruction("m", x[:50], x[50:80], **kw)
    with pytest.raises(ValueError, match="unknown observation model 'nonsense'"):
        evaluate_reconstruction(model, x[:50], x[50:80], observation="nonsense")


def test_linear_baseline_names_the_valid_range_of_n_and_the_length_of_x0(x):
    lb = fit_linear_baseline(x)
    for n in (-1, 0):
        with pytest.raises(ValueError, match=r"n must be an integer in \[1, 499\], got " + str(n)):
            lb.predict(x, n)
    with pytest.raises(ValueError, match=r"n must be an integer in \[1, 2\], got 5"):
        lb.predict(x[:3], 5)
    with pytest.raises(ValueError, match="n must be an integer >= 0, got -1"):
        lb.run(x[0], -1)
    with pytest.raises(ValueError, match=r"x0 must have shape \(channel,\) = \(2,\), got \(1,\)"):
        lb.run(x[0, :1], 5)
    with pytest.raises(ValueError, match="this baseline takes no external inputs"):
        lb.predict(x, 2, x)
    assert lb.run(x[0], 5).shape == (5, 2) and lb.predict(x, 5).shape == (495, 2)


@pytest.mark.parametrize("metric", [state_space_divergence, power_spectrum_distance])
def test_series_without_channels_are_refused(metric):
    empty = np.zeros((50, 0))
    with pytest.raises(ValueError, match=r"same channels, at least one; got \(50, 0\)"):
        metric(empty, empty)
    with pytest.raises(ValueError, match=r"same channels, at least one; got \(50, 0\)"):
        state_space_divergence_max(empty, 50)


def test_metrics_take_tensors_that_require_grad_and_refuse_complex_data(x):
    import torch

    xt = torch.tensor(x, requires_grad=True)
    assert state_space_divergence(xt, x + 0.5, n_bins=10) == state_space_divergence(x, x + 0.5, n_bins=10)
    assert power_spectrum_distance(x, xt) == 0.0
    assert prediction_error(_plrnn(0), xt, 2) == prediction_error(_plrnn(0), x, 2)
    with pytest.raises(TypeError, match=r"x_gen is complex; pass real data"):
        state_space_divergence(x, x + 1j)


def test_normalized_power_spectrum_checks_its_settings_and_data(x):
    from neurodyn.analysis.reconstruction import normalized_power_spectrum

    with pytest.raises(ValueError, match="smoothing must be a finite number >= 0, got -1"):
        normalized_power_spectrum(x, -1)
    bad = x.copy()
    bad[4, 1] = np.inf
    with pytest.raises(ValueError, match="x contains NaN or Inf"):
        normalized_power_spectrum(bad, 0.0)
    one = normalized_power_spectrum(x[:, 0], 0.0)  # a 1-D series is one channel
    np.testing.assert_array_equal(one, normalized_power_spectrum(x[:, :1], 0.0))
    assert one.shape == (251, 1)


def test_evaluate_reconstruction_names_x_test_and_pe_steps(x):
    model = _plrnn(0)
    kw = {"observation": "identity", "n_bins": 5, "n_transient": 2}
    for row in (0, 7):  # the start of the free run, or a later point
        bad = x[50:80].copy()
        bad[row, 1] = np.nan
        with pytest.raises(ValueError, match="x_test contains NaN or Inf; clean the held-out data first"):
            evaluate_reconstruction(model, x[:50], bad, **kw)
    with pytest.raises(ValueError, match="x_test has 1 channels but the model has 2 outputs"):
        evaluate_reconstruction(model, x[:50, :1], x[50:80, :1], **kw)
    with pytest.raises(ValueError, match=r"pe_steps = 30 leaves no prediction in the 30 held-out time "
                                         r"points; lower pe_steps to at most 29"):
        evaluate_reconstruction(model, x[:50], x[50:80], pe_steps=30, **kw)
    assert np.isfinite(evaluate_reconstruction(model, x[:50], x[50:80], pe_steps=29, **kw).pe).all()


def test_evaluate_reconstruction_refuses_a_free_run_beyond_memory_before_running(x):
    with pytest.raises(ValueError, match=r"evaluate_reconstruction needs about .* GiB \(a free run of "
                                         r"10000000030 steps\) .*; lower n_transient"):
        evaluate_reconstruction(_plrnn(0), x[:50], x[50:80], observation="identity", n_transient=10**10)


def test_inputs_and_training_data_may_be_tensors_that_require_grad(x):
    import torch

    u = np.random.default_rng(1).normal(size=(len(x), 1))
    kw = {"observation": "identity", "n_bins": 5, "n_transient": 5, "pe_steps": 2}
    ut = torch.tensor(u, requires_grad=True)
    model = _plrnn(1)
    ref = evaluate_reconstruction(model, x[:300], x[300:], inputs_train=u[:300], inputs_test=u[300:], **kw)
    got = evaluate_reconstruction(model, x[:300], x[300:], inputs_train=ut[:300], inputs_test=ut[300:], **kw)
    np.testing.assert_array_equal(got.d_stsp, ref.d_stsp)
    np.testing.assert_array_equal(got.pe, ref.pe)
    lb = fit_linear_baseline(torch.tensor(x, requires_grad=True), torch.tensor(u, requires_grad=True))
    np.testing.assert_array_equal(lb.A, fit_linear_baseline(x, u).A)


def test_gmm_estimate_refuses_samples_beyond_memory_before_drawing(x):
    with pytest.raises(ValueError, match=r"state_space_divergence needs about .* GiB \(100000000000 "
                                         r"Monte-Carlo samples of 2 channels\) .*; lower n_samples"):
        state_space_divergence(x, x, method="gmm", n_samples=10**11)
