"""Train a leaky RNN on continuous-report working memory, optionally with two items and a
retro-cue (swap errors).

Usage: python examples/tasks/continuous_report.py [--tiny] [--two-items]

Prints the mean absolute report error, the fraction of reports within tolerance and, with two
items, the swap rate. Uses only the public API.
"""

from __future__ import annotations

import argparse

import neurodyn
from neurodyn.models import LeakyRNN
from neurodyn.tasks import ContinuousReport


def main(tiny: bool = False, two_items: bool = False) -> dict:
    n_items = 2 if two_items else 1
    if tiny:
        task = ContinuousReport(n_items=n_items, n_ring=8, fixation_ms=60, stimulus_ms=100,
                                delay_min_ms=100, delay_max_ms=300, cue_ms=60, response_ms=120,
                                grace_ms=40)
    else:
        task = ContinuousReport(n_items=n_items)
    n_units, alpha = (32, 0.5) if tiny else (64, 0.2)
    model = LeakyRNN(task.n_inputs, n_units, task.n_outputs, alpha=alpha, seed=0)
    result = neurodyn.train(
        model, task, n_iterations=60 if tiny else 1000, batch_size=64,
        lr=1e-2 if tiny else 3e-3, seed=0,
        target_metric=("accuracy", 0.99), progress=False,
    )
    metrics = neurodyn.training.evaluate(result.model, task, seed=1)
    ood = neurodyn.training.evaluate(result.model, task.ood(), seed=1)
    shown = ", ".join(f"{k} {v:.3f}" for k, v in metrics.items())
    print(f"{shown}; longer delays (OOD) accuracy {ood['accuracy']:.3f}")
    return {"metrics": metrics, "ood": ood}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="a few seconds, for CI")
    parser.add_argument("--two-items", action="store_true", help="two items and a retro-cue")
    args = parser.parse_args()
    main(tiny=args.tiny, two_items=args.two_items)
