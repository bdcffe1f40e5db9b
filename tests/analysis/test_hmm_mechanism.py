"""Mechanism analyses of HMM emulation (Torre et al. 2025) against closed forms and planted answers."""

import numpy as np
import pytest
import torch

from neurodyn.analysis import (
    compute_hmm_mechanism,
    compute_noise_free_collapse,
    compute_orbit,
    compute_speeds,
    compute_transition_triggered_average,
)
from neurodyn.models import LeakyRNN
from neurodyn.tasks import HMMEmulation


def _linear(alpha=1.0, seed=0, n=4):
    model = LeakyRNN(2, n, 3, activation="linear", alpha=alpha, gain=0.6, seed=seed)
    with torch.no_grad():
        model.b.copy_(torch.linspace(-1, 1, n))
    return model


def test_speeds_are_the_norm_of_the_linear_step():
    model = _linear(alpha=0.5)
    p = model.params()
    w, b = p.w_rec.detach().double().numpy(), p.b.detach().double().numpy()
    h = np.random.default_rng(0).normal(size=(3, 5, 4))
    expected = np.linalg.norm(0.5 * (-h + h @ w.T + b), axis=-1)  # F(h) - h = alpha (-h + W h + b)
    np.testing.assert_allclose(compute_speeds(model, h), expected, rtol=1e-10)
    with pytest.raises(ValueError, match="units"):
        compute_speeds(model, h[..., :3])


def test_contracting_linear_network_collapses_onto_its_closed_form_point():
    model = _linear()
    p = model.params()
    w, b = p.w_rec.detach().double().numpy(), p.b.detach().double().numpy()
    h_star = np.linalg.solve(np.eye(4) - w, b)  # h = W h + b at alpha = 1
    out = compute_noise_free_collapse(model, np.random.default_rng(1).normal(size=(30, 4)) * 3, n_steps=300)
    assert out["collapsed"] and out["period"] == 1 and out["n_fixed_points"] == 1 and out["n_stable"] == 1
    np.testing.assert_allclose(out["final_states"], np.broadcast_to(h_star, (30, 4)), atol=1e-8)
    np.testing.assert_allclose(out["fixed_points"].states[0], h_star, atol=1e-8)


def test_bistable_unit_does_not_collapse():
    model = LeakyRNN(1, 1, 3, alpha=1.0, seed=0)
    with torch.no_grad():
        model.w_rec.fill_(2.0)
    out = compute_noise_free_collapse(model, np.linspace(-2, 2, 10)[:, None], n_steps=200)
    assert not out["collapsed"] and out["n_stable"] == 2 and out["period"] == 1
    assert out["final_spread"] == pytest.approx(0.9575, abs=1e-3)  # the points are +-0.9575


