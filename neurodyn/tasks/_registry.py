"""Name → task class registry (used by checkpoints and the command line)."""

from __future__ import annotations

from typing import Any

from neurodyn.tasks._base import Task

TASKS: dict[str, type[Task]] = {}


def register_task(cls: type[Task]) -> type[Task]:
    """Class decorator adding a task to :data:`TASKS` under ``cls.name``.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> from neurodyn.tasks import TASKS, FlipFlop, make_task, register_task
    >>> @register_task
    ... @dataclass(frozen=True)
    ... class LongFlipFlop(FlipFlop):
    ...     name = "long_flipflop_example"
    ...     n_steps: int = 500
    >>> make_task("long_flipflop_example", n_bits=1).n_steps
    500
    >>> del TASKS["long_flipflop_example"]  # leave the registry as it was
    """
    TASKS[cls.name] = cls
    return cls


def make_task(name: str, **config: Any) -> Task:
    """Build a task from its registered name and constructor arguments.

    Raises
    ------
    KeyError
        If ``name`` is not a registered task (the message lists the known ones).

    Examples
    --------
    >>> from neurodyn.tasks import make_task
    >>> task = make_task("flipflop", n_bits=2, n_steps=16)
    >>> type(task).__name__, task.n_inputs, task.n_outputs
    ('FlipFlop', 2, 2)
    >>> make_task("flip-flop")
    Traceback (most recent call last):
    ...
    KeyError: "unknown task 'flip-flop'; known tasks: ..."
    """
    if name not in TASKS:
        raise KeyError(f"unknown task {name!r}; known tasks: {', '.join(sorted(TASKS))}")
    cls = TASKS[name]
    fields = getattr(cls, "__dataclass_fields__", {})
    kwargs = {k: tuple(v) if isinstance(v, list) and k in fields else v for k, v in config.items()}
    return cls(**kwargs)
