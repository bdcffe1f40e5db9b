"""Train a leaky RNN on Romo's delayed frequency discrimination (Romo et al. 1999).

Usage: python examples/tasks/romo.py [--tiny]

Prints the held-out choice accuracy on the trained task and on its out-of-distribution variant
(pairs twice as close, four times the input noise). Uses only the public API.
"""

from __future__ import annotations

from _run import command_line, train_and_report

from neurodyn.tasks import DelayedDiscrimination


def main(tiny: bool = False) -> dict:
    if tiny:
        task = DelayedDiscrimination(fixation_ms=100, stimulus_ms=100, delay_min_ms=100,
                                     delay_max_ms=300, decision_ms=100, grace_ms=40)
    else:
        task = DelayedDiscrimination()
    return train_and_report(
        task, lambda m, ood: f"accuracy {m['accuracy']:.3f}, fixation {m['fixation_accuracy']:.3f}, "
                             f"closer pairs, more noise (OOD) {ood['accuracy']:.3f}",
        n_units=32 if tiny else 64, alpha=0.5 if tiny else 0.2, n_iterations=60 if tiny else 1000,
        lr=1e-2 if tiny else 3e-3)


if __name__ == "__main__":
    main(**vars(command_line(__doc__).parse_args()))
