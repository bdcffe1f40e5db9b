"""Train a leaky RNN to generate sine waves whose frequency a static input selects
(Sussillo & Barak 2013).

Usage: python examples/tasks/sine_wave.py [--tiny]

Prints R^2 on the trained frequencies and on frequencies between and beyond them (OOD).
Uses only the public API.
"""

from __future__ import annotations

from _run import command_line, train_and_report

from neurodyn.tasks import SineWave


def main(tiny: bool = False) -> dict:
    task = SineWave(n_frequencies=2, duration_ms=500, dt=20) if tiny else SineWave()
    return train_and_report(task, lambda m, ood: f"R^2 {m['r2']:.3f} (accuracy {m['accuracy']:.3f}), "
                                                   f"untrained frequencies R^2 {ood['r2']:.3f}",
                              n_units=32 if tiny else 64, alpha=1.0 if tiny else 0.1,
                              n_iterations=60 if tiny else 1500, lr=1e-2 if tiny else 3e-3)


if __name__ == "__main__":
    main(**vars(command_line(__doc__).parse_args()))
