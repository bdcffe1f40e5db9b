"""Name → task class registry (used by checkpoints and the command line)."""

from __future__ import annotations

from typing import Any

from neurodyn.tasks._base import Task

TASKS: dict[str, type[Task]] = {}


def register_task(cls: type[Task]) -> type[Task]:
    """Class decorator adding a task to :data:`TASKS` under ``cls.name``."""
    TASKS[cls.name] = cls
    return cls


def make_task(name: str, **config: Any) -> Task:
    """Build a task from its registered name and constructor arguments.

    Raises
    ------
    KeyError
        If ``name`` is not a registered task (the message lists the known ones).
    """
    if name not in TASKS:
        raise KeyError(f"unknown task {name!r}; known tasks: {', '.join(sorted(TASKS))}")
    cls = TASKS[name]
    fields = getattr(cls, "__dataclass_fields__", {})
    kwargs = {k: tuple(v) if isinstance(v, list) and k in fields else v for k, v in config.items()}
    return cls(**kwargs)
