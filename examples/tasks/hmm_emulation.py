"""Train a noise-driven RNN to emulate a 2-state linear-chain HMM (Torre et al. 2025).

Runs the gallery page docs/gallery/task_training.py, the example's one source, for this task
(full size, or the site's small size with --tiny).

Usage: python examples/tasks/hmm_emulation.py [--tiny] [--divergence sinkhorn|mmd]

The network gets only Gaussian noise, emits symbols through a hard Gumbel-softmax readout and
is trained with a Sinkhorn divergence between batches of whole emission sequences. Prints the
emission frequencies and dwell times of the network next to the HMM's."""

from _run import command_line, run_task


def main(tiny: bool = False, divergence: str = "sinkhorn") -> dict:
    return run_task("hmm_emulation", tiny=tiny, divergence=divergence)


if __name__ == "__main__":
    parser = command_line(__doc__)
    parser.add_argument("--divergence", default="sinkhorn", choices=["sinkhorn", "mmd"])
    main(**vars(parser.parse_args()))
