"""Dynamical similarity analysis (Ostrow et al., 2023): compare the linearised dynamics of two systems."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import torch

from neurodyn._checks import check_setting
from neurodyn._seed import SeedLike, resolve_seed
from neurodyn.analysis.similarity._align import (
    canonical_order,
    initial_rotations,
    maximise_alignment,
    one_cpu_thread,
    pad_pair,
    random_orthogonal,
)
from neurodyn.analysis.similarity._havok import as_trajectories, embedded_length, fit_havok
from neurodyn.analysis.similarity._validate import angle, as_square, check_choice

SCORES = ("angular", "euclidean", "wasserstein")


def _operator(A: Any, name: str) -> np.ndarray:
    a = as_square(A, name, "(dim, dim) operator")
    if not np.any(a):
        raise ValueError(f"{name} is all zeros; the DSA distance is undefined for a zero operator")
    return a


def eigenvalue_wasserstein(A: np.ndarray, B: np.ndarray) -> float:
    """2-Wasserstein distance between the eigenvalue sets of two operators in the complex plane.

    Uniform weights on each set; ``sqrt(min_P mean |lambda_i - mu_P(i)|^2)``. Equal counts use the
    optimal matching (``scipy.optimize.linear_sum_assignment``), unequal counts optimal transport
    (``ot.emd2``, extra ``neurodyn[ot]``). dsa-metric reports the square of this value.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.similarity import eigenvalue_wasserstein
    >>> eigenvalue_wasserstein(np.diag([0.5, 0.9]), np.diag([0.9, 0.5]))  # same eigenvalues, any order
    0.0
    >>> round(eigenvalue_wasserstein(np.diag([0.0, 0.0]), np.diag([0.6, 0.8])), 6)  # sqrt((0.36 + 0.64) / 2)
    0.707107
    """
    la, lb = np.linalg.eigvals(A), np.linalg.eigvals(B)
    cost = np.abs(la[:, None] - lb[None, :]) ** 2
    if la.size == lb.size:
        from scipy.optimize import linear_sum_assignment

        rows, cols = linear_sum_assignment(cost)
        return float(np.sqrt(max(cost[rows, cols].mean(), 0.0)))
    try:
        import ot
    except ImportError as err:
        raise ImportError(
            "the eigenvalue-Wasserstein DSA score between operators of different ranks needs POT; "
            "install it with `pip install neurodyn[ot]`"
        ) from err
    wa, wb = np.full(la.size, 1.0 / la.size), np.full(lb.size, 1.0 / lb.size)
    return float(np.sqrt(max(ot.emd2(wa, wb, cost), 0.0)))


def check_search(n_restarts: Any, max_rounds: Any, max_iter: Any) -> None:
    """One-line ``ValueError`` unless the alignment search's settings are whole numbers in range."""
    check_setting("n_restarts", n_restarts, 0, integer=True, hint=" (random starts per round)")
    check_setting("max_rounds", max_rounds, 1, integer=True, hint=" (rounds of starts)")
    check_setting("max_iter", max_iter, 1, integer=True, hint=" (ascent iterations per start)")


def prepare_pairs(pairs: list[tuple[np.ndarray, np.ndarray]], n_restarts: int, seed: SeedLike):
    """Zero-pad each pair to a common size, order it canonically and build its starting rotations
    (the random ones depend only on the size and the seed, so every pair of a size gets the same)."""
    seed_int, randoms, out = resolve_seed(seed), {}, []
    for A, B in pairs:
        A, B = pad_pair(A, B)
        n = A.shape[0]
        if canonical_order(A, B):
            A, B = B, A
        An, Bn = A / np.linalg.norm(A), B / np.linalg.norm(B)
        if n not in randoms:
            randoms[n] = random_orthogonal(n, n_restarts, seed_int)
        out.append((A, B, An, Bn, np.concatenate([initial_rotations(An, Bn), randoms[n]])))
    return out


_SAME = 1e-8  # cosines this close count as the same local maximum found again


def align_scores(prepared, score: str, *, max_iter: int, device: Any = "cpu", n_restarts: int = 0,
                 max_rounds: int = 1, seed: SeedLike = 0) -> np.ndarray:
    """Angular or Euclidean DSA scores of prepared pairs of equal size, batched on ``device``.

    The first round uses the prepared starts. A pair whose best value has not been reached by two
    different starts gets another round of ``n_restarts`` fresh random starts, up to ``max_rounds``
    rounds: the number of restarts of each pair is set by this convergence test.
    """
    with one_cpu_thread(device):
        value = _best_alignment(prepared, device, n_restarts, max_rounds, seed, max_iter=max_iter)
    scores = np.empty(len(prepared))
    for i, (A, B, *_rest) in enumerate(prepared):
        if score == "angular":
            scores[i] = angle(value[i])
        else:
            na, nb = np.linalg.norm(A), np.linalg.norm(B)
            scores[i] = np.sqrt(max(na**2 + nb**2 - 2.0 * na * nb * value[i], 0.0))
    return scores


