"""Delay embedding and HAVOK/DMD operators of trajectories (the first stage of DSA)."""

from __future__ import annotations

import warnings
from typing import Any, Literal, NamedTuple

import numpy as np

from neurodyn._checks import check_setting
from neurodyn.analysis.similarity._validate import TRAJECTORIES, check_choice, check_finite, to_numpy


class HavokFit(NamedTuple):
    """A linear operator fitted to delay-embedded trajectories.

    operator : ndarray, shape (rank, rank)
        ``A`` with ``v[t+1] ≈ A v[t]`` in the leading ``rank`` eigen-time-delay coordinates ``v``
        (right singular vectors of the Hankel matrix, unit-norm columns over samples).
    singular_values : ndarray, shape (n_features,)
        Singular values of the Hankel matrix (``n_features = unit * n_delays``, or fewer samples).
    rank, full_rank : int
        The rank used and the largest possible one (number of nonzero-size Hankel singular values).
    n_delays, delay_interval : int
    method : str
        ``"pcr"`` (SVD-truncated DMD) or ``"rrr"`` (reduced-rank regression).

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.similarity import fit_havok
    >>> t = np.arange(100) * 0.1
    >>> fit = fit_havok(np.c_[np.cos(t), np.sin(t)], n_delays=2)
    >>> fit.operator.shape, fit.rank, fit.full_rank, fit.n_delays, fit.method  # a circle spans 2 dims
    ((2, 2), 2, 2, 2, 'pcr')
    """

    operator: np.ndarray
    singular_values: np.ndarray
    rank: int
    full_rank: int
    n_delays: int
    delay_interval: int
    method: str


def as_trajectories(X: Any, name: str) -> np.ndarray:
    """Validate trajectories and return a float64 ``(trial, time, unit)`` copy (2-D input = one trial)."""
    a = to_numpy(X, name, TRAJECTORIES)
    if a.ndim == 2:
        a = a[None]
    if a.ndim != 3:
        raise ValueError(
            f"{name} must have shape (trial, time, unit) or (time, unit); got shape {a.shape}"
        )
    if a.shape[1] < 3 or a.shape[2] < 1:
        raise ValueError(f"{name} needs at least 3 time steps and 1 unit; got shape {a.shape}")
    check_finite(a, name)
    return a


def embedded_length(a: np.ndarray, n_delays: int, delay_interval: int, name: str) -> int:
    """Time steps left after delay-embedding the ``(trial, time, unit)`` array ``a`` (named ``name``);
    ``ValueError`` unless ``n_delays`` and ``delay_interval`` are integers >= 1 leaving at least 3."""
    check_setting("n_delays", n_delays, 1, integer=True, hint=" (number of delay-embedded copies)")
    check_setting("delay_interval", delay_interval, 1, integer=True, hint=" (time steps between copies)")
    n_time = a.shape[1] - (int(n_delays) - 1) * int(delay_interval)
    if n_time < 3:
        raise ValueError(
            f"{int(n_delays)} delays at interval {int(delay_interval)} need more than the {a.shape[1]} time "
            f"steps of {name}; reduce n_delays or delay_interval"
        )
    return n_time


