"""HMM emulation task (Torre et al. 2025, NeurIPS): a noise-driven network must emit symbol
sequences distributed like those of a categorical HMM, plus the emission statistics used to
compare the two."""

from __future__ import annotations

from dataclasses import dataclass

from neurodyn._lazy import numpy as np
from neurodyn._seed import numpy_rng
from neurodyn.tasks._base import Task, TaskBatch, size_of
from neurodyn.tasks._checks import integers, rule
from neurodyn.tasks._registry import register_task
from neurodyn.tasks._timeline import per_trial
from neurodyn.tasks.hmm import EMISSIONS, TOPOLOGIES, HMMParams, make_hmm, sample_hmm

__all__ = [
    "HMMEmulation", "compute_dwell_times", "compute_emission_frequencies", "compute_symbol_transitions",
]


def compute_emission_frequencies(symbols: np.ndarray, n_symbols: int) -> np.ndarray:
    """Fraction of steps emitting each symbol; ``symbols`` (trial, time) int → (symbol,).

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.tasks import compute_emission_frequencies
    >>> compute_emission_frequencies(np.array([[0, 0, 1, 2]]), 3).tolist()
    [0.5, 0.25, 0.25]
    """
    return np.bincount(np.asarray(symbols).ravel(), minlength=n_symbols) / np.asarray(symbols).size


def compute_symbol_transitions(symbols: np.ndarray, n_symbols: int) -> np.ndarray:
    """Empirical ``P(y[t+1] = j | y[t] = i)`` pooled over trials, (symbol, symbol); rows of
    symbols that never occur before the last step are NaN.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.tasks import compute_symbol_transitions
    >>> p = compute_symbol_transitions(np.array([[0, 0, 1, 0, 1]]), 3)
    >>> p.shape  # (symbol, symbol)
    (3, 3)
    >>> p[0].tolist(), p[1].tolist()  # symbol 2 never occurs: its row is NaN
    ([0.3333333333333333, 0.6666666666666666, 0.0], [1.0, 0.0, 0.0])
    >>> bool(np.isnan(p[2]).all())
    True
    """
    y = np.asarray(symbols)
    counts = np.bincount((y[:, :-1] * n_symbols + y[:, 1:]).ravel(), minlength=n_symbols**2)
    counts = counts.reshape(n_symbols, n_symbols).astype(np.float64)
    with np.errstate(invalid="ignore"):
        return counts / counts.sum(axis=1, keepdims=True)


def compute_dwell_times(symbols: np.ndarray, n_symbols: int) -> np.ndarray:
    """Mean run length (steps) of each symbol, (symbol,); NaN for symbols never emitted.

    Runs cut by the trial boundaries count with their observed length, so compare dwell times
    only between sequences of the same length.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.tasks import compute_dwell_times
    >>> compute_dwell_times(np.array([[0, 0, 0, 1, 1, 0]]), 3).tolist()  # runs 3 and 1 of 0, one of 2 of 1
    [2.0, 2.0, nan]
    """
    y = np.asarray(symbols)
    starts = np.ones_like(y, dtype=bool)
    starts[:, 1:] = y[:, 1:] != y[:, :-1]
    run_id = np.cumsum(starts.ravel()) - 1
    lengths = np.bincount(run_id)
    run_symbol = y.ravel()[starts.ravel()]
    total = np.bincount(run_symbol, weights=lengths, minlength=n_symbols)
    n_runs = np.bincount(run_symbol, minlength=n_symbols)
    with np.errstate(invalid="ignore"):
        return total / n_runs


