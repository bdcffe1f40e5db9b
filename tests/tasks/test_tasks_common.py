"""Protocol tests shared by every task: seeding, splitting, shapes, one batch per network, OOD variants,
perfect outputs."""

import dataclasses

import numpy as np
import pytest

from neurodyn.tasks import (
    TASKS,
    ContinuousReport,
    DelayedDiscrimination,
    DelayedMatchToSample,
    DelayedXOR,
    EvidenceIntegration,
    FlipFlop,
    HMMEmulation,
    PathIntegration,
    SineWave,
    Task,
    TaskBatch,
    make_task,
)

SMALL = [
    SineWave(n_frequencies=3, n_channels=2, duration_ms=200),
    DelayedDiscrimination(delay_min_ms=100, delay_max_ms=400),
    DelayedMatchToSample(n_stimuli=3, delay_min_ms=100, delay_max_ms=400),
    ContinuousReport(n_items=2, delay_min_ms=100, delay_max_ms=400),
    ContinuousReport(n_items=2, output_ring=8, delay_min_ms=100, delay_max_ms=200),
    PathIntegration(n_dims=2, boundary="avoid"),
    PathIntegration(n_dims=1, boundary="reflect"),
    PathIntegration(n_dims=2, targets="place_cells", n_place_cells=32),
    HMMEmulation(n_states=3, topology="cyclic", n_steps=20),
    DelayedXOR(delay_ms=60, input_noise=0.1),
    EvidenceIntegration(delay_ms=60, stimulus_ms=100),
]
IDS = [f"{t.name}-{i}" for i, t in enumerate(SMALL)]


