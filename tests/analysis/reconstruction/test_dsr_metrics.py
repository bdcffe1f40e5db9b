"""DSR measures against closed forms: identical series, Gaussian KL, pure sines, identity-map PE."""

import numpy as np
import pytest
from scipy.stats import norm

from neurodyn.analysis.reconstruction import (
    normalized_power_spectrum,
    power_spectrum_distance,
    prediction_error,
    state_space_divergence,
)


def gauss_kl(m1, s1, m2, s2):
    return np.log(s2 / s1) + (s1**2 + (m1 - m2) ** 2) / (2 * s2**2) - 0.5


def quantile_sample(m, s, n):
    """Deterministic 'sample' whose histogram approximates N(m, s^2) cell probabilities to 1/n."""
    return (m + s * norm.ppf((np.arange(n) + 0.5) / n))[:, None]


@pytest.mark.parametrize("seed", [0, 1])
def test_identical_series_give_zero(seed):
    x = np.random.default_rng(seed).standard_normal((2000, 3))
    assert state_space_divergence(x, x, n_bins=10) == pytest.approx(0.0, abs=1e-12)
    gmm = state_space_divergence(x, x, method="gmm", gmm_variance=0.5, seed=seed)
    assert gmm == pytest.approx(0.0, abs=1e-12)
    assert power_spectrum_distance(x, x, smoothing=3.0) == pytest.approx(0.0, abs=1e-7)


@pytest.mark.parametrize("smoothing", [0.0, 3.0, 20.0])
def test_hellinger_spectrum_distance_exactly_zero_for_identical_series(smoothing):
    x = np.random.default_rng(0).standard_normal((1000, 3))
    assert power_spectrum_distance(x, x.copy(), smoothing=smoothing) == 0.0
    np.testing.assert_array_equal(power_spectrum_distance(x, x, smoothing=smoothing, per_channel=True), 0.0)
    # elsewhere it is still sqrt(1 - Bhattacharyya coefficient)
    y = np.random.default_rng(1).standard_normal((1000, 3))
    p, q = normalized_power_spectrum(x, smoothing), normalized_power_spectrum(y, smoothing)
    expected = np.sqrt(1.0 - np.sqrt(p * q).sum(axis=0))
    np.testing.assert_allclose(power_spectrum_distance(x, y, smoothing=smoothing, per_channel=True), expected,
                               rtol=1e-10)


def test_binned_kl_of_two_gaussians_matches_discrete_and_continuous_kl():
    n, edges = 200_000, np.linspace(-8, 8, 401)
    p_x, q_x = quantile_sample(0.0, 1.0, n), quantile_sample(1.0, 1.5, n)
    got = state_space_divergence(p_x, q_x, n_bins=400, bin_range=(-8, 8), smoothing=0.0)
    p, q = np.diff(norm.cdf(edges)), np.diff(norm.cdf(edges, 1.0, 1.5))
    keep = p > 0
    discrete = np.sum(p[keep] * np.log(p[keep] / q[keep]))
    assert got == pytest.approx(discrete, abs=2e-3)
    assert got == pytest.approx(gauss_kl(0, 1, 1, 1.5), abs=5e-3)


def test_lowest_bin_is_counted():
    # x_true: half the mass in the lowest bin, half in bin 1; x_gen: all in bin 1.
    x_true = np.r_[np.zeros(50), np.full(50, 1.5)][:, None]
    x_gen = np.full(100, 1.5)[:, None]
    s = 1e-3
    got = state_space_divergence(x_true, x_gen, n_bins=4, bin_range=(0, 4), smoothing=s)
    cells = 4 + 1  # plus the overflow cell
    p = (np.array([50, 50, 0, 0, 0]) + s) / (100 + s * cells)
    q = (np.array([0, 100, 0, 0, 0]) + s) / (100 + s * cells)
    assert got == pytest.approx(np.sum(p * np.log(p / q)), rel=1e-10)
    assert got > 1.0  # dropping the lowest bin would give 0 here


def test_points_outside_the_range_are_not_dropped():
    x_true = np.linspace(0, 1, 100)[:, None]
    inside = state_space_divergence(x_true, x_true, n_bins=5, bin_range=(0, 1))
    outside = state_space_divergence(x_true, np.r_[x_true[:50], x_true[:50] + 5], n_bins=5, bin_range=(0, 1))
    assert inside == pytest.approx(0.0, abs=1e-12)
    assert outside > 1.0


def test_binned_divergence_ignores_time_order_and_flags_divergence():
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((3000, 2)), rng.standard_normal((3000, 2)) + 0.5
    d = state_space_divergence(x, y, n_bins=8)
    assert state_space_divergence(x[::-1], y[rng.permutation(3000)], n_bins=8) == pytest.approx(d)
    y[10] = np.nan
    assert state_space_divergence(x, y) == np.inf
    with pytest.raises(ValueError, match="x_true contains NaN"):
        state_space_divergence(y, x)
    with pytest.raises(ValueError, match="same channels"):
        state_space_divergence(x, y[:, :1])


def test_gmm_kl_of_two_gaussians():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3000, 2))
    y = rng.standard_normal((3000, 2)) + np.array([1.0, 0.0])
    var = 0.25  # mixtures ≈ N(0, 1.25 I) and N(mu, 1.25 I): KL = |mu|^2 / (2 * 1.25) = 0.4
    got = state_space_divergence(x, y, method="gmm", gmm_variance=var, n_samples=2000, seed=1)
    assert got == pytest.approx(0.4, abs=0.08)
    again = state_space_divergence(x, y, method="gmm", gmm_variance=var, n_samples=2000, seed=1)
    assert got == again


