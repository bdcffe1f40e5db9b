"""Task field rules: a task lists them in its class constant ``checks``, and ``Task.__post_init__`` runs
them in order, so the first broken rule raises its one-line ``ValueError``."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from neurodyn.tasks._timeline import ms_to_steps

#: a rule: ``task -> None``, raising a one-line ``ValueError`` when the task's fields break it
Check = Callable[[Any], None]


def rule(fails: Callable[[Any], bool], message: str) -> Check:
    """The rule that raises ``ValueError(message)`` when ``fails(task)``; ``{t.<field>}`` in
    ``message`` is replaced by the task's field."""
    def check(task: Any) -> None:
        if fails(task):
            raise ValueError(message.format(t=task))
    return check


def at_least(name: str, low: float) -> Check:
    """Count field ``name`` must be an integer ``>= low`` (:func:`~neurodyn._checks.check_setting`:
    bools, strings, NaN and fractions fail); a whole float such as ``4.0`` is stored as the int ``4``."""
    def check(task: Any) -> None:
        from neurodyn._checks import check_setting  # imports NumPy: only when a task is built

        value = getattr(task, name)
        check_setting(name, value, low, integer=True)
        object.__setattr__(task, name, int(value))  # the task is a frozen dataclass
    return check


def integers(*names: str) -> Check:
    """Each count field ``names`` must be an integer, stored as an int as by :func:`at_least`; their
    ranges are left to the task's other rules (so that those keep their messages)."""
    counts = [at_least(name, -math.inf) for name in names]

    def check(task: Any) -> None:
        for count in counts:
            count(task)
    return check


def within(name: str, low: float, high: float, *, open_low: bool = False) -> Check:
    """Field ``name`` must lie in ``[low, high]`` (``(low, high]`` with ``open_low``)."""
    if open_low:
        return rule(lambda t: not low < getattr(t, name) <= high,
                    f"{name} must be in ({low:g}, {high:g}], got {{t.{name}}}")
    return rule(lambda t: not low <= getattr(t, name) <= high,
                f"{name} must be in [{low:g}, {high:g}], got {{t.{name}}}")


def non_negative(*names: str) -> Check:
    """Each field ``names`` must be a finite number >= 0."""
    def check(task: Any) -> None:
        for name in names:
            if not 0 <= getattr(task, name) < math.inf:
                raise ValueError(f"{name} must be a finite number >= 0, got {getattr(task, name)}")
    return check


def delayed_response(*, positive: tuple[str, ...], answer: str) -> Check:
    """The timeline of a task that answers after a variable delay (DMS, Romo, continuous report).

    ``0 <= delay_min_ms <= delay_max_ms`` (finite), the ``positive`` durations (ms) must be finite and
    > 0 (``dt`` is checked for every task by :class:`~neurodyn.tasks.Task`), and ``grace_ms`` must leave
    at least one step of the ``answer`` period (the field ``<answer>_ms``).
    """
    def check(task: Any) -> None:
        if not 0 <= task.delay_min_ms <= task.delay_max_ms < math.inf:
            raise ValueError(f"need 0 <= delay_min_ms <= delay_max_ms, both finite (ms); "
                             f"got {task.delay_min_ms}, {task.delay_max_ms}")
        if not all(0 < getattr(task, name) < math.inf for name in positive):  # NaN fails too
            raise ValueError(f"{', '.join(positive)} must be positive and finite (ms)")
        if ms_to_steps(getattr(task, f"{answer}_ms") - task.grace_ms, task.dt) < 1:
            raise ValueError(f"grace_ms must leave at least one step of the {answer} period")
    return check


def durations(*names: str, whole_steps: tuple[str, ...]) -> Check:
    """The fields ``names`` must be finite and >= 0 and the ``whole_steps`` durations (ms) must last at
    least one step of ``dt`` (itself checked for every task by :class:`~neurodyn.tasks.Task`)."""
    finite = non_negative(*names)

    def check(task: Any) -> None:
        finite(task)
        for name in whole_steps:
            if ms_to_steps(getattr(task, name), task.dt) < 1:
                raise ValueError(f"{name} = {getattr(task, name)} ms is shorter than one step "
                                 f"(dt = {task.dt} ms)")
    return check
