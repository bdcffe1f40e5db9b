"""Categorical hidden Markov models as targets for noise-driven RNNs (Torre, Viscione, Pompe,
Grewe & Mante 2025, "Mechanistic interpretability of RNNs emulating hidden Markov models",
NeurIPS; arXiv:2510.25674)."""

from __future__ import annotations

from typing import NamedTuple

from neurodyn._lazy import numpy as np
from neurodyn._seed import SeedLike, resolve_seed, trial_uniforms

__all__ = ["HMMParams", "make_hmm", "sample_hmm", "stationary_distribution"]

TOPOLOGIES = ("linear", "fully_connected", "cyclic")
EMISSIONS = ("linear", "gaussian")


class HMMParams(NamedTuple):
    """A categorical HMM: ``start`` (state,), ``transition`` (state, state) with rows
    ``P(s[t+1] | s[t])``, ``emission`` (state, symbol) with rows ``P(y[t] | s[t])``.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.tasks import HMMParams
    >>> hmm = HMMParams(start=np.array([1.0, 0.0]), transition=np.array([[0.9, 0.1], [0.2, 0.8]]),
    ...                 emission=np.eye(2))
    >>> hmm.transition.shape, hmm.emission.shape  # (state, state), (state, symbol)
    ((2, 2), (2, 2))
    """

    start: np.ndarray
    transition: np.ndarray
    emission: np.ndarray


def make_hmm(
    n_states: int, topology: str = "linear", *, n_symbols: int = 3, stay_prob: float = 0.95,
    emission: str = "linear",
) -> HMMParams:
    """The HMM families of Torre et al. (2025), with a uniform start distribution.

    Parameters
    ----------
    n_states : int
        Number of hidden states (the paper uses 2–5).
    topology : {"linear", "fully_connected", "cyclic"}
        ``"linear"``: a chain; a state stays with ``stay_prob`` and otherwise moves to a
        neighbour (split equally between the two neighbours of an inner state).
        ``"fully_connected"``: the remaining mass spread uniformly over all other states.
        ``"cyclic"``: the remaining mass goes to the next state, ``i -> i + 1 mod n_states``.
    n_symbols : int
        Number of emitted symbols (the paper uses 3).
    stay_prob : float
        Self-transition probability in (0, 1).
    emission : {"linear", "gaussian"}
        ``"linear"``: state ``i`` with ``a = i / (n_states - 1)`` emits ``[0.99 (1 - a), 0.01,
        0.99 a]`` (3 symbols; otherwise a linear ramp between the end values, renormalised).
        ``"gaussian"``: each state prefers one symbol on an evenly spaced grid, with a Gaussian
        fall-off ``exp(-0.2 (d / (0.1 (n_symbols - 1)))**2)`` in symbol distance ``d``.

    Raises
    ------
    ValueError
        For unknown ``topology``/``emission``, ``n_states < 2``, ``n_symbols < 2`` or
        ``stay_prob`` outside (0, 1).

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.tasks import make_hmm
    >>> hmm = make_hmm(3, "cyclic", stay_prob=0.9)
    >>> hmm.start.shape, hmm.transition.shape, hmm.emission.shape  # (state,), (state, state), (state, symbol)
    ((3,), (3, 3), (3, 3))
    >>> hmm.transition[0].round(2).tolist()  # stay, or move on to the next state
    [0.9, 0.1, 0.0]
    >>> bool(np.allclose(hmm.emission.sum(axis=1), 1.0))
    True
    """
    if topology not in TOPOLOGIES:
        raise ValueError(f"topology must be one of {TOPOLOGIES}, got {topology!r}")
    if emission not in EMISSIONS:
        raise ValueError(f"emission must be one of {EMISSIONS}, got {emission!r}")
    if n_states < 2 or n_symbols < 2:
        raise ValueError(f"need n_states >= 2 and n_symbols >= 2, got {n_states}, {n_symbols}")
    if not 0.0 < stay_prob < 1.0:
        raise ValueError(f"stay_prob must be in (0, 1), got {stay_prob}")
    n, move = n_states, 1.0 - stay_prob
    a = np.eye(n) * stay_prob
    idx = np.arange(n)
    if topology == "linear":
        share = np.where((idx == 0) | (idx == n - 1), move, move / 2)
        a[idx[1:], idx[:-1]] += share[1:]
        a[idx[:-1], idx[1:]] += share[:-1]
    elif topology == "fully_connected":
        a += (1.0 - np.eye(n)) * move / (n - 1)
    else:
        a[idx, (idx + 1) % n] += move
    frac = idx / (n - 1)
    if emission == "linear":
        if n_symbols == 3:
            b = np.stack([0.99 * (1 - frac), np.full(n, 0.01), 0.99 * frac], axis=1)
        else:
            b = np.linspace(0.99 * (1 - frac), 0.99 * frac, n_symbols, axis=1) + 0.01 / n_symbols
    else:
        d = np.abs(np.arange(n_symbols)[None, :] - (frac * (n_symbols - 1))[:, None])
        b = np.exp(-0.2 * (d / (0.1 * (n_symbols - 1))) ** 2)
    b = b / b.sum(axis=1, keepdims=True)
    return HMMParams(np.full(n, 1.0 / n), a, b)


