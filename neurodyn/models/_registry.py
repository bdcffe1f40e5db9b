"""Name → model class registry (used by checkpoints)."""

from __future__ import annotations

from typing import Any

MODELS: dict[str, type] = {}


def register_model(cls: type) -> type:
    """Class decorator adding a model class to :data:`MODELS` under its class name.

    Examples
    --------
    >>> from neurodyn.models import MODELS, LeakyRNN, make_model, register_model
    >>> @register_model
    ... class VanillaRNN(LeakyRNN):
    ...     def __init__(self, n_inputs, n_units, n_outputs, **kwargs):
    ...         super().__init__(n_inputs, n_units, n_outputs, alpha=1.0, **kwargs)
    >>> make_model("VanillaRNN", n_inputs=1, n_units=4, n_outputs=1).alpha
    1.0
    >>> del MODELS["VanillaRNN"]  # leave the registry as it was
    """
    MODELS[cls.__name__] = cls
    return cls


def make_model(name: str, **config: Any):
    """Build a registered model class from its constructor arguments.

    Raises
    ------
    KeyError
        If ``name`` is not registered (the message lists the known ones).

    Examples
    --------
    >>> from neurodyn.models import LeakyRNN, make_model
    >>> model = LeakyRNN(2, 8, 1, alpha=0.2, seed=3)
    >>> clone = make_model("LeakyRNN", **model.config())  # the same architecture, how checkpoints rebuild it
    >>> clone.n_units, clone.alpha, clone.seed
    (8, 0.2, 3)
    >>> make_model("Transformer")
    Traceback (most recent call last):
    ...
    KeyError: "unknown model class 'Transformer'; known: ..."
    """
    if name not in MODELS:
        raise KeyError(f"unknown model class {name!r}; known: {', '.join(sorted(MODELS))}")
    return MODELS[name].from_config(config)
