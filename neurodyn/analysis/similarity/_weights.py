"""Distance between recurrent weight matrices up to a relabelling of units (graph matching)."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from neurodyn._checks import check_setting
from neurodyn.analysis.similarity._align import pad_pair
from neurodyn.analysis.similarity._validate import angle, as_square, check_choice


def _weight_pair(W1: Any, W2: Any) -> tuple[np.ndarray, np.ndarray]:
    """``W1`` and ``W2`` checked as (unit, unit) matrices and zero-padded to one size."""
    what = "(unit, unit) recurrent weight matrix"
    return pad_pair(as_square(W1, "W1", what), as_square(W2, "W2", what))


def _overlap(A: np.ndarray, B: np.ndarray, perm: np.ndarray) -> float:
    """``<A, P B P^T>_F`` where unit ``perm[i]`` of ``B`` is matched to unit ``i`` of ``A``."""
    return float(np.sum(A * B[np.ix_(perm, perm)]))


def _descriptor_matching(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Hungarian matching on permutation-invariant unit descriptors: sorted outgoing and incoming
    weights and the self-connection."""
    from scipy.optimize import linear_sum_assignment

    def features(W: np.ndarray) -> np.ndarray:
        return np.hstack([np.sort(W, axis=1), np.sort(W, axis=0).T, np.diag(W)[:, None]])

    fa, fb = features(A), features(B)
    cost = np.sum(fa**2, axis=1)[:, None] + np.sum(fb**2, axis=1)[None, :] - 2.0 * fa @ fb.T
    return linear_sum_assignment(cost)[1]


def _perm_matrix(perm: np.ndarray) -> np.ndarray:
    """Permutation matrix ``P``, shape (n, n), with ``P[i, perm[i]] = 1``."""
    P = np.zeros((perm.size, perm.size))
    P[np.arange(perm.size), perm] = 1.0
    return P


def _refine(A: np.ndarray, B: np.ndarray, perm: np.ndarray, n_iter: int) -> np.ndarray:
    """Monotone ascent on ``<A, P B P^T>``: re-solve the linear assignment for its gradient
    ``A P B^T + A^T P B`` at the current ``P`` until the overlap stops increasing."""
    from scipy.optimize import linear_sum_assignment

    best = _overlap(A, B, perm)
    for _ in range(n_iter):
        P = _perm_matrix(perm)
        cand = linear_sum_assignment(A @ P @ B.T + A.T @ P @ B, maximize=True)[1]
        value = _overlap(A, B, cand)
        if value <= best + 1e-12 * max(abs(best), 1.0):
            break
        perm, best = cand, value
    return perm


def match_recurrent_units(W1: Any, W2: Any, *, n_iter: int = 20) -> np.ndarray:
    """Relabelling of the units of ``W2`` that best aligns it with ``W1`` (graph matching).

    Maximises ``<W1, P W2 P^T>_F`` (equivalently minimises ``||W1 - P W2 P^T||_F``) over permutations ``P``
    acting on rows and columns together, a quadratic assignment problem, approximately:

    1. Hungarian matching (``scipy.optimize.linear_sum_assignment``) of permutation-invariant unit
       descriptors (sorted outgoing weights, sorted incoming weights, self-connection);
    2. the Fast Approximate QAP algorithm (Vogelstein et al., 2015; ``scipy.optimize.quadratic_assignment``,
       ``method="faq"``) started from that matching;
    3. up to ``n_iter`` monotone refinement iterations of each candidate (Hungarian on the gradient of the
       overlap), keeping the best.

    Exact whenever ``W2`` is a relabelling of ``W1`` with distinct unit descriptors (the generic case).

    Parameters
    ----------
    W1, W2 : array or tensor, shapes (unit_1, unit_1) and (unit_2, unit_2)
        Recurrent weights (``W[i, j]``: from unit ``j`` to unit ``i``); the smaller is zero-padded.
    n_iter : int
        Maximum refinement iterations.

    Returns
    -------
    ndarray of int, shape (max(unit_1, unit_2),)
        ``perm`` such that ``W2p[perm][:, perm]`` is aligned to ``W1p`` (``p``: zero-padded).

    Raises
    ------
    ValueError
        For non-square matrices, NaN/Inf or ``n_iter`` not an integer >= 0.
    TypeError
        For complex matrices.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.similarity import match_recurrent_units
    >>> rng = np.random.default_rng(0)
    >>> W1 = rng.normal(size=(6, 6))
    >>> relabel = np.array([3, 0, 5, 1, 4, 2])
    >>> W2 = W1[relabel][:, relabel]  # the same network, units renamed
    >>> perm = match_recurrent_units(W1, W2)
    >>> bool(np.allclose(W2[perm][:, perm], W1))
    True
    """
    from scipy.optimize import quadratic_assignment

    check_setting("n_iter", n_iter, 0, integer=True, hint=" (refinement iterations; 0: none)")
    A, B = _weight_pair(W1, W2)
    n = A.shape[0]
    if n == 1:
        return np.zeros(1, dtype=int)
    start = _descriptor_matching(A, B)
    # rng is unused with P0 given; a Generator keeps scipy from reading (and warning about) np.random
    faq = quadratic_assignment(A, B, method="faq", options={"maximize": True, "P0": _perm_matrix(start),
                                                            "rng": np.random.default_rng(0)})
    candidates = [_refine(A, B, start, n_iter), _refine(A, B, faq.col_ind, n_iter)]
    return max(candidates, key=lambda perm: _overlap(A, B, perm))


