"""Protocol tests shared by every task: seeding, splitting, shapes, OOD variants, perfect outputs."""

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
    HMMEmulation,
    PathIntegration,
    SineWave,
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