def _best_alignment(prepared, device: Any, n_restarts: int, max_rounds: int, seed: SeedLike, *,
                    max_iter: int) -> np.ndarray:
    """Best cosine ``tr(A^T C B C^T) / (||A|| ||B||)`` per prepared pair, over rounds of starts."""
    to = {"dtype": torch.float64, "device": device}
    An = torch.as_tensor(np.stack([p[2] for p in prepared]), **to)
    Bn = torch.as_tensor(np.stack([p[3] for p in prepared]), **to)
    C0 = torch.as_tensor(np.stack([p[4] for p in prepared]), **to)
    value, _, found = (t.cpu().numpy() for t in maximise_alignment(An, Bn, C0, max_iter=max_iter))
    for r in range(1, max_rounds if n_restarts > 0 else 1):
        active = np.flatnonzero(found < 2)
        if active.size == 0:
            break
        starts = torch.as_tensor(random_orthogonal(An.shape[-1], n_restarts, seed, stream=r), **to)
        v, _, f = (t.cpu().numpy() for t in maximise_alignment(
            An[active], Bn[active], starts.expand(active.size, -1, -1, -1), max_iter=max_iter))
        again, better = np.abs(v - value[active]) <= _SAME, v > value[active] + _SAME
        found[active] = np.where(better, f, found[active] + np.where(again, f, 0))
        value[active] = np.maximum(value[active], v)
    return value


def operator_distance(
    A: Any,
    B: Any,
    *,
    score: Literal["angular", "euclidean", "wasserstein"] = "angular",
    n_restarts: int = 32,
    max_rounds: int = 3,
    max_iter: int = 500,
    seed: SeedLike = 0,
    device: Any = "cpu",
) -> float:
    """Procrustes distance over vector fields between two linear operators (the second stage of DSA).

    Parameters
    ----------
    A, B : array or tensor, shapes (dim_a, dim_a) and (dim_b, dim_b)
        Operators; the smaller is zero-padded. Never modified.
    score : {"angular", "euclidean", "wasserstein"}
        ``angular`` (default): ``arccos(max_C tr(A^T C B C^T) / (||A||_F ||B||_F))`` in radians, in
        ``[0, pi]``, over all orthogonal ``C`` (rotations and reflections). ``euclidean``:
        ``min_C ||A - C B C^T||_F``, in the operators' units. ``wasserstein``: see
        :func:`eigenvalue_wasserstein` (no alignment).
    n_restarts : int >= 0
        Random orthogonal starting points per round (half with det -1). The first round adds the
        identity, a reflection, a guess from the eigenvectors of the symmetric parts and two from the
        real Schur vectors in matched eigenvalue order (exact for orthogonally conjugate operators).
        Starts are pruned by successive halving (20, 40, 80 iterations, the better half of them kept
        each time, at least 4) and the survivors run to convergence.
    max_rounds : int >= 1
        Rounds of starts: a further round of ``n_restarts`` fresh random starts runs only while the best
        value (cosine) has not been reached, to within 1e-8, by two different starts, so easy pairs stop
        after one round and hard ones get more restarts.
    max_iter : int >= 1
        Maximum monotone ascent iterations per start.
    seed : SeedLike
        Seeds the random starting points (same seed, same value).
    device : torch device
        Where the batched optimisation runs (float64).

    Returns
    -------
    float
        Symmetric in ``A`` and ``B`` (the pair is processed in a canonical order), 0 for orthogonally
        conjugate operators.

    Raises
    ------
    ValueError
        For non-square, non-finite or all-zero operators, an unknown ``score``, or ``n_restarts``,
        ``max_rounds`` or ``max_iter`` not an integer >= 0, >= 1, >= 1.
    TypeError
        For complex input; pass real data (e.g. ``.real`` or ``abs()``).

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.similarity import operator_distance
    >>> rng = np.random.default_rng(0)
    >>> A = rng.normal(size=(3, 3))
    >>> Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    >>> round(operator_distance(A, Q @ A @ Q.T, n_restarts=4, seed=0), 4)  # orthogonally conjugate: 0
    0.0
    >>> bool(operator_distance(A, A.T @ A, n_restarts=4, seed=0) > 0.1)
    True
    """
    check_choice(score, SCORES, "score")
    Aa, Ba = _operator(A, "A"), _operator(B, "B")
    if score == "wasserstein":
        if canonical_order(*pad_pair(Aa, Ba)):
            Aa, Ba = Ba, Aa
        return eigenvalue_wasserstein(Aa, Ba)
    check_search(n_restarts, max_rounds, max_iter)
    seed = resolve_seed(seed)  # one draw from a generator, for both rounds of starts
    prepared = prepare_pairs([(Aa, Ba)], int(n_restarts), seed)
    return float(align_scores(prepared, score, max_iter=int(max_iter), device=device,
                              n_restarts=int(n_restarts), max_rounds=int(max_rounds), seed=seed)[0])