def _symmetric_matching(A: np.ndarray, B: np.ndarray, n_iter: int) -> np.ndarray:
    """The better of matching ``B`` to ``A`` and (inverted) ``A`` to ``B``: the same pair of candidates
    either way round, so the distance does not depend on the order of its arguments."""
    forward = match_recurrent_units(A, B, n_iter=n_iter)
    backward = np.argsort(match_recurrent_units(B, A, n_iter=n_iter))
    return max((forward, backward), key=lambda perm: _overlap(A, B, perm))


def weight_distance(
    W1: Any,
    W2: Any,
    *,
    permutation_invariant: bool = True,
    kind: Literal["angular", "euclidean"] = "angular",
    n_iter: int = 20,
) -> float:
    """Distance between recurrent weight matrices, optionally up to a relabelling of units.

    Parameters
    ----------
    W1, W2 : array or tensor, shapes (unit_1, unit_1) and (unit_2, unit_2)
        Recurrent weight matrices (e.g. ``model.params()`` entries); the smaller is zero-padded (extra
        units without connections). Never modified.
    permutation_invariant : bool
        True (default): minimise over simultaneous row and column permutations of ``W2``, found by
        :func:`match_recurrent_units` in both directions, keeping the better matching (approximate for
        hard instances, so the value is an upper bound of the exact permutation-invariant distance; the
        same whichever matrix comes first). False: compare units as labelled.
    kind : {"angular", "euclidean"}
        ``angular`` (default): ``arccos(<W1, P W2 P^T>_F / (||W1||_F ||W2||_F))`` in radians, in ``[0, pi]``;
        scale free. ``euclidean``: ``||W1 - P W2 P^T||_F / sqrt(n_unit)`` (``n_unit`` the padded size), the
        root mean square over units of the difference of each unit's incoming weights, which stays
        comparable across sizes for the usual ``g / sqrt(n_unit)`` weight scaling. Both give 0 for
        identical (or relabelled) matrices and obey the triangle inequality when the matching is exact.
    n_iter : int
        Maximum refinement iterations of the matching.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        For non-square matrices, NaN/Inf, zero matrices with ``kind="angular"``, an unknown ``kind`` or
        ``n_iter`` not an integer >= 0.
    TypeError
        For complex matrices.

    References
    ----------
    Vogelstein et al. (2015). Fast approximate quadratic programming for graph matching. PLoS ONE 10.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.similarity import weight_distance
    >>> rng = np.random.default_rng(0)
    >>> W1 = rng.normal(size=(5, 5))
    >>> W2 = W1[::-1, ::-1]  # relabelled units
    >>> round(weight_distance(W1, W2), 6), bool(weight_distance(W1, W2, permutation_invariant=False) > 0.5)
    (0.0, True)
    """
    check_choice(kind, ("angular", "euclidean"), "kind")
    check_setting("n_iter", n_iter, 0, integer=True, hint=" (refinement iterations; 0: none)")
    A, B = _weight_pair(W1, W2)
    n = A.shape[0]
    perm = _symmetric_matching(A, B, n_iter) if permutation_invariant else np.arange(n)
    Bp = B[np.ix_(perm, perm)]
    if kind == "euclidean":
        return float(np.linalg.norm(A - Bp) / np.sqrt(n))
    norm = np.linalg.norm(A) * np.linalg.norm(B)
    if norm == 0:
        raise ValueError("angular weight distance is undefined for an all-zero weight matrix")
    return angle(np.sum(A * Bp) / norm)


__all__ = ["match_recurrent_units", "weight_distance"]
