"""The runner the task examples share: train a leaky RNN on a task, evaluate and report it in and out
of distribution, and read the examples' command lines. Uses only the public API."""

from __future__ import annotations

import argparse
from collections.abc import Callable

import neurodyn
from neurodyn.models import LeakyRNN
from neurodyn.tasks import Task


def train_and_report(task: Task, report: Callable[[dict, dict], str], *, n_units: int, alpha: float,
                     n_iterations: int, lr: float,
                     target_metric: tuple[str, float] | None = ("accuracy", 0.99)) -> dict:
    """Train a ``LeakyRNN`` of ``n_units`` (seed 0, batches of 64) on ``task``, evaluate it on fresh trials
    and print ``report(metrics, ood)``.

    Training stops early once ``target_metric`` is reached (``None``: runs all ``n_iterations``).

    Returns
    -------
    dict
        ``"metrics"``: the task's metrics on its own trials, ``"ood"``: on ``task.ood()`` (both seed 1).
    """
    model = LeakyRNN(task.n_inputs, n_units, task.n_outputs, alpha=alpha, seed=0)
    result = neurodyn.train(model, task, n_iterations=n_iterations, batch_size=64, lr=lr, seed=0,
                            target_metric=target_metric, progress=False)
    metrics = neurodyn.training.evaluate(result.model, task, seed=1)
    ood = neurodyn.training.evaluate(result.model, task.ood(), seed=1)
    print(report(metrics, ood))
    return {"metrics": metrics, "ood": ood}


def command_line(doc: str, **switches: str) -> argparse.ArgumentParser:
    """The parser of an example whose docstring is ``doc``: ``--tiny`` and one on/off flag per ``switches``
    (keyword ``two_items`` → flag ``--two-items``, with the value as its help)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="a few seconds, for CI")
    for name, help_text in switches.items():
        parser.add_argument(f"--{name.replace('_', '-')}", action="store_true", help=help_text)
    return parser
