"""Train a leaky RNN on delayed match-to-sample.

Usage: python examples/tasks/dms.py [--tiny]

Prints the held-out match / non-match accuracy on the trained delays and on longer
out-of-distribution delays. Uses only the public API.
"""

from __future__ import annotations

import argparse

import neurodyn
from neurodyn.models import LeakyRNN
from neurodyn.tasks import DelayedMatchToSample


def main(tiny: bool = False) -> dict:
    if tiny:
        task = DelayedMatchToSample(n_stimuli=2, fixation_ms=100, sample_ms=100, delay_min_ms=100,
                                    delay_max_ms=300, test_ms=100, decision_ms=100, grace_ms=40)
    else:
        task = DelayedMatchToSample()
    n_units, alpha = (32, 0.5) if tiny else (64, 0.2)
    model = LeakyRNN(task.n_inputs, n_units, task.n_outputs, alpha=alpha, seed=0)
    result = neurodyn.train(
        model, task, n_iterations=60 if tiny else 1000, batch_size=64, lr=3e-3, seed=0,
        target_metric=("accuracy", 0.99), progress=False,
    )
    metrics = neurodyn.training.evaluate(result.model, task, seed=1)
    ood = neurodyn.training.evaluate(result.model, task.ood(), seed=1)
    print(f"accuracy {metrics['accuracy']:.3f}, longer delays (OOD) {ood['accuracy']:.3f}")
    return {"metrics": metrics, "ood": ood}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="a few seconds, for CI")
    main(tiny=parser.parse_args().tiny)
