"""HMM families, the prefix-scan sampler (against a step-by-step oracle and 3-SE frequency
checks) and the emission statistics."""

import numpy as np
import pytest

from neurodyn._seed import trial_rngs
from neurodyn.tasks import (
    HMMEmulation,
    compute_dwell_times,
    compute_emission_frequencies,
    compute_symbol_transitions,
    make_hmm,
    sample_hmm,
)
from neurodyn.tasks.hmm import stationary_distribution


def _sequential_sampler(hmm, seed, n_trials, n_steps):
    """Step-by-step inverse-CDF sampler fed the same uniforms as sample_hmm."""
    states = np.empty((n_trials, n_steps), dtype=int)
    symbols = np.empty((n_trials, n_steps), dtype=int)
    for i, rng in enumerate(trial_rngs(seed, n_trials)):
        u = rng.random((3, n_steps))
        s = int(np.searchsorted(np.cumsum(hmm.start), u[0, 0], side="right"))
        for t in range(n_steps):
            if t > 0:
                s = int(np.searchsorted(np.cumsum(hmm.transition[s]), u[1, t], side="right"))
            states[i, t] = min(s, len(hmm.start) - 1)
            k = int(np.searchsorted(np.cumsum(hmm.emission[s]), u[2, t], side="right"))
            symbols[i, t] = min(k, hmm.emission.shape[1] - 1)
    return states, symbols


@pytest.mark.parametrize("topology", ["linear", "fully_connected", "cyclic"])
@pytest.mark.parametrize("n_states", [2, 3, 5])
def test_families_are_stochastic_with_the_stated_structure(topology, n_states):
    hmm = make_hmm(n_states, topology, stay_prob=0.9)
    np.testing.assert_allclose(hmm.transition.sum(1), 1.0)
    np.testing.assert_allclose(hmm.emission.sum(1), 1.0)
    np.testing.assert_allclose(np.diag(hmm.transition), 0.9)
    off = hmm.transition - np.diag(np.diag(hmm.transition))
    if topology == "cyclic":
        np.testing.assert_allclose(off, 0.1 * np.roll(np.eye(n_states), 1, axis=1))
    if topology == "linear":
        assert np.all(np.triu(off, 2) == 0) and np.all(np.tril(off, -2) == 0)
    if topology == "fully_connected":
        np.testing.assert_allclose(off[~np.eye(n_states, dtype=bool)], 0.1 / (n_states - 1))


def test_two_state_linear_chain_emissions_match_the_paper():
    hmm = make_hmm(2, "linear")
    np.testing.assert_allclose(hmm.emission, [[0.99, 0.01, 0.0], [0.0, 0.01, 0.99]])
    np.testing.assert_allclose(hmm.transition, [[0.95, 0.05], [0.05, 0.95]])


@pytest.mark.parametrize("topology", ["linear", "cyclic", "fully_connected"])
def test_prefix_scan_equals_sequential_sampler(topology):
    hmm = make_hmm(4, topology, stay_prob=0.7)
    states, symbols = sample_hmm(hmm, 6, 37, seed=3)
    ref_states, ref_symbols = _sequential_sampler(hmm, 3, 6, 37)
    np.testing.assert_array_equal(states, ref_states)
    np.testing.assert_array_equal(symbols, ref_symbols)


def test_sampler_split_invariance():
    hmm = make_hmm(3, "cyclic")
    whole = sample_hmm(hmm, 5, 20, seed=9)
    parts = [sample_hmm(hmm, 2, 20, seed=9), sample_hmm(hmm, 3, 20, seed=9, first_trial=2)]
    for k in range(2):
        np.testing.assert_array_equal(whole[k], np.concatenate([p[k] for p in parts]))


@pytest.mark.parametrize("topology", ["linear", "fully_connected", "cyclic"])
def test_empirical_transitions_and_emissions_within_three_standard_errors(topology):
    hmm = make_hmm(3, topology, stay_prob=0.8)
    states, symbols = sample_hmm(hmm, 400, 100, seed=0)
    n = len(hmm.start)
    for a, b, p in (
        (states[:, :-1], states[:, 1:], hmm.transition),
        (states, symbols, hmm.emission),
    ):
        counts = np.zeros_like(p)
        np.add.at(counts, (a.ravel(), b.ravel()), 1)
        rows = counts.sum(1, keepdims=True)
        se = np.sqrt(p * (1 - p) / rows)
        assert np.all(np.abs(counts / rows - p) <= 3 * se + 1e-12)
    pi = stationary_distribution(hmm.transition)
    np.testing.assert_allclose(pi @ hmm.transition, pi, atol=1e-12)
    if topology != "linear":  # doubly stochastic: uniform stationary distribution
        np.testing.assert_allclose(pi, np.full(n, 1 / n), atol=1e-9)


def test_emission_statistics_on_a_hand_example():
    y = np.array([[0, 0, 1, 1, 1, 2], [2, 2, 0, 0, 0, 0]])
    np.testing.assert_allclose(compute_emission_frequencies(y, 3), [6 / 12, 3 / 12, 3 / 12])
    # runs: 0:(2, 4), 1:(3,), 2:(1, 2)
    np.testing.assert_allclose(compute_dwell_times(y, 3), [3.0, 3.0, 1.5])
    trans = compute_symbol_transitions(y, 3)
    np.testing.assert_allclose(trans[0], [4 / 5, 1 / 5, 0])
    np.testing.assert_allclose(trans[1], [0, 2 / 3, 1 / 3])
    np.testing.assert_allclose(trans[2], [1 / 2, 0, 1 / 2])


def test_hmm_task_dwell_time_of_two_state_chain():
    """Mean sojourn of a state with self-transition 0.95 is 1 / 0.05 = 20 steps."""
    task = HMMEmulation(n_states=2, stay_prob=0.95, n_steps=2000)
    states = task.sample(50, seed=1).trial_params["states"]
    dwell = compute_dwell_times(states, 2)
    np.testing.assert_allclose(dwell, 20.0, rtol=0.1)
