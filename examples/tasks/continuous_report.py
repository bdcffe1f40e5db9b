"""Train a leaky RNN on continuous-report working memory, optionally with two items and a
retro-cue (swap errors).

Usage: python examples/tasks/continuous_report.py [--tiny] [--two-items]

Prints the mean absolute report error, the fraction of reports within tolerance and, with two
items, the swap rate. Uses only the public API.
"""

from __future__ import annotations

from _run import command_line, train_and_report

from neurodyn.tasks import ContinuousReport


def main(tiny: bool = False, two_items: bool = False) -> dict:
    n_items = 2 if two_items else 1
    if tiny:
        task = ContinuousReport(n_items=n_items, n_ring=8, fixation_ms=60, stimulus_ms=100,
                                delay_min_ms=100, delay_max_ms=300, cue_ms=60, response_ms=120,
                                grace_ms=40)
    else:
        task = ContinuousReport(n_items=n_items)
    return train_and_report(
        task, lambda m, ood: ", ".join(f"{k} {v:.3f}" for k, v in m.items())
                             + f"; longer delays (OOD) accuracy {ood['accuracy']:.3f}",
        n_units=32 if tiny else 64, alpha=0.5 if tiny else 0.2, n_iterations=60 if tiny else 1000,
        lr=1e-2 if tiny else 3e-3)


if __name__ == "__main__":
    main(**vars(command_line(__doc__, two_items="two items and a retro-cue").parse_args()))