def _assert_batches_equal(a, b):
    for name in ("inputs", "targets", "mask"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    for k in a.trial_params:
        np.testing.assert_array_equal(a.trial_params[k], b.trial_params[k])
    for k in a.periods:
        np.testing.assert_array_equal(a.periods[k], b.periods[k])


def _concat(batches):
    first = batches[0]
    cat = {n: np.concatenate([getattr(b, n) for b in batches]) for n in ("inputs", "targets", "mask")}
    params = {k: np.concatenate([b.trial_params[k] for b in batches]) for k in first.trial_params}
    periods = {k: np.concatenate([b.periods[k] for b in batches]) for k in first.periods}
    return dataclasses.replace(first, **cat, trial_params=params, periods=periods)


@pytest.mark.parametrize("task", SMALL, ids=IDS)
def test_same_seed_identical_whatever_the_split(task):
    whole = task.sample(7, seed=11)
    parts = [task.sample(3, seed=11), task.sample(1, seed=11, first_trial=3),
             task.sample(3, seed=11, first_trial=4)]
    _assert_batches_equal(whole, _concat(parts))
    _assert_batches_equal(whole, task.sample(7, seed=11))


@pytest.mark.parametrize("task", SMALL, ids=IDS)
def test_different_seeds_differ_and_shapes(task):
    a, b = task.sample(6, seed=1), task.sample(6, seed=2)
    assert not np.array_equal(a.targets, b.targets) or not np.array_equal(a.inputs, b.inputs)
    assert a.inputs.shape == (6, task.n_steps, task.n_inputs)
    assert a.targets.shape[:2] == (6, task.n_steps)
    assert a.inputs.dtype == a.targets.dtype == a.mask.dtype == np.float32
    assert np.isfinite(a.inputs).all() and np.isfinite(a.targets).all()
    assert a.dt == task.dt and a.seed == 1
    for bounds in a.periods.values():
        assert bounds.shape == (6, 2) and (bounds[:, 0] <= bounds[:, 1]).all()
        assert bounds.max() <= task.n_steps


#: the tasks that draw all networks' trials at once (the others stack one ``_sample`` per seed)
VECTORISED = (FlipFlop, EvidenceIntegration)
NETWORK_TASKS = [FlipFlop(n_bits=3, n_steps=12, p_pulse=0.3), *SMALL]
NETWORK_IDS = ["flipflop", *IDS]


@pytest.mark.parametrize("task", NETWORK_TASKS, ids=NETWORK_IDS)
def test_sample_networks_equals_sample_per_seed_bit_for_bit(task):
    seeds = [4, 2**70 + 5, 0]
    assert (type(task)._sample_networks is not Task._sample_networks) == isinstance(task, VECTORISED)
    first_trials = (5, 2**32 - 2) if isinstance(task, VECTORISED) else (5,)  # beyond 2**32: numpy's streams
    for first_trial in first_trials:
        arrays = task.sample_networks(3, seeds, first_trial=first_trial)
        for e, seed in enumerate(seeds):
            alone = task.sample(3, seed=seed, first_trial=first_trial)
            for array, expected in zip(arrays, (alone.inputs, alone.targets, alone.mask)):
                assert array.dtype == np.float32 and array.flags.c_contiguous
                assert array.shape == (len(seeds), *expected.shape)
                assert np.array_equal(array[e], expected)


@pytest.mark.parametrize("task", [FlipFlop(), EvidenceIntegration()], ids=["flipflop", "evidence"])
def test_sample_networks_built_in_many_blocks_equals_sample(task):
    seeds = [1, 2, 3, 4]
    inputs, targets, mask = task.sample_networks(150, seeds, first_trial=64)  # several blocks of trials
    for e, seed in enumerate(seeds):
        alone = task.sample(150, seed=seed, first_trial=64)
        assert np.array_equal(inputs[e], alone.inputs) and np.array_equal(targets[e], alone.targets)
        assert np.array_equal(mask[e], alone.mask)


def test_sample_networks_takes_any_seed_and_numpy_integers():
    task = FlipFlop(n_bits=2, n_steps=6)
    inputs, _, _ = task.sample_networks(np.int64(2), np.array([7, 9]), first_trial=np.int32(1))
    assert np.array_equal(inputs[1], task.sample(2, seed=9, first_trial=1).inputs)
    from_generator = task.sample_networks(2, [np.random.default_rng(0)])[0]
    assert np.array_equal(from_generator[0], task.sample(2, seed=np.random.default_rng(0)).inputs)


@pytest.mark.parametrize("args, kwargs, error, match", [
    ((3, []), {}, ValueError, "seeds is empty: give one seed per network"),
    ((3, 5), {}, TypeError, "seeds must be a sequence of seeds, one per network"),
    ((3, "012"), {}, TypeError, "seeds must be a sequence of seeds"),
    ((3, [0, "1"]), {}, TypeError, r"seeds\[1\]: seed must be an int"),
    ((3, [0, 1.5]), {}, TypeError, r"seeds\[1\]: seed must be an int"),
    ((3, [0, -2]), {}, ValueError, r"seeds\[1\]: seed must be non-negative"),
    ((2.0, [0]), {}, TypeError, "n_trials must be an int, got float"),
    ((0, [0]), {}, ValueError, "n_trials must be >= 1"),
    ((3, [0]), {"first_trial": -1}, ValueError, "first_trial must be >= 0"),
    ((3, [0]), {"first_trial": 1.0}, TypeError, "first_trial must be an int"),
])
def test_sample_networks_rejects_bad_arguments(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        FlipFlop(n_bits=1, n_steps=4).sample_networks(*args, **kwargs)


def test_sample_networks_names_batches_of_different_lengths():
    @dataclasses.dataclass(frozen=True)
    class Ragged(Task):  # a task whose trial length depends on the seed (no shipped task does this)
        n_inputs = n_outputs = 1
        dt = 10.0

        def _sample(self, n_trials, seed, first_trial):
            x = np.zeros((n_trials, 3 + seed, 1), np.float32)
            return TaskBatch(inputs=x, targets=x, mask=x, dt=self.dt, seed=seed, first_trial=first_trial)

    assert Ragged().sample_networks(2, [1, 1])[0].shape == (2, 2, 4, 1)
    with pytest.raises(ValueError, match="batches of different shapes for different seeds"):
        Ragged().sample_networks(2, [0, 1])


def _perfect_outputs(task, batch):
    if task.loss == "cross_entropy":
        return 10.0 * np.eye(task.n_outputs)[batch.targets[..., 0].astype(int)]
    if task.loss == "soft_cross_entropy":
        return np.log(batch.targets + 1e-12)
    return batch.targets


@pytest.mark.parametrize("task", SMALL, ids=IDS)
def test_perfect_outputs_score_full_accuracy(task):
    batch = task.sample(32, seed=5)
    metrics = task.evaluate(_perfect_outputs(task, batch), batch)
    if isinstance(task, PathIntegration) and task.targets == "place_cells":
        # top-3 decoding of a sparse place-cell code has an irreducible error of a few cm
        assert metrics["r2"] > 0.9
    else:
        assert metrics["accuracy"] == 1.0
    chance = task.evaluate(np.zeros_like(_perfect_outputs(task, batch)), batch)
    assert chance["accuracy"] < 0.9


@pytest.mark.parametrize("task", SMALL, ids=IDS)
def test_ood_variant_is_a_registered_task_of_the_same_kind(task):
    ood = task.ood()
    assert type(ood) is type(task) and ood != task
    batch = ood.sample(4, seed=0)
    assert batch.inputs.shape[-1] == task.n_inputs


def test_registry_lists_every_task_with_documented_defaults():
    for name in ("sine_wave", "romo", "dms", "continuous_report", "path_integration", "hmm", "delayed_xor",
                 "evidence_integration"):
        cls = TASKS[name]
        task = make_task(name)
        assert dataclasses.is_dataclass(cls) and type(task) is cls
        with pytest.raises(dataclasses.FrozenInstanceError):
            task.dt = 1.0
        doc = cls.__doc__
        for f in dataclasses.fields(cls):
            assert f.name in doc, f"{name}.{f.name} is not documented"
        assert make_task(name, **task.config()) == task


@pytest.mark.parametrize("bad", [
    lambda: SineWave(frequencies="between"),
    lambda: DelayedDiscrimination(delta_f=100.0),
    lambda: DelayedMatchToSample(n_stimuli=1),
    lambda: ContinuousReport(n_items=3),
    lambda: ContinuousReport(output_ring=2),
    lambda: PathIntegration(targets="grid"),
    lambda: DelayedDiscrimination(delay_min_ms=500, delay_max_ms=100),
    lambda: DelayedXOR(delay_ms=-10.0),
    lambda: DelayedXOR(pulse_ms=2.0),
    lambda: EvidenceIntegration(p_correct=0.3),
])
def test_bad_configuration_raises(bad):
    with pytest.raises(ValueError):
        bad()


@pytest.mark.parametrize("name", ["romo", "dms", "continuous_report", "delayed_xor"])
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -0.1])
def test_input_noise_must_be_a_finite_non_negative_number(name, bad):
    from neurodyn.tasks import TASKS

    with pytest.raises(ValueError, match=r"input_noise must be a finite number >= 0"):
        TASKS[name](input_noise=bad)


@pytest.mark.parametrize("task", [FlipFlop(n_bits=2, n_steps=10), DelayedMatchToSample(n_stimuli=3)],
                         ids=["flipflop", "dms"])
def test_huge_batches_are_refused_before_drawing(task):
    name = type(task).__name__
    with pytest.raises(ValueError, match=rf"^{name}.sample needs about .* GiB .* are available; lower "
                                         "n_trials / batch_size$"):
        task.sample(10**12, seed=1)
    with pytest.raises(ValueError, match=rf"^{name}.sample_networks needs about .* GiB"):
        task.sample_networks(10**12, [1])
    with pytest.raises(ValueError, match="sample_networks needs about"):  # all networks' trials count
        task.sample_networks(10**6, list(range(1000)))
    assert task.sample(2, seed=1).n_trials == 2
