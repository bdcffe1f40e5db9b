import numpy as np
import pytest

from neurodyn.tasks import FlipFlop, make_task


def brute_force_targets(inputs):
    """Sign of the last non-zero pulse per channel, by an explicit loop."""
    out = np.zeros_like(inputs)
    for i in range(inputs.shape[0]):
        for c in range(inputs.shape[2]):
            last = 0.0
            for t in range(inputs.shape[1]):
                if inputs[i, t, c] != 0:
                    last = inputs[i, t, c]
                out[i, t, c] = last
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_targets_are_last_pulse_sign(seed):
    task = FlipFlop(n_bits=4, n_steps=50, p_pulse=0.2)
    b = task.sample(8, seed=seed)
    assert b.inputs.shape == b.targets.shape == b.mask.shape == (8, 50, 4)
    assert b.inputs.dtype == np.float32
    assert np.all(np.abs(b.inputs[:, 0]) == 1), "a pulse on every channel at t=0"
    assert set(np.unique(b.inputs)) <= {-1.0, 0.0, 1.0}
    np.testing.assert_array_equal(b.targets, brute_force_targets(b.inputs))


def test_pulse_rate_matches_p():
    b = FlipFlop(n_bits=3, n_steps=200, p_pulse=0.1).sample(200, seed=0)
    rate = (b.inputs[:, 1:] != 0).mean()
    assert abs(rate - 0.1) < 4 * np.sqrt(0.1 * 0.9 / b.inputs[:, 1:].size)


def test_same_seed_identical_whatever_the_split():
    task = FlipFlop()
    full = task.sample(10, seed=3)
    a, b = task.sample(4, seed=3), task.sample(6, seed=3, first_trial=4)
    np.testing.assert_array_equal(full.inputs, np.concatenate([a.inputs, b.inputs]))
    assert not np.array_equal(full.inputs, task.sample(10, seed=4).inputs)


def test_evaluate_perfect_and_ood():
    task = FlipFlop()
    b = task.sample(5, seed=0)
    assert task.evaluate(b.targets * 0.7, b)["accuracy"] == 1.0
    assert task.evaluate(-b.targets, b)["accuracy"] == 0.0
    ood = task.ood()
    assert ood.n_steps == 4 * task.n_steps and ood.p_pulse == 2 * task.p_pulse
    assert FlipFlop(p_pulse=0.7).ood().p_pulse == 1.0


def test_registry_and_errors():
    assert make_task("flipflop", n_bits=2).n_bits == 2
    with pytest.raises(KeyError, match="known tasks"):
        make_task("nope")
    with pytest.raises(ValueError):
        FlipFlop(n_bits=0)
    with pytest.raises(ValueError):
        FlipFlop().sample(0, seed=0)


def _generator_batch(task, n_trials, seed, first_trial):
    """The batch as it was drawn with one NumPy generator per trial: inputs, targets, pulse counts."""
    from neurodyn._seed import trial_rngs

    uniforms = np.empty((n_trials, 2, task.n_steps, task.n_bits))
    for i, rng in enumerate(trial_rngs(seed, n_trials, first_trial)):
        rng.random(out=uniforms[i])
    pulses = uniforms[:, 0] < task.p_pulse
    pulses[:, 0, :] = True
    signs = np.where(uniforms[:, 1] < 0.5, np.float32(-1.0), np.float32(1.0))
    inputs = signs * pulses
    return inputs, brute_force_targets(inputs), pulses.sum(axis=1)


@pytest.mark.parametrize("task", [FlipFlop(n_bits=3, n_steps=64),
                                  FlipFlop(n_bits=5, n_steps=37, p_pulse=0.3)])
@pytest.mark.parametrize(("seed", "first_trial"), [(0, 0), (7, 5), (2**40 + 1, 1000), (12345, 2**32 - 40)])
def test_batches_equal_the_per_trial_generators(task, seed, first_trial):
    # the compiled uniforms give the batches the per-trial generators gave, bit for bit (the last
    # offset crosses trial 2**32, where the generators draw them)
    b = task.sample(64, seed=seed, first_trial=first_trial)
    inputs, targets, n_pulses = _generator_batch(task, 64, seed, first_trial)
    assert b.inputs.dtype == inputs.dtype == np.float32
    assert np.array_equal(b.inputs, inputs) and np.array_equal(b.targets, targets)
    assert np.array_equal(b.trial_params["n_pulses"], n_pulses)
    parts = [task.sample(n, seed=seed, first_trial=first_trial + start)
             for start, n in ((0, 10), (10, 1), (11, 53))]
    assert np.array_equal(np.concatenate([p.inputs for p in parts]), b.inputs)
    assert np.array_equal(np.concatenate([p.targets for p in parts]), b.targets)


def _trials_numpy(task, uniforms):
    """The flip-flop's trials from their uniforms in NumPy array operations (the formulation the
    compiled loop replaced): the oracle, bit for bit, signed zeros included."""
    pulses = uniforms[:, 0] < task.p_pulse
    pulses[:, 0, :] = True
    signs = np.where(uniforms[:, 1] < 0.5, np.float32(-1.0), np.float32(1.0))
    flat = np.arange(pulses.size, dtype=np.intp).reshape(pulses.shape)
    last = np.maximum.accumulate(flat * pulses, axis=1)
    return signs * pulses, signs.reshape(-1)[last], pulses.sum(axis=1).astype(np.int64)


@pytest.mark.parametrize("task", [FlipFlop(), FlipFlop(n_bits=5, n_steps=17, p_pulse=0.5),
                                  FlipFlop(n_bits=1, n_steps=1), FlipFlop(p_pulse=1.0)])
def test_compiled_trials_equal_numpy_formulation_bit_for_bit(task):
    uniforms = np.random.default_rng(1).random((40, *task._draws))
    uniforms[0, 0, :, 0] = task.p_pulse  # exactly at the threshold: no pulse (strict <)
    uniforms[0, 1, :, 0] = 0.5  # exactly at 0.5: sign +1
    got, want = task._trials(uniforms), _trials_numpy(task, uniforms)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert g.tobytes() == w.tobytes()  # equal bits: the sign of every zero input too
    if task.n_steps > 1 and task.p_pulse < 1:  # steps without a pulse: negative zeros occur and are kept
        assert (np.signbit(got[0]) & (got[0] == 0)).any()


def test_n_pulses_counts_the_pulses():
    batch = FlipFlop(n_bits=2, n_steps=30, p_pulse=0.3).sample(6, seed=4)
    np.testing.assert_array_equal(batch.trial_params["n_pulses"], (batch.inputs != 0).sum(axis=1))