def _inverse_cdf(cdf: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Index ``k`` with ``cdf[..., k-1] <= u < cdf[..., k]`` (``cdf`` rows end at 1)."""
    return np.minimum((u[..., None] >= cdf).sum(-1), cdf.shape[-1] - 1)


def sample_hmm(
    hmm: HMMParams, n_trials: int, n_steps: int, *, seed: SeedLike = None, first_trial: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Draw state and symbol sequences, vectorised over trials *and* time.

    Each transition ``s -> f_t(s)`` is the inverse-CDF map of one uniform draw, tabulated for
    every state; the state at ``t`` is the composition ``f_t o ... o f_1`` applied to ``s[0]``,
    computed with a parallel prefix scan (log2(n_steps) vectorised compositions, no loop over
    time). This gives exactly the sequence of the step-by-step inverse-CDF sampler fed the same
    uniforms. Trial ``first_trial + i`` depends only on ``seed`` and its index.

    Returns
    -------
    states, symbols : ndarray, shape (trial, time), int64

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.tasks import make_hmm, sample_hmm
    >>> hmm = make_hmm(2, stay_prob=0.99)
    >>> states, symbols = sample_hmm(hmm, 4, 50, seed=0)
    >>> states.shape, symbols.shape  # (trial, time)
    ((4, 50), (4, 50))
    >>> again, _ = sample_hmm(hmm, 2, 50, seed=0, first_trial=2)  # trials depend only on seed and index
    >>> bool(np.array_equal(states[2:], again))
    True
    """
    seed = resolve_seed(seed)
    n_states = len(hmm.start)
    u = trial_uniforms(seed, n_trials, first_trial, (3, n_steps))  # start, transition, emission uniforms
    s0 = _inverse_cdf(np.cumsum(hmm.start), u[:, 0, 0])
    maps = _inverse_cdf(np.cumsum(hmm.transition, axis=1)[None, None],
                        np.broadcast_to(u[:, 1, 1:, None], (n_trials, n_steps - 1, n_states)))
    d = 1
    while d < n_steps - 1:  # Hillis–Steele scan: maps[t] <- maps[t] o maps[t - d]
        maps[:, d:] = np.take_along_axis(maps[:, d:], maps[:, :-d], axis=-1)
        d *= 2
    states = np.empty((n_trials, n_steps), dtype=np.int64)
    states[:, 0] = s0
    start = np.broadcast_to(s0[:, None, None], (n_trials, n_steps - 1, 1))
    states[:, 1:] = np.take_along_axis(maps, start, axis=-1)[..., 0]
    symbols = _inverse_cdf(np.cumsum(hmm.emission, axis=1)[states], u[:, 2])
    return states, symbols.astype(np.int64)


def stationary_distribution(transition: np.ndarray) -> np.ndarray:
    """Stationary distribution ``pi = pi A`` of a transition matrix (left eigenvector for 1).

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.tasks.hmm import stationary_distribution
    >>> pi = stationary_distribution(np.array([[0.9, 0.1], [0.2, 0.8]]))
    >>> pi.round(3).tolist()  # 0.2 / 0.3 and 0.1 / 0.3
    [0.667, 0.333]
    """
    w, v = np.linalg.eig(transition.T)
    pi = np.real(v[:, np.argmin(np.abs(w - 1.0))])
    return pi / pi.sum()