def delay_embed(X: Any, *, n_delays: int, delay_interval: int = 1) -> np.ndarray:
    """Hankel (delay) embedding of trajectories.

    Parameters
    ----------
    X : array or tensor, shape (trial, time, unit) or (time, unit)
    n_delays : int >= 1
        Number of copies stacked (1 = no embedding).
    delay_interval : int >= 1
        Lag between copies, in time steps.

    Returns
    -------
    ndarray, shape (trial, time - (n_delays - 1) * delay_interval, unit * n_delays)
        Feature block ``d`` holds ``x[t + (n_delays - 1 - d) * delay_interval]``: the newest copy comes
        first (the ordering of the DSA reference code).

    Raises
    ------
    ValueError
        For bad shapes, NaN/Inf, ``n_delays`` or ``delay_interval`` not an integer >= 1, or more delays
        than the trajectories are long.
    TypeError
        For complex trajectories.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.similarity import delay_embed
    >>> X = np.arange(5.0)[:, None]  # (time, unit): 0, 1, 2, 3, 4
    >>> H = delay_embed(X, n_delays=3)
    >>> H.shape  # (trial, time - 2, unit * 3)
    (1, 3, 3)
    >>> H[0].tolist()  # newest copy first
    [[2.0, 1.0, 0.0], [3.0, 2.0, 1.0], [4.0, 3.0, 2.0]]
    """
    a = as_trajectories(X, "X")
    n_time = embedded_length(a, n_delays, delay_interval, "X")
    n_delays, delay_interval = int(n_delays), int(delay_interval)
    blocks = [a[:, (n_delays - 1 - d) * delay_interval:][:, :n_time] for d in range(n_delays)]
    return np.concatenate(blocks, axis=2)


def fit_havok(
    X: Any,
    *,
    n_delays: int,
    rank: int | None = None,
    delay_interval: int = 1,
    method: Literal["pcr", "rrr"] = "pcr",
    ridge: float = 1e-8,
    warn: bool = True,
) -> HavokFit:
    """Fit a HAVOK/DMD operator to delay-embedded trajectories (Brunton et al., 2017; Ostrow et al., 2023).

    The Hankel matrix ``H`` (samples = trials x embedded times, features = unit x n_delays) is decomposed
    as ``H = V S U^T``; consecutive rows of ``V`` within each trial are regressed on each other with a
    small ridge, ``V[t+1] ≈ V[t] A^T``.

    Parameters
    ----------
    X : array or tensor, shape (trial, time, unit) or (time, unit)
        Trajectories (time in steps); never modified. Not centred.
    n_delays, delay_interval : int
        See :func:`delay_embed`.
    rank : int or None
        Number of eigen-time-delay coordinates kept; None keeps all (full rank). Below full rank a
        ``UserWarning`` says that invariance to invertible linear maps of the units is lost (orthogonal
        maps and isotropic scaling still leave the operator unchanged up to orthogonal conjugation).
    method : {"pcr", "rrr"}
        ``pcr`` (default, the reference's default): regression within the leading ``rank`` coordinates
        (SVD-truncated DMD). ``rrr``: reduced-rank regression on all coordinates, the operator restricted
        to its ``rank``-dimensional fitted-output subspace ``W``: ``A = W^T A_full W``.
    ridge : float >= 0
        Ridge penalty of the regression (coordinates have unit norm over samples).
    warn : bool
        Issue the below-full-rank warning.

    Returns
    -------
    HavokFit

    Raises
    ------
    ValueError
        For bad inputs, ``rank`` outside ``[1, full_rank]`` or negative ``ridge``.
    TypeError
        For complex input; pass real data (e.g. ``.real`` or ``abs()``).

    Examples
    --------
    A rotation by 0.1 rad per step is recovered as an operator with eigenvalues ``exp(+-0.1 i)``:

    >>> import numpy as np
    >>> from neurodyn.analysis.similarity import fit_havok
    >>> t = np.arange(200) * 0.1
    >>> fit = fit_havok(np.c_[np.cos(t), np.sin(t)], n_delays=1)
    >>> fit.operator.shape
    (2, 2)
    >>> ev = np.linalg.eigvals(fit.operator)
    >>> np.round(np.abs(ev), 4).tolist(), np.round(np.sort(np.abs(np.angle(ev))), 4).tolist()
    ([1.0, 1.0], [0.1, 0.1])
    """
    check_fit_options(method, ridge)
    S, full_rank, V = hankel_coordinates(X, n_delays=n_delays, delay_interval=delay_interval)
    check_rank(rank)
    rank = full_rank if rank is None else int(rank)
    if not 1 <= rank <= full_rank:
        raise ValueError(f"rank must lie in [1, {full_rank}] (the Hankel matrix rank); got {rank}")
    if warn and rank < full_rank:
        warn_below_full_rank(rank, full_rank, stacklevel=3)
    past_gram, cross_gram = lagged_grams(V, rank if method == "pcr" else full_rank)
    A = operator_from_grams(past_gram, cross_gram, rank=rank, method=method, ridge=ridge)
    return HavokFit(A, S, rank, full_rank, int(n_delays), int(delay_interval), method)


