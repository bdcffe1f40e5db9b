"""The shared trial-timeline helpers of the delayed tasks, checked on hand-worked cases, and the trial
streams of the tasks built on them pinned to the values they had before the helpers were shared."""

import numpy as np
import pytest

from neurodyn.tasks import make_task
from neurodyn.tasks._binary import go_cue
from neurodyn.tasks._timeline import before_period, build_periods, scored_steps, total_steps


def test_build_periods_takes_numbers_as_the_same_duration_in_every_trial():
    delay = np.array([30.0, 50.0])
    periods, n_steps = build_periods({"fixation": 20.0, "delay": delay, "response": 35.0}, 10.0, n_trials=2)
    # 20 ms = 2 steps, 30/50 ms = 3/5 steps, 35 ms = 3.5 steps rounds to the even 4
    assert periods["fixation"].tolist() == [[0, 2], [0, 2]]
    assert periods["delay"].tolist() == [[2, 5], [2, 7]]
    assert periods["response"].tolist() == [[5, 9], [7, 11]]
    assert n_steps == 11
    as_arrays, _ = build_periods({"fixation": np.full(2, 20.0), "delay": delay, "response": np.full(2, 35.0)},
                                 10.0, n_trials=2)
    assert all(np.array_equal(periods[k], as_arrays[k]) for k in periods)


def test_total_steps_is_the_length_of_the_longest_trial():
    durations = {"fixation": 20.0, "delay": np.array([30.0, 50.0]), "response": 35.0}
    _, n_steps = build_periods(durations, 10.0, n_trials=2)
    assert total_steps((20.0, 50.0, 35.0), 10.0) == n_steps == 11


def test_masks_of_a_hand_worked_trial():
    bounds = np.array([[2, 5]])  # the answer period is steps 2, 3, 4 of 7
    assert before_period(bounds, 7)[0].tolist() == [1, 1, 0, 0, 0, 0, 0]
    # scored before the answer and after its first 10 ms (one step of 10 ms); not in the grace step or after
    assert scored_steps(bounds, 7, grace_ms=10.0, dt=10.0)[0].tolist() == [1, 1, 0, 1, 1, 0, 0]
    assert go_cue(np.array([[3, 6]]), 7, go_ms=20.0, dt=10.0)[0].tolist() == [0, 0, 0, 1, 1, 0, 0]


@pytest.mark.parametrize(("name", "config", "message"), [
    ("dms", {"dt": 0.0}, r"dt must be a finite number > 0 \(ms per time step\), got 0.0"),
    ("romo", {"dt": float("nan")}, r"dt must be a finite number > 0 \(ms per time step\), got nan"),
    ("romo", {"stimulus_ms": -1.0},
     r"fixation_ms, stimulus_ms, decision_ms must be positive and finite \(ms\)"),
    ("romo", {"stimulus_ms": float("nan")},
     "fixation_ms, stimulus_ms, decision_ms must be positive and finite"),
    ("continuous_report", {"response_ms": 0.0}, "stimulus_ms, response_ms must be positive and finite"),
    ("dms", {"grace_ms": 200.0}, "grace_ms must leave at least one step of the decision period"),
    ("continuous_report", {"grace_ms": 290.0},
     "grace_ms must leave at least one step of the response period"),
    ("romo", {"delay_min_ms": 5.0, "delay_max_ms": 1.0}, "need 0 <= delay_min_ms <= delay_max_ms"),
])
def test_delayed_tasks_refuse_a_bad_timeline_in_one_line(name, config, message):
    with pytest.raises(ValueError, match=message):
        make_task(name, **config)


#: (task, options) → inputs shape, sums of inputs / targets / mask, and period bounds of trials 2-4 of seed
#: 5, as drawn by each task's own code before the timeline helpers were shared
PINNED = [
    ("dms", {"n_stimuli": 3, "delay_min_ms": 100.0, "delay_max_ms": 200.0}, (3, 50, 4), 168.416, 40.0, 131.0,
     {"delay": [[20, 26], [20, 27], [20, 27]], "decision": [[36, 46], [37, 47], [37, 47]]}),
    ("romo", {"delay_min_ms": 100.0, "delay_max_ms": 200.0}, (3, 50, 3), 169.8998, 30.0, 132.0,
     {"delay": [[20, 28], [20, 27], [20, 26]], "decision": [[38, 48], [37, 47], [36, 46]]}),
    ("continuous_report", {"n_items": 2, "n_ring": 8, "delay_min_ms": 100.0, "delay_max_ms": 200.0},
     (3, 50, 19), 273.8525, -40.3742, 132.0,
     {"delay": [[15, 22], [15, 21], [15, 23]], "response": [[32, 47], [31, 46], [33, 48]]}),
    ("delayed_xor", {"delay_ms": 100.0, "input_noise": 0.1}, (3, 40, 2), 23.4079, 5.0, 15.0,
     {"wait": [[25, 31], [25, 32], [25, 32]], "response": [[31, 36], [32, 37], [32, 37]]}),
    ("evidence_integration", {"delay_ms": 100.0}, (3, 40, 3), 38.0, 15.0, 15.0,
     {"delay": [[25, 35], [25, 35], [25, 35]], "response": [[35, 40], [35, 40], [35, 40]]}),
]


@pytest.mark.parametrize(("name", "config", "shape", "inputs", "targets", "mask", "periods"), PINNED)
def test_trial_streams_are_unchanged(name, config, shape, inputs, targets, mask, periods):
    batch = make_task(name, **config).sample(3, seed=5, first_trial=2)
    assert batch.inputs.shape == shape
    arrays = (batch.inputs, batch.targets, batch.mask)
    assert all(a.dtype == np.float32 and a.flags.c_contiguous for a in arrays)
    assert batch.inputs.astype(np.float64).sum() == pytest.approx(inputs, abs=1e-3)
    assert batch.targets.astype(np.float64).sum() == pytest.approx(targets, abs=1e-3)
    assert batch.mask.sum() == mask
    assert {k: batch.periods[k].tolist() for k in periods} == periods
