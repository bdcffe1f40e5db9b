"""Train a leaky RNN on delayed match-to-sample.

Usage: python examples/tasks/dms.py [--tiny]

Prints the held-out match / non-match accuracy on the trained delays and on longer
out-of-distribution delays. Uses only the public API.
"""

from __future__ import annotations

from _run import command_line, train_and_report

from neurodyn.tasks import DelayedMatchToSample


def main(tiny: bool = False) -> dict:
    if tiny:
        task = DelayedMatchToSample(n_stimuli=2, fixation_ms=100, sample_ms=100, delay_min_ms=100,
                                    delay_max_ms=300, test_ms=100, decision_ms=100, grace_ms=40)
    else:
        task = DelayedMatchToSample()
    return train_and_report(task, lambda m, ood: f"accuracy {m['accuracy']:.3f}, "
                                                   f"longer delays (OOD) {ood['accuracy']:.3f}",
                              n_units=32 if tiny else 64, alpha=0.5 if tiny else 0.2,
                              n_iterations=60 if tiny else 1000, lr=3e-3)


if __name__ == "__main__":
    main(**vars(command_line(__doc__).parse_args()))
