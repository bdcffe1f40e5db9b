"""Name → model class registry (used by checkpoints)."""

from __future__ import annotations

from typing import Any

MODELS: dict[str, type] = {}


def register_model(cls: type) -> type:
    """Class decorator adding a model class to :data:`MODELS` under its class name."""
    MODELS[cls.__name__] = cls
    return cls


def make_model(name: str, **config: Any):
    """Build a registered model class from its constructor arguments.

    Raises
    ------
    KeyError
        If ``name`` is not registered (the message lists the known ones).
    """
    if name not in MODELS:
        raise KeyError(f"unknown model class {name!r}; known: {', '.join(sorted(MODELS))}")
    return MODELS[name].from_config(config)
