"""Delayed XOR and evidence integration: the trials have the structure their docstrings state."""

import numpy as np
import pytest

from neurodyn.tasks import DelayedXOR, EvidenceIntegration, make_task
from neurodyn.tasks._timeline import in_period


def test_delayed_xor_trials_hold_two_sign_pulses_a_jittered_go_cue_and_the_xor_answer():
    task = DelayedXOR(delay_ms=120, pulse_ms=30, wait_ms=40, jitter_ms=60, go_ms=20, response_ms=50, dt=10)
    batch = task.sample(200, seed=4)
    p, per, n = batch.trial_params, batch.periods, task.n_steps
    assert n == (50 + 30 + 120 + 30 + 100 + 50) // 10
    for name, sign in (("pulse1", p["a"]), ("pulse2", p["b"])):
        on = in_period(per[name], n)
        assert (on.sum(1) == 3).all()
        pulse = batch.inputs[..., 0][on].reshape(200, 3)
        np.testing.assert_array_equal(pulse, np.repeat(sign[:, None], 3, 1))
    pulses = in_period(per["pulse1"], n) | in_period(per["pulse2"], n)
    assert not batch.inputs[..., 0][~pulses].any()  # nothing between the pulses: the sign must be held
    assert (per["pulse2"][:, 0] - per["pulse1"][:, 1] == 12).all()  # delay_ms / dt
    wait = per["response"][:, 0] - per["pulse2"][:, 1]
    assert wait.min() >= 4 and wait.max() <= 10 and len(np.unique(wait)) >= 5  # jittered response delay
    go = batch.inputs[..., 1] > 0
    np.testing.assert_array_equal(np.argmax(go, 1), per["response"][:, 0])
    assert (go.sum(1) == 2).all()
    resp = in_period(per["response"], n)
    np.testing.assert_array_equal(batch.mask[..., 0], resp.astype(np.float32))  # loss only in the response
    np.testing.assert_array_equal(batch.targets[..., 0][resp], np.repeat(-p["a"] * p["b"], 5))
    combos = np.unique(np.stack([p["a"], p["b"]], 1), axis=0, return_counts=True)[1]
    assert len(combos) == 4 and combos.min() > 30  # the four sign pairs, about equally often
    assert task.replace(delay_ms=400).n_steps == n + 28  # delay is the complexity knob


def test_evidence_integration_answers_the_sign_of_the_pulse_count_difference():
    task = EvidenceIntegration(delay_ms=100, stimulus_ms=300, p_pulse=0.5, p_correct=0.8)
    batch = task.sample(400, seed=2)
    p, per, n = batch.trial_params, batch.periods, task.n_steps
    left, right = batch.inputs[..., 0], batch.inputs[..., 1]
    stim = in_period(per["stimulus"], n)
    assert not (left + right)[~stim].any() and (left + right).max() == 1  # one pulse per step at most
    np.testing.assert_array_equal(left.sum(1), p["n_left"])
    diff = p["n_right"] - p["n_left"]
    np.testing.assert_array_equal(p["label"], np.where(diff == 0, p["side"], np.sign(diff)))
    on_side = np.where(p["side"] > 0, p["n_right"], p["n_left"]).sum() / (p["n_left"] + p["n_right"]).sum()
    assert on_side == pytest.approx(0.8, abs=0.02)
    assert (p["n_left"] + p["n_right"]).mean() == pytest.approx(0.5 * 30, abs=0.5)
    resp = in_period(per["response"], n)
    assert (per["response"][:, 0] - per["stimulus"][:, 1] == 10).all()  # the delay
    np.testing.assert_array_equal(batch.targets[..., 0][resp], np.repeat(p["label"], resp.sum(1)[0]))
    assert (batch.mask[..., 0] == resp).all()
    assert (np.argmax(batch.inputs[..., 2], 1) == per["response"][:, 0]).all()  # the go cue


def test_both_tasks_are_registered_for_the_command_line():
    assert make_task("delayed_xor", delay_ms=50.0).delay_ms == 50.0
    assert make_task("evidence_integration").n_inputs == 3


@pytest.mark.parametrize(("seed", "first_trial"), [(0, 0), (5, 17), (2**33 + 1, 2**32 - 10)])
def test_evidence_integration_equals_the_per_trial_generators(seed, first_trial):
    # the uniforms come from trial_uniforms; each trial's stream is what its own generator drew:
    # the side's uniform, then n_steps pulse and n_steps agreement uniforms
    from neurodyn._seed import trial_rngs

    task = EvidenceIntegration(delay_ms=100, stimulus_ms=300, p_pulse=0.5, p_correct=0.8)
    batch, n = task.sample(20, seed=seed, first_trial=first_trial), task.n_steps
    draws = [(r.random(), r.random(n), r.random(n)) for r in trial_rngs(seed, 20, first_trial)]
    side = np.array([np.where(s < 0.5, -1.0, 1.0) for s, _, _ in draws])
    pulse = np.stack([p < task.p_pulse for _, p, _ in draws]) & in_period(batch.periods["stimulus"], n)
    right = pulse & (np.stack([a < task.p_correct for _, _, a in draws]) == (side[:, None] > 0))
    assert np.array_equal(batch.trial_params["side"], side)
    assert np.array_equal(batch.inputs[..., 1], right)
    assert np.array_equal(batch.inputs[..., 0], pulse & ~right)