def dsa_distance(
    X: Any,
    Y: Any,
    *,
    n_delays: int,
    rank: int | None = None,
    delay_interval: int = 1,
    score: Literal["angular", "euclidean", "wasserstein"] = "angular",
    method: Literal["pcr", "rrr"] = "pcr",
    ridge: float = 1e-8,
    n_restarts: int = 32,
    max_rounds: int = 3,
    max_iter: int = 500,
    seed: SeedLike = 0,
    device: Any = "cpu",
) -> float:
    """Dynamical similarity analysis distance between two sets of trajectories (Ostrow et al., 2023).

    Each system is delay-embedded and a HAVOK/DMD operator of the chosen rank is fitted
    (:func:`~neurodyn.analysis.similarity.fit_havok`); the operators are compared by
    :func:`operator_distance`, which searches all orthogonal matrices (det +1 and -1), unlike the
    reference implementation (``dsa-metric``), which searches rotations only.

    Parameters
    ----------
    X, Y : array or tensor, shapes (trial, time, unit_x) and (trial_y, time_y, unit_y)
        Trajectories (time in steps; a 2-D array is one trial). Trials need not be paired and unit counts
        may differ. Never modified.
    n_delays, delay_interval : int
        Hankel embedding: number of copies and lag between them (time steps).
    rank : int or None
        Rank of the operators; None keeps full rank. Below full rank a ``UserWarning`` is issued:
        invariance to invertible linear maps of the units is lost (orthogonal maps and isotropic scaling
        are still factored out).
    score : {"angular", "euclidean", "wasserstein"}
        See :func:`operator_distance`; ``angular`` (default) is in radians.
    method, ridge
        Operator fit, see :func:`~neurodyn.analysis.similarity.fit_havok`.
    n_restarts, max_rounds, max_iter, seed, device
        Alignment search, see :func:`operator_distance`.

    Returns
    -------
    float
        ``d(X, Y) == d(Y, X)`` exactly; ~0 when ``Y = X Q`` for an orthogonal ``Q`` (at any rank) or an
        invertible ``Q`` (at full rank).

    Raises
    ------
    ValueError
        For bad shapes, NaN/Inf, ``n_delays`` or ``delay_interval`` not an integer >= 1, too many delays
        for the trajectory length or a bad ``rank``; the message names ``X`` or ``Y``.
    TypeError
        For complex trajectories.

    References
    ----------
    Ostrow, Eisen, Kozachkov & Fiete (2023). Beyond geometry: comparing the temporal structure of
    computation in neural circuits with dynamical similarity analysis. NeurIPS 36.

    Examples
    --------
    Two rotations at the same speed are the same dynamics whatever the coordinates; another speed is not:

    >>> import numpy as np
    >>> from neurodyn.analysis.similarity import dsa_distance
    >>> t = np.arange(150) * 0.1
    >>> X = np.c_[np.cos(t), np.sin(t)]
    >>> Y = X @ np.array([[0.0, 1.0], [1.0, 0.0]])  # a reflection of the units
    >>> Z = np.c_[np.cos(3 * t), np.sin(3 * t)]
    >>> round(dsa_distance(X, Y, n_delays=1, n_restarts=4), 4)
    0.0
    >>> bool(dsa_distance(X, Z, n_delays=1, n_restarts=4) > 0.05)
    True
    """
    check_search(n_restarts, max_rounds, max_iter)  # before the fits, which are the slow part
    pair = [as_trajectories(Z, name) for Z, name in ((X, "X"), (Y, "Y"))]  # errors name the array
    for Z, name in zip(pair, ("X", "Y")):
        embedded_length(Z, n_delays, delay_interval, name)
    fits = [fit_havok(Z, n_delays=n_delays, rank=rank, delay_interval=delay_interval, method=method,
                      ridge=ridge) for Z in pair]
    return operator_distance(fits[0].operator, fits[1].operator, score=score, n_restarts=n_restarts,
                             max_rounds=max_rounds, max_iter=max_iter, seed=seed, device=device)


__all__ = ["dsa_distance", "eigenvalue_wasserstein", "operator_distance"]