@pytest.mark.parametrize("seed", [0, 1])
def test_orbit_of_a_rotated_noisy_circle(seed):
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 6 * np.pi, 300, endpoint=False)  # three turns
    circle = np.stack([np.cos(t), np.sin(t), np.zeros_like(t), np.zeros_like(t)], -1)
    rot, _ = np.linalg.qr(rng.normal(size=(4, 4)))  # invariance: any orthogonal embedding
    states = (circle + 0.01 * rng.normal(size=circle.shape)) @ rot.T
    emissions = np.eye(3)[(np.mod(t, 2 * np.pi) // (2 * np.pi / 3)).astype(int)]  # three arcs
    orbit = compute_orbit(states[None], n_bins=12, emissions=emissions[None], speeds=np.ones((1, 300)))
    assert abs(float(orbit.winding[0])) == pytest.approx(3.0 * 299 / 300, abs=0.005)  # first to last sample
    assert orbit.attrs["n_emission_changes"] == 3
    assert orbit.attrs["explained_variance"] > 0.999
    radius = np.linalg.norm(orbit.orbit.values - states.mean(0), axis=1)
    np.testing.assert_allclose(radius, np.sinc(1 / 12), atol=0.01)  # mean of a 30-degree arc: sin(a)/a
    np.testing.assert_allclose(orbit.occupancy.values, 1 / 12, atol=0.01)


def test_transition_triggered_average_matches_a_loop_and_finds_the_planted_unit():
    rng = np.random.default_rng(3)
    symbols = np.repeat([[0, 2, 1] * 6], 8, axis=1)[:, :140].repeat(2, axis=0)
    states = rng.normal(size=(2, 140, 5))
    for t in range(8, 140, 8):  # unit 4 ramps up over the three steps before every switch
        states[:, t - 3:t, 4] += [1.0, 2.0, 3.0]
    out = compute_transition_triggered_average(states, symbols, window=4, n_kick=2)
    z = (states - states.mean((0, 1))) / states.std((0, 1))
    events = [(i, t) for i in range(2) for t in range(4, 137) if symbols[i, t] != symbols[i, t - 1]]
    assert out.attrs["n_transitions"] == len(events)
    brute = np.mean([z[i, t - 4:t + 4] for i, t in events], axis=0)
    np.testing.assert_allclose(out.tta.values, brute, atol=1e-12)
    assert out.kick_unit.values[0] == 4 and out.lead.values[0] == -2
    with pytest.raises(ValueError, match="no symbol transition"):
        compute_transition_triggered_average(states, np.zeros((2, 140), int), window=4)


def test_hmm_mechanism_is_seeded_and_writes_netcdf(tmp_path):
    task = HMMEmulation(n_states=2, n_steps=40, n_noise=4)
    model = LeakyRNN(4, 6, 3, gain=0.5, seed=0)
    kw = dict(n_trials=8, window=2, n_kick=2, n_quiet_steps=100, seed=5)
    a, b = compute_hmm_mechanism(model, task, **kw), compute_hmm_mechanism(model, task, **kw)
    assert a.identical(b)
    assert a.attrs["collapsed"] == 1 and a.attrs["n_stable"] == 1
    a.to_netcdf(tmp_path / "m.nc", engine="h5netcdf")
    with pytest.raises(ValueError, match="inputs"):
        compute_hmm_mechanism(LeakyRNN(3, 6, 3), task)


def test_period_two_flip_is_reported():
    model = LeakyRNN(0, 1, 3, activation="linear", alpha=1.0, seed=0)
    with torch.no_grad():
        model.w_rec.fill_(-1.0)  # h -> -h: every state but 0 is on a period-2 cycle
    out = compute_noise_free_collapse(model, np.array([[0.5], [-1.0]]), n_steps=10)
    assert not out["collapsed"] and out["period"] == 2


def test_bad_trials_windows_and_settings_are_refused_in_one_line():
    rng = np.random.default_rng(0)
    S, sym = rng.normal(size=(20, 6, 4)), rng.integers(0, 2, size=(20, 6))
    with pytest.raises(ValueError, match=r"^states contains NaN or Inf"):
        compute_orbit(np.where(S > 2, np.nan, S), n_bins=4)
    with pytest.raises(ValueError, match=r"needs at least 1 trial"):
        compute_orbit(np.zeros((0, 6, 4)), n_bins=4)
    with pytest.raises(ValueError, match=r"^compute_orbit needs about .* GiB .*lower n_bins"):
        compute_orbit(S, n_bins=10**12)
    with pytest.raises(ValueError, match=r"^window longer than the trials: .*at most 3$"):
        compute_transition_triggered_average(S, sym, window=100, n_kick=1)
    with pytest.raises(ValueError, match=r"^states contains NaN or Inf"):
        compute_transition_triggered_average(np.where(S > 2, np.inf, S), sym, window=2, n_kick=1)
    with pytest.raises(ValueError, match=r"^n_inits must be an integer >= 1, got 0"):
        compute_noise_free_collapse(_linear(), S[:, 0], n_steps=5, n_inits=0)
    with pytest.raises(ValueError, match=r"^initial_states contains NaN or Inf"):
        compute_noise_free_collapse(_linear(), np.full((3, 4), np.nan), n_steps=5)


def test_counts_and_per_step_arrays_are_checked_before_use():
    rng = np.random.default_rng(0)
    S, sym = rng.normal(size=(20, 6, 4)), rng.integers(0, 2, size=(20, 6))
    cases = [
        (lambda: compute_orbit(S, n_bins=2.5), r"^n_bins must be an integer >= 2, got 2.5"),
        (lambda: compute_orbit(S, n_bins=4, speeds=np.ones(5)),
         r"^speeds must have shape \(trial, time\) = \(20, 6\) like states, got \(5,\)"),
        (lambda: compute_orbit(S, n_bins=4, speeds=np.full((20, 6), np.nan)),
         r"^speeds contains NaN or Inf"),
        (lambda: compute_orbit(S, n_bins=4, emissions=np.ones((20, 6))),
         r"^emissions must have shape \(trial"),
        (lambda: compute_orbit(S, n_bins=4, emissions=np.full((20, 6, 2), np.nan)),
         r"^emissions contains NaN or Inf"),
        (lambda: compute_orbit(np.ones((2, 5, 3)), n_bins=4), r"^states of shape \(2, 5, 3\) do not vary"),
        (lambda: compute_orbit(S[:1, :1], n_bins=4), r"^states of shape \(1, 1, 4\) do not vary"),
        (lambda: compute_transition_triggered_average(S, sym, window=2, n_kick=-1),
         r"^n_kick must be an integer >= 1, got -1"),
        (lambda: compute_transition_triggered_average(S, sym, window=2, n_kick=0),
         r"^n_kick must be an integer"),
        (lambda: compute_transition_triggered_average(S, sym, window=2.5),
         r"^window must be an integer >= 2"),
        (lambda: compute_transition_triggered_average(S, sym, window=2, speeds=np.ones(3)),
         r"^speeds must have shape \(trial, time\) = \(20, 6\)"),
        (lambda: compute_speeds(_linear(), np.full((3, 4), np.nan)), r"^states contains NaN or Inf"),
        (lambda: compute_noise_free_collapse(_linear(), S[:, 0], n_steps=2.5),
         r"^n_steps must be an integer"),
        (lambda: compute_noise_free_collapse(_linear(), S[:, 0], n_steps=5, tol=-1.0),
         r"^tol must be a finite number > 0, got -1.0"),
        (lambda: compute_noise_free_collapse(_linear(), S[:, 0], n_steps=5, max_period=0),
         r"^max_period must be an integer >= 1, got 0"),
        (lambda: compute_noise_free_collapse(_linear(), S[:0, 0], n_steps=5),
         r"^initial_states must be \(n, 4\) with n >= 1, got \(0, 4\)"),
    ]
    for call, match in cases:
        with pytest.raises(ValueError, match=match):
            call()
    with pytest.raises(TypeError, match="model must be a RecurrentModel"):
        compute_speeds("model.pt", S)


def test_a_tensor_that_requires_grad_is_taken_like_its_array():
    S = np.random.default_rng(0).normal(size=(3, 30, 4))
    ref, got = compute_orbit(S, n_bins=6), compute_orbit(torch.tensor(S, requires_grad=True), n_bins=6)
    np.testing.assert_array_equal(got.orbit.values, ref.orbit.values)
    np.testing.assert_array_equal(compute_speeds(_linear(), torch.tensor(S, requires_grad=True)),
                                  compute_speeds(_linear(), S))


def test_runs_that_diverge_without_noise_are_reported_not_a_search_error():
    model = LeakyRNN(0, 2, 1, activation="linear", alpha=1.0, seed=0)
    with torch.no_grad():
        model.w_rec.copy_(50.0 * torch.eye(2))  # h -> 50 h: every state but 0 runs off to inf
    out = compute_noise_free_collapse(model, np.random.default_rng(0).normal(size=(5, 2)), n_steps=500)
    assert out["final_spread"] == np.inf and out["final_speed"] == np.inf
    assert not out["collapsed"] and out["period"] == 0
    assert out["n_fixed_points"] == 1 and out["n_stable"] == 0  # the origin, unstable
    np.testing.assert_allclose(out["fixed_points"].states, 0.0, atol=1e-8)


@pytest.mark.parametrize("kw, match", [
    ({"n_trials": 2.5}, r"^n_trials must be an integer >= 1, got 2.5"),
    ({"n_steps": 30.5}, r"^n_steps must be an integer >= 2, got 30.5"),
    ({"n_quiet_steps": 0}, r"^n_quiet_steps must be an integer >= 1, got 0"),
])
def test_hmm_mechanism_refuses_counts_that_are_not_whole_numbers(kw, match):
    task = HMMEmulation(n_states=2, n_steps=60, n_noise=4)
    with pytest.raises(ValueError, match=match):
        compute_hmm_mechanism(LeakyRNN(4, 6, 3, seed=0), task, **{"n_trials": 4, "window": 2, "n_kick": 2,
                                                                   "n_quiet_steps": 50, **kw})
