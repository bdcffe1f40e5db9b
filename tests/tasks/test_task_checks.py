"""The field rules of tasks (``neurodyn.tasks._checks``) and the shared delayed-response timeline."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest

from neurodyn.tasks import ContinuousReport, DelayedDiscrimination, DelayedMatchToSample, FlipFlop, Task
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
    ({"n": 0}, "n must be >= 1, got 0"),
    ({"p": 1.5}, "p must be in [0, 1], got 1.5"),
    ({"p": math.nan}, "p must be in [0, 1], got nan"),
    ({"q": 0.0}, "q must be in (0, 1], got 0.0"),
    ({"noise": math.inf}, "noise must be a finite number >= 0, got inf"),
    ({"p": 0.9, "q": 0.8}, "need p <= q, got 0.9, 0.8"),
    ({"n": 0, "p": 2.0, "noise": -1.0}, "n must be >= 1, got 0"),  # the first broken rule in the table wins
])
def test_rules_raise_their_one_line_message_in_table_order(fields, message):
    with pytest.raises(ValueError) as err:
        _Toy(**fields)
    assert str(err.value) == message


def test_rules_accept_the_bounds_themselves():
    _Toy(n=1, p=0.0, q=1.0)
    _Toy(p=1.0, q=1.0)


def test_rules_run_again_on_replace():
    with pytest.raises(ValueError, match="n_bits must be >= 1, got 0"):
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
