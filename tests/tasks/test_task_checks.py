"""The field rules of tasks (``neurodyn.tasks._checks``) and the shared delayed-response timeline."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest

from neurodyn.tasks import (
    ContinuousReport,
    DelayedDiscrimination,
    DelayedMatchToSample,
    FlipFlop,
    HMMEmulation,
    PathIntegration,
    SineWave,
    Task,
)
from neurodyn.tasks._checks import at_least, delayed_response, durations, non_negative, rule, within


@dataclass(frozen=True)
class _Toy(Task):
    n: int = 2
    p: float = 0.5
    q: float = 0.5
    noise: float = 0.0
    checks = (at_least("n", 1), within("p", 0.0, 1.0), within("q", 0, 1, open_low=True),
              non_negative("noise"), rule(lambda t: t.p > t.q, "need p <= q, got {t.p}, {t.q}"))


@pytest.mark.parametrize(("fields", "message"), [
    ({"n": 0}, "n must be an integer >= 1, got 0"),
    ({"p": 1.5}, "p must be in [0, 1], got 1.5"),
    ({"p": math.nan}, "p must be in [0, 1], got nan"),
    ({"q": 0.0}, "q must be in (0, 1], got 0.0"),
    ({"noise": math.inf}, "noise must be a finite number >= 0, got inf"),
    ({"p": 0.9, "q": 0.8}, "need p <= q, got 0.9, 0.8"),
    # the first broken rule in the table wins
    ({"n": 0, "p": 2.0, "noise": -1.0}, "n must be an integer >= 1, got 0"),
])
def test_rules_raise_their_one_line_message_in_table_order(fields, message):
    with pytest.raises(ValueError) as err:
        _Toy(**fields)
    assert str(err.value) == message


def test_rules_accept_the_bounds_themselves():
    _Toy(n=1, p=0.0, q=1.0)
    _Toy(p=1.0, q=1.0)


def test_rules_run_again_on_replace():
    with pytest.raises(ValueError, match="n_bits must be an integer >= 1, got 0"):
        FlipFlop().replace(n_bits=0)


def test_duration_rules_match_their_documented_conditions():
    @dataclass(frozen=True)
    class Timed:
        delay_min_ms: float = 100.0
        delay_max_ms: float = 200.0
        go_ms: float = 20.0
        response_ms: float = 100.0
        grace_ms: float = 50.0
        dt: float = 10.0

    delayed_response(positive=("go_ms",), answer="response")(Timed())
    durations("delay_min_ms", whole_steps=("go_ms",))(Timed())
    with pytest.raises(ValueError, match="grace_ms must leave at least one step of the response period"):
        delayed_response(positive=("go_ms",), answer="response")(Timed(grace_ms=96.0))  # 4 ms < dt / 2
    with pytest.raises(ValueError, match=r"go_ms = 4.0 ms is shorter than one step \(dt = 10.0 ms\)"):
        durations("delay_min_ms", whole_steps=("go_ms",))(Timed(go_ms=4.0))
    with pytest.raises(ValueError, match="need 0 <= delay_min_ms <= delay_max_ms"):
        delayed_response(positive=("go_ms",), answer="response")(Timed(delay_min_ms=300.0))


@pytest.mark.parametrize("cls", [DelayedMatchToSample, DelayedDiscrimination, ContinuousReport])
def test_delayed_response_timeline_is_the_sum_of_its_periods(cls):
    task = cls(delay_min_ms=100.0, delay_max_ms=300.0)
    fixed = sum(getattr(task, field) for name, field in task.timeline.items() if name != "delay")
    assert task.n_steps == round((fixed + task.delay_max_ms) / task.dt)  # whole multiples of dt here
    batch = task.sample(5, seed=0)
    assert list(batch.periods) == list(task.timeline)
    delay_steps = batch.periods["delay"][:, 1] - batch.periods["delay"][:, 0]
    assert ((delay_steps >= 5) & (delay_steps <= 15)).all()  # 100–300 ms at dt = 20 ms
    last = batch.periods[list(task.timeline)[-1]][:, 1]
    assert last.max() <= task.n_steps and batch.inputs.shape[1] == task.n_steps


@pytest.mark.parametrize("cls", [DelayedMatchToSample, ContinuousReport])
def test_delayed_response_ood_moves_the_delays_to_two_to_three_times_the_longest(cls):
    ood = cls(delay_min_ms=100.0, delay_max_ms=300.0).ood()
    assert (ood.delay_min_ms, ood.delay_max_ms) == (600.0, 900.0)


@pytest.mark.parametrize(("build", "message"), [
    (lambda: FlipFlop(n_bits=1.5), "n_bits must be an integer >= 1, got 1.5"),
    (lambda: FlipFlop(n_steps=10.7), "n_steps must be an integer >= 1, got 10.7"),
    (lambda: FlipFlop(n_steps=math.nan), "n_steps must be an integer >= 1, got nan"),
    (lambda: FlipFlop(n_bits=True), "n_bits must be an integer >= 1, got True"),
    (lambda: FlipFlop(n_bits="2"), "n_bits must be an integer >= 1, got '2'"),
    (lambda: DelayedMatchToSample(n_stimuli=2.5), "n_stimuli must be an integer >= 2, got 2.5"),
    (lambda: ContinuousReport(n_ring=3.5), "n_ring must be an integer >= 3, got 3.5"),
    (lambda: ContinuousReport(n_items=1.5), "n_items must be an integer, got 1.5"),
    (lambda: ContinuousReport(output_ring=4.5), "output_ring must be an integer, got 4.5"),
    (lambda: HMMEmulation(n_states=2.5), "n_states must be an integer, got 2.5"),
    (lambda: HMMEmulation(n_symbols=3.5), "n_symbols must be an integer, got 3.5"),
    (lambda: HMMEmulation(n_steps=math.nan), "n_steps must be an integer, got nan"),
    (lambda: HMMEmulation(n_noise=1.5), "n_noise must be an integer, got 1.5"),
    (lambda: PathIntegration(n_dims=1.5), "n_dims must be an integer, got 1.5"),
    (lambda: PathIntegration(n_place_cells=10.5), "n_place_cells must be an integer, got 10.5"),
    (lambda: PathIntegration(init_steps=1.5), "init_steps must be an integer, got 1.5"),
    (lambda: SineWave(n_frequencies=2.5), "n_frequencies must be an integer, got 2.5"),
    (lambda: SineWave(n_channels=math.inf), "n_channels must be an integer, got inf"),
])
def test_count_fields_refuse_non_integers_at_construction(build, message):
    with pytest.raises(ValueError) as err:
        build()
    assert str(err.value) == message


def test_whole_float_counts_are_stored_as_ints_and_float_fields_stay_floats():
    task = FlipFlop(n_bits=2.0, n_steps=12.0, p_pulse=0.25)
    assert (task.n_bits, task.n_steps) == (2, 12)
    assert type(task.n_bits) is int and type(task.n_steps) is int
    assert task.sample(3, seed=0).targets.shape == (3, 12, 2)
    assert task == FlipFlop(n_bits=2, n_steps=12, p_pulse=0.25)
    assert ContinuousReport(n_items=2.0).n_items == 2 and ContinuousReport(kappa=1.5).kappa == 1.5
    assert SineWave(n_channels=2.0, f_min_hz=1.5).n_channels == 2
