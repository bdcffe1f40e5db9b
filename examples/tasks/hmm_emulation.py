"""Train a noise-driven RNN to emulate a 2-state linear-chain HMM (Torre et al. 2025).

Usage: python examples/tasks/hmm_emulation.py [--tiny] [--divergence sinkhorn|mmd]

The network gets only Gaussian noise, emits symbols through a hard Gumbel-softmax readout and
is trained with a Sinkhorn divergence between batches of whole emission sequences. Prints the
emission frequencies and dwell times of the network next to the HMM's. Uses only the public API.
"""

from __future__ import annotations

import numpy as np
from _run import command_line

from neurodyn.models import LeakyRNN
from neurodyn.tasks import HMMEmulation, compute_dwell_times, compute_emission_frequencies
from neurodyn.training.distribution import sample_emissions, train_distribution


def main(tiny: bool = False, divergence: str = "sinkhorn") -> dict:
    task = HMMEmulation(n_states=2, topology="linear", n_steps=12 if tiny else 20, n_noise=8)
    model = LeakyRNN(task.n_inputs, 16 if tiny else 64, task.n_outputs, alpha=0.1, gain=1.5,
                     seed=0)
    result = train_distribution(
        model, task, n_iterations=20 if tiny else 800, batch_size=64 if tiny else 256, lr=1e-2,
        divergence=divergence, epsilon=0.02, seed=0, progress=False,
    )
    emitted, batch = sample_emissions(result.model, task, 256 if tiny else 2000, seed=1)
    metrics = task.evaluate(emitted, batch)
    long_emitted, long_batch = sample_emissions(result.model, task.ood(), 256, seed=1)
    ood = task.ood().evaluate(long_emitted, long_batch)
    model_y, hmm_y = emitted.argmax(-1), batch.trial_params["symbols"]
    np.set_printoptions(precision=3, suppress=True)
    print("emission frequencies  RNN", compute_emission_frequencies(model_y, 3),
          " HMM", compute_emission_frequencies(hmm_y, 3))
    print("dwell times (steps)   RNN", compute_dwell_times(model_y, 3),
          " HMM", compute_dwell_times(hmm_y, 3))
    print(", ".join(f"{k} {v:.3f}" for k, v in metrics.items()))
    return {"metrics": metrics, "ood": ood}


if __name__ == "__main__":
    parser = command_line(__doc__)
    parser.add_argument("--divergence", default="sinkhorn", choices=["sinkhorn", "mmd"])
    main(**vars(parser.parse_args()))