@register_task
@dataclass(frozen=True)
class HMMEmulation(Task):
    """Emit symbol sequences distributed like those of a categorical HMM, driven only by noise.

    Inputs are i.i.d. standard Gaussian noise (``n_noise`` channels); the network's
    ``n_symbols`` outputs are logits from which symbols are drawn with a hard Gumbel-softmax.
    Targets are one-hot HMM emission sequences: they are matched as a distribution over whole
    sequences (Sinkhorn divergence or MMD between batches,
    :func:`neurodyn.training.distribution.train_distribution`), not trial by trial, so
    ``loss = "sinkhorn"`` is not a per-step loss for :func:`neurodyn.training.train`.

    Parameters
    ----------
    n_states : int
        Number of hidden states, 2–5 in Torre et al. (the complexity knob).
    topology : {"linear", "fully_connected", "cyclic"}
        Transition structure (see :func:`neurodyn.tasks.hmm.make_hmm`).
    n_symbols : int
        Number of emitted symbols (3 in Torre et al.).
    stay_prob : float
        Self-transition probability of every state.
    emission : {"linear", "gaussian"}
        Emission-matrix family.
    n_steps : int
        Sequence length in steps.
    n_noise : int
        Number of Gaussian noise input channels.
    dt : float
        Time step in ms (recorded only; the task is defined in steps).

    Raises
    ------
    ValueError
        At construction, for a field that breaks its rule, e.g. ``n_steps`` < 2; the count fields
        (``n_states``, ``n_symbols``, ``n_steps``, ``n_noise``) must be integers (a fraction, NaN, a bool or a
        string is refused; a whole float such as ``4.0`` is stored as ``4``).

    Notes
    -----
    ``ood()`` returns sequences four times longer. Per-trial params: ``states`` and ``symbols``
    (trial, time).

    Examples
    --------
    >>> from neurodyn.tasks import HMMEmulation
    >>> task = HMMEmulation(n_states=2, n_steps=30, n_noise=4)
    >>> task.n_inputs, task.n_outputs, task.loss
    (4, 3, 'sinkhorn')
    >>> batch = task.sample(8, seed=0)
    >>> batch.inputs.shape, batch.targets.shape  # noise in; one-hot symbols out
    ((8, 30, 4), (8, 30, 3))
    >>> batch.trial_params["symbols"].shape
    (8, 30)
    """

    name = "hmm"
    loss = "sinkhorn"
    n_states: int = 2
    topology: str = "linear"
    n_symbols: int = 3
    stay_prob: float = 0.95
    emission: str = "linear"
    n_steps: int = 20
    n_noise: int = 8
    dt: float = 10.0

    checks = (
        rule(lambda t: t.topology not in TOPOLOGIES or t.emission not in EMISSIONS,
             f"topology must be one of {TOPOLOGIES} and emission one of {EMISSIONS}; "
             "got {t.topology!r}, {t.emission!r}"),
        integers("n_states", "n_symbols", "n_steps", "n_noise"),
        rule(lambda t: t.n_steps < 2 or t.n_noise < 1,
             "need n_steps >= 2 and n_noise >= 1, got {t.n_steps}, {t.n_noise}"),
        lambda t: t.hmm,  # building the HMM checks n_states, n_symbols and stay_prob
    )

    @property
    def hmm(self) -> HMMParams:
        """The HMM's start, transition and emission probabilities."""
        return make_hmm(self.n_states, self.topology, n_symbols=self.n_symbols,
                        stay_prob=self.stay_prob, emission=self.emission)

    n_inputs, n_outputs = size_of("n_noise"), size_of("n_symbols")

    def _sample(self, n_trials: int, seed: int, first_trial: int) -> TaskBatch:
        states, symbols = sample_hmm(self.hmm, n_trials, self.n_steps, seed=seed,
                                     first_trial=first_trial)
        rngs = [numpy_rng(seed, 1, first_trial + i) for i in range(n_trials)]  # own sub-stream
        noise = per_trial(rngs, lambda r: r.standard_normal((self.n_steps, self.n_noise)))
        targets = np.eye(self.n_symbols, dtype=np.float32)[symbols]
        return self._batch(
            noise, targets, np.ones((n_trials, self.n_steps, 1)), seed=seed,
            first_trial=first_trial, trial_params={"states": states, "symbols": symbols},
            periods={"emission": np.tile([0, self.n_steps], (n_trials, 1))},
        )

    def ood(self) -> HMMEmulation:
        return self.replace(n_steps=4 * self.n_steps)

    def evaluate(self, outputs: np.ndarray, batch: TaskBatch) -> dict[str, float]:
        """Compare the symbols emitted in ``outputs`` (trial, time, symbol) with the batch's HMM
        sequences.

        Symbols are the arg-max of each output row: pass one-hot emissions (e.g. from
        :func:`neurodyn.training.distribution.sample_emissions`), not raw logits.
        Returns ``emission_error`` (max abs. difference of emission frequencies),
        ``transition_error`` (max abs. difference of the symbol transition matrices),
        ``dwell_error`` (relative error of the mean dwell time of the most frequent HMM symbol)
        and ``accuracy`` = 1 - total-variation distance of the emission frequencies.
        """
        out = np.asarray(outputs)
        if out.shape != batch.targets.shape:
            raise ValueError(f"outputs must have shape {batch.targets.shape}, got {out.shape}")
        model_y, hmm_y = out.argmax(-1), batch.trial_params["symbols"]
        k = self.n_symbols
        p, q = compute_emission_frequencies(model_y, k), compute_emission_frequencies(hmm_y, k)
        tp, tq = compute_symbol_transitions(model_y, k), compute_symbol_transitions(hmm_y, k)
        dp, dq = compute_dwell_times(model_y, k), compute_dwell_times(hmm_y, k)
        top = int(np.argmax(q))
        both = ~(np.isnan(tp) | np.isnan(tq))
        return {
            "emission_error": float(np.abs(p - q).max()),
            "transition_error": float(np.abs(tp - tq)[both].max()) if both.any() else float("nan"),
            "dwell_error": float(abs(dp[top] - dq[top]) / dq[top]),
            "accuracy": float(1 - 0.5 * np.abs(p - q).sum()),
        }