def check_rank(rank: Any) -> None:
    """One-line ``ValueError`` unless ``rank`` is None or an integer >= 1."""
    if rank is not None:
        check_setting("rank", rank, 1, integer=True, hint=" (operator rank; None keeps full rank)")


def check_fit_options(method: str, ridge: float) -> None:
    """Raise ``ValueError`` unless ``method`` is ``"pcr"`` or ``"rrr"`` and ``ridge >= 0`` (not NaN)."""
    check_choice(method, ("pcr", "rrr"), "method")
    if not ridge >= 0:
        raise ValueError(f"ridge must be >= 0; got {ridge}")


def warn_below_full_rank(rank: int, full_rank: int, *, stacklevel: int, suffix: str = "") -> None:
    warnings.warn(
        f"DSA rank {rank} is below the full rank {full_rank}: the distance is no longer invariant to "
        "invertible linear maps of the units (only to orthogonal maps and scaling)" + suffix,
        UserWarning,
        stacklevel=stacklevel + 1,
    )


def hankel_coordinates(X: Any, *, n_delays: int, delay_interval: int = 1
                       ) -> tuple[np.ndarray, int, np.ndarray]:
    """``(S, full_rank, V)``: singular values of the Hankel matrix ``H = V S U^T`` and its eigen-time-delay
    coordinates ``V``, shape ``(trial, embedded time, full_rank)`` (unit norm over samples)."""
    H = delay_embed(X, n_delays=n_delays, delay_interval=delay_interval)
    n_trials, n_time, n_feat = H.shape
    _, S, Ut = np.linalg.svd(H.reshape(-1, n_feat), full_matrices=False)
    keep = S > S[0] * 1e-12 if S[0] > 0 else np.zeros_like(S, bool)
    full_rank = int(keep.sum())
    if full_rank == 0:
        raise ValueError("X is zero everywhere; the dynamics are undefined")
    if np.ptp(H, axis=1).max() == 0:
        raise ValueError("X is constant over time in every trial; DSA compares dynamics and needs change")
    V = (H.reshape(-1, n_feat) @ Ut[:full_rank].T / S[:full_rank]).reshape(n_trials, n_time, full_rank)
    return S, full_rank, V


def lagged_grams(V: np.ndarray, n_cols: int) -> tuple[np.ndarray, np.ndarray]:
    """``(P^T P, P^T F)`` of the leading ``n_cols`` coordinates, ``P`` = ``V[t]`` and ``F`` = ``V[t+1]``
    within each trial: everything the regression needs, ``(n_cols, n_cols)`` each. A fit of rank ``r <=
    n_cols`` uses their leading ``(r, r)`` blocks."""
    past = V[:, :-1, :n_cols].reshape(-1, n_cols)
    future = V[:, 1:, :n_cols].reshape(-1, n_cols)
    return past.T @ past, past.T @ future


def operator_from_grams(past_gram: np.ndarray, cross_gram: np.ndarray, *, rank: int, method: str,
                        ridge: float) -> np.ndarray:
    """The ``(rank, rank)`` HAVOK operator from :func:`lagged_grams` (``pcr``: their leading ``rank``
    block; ``rrr``: all of them, full rank)."""
    n_cols = rank if method == "pcr" else past_gram.shape[0]
    gram = past_gram[:n_cols, :n_cols] + ridge * np.eye(n_cols)
    M = np.linalg.solve(gram, cross_gram[:n_cols, :n_cols])
    A = M.T
    if method == "rrr":
        _, W = np.linalg.eigh(M.T @ past_gram @ M)  # the fitted outputs' Gram matrix
        W = W[:, ::-1][:, :rank]
        A = W.T @ A @ W
    return A
