"""Train a leaky RNN to generate sine waves whose frequency a static input selects
(Sussillo & Barak 2013).

Usage: python examples/tasks/sine_wave.py [--tiny]

Prints R^2 on the trained frequencies and on frequencies between and beyond them (OOD).
Uses only the public API.
"""

from __future__ import annotations

import argparse

import neurodyn
from neurodyn.models import LeakyRNN
from neurodyn.tasks import SineWave


def main(tiny: bool = False) -> dict:
    task = SineWave(n_frequencies=2, duration_ms=500, dt=20) if tiny else SineWave()
    n_units, alpha = (32, 1.0) if tiny else (64, 0.1)
    model = LeakyRNN(task.n_inputs, n_units, task.n_outputs, alpha=alpha, seed=0)
    result = neurodyn.train(
        model, task, n_iterations=60 if tiny else 1500, batch_size=64,
        lr=1e-2 if tiny else 3e-3, seed=0,
        target_metric=("accuracy", 0.99), progress=False,
    )
    metrics = neurodyn.training.evaluate(result.model, task, seed=1)
    ood = neurodyn.training.evaluate(result.model, task.ood(), seed=1)
    print(f"R^2 {metrics['r2']:.3f} (accuracy {metrics['accuracy']:.3f}), "
          f"untrained frequencies R^2 {ood['r2']:.3f}")
    return {"metrics": metrics, "ood": ood}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="a few seconds, for CI")
    main(tiny=parser.parse_args().tiny)