def test_sine_spectra():
    n = 4096
    t = np.arange(n)
    sine = np.sin(2 * np.pi * 500 * t / n)[:, None]
    shifted = 3.0 * np.sin(2 * np.pi * 500 * t / n + 1.0)[:, None] + 7.0
    other = np.sin(2 * np.pi * 510 * t / n)[:, None]
    assert power_spectrum_distance(sine, shifted, smoothing=0.0) == pytest.approx(0.0, abs=1e-6)
    assert power_spectrum_distance(sine, other, smoothing=0.0) == pytest.approx(1.0, abs=1e-6)
    # two delta peaks d bins apart smoothed by a Gaussian of sd s: BC = exp(-d^2 / (8 s^2))
    s, d = 5.0, 10.0
    expected = np.sqrt(1 - np.exp(-(d**2) / (8 * s**2)))
    assert power_spectrum_distance(sine, other, smoothing=s) == pytest.approx(expected, abs=2e-3)


def test_power_spectrum_distance_per_channel():
    t = np.arange(1024)
    x = np.stack([np.sin(2 * np.pi * 50 * t / 1024), np.sin(2 * np.pi * 100 * t / 1024)], 1)
    y = np.stack([x[:, 0], np.sin(2 * np.pi * 200 * t / 1024)], 1)
    d = power_spectrum_distance(x, y, smoothing=0.0, per_channel=True)
    np.testing.assert_allclose(d, [0.0, 1.0], atol=1e-6)


def test_prediction_error_of_identity_map_is_lagged_mse():
    from neurodyn.models import PLRNN

    model = PLRNN.from_arrays(np.ones(2), np.zeros((2, 2)), np.zeros(2))  # z' = z
    x = np.random.default_rng(0).standard_normal((300, 2))
    for n in (1, 5):
        assert prediction_error(model, x, n, observation="identity") == pytest.approx(
            np.mean((x[n:] - x[:-n]) ** 2), rel=1e-12)
    with pytest.raises(ValueError, match="n_steps"):
        prediction_error(model, x, 300)


def test_prediction_error_of_the_generator_is_zero():
    from neurodyn.models import PLRNN

    A, W, h = np.array([0.9, 0.8]), np.array([[0.0, -0.3], [0.2, 0.0]]), np.array([0.1, -0.2])
    model = PLRNN.from_arrays(A, W, h)
    z, xs = np.array([1.0, -1.0]), []
    for _ in range(200):
        z = A * z + W @ np.maximum(z, 0) + h
        xs.append(z)
    assert prediction_error(model, np.array(xs), 10, observation="identity") == pytest.approx(0.0, abs=1e-20)


def test_prediction_error_takes_reversed_views():
    from neurodyn.analysis import prediction_error
    from neurodyn.models import PLRNN

    model = PLRNN.from_arrays(A=[0.5], W=[[0.0]], h=[1.0])
    x = np.array([[1.75], [1.5], [1.0], [0.0]])
    assert prediction_error(model, x[::-1], 1, observation="identity") == 0.0
    errors = np.array([0.375, 0.75, 1.5])  # 0.5 x + 1 - x' along the reversed series
    assert prediction_error(model, x, 1, observation="identity") == pytest.approx(np.mean(errors**2))


def test_gmm_sample_counts_must_be_positive_integers():
    x = np.random.default_rng(0).normal(size=(20, 2))
    with pytest.raises(ValueError, match="n_samples must be an integer >= 1, got 0"):
        state_space_divergence(x, x, method="gmm", n_samples=0)
    with pytest.raises(ValueError, match="n_samples must be an integer >= 1, got 2.5"):
        state_space_divergence(x, x, method="gmm", n_samples=2.5)
    with pytest.raises(ValueError, match="max_points must be an integer >= 1, got 0"):
        state_space_divergence(x, x, method="gmm", max_points=0)


def test_power_spectrum_distance_refuses_negative_smoothing_and_too_short_series():
    x = np.random.default_rng(0).normal(size=(20, 2))
    for bad in (-1.0, float("nan")):
        with pytest.raises(ValueError, match="smoothing must be a finite number >= 0"):
            power_spectrum_distance(x, x[::-1], smoothing=bad)
    for n in (2, 3):  # z-scored spectra of 2 or 3 points are all the same: the distance would be 0
        with pytest.raises(ValueError, match=f"at least 4 time points in each series.*got 20 and {n}"):
            power_spectrum_distance(x, x[:n])
    assert power_spectrum_distance(x[:4], x[:4], smoothing=0.0) == 0.0


def test_a_generated_point_beyond_float_range_counts_as_outside_without_warnings():
    # (x - lo) / w overflows to inf for such a point (a generated run that blew up): it lands in the
    # overflow bin, as any point outside the box does, and NumPy's cast of inf to int does not warn
    import warnings

    x_true = np.linspace(0, 1, 100)[:, None]
    far = np.r_[x_true[:99], [[1e308]]]
    near = np.r_[x_true[:99], [[5.0]]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = state_space_divergence(x_true, far, n_bins=5, bin_range=(0, 1e-300))
    assert got == state_space_divergence(x_true, near, n_bins=5, bin_range=(0, 1e-300))
