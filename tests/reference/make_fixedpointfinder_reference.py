"""Generate tests/reference/fixedpointfinder_reference.npz with FixedPointFinder (Golub & Sussillo 2018).

Run once, by hand, with a checkout of https://github.com/mattgolub/fixed-point-finder (its PyTorch
version, ``FixedPointFinderTorch``; not a neurodyn dependency; commit 1a30417 made the stored file):

    .venv/bin/python tests/reference/make_fixedpointfinder_reference.py /path/to/fixed-point-finder

Stored: the weights of a 16-unit tanh ``LeakyRNN`` (alpha 1) trained on the 3-bit flip-flop, 256
initial states (noise-free task states plus N(0, 0.05²) noise), and what FixedPointFinder's
``find_fixed_points`` returns from them with its defaults in float64 on a ``torch.nn.RNN`` holding the
same weights (constant input 0): the unique points, their q, whether each is stable, and their
eigenvalues sorted by decreasing modulus.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch

from neurodyn import train
from neurodyn.analysis.fixed_points._init import sample_states, task_states
from neurodyn.models import LeakyRNN
from neurodyn.tasks import FlipFlop

SEED, N_UNITS, N_INITS = 0, 16, 256


def network() -> tuple[LeakyRNN, np.ndarray]:
    """The trained network (float64) and its initial states (init, unit)."""
    task = FlipFlop(n_bits=3, n_steps=64, p_pulse=0.1)
    result = train(LeakyRNN(3, N_UNITS, 3, alpha=1.0, seed=SEED), task, n_iterations=600, batch_size=64,
                   lr=1e-2, eval_every=25, target_metric=("accuracy", 1.0), progress=False, seed=SEED)
    model = result.model.double().eval().requires_grad_(False)
    pool = task_states(model, task, SEED, "cpu", torch.float64).reshape(-1, N_UNITS)
    return model, sample_states(pool, N_INITS, 0.05, SEED)


def main(folder: str) -> None:
    sys.path.insert(0, str(Path(folder).resolve()))
    from FixedPointFinderTorch import FixedPointFinderTorch

    model, x0 = network()
    p = model.params()
    rnn = torch.nn.RNN(3, N_UNITS, batch_first=True, nonlinearity="tanh").double().requires_grad_(False)
    rnn.weight_hh_l0.copy_(p.w_rec)
    rnn.weight_ih_l0.copy_(p.w_in)
    rnn.bias_ih_l0.copy_(p.b)
    rnn.bias_hh_l0.zero_()
    fpf = FixedPointFinderTorch(rnn, dtype="float64", verbose=False)
    unique, _ = fpf.find_fixed_points(x0, np.zeros((1, 3)))
    order = np.argsort(-np.abs(unique.eigval_J_xstar), axis=1, kind="stable")
    eig = np.take_along_axis(unique.eigval_J_xstar, order, axis=1)
    out = Path(__file__).with_name("fixedpointfinder_reference.npz")
    np.savez_compressed(out, **{name: t.numpy() for name, t in model.state_dict().items()},
                        initial_states=x0, xstar=unique.xstar, qstar=unique.qstar,
                        is_stable=np.asarray(unique.is_stable, dtype=bool), eigenvalues=eig)
    print(f"wrote {out}: {unique.n} unique points, {int(np.sum(unique.is_stable))} stable")


if __name__ == "__main__":
    main(sys.argv[1])
