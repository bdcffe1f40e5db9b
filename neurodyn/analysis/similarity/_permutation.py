"""Unit-matching distances: best permutation (Hungarian) and soft matching (optimal transport)."""

from __future__ import annotations

import importlib.util
from typing import Any, Literal

import numpy as np

from neurodyn.analysis.similarity._procrustes import KINDS, aligned_distance
from neurodyn.analysis.similarity._validate import (
    ParamsMixin,
    angle,
    as_pair,
    check_choice,
    check_variance,
    fit_centred_pair,
    fitted_centred_pair,
    zero_pad,
)


class PermutationMetric(ParamsMixin):
    """Distance after the best one-to-one matching of units, as a fitted estimator.

    Parameters
    ----------
    kind : {"angular", "euclidean"}
        As in :class:`~neurodyn.analysis.ProcrustesMetric`, with the orthogonal
        group restricted to permutations.
    center : bool
        Subtract the per-unit training mean first.

    Attributes
    ----------
    mean_x_, mean_y_ : ndarray, shapes (unit_x,), (unit_y,)
    perm_ : ndarray of int, shape (n_dim,)
        Column ``perm_[k]`` of the zero-padded ``Y`` is matched to column ``k`` of the zero-padded ``X``,
        ``n_dim = max(unit_x, unit_y)``.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.similarity import PermutationMetric
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(50, 4))
    >>> metric = PermutationMetric(kind="euclidean").fit(X, X[:, [2, 0, 3, 1]])
    >>> metric.perm_.tolist()  # column perm_[k] of Y matches column k of X
    [1, 3, 0, 2]
    >>> round(metric.score(X, X[:, [2, 0, 3, 1]]), 6)
    0.0
    """

    def __init__(self, *, kind: Literal["angular", "euclidean"] = "angular", center: bool = True) -> None:
        self.kind = kind
        self.center = center

    def fit(self, X: Any, Y: Any) -> PermutationMetric:
        """Find the unit matching maximising ``trace(Xc^T Yc P)`` (Hungarian algorithm)."""
        from scipy.optimize import linear_sum_assignment

        check_choice(self.kind, KINDS, "kind")
        Xc, Yc, n_dim = fit_centred_pair(self, X, Y)
        Xp, Yp = zero_pad(Xc, n_dim), zero_pad(Yc, n_dim)
        rows, cols = linear_sum_assignment(Xp.T @ Yp, maximize=True)
        self.perm_ = cols[np.argsort(rows)]
        return self

    def transform(self, X: Any, Y: Any) -> tuple[np.ndarray, np.ndarray]:
        """Centred, zero-padded ``X`` and matched ``Y``, shapes ``(sample, n_dim)`` each."""
        self.check_fitted("perm_")
        Xc, Yc = fitted_centred_pair(self, X, Y)
        n_dim = self.perm_.size
        return zero_pad(Xc, n_dim), zero_pad(Yc, n_dim)[:, self.perm_]

    def score(self, X: Any, Y: Any) -> float:
        """Distance between paired data under the fitted matching (see ``kind``)."""
        return aligned_distance(*self.transform(X, Y), self.kind)


def permutation_distance(
    X: Any, Y: Any, *, kind: Literal["angular", "euclidean"] = "angular", center: bool = True
) -> float:
    """Distance between representations after the best permutation of units.

    ``min_P ||Xc - Yc P||`` over permutation matrices ``P`` (smaller network zero-padded), found exactly
    with the Hungarian algorithm (``scipy.optimize.linear_sum_assignment``) on ``Xc^T Yc``. Since
    permutations are orthogonal, this is the Procrustes distance restricted to permutations
    (Williams et al., 2021) and is a metric for both kinds.

    Parameters
    ----------
    X, Y : array or tensor, shapes (sample, unit_x) and (sample, unit_y)
    kind : {"angular", "euclidean"}
        ``angular``: ``arccos(<Xc, Yc P>_F / (||Xc|| ||Yc||))`` in radians; ``euclidean``:
        ``||Xc - Yc P||_F / sqrt(n_sample)``.
    center : bool
        Subtract the per-unit mean first (default).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        For non-2-D inputs, differing sample counts, NaN/Inf or an unknown ``kind``.
    TypeError
        For complex input; pass real data (e.g. ``.real`` or ``abs()``).

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.similarity import permutation_distance, procrustes_distance
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(50, 4))
    >>> round(permutation_distance(X, X[:, ::-1]), 6)  # relabelled units: distance 0
    0.0
    >>> Q, _ = np.linalg.qr(rng.normal(size=(4, 4)))
    >>> bool(permutation_distance(X, X @ Q) > procrustes_distance(X, X @ Q))  # a rotation is no relabelling
    True
    """
    return PermutationMetric(kind=kind, center=center).fit(X, Y).score(X, Y)


def soft_matching_distance(
    X: Any,
    Y: Any,
    *,
    kind: Literal["euclidean", "angular"] = "euclidean",
    center: bool = True,
    solver: Literal["auto", "pot", "linprog"] = "auto",
) -> float:
    """Soft matching distance between representations with any unit counts (Khosla & Williams, 2023).

    Units are matched by an optimal transport plan ``P`` of shape ``(unit_x, unit_y)`` with uniform
    marginals (rows sum to ``1/unit_x``, columns to ``1/unit_y``); ``x_i``, ``y_j`` are the centred tuning
    curves (columns) of unit ``i`` of ``X`` and unit ``j`` of ``Y``.

    ``euclidean``: ``sqrt(min_P sum_ij P_ij ||x_i - y_j||^2 / n_sample)``, a metric. With equal unit counts
    ``n`` the optimal plan is a permutation divided by ``n``, so this equals
    ``permutation_distance(X, Y, kind="euclidean") / sqrt(n)``.
    ``angular``: ``arccos(max_P sum_ij P_ij <x_i, y_j> / sqrt(mean_i ||x_i||^2 mean_j ||y_j||^2))``; with
    equal unit counts it equals ``permutation_distance(X, Y, kind="angular")``.

    Parameters
    ----------
    X, Y : array or tensor, shapes (sample, unit_x) and (sample, unit_y)
    kind : {"euclidean", "angular"}
    center : bool
        Subtract the per-unit mean first (default).
    solver : {"auto", "pot", "linprog"}
        ``pot`` uses ``ot.emd`` from POT (extra ``neurodyn[ot]``); ``linprog`` solves the same linear
        programme with ``scipy.optimize.linprog`` (HiGHS); ``auto`` picks POT when installed.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        For bad inputs (see :func:`permutation_distance`) or an unknown option.
    ImportError
        If ``solver="pot"`` and POT is not installed.
    TypeError
        For complex input; pass real data (e.g. ``.real`` or ``abs()``).

    References
    ----------
    Khosla & Williams (2023). Soft matching distance: a metric on neural representations that captures
    single-neuron tuning. Proceedings of UniReps, PMLR 243.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.similarity import permutation_distance, soft_matching_distance
    >>> rng = np.random.default_rng(0)
    >>> X, Y = rng.normal(size=(40, 3)), rng.normal(size=(40, 3))
    >>> round(soft_matching_distance(X, X[:, [1, 2, 0]]), 6)
    0.0
    >>> d = soft_matching_distance(X, Y, solver="linprog")  # equal unit counts: permutation / sqrt(n)
    >>> bool(np.isclose(d, permutation_distance(X, Y, kind="euclidean") / np.sqrt(3)))
    True
    >>> soft_matching_distance(X, np.c_[X, X], solver="linprog") >= 0.0  # unit counts may differ
    True
    """
    check_choice(kind, ("euclidean", "angular"), "kind")
    check_choice(solver, ("auto", "pot", "linprog"), "solver")
    Xa, Ya = as_pair(X, Y)
    if center:
        Xa, Ya = Xa - Xa.mean(axis=0), Ya - Ya.mean(axis=0)
    n_samples = Xa.shape[0]
    if kind == "euclidean":
        sq_x, sq_y = np.sum(Xa**2, axis=0), np.sum(Ya**2, axis=0)
        cost = np.maximum(sq_x[:, None] + sq_y[None, :] - 2.0 * Xa.T @ Ya, 0.0) / n_samples
    else:
        cost = -(Xa.T @ Ya)
    plan = transport_plan(cost, solver=solver)
    value = float(np.sum(plan * cost))
    if kind == "euclidean":
        return float(np.sqrt(max(value, 0.0)))
    norm = np.sqrt(np.mean(np.sum(Xa**2, axis=0)) * np.mean(np.sum(Ya**2, axis=0)))
    check_variance(norm, "angular soft matching distance")
    return angle(-value / norm)


def transport_plan(cost: np.ndarray, *, solver: str = "auto") -> np.ndarray:
    """Exact optimal transport plan between uniform marginals for a ``(n_x, n_y)`` cost matrix."""
    n_x, n_y = cost.shape
    a, b = np.full(n_x, 1.0 / n_x), np.full(n_y, 1.0 / n_y)
    have_pot = importlib.util.find_spec("ot") is not None
    if solver == "pot" and not have_pot:
        raise ImportError("solver='pot' needs POT; install it with `pip install neurodyn[ot]`")
    if solver == "pot" or (solver == "auto" and have_pot):
        import ot

        return np.asarray(ot.emd(a, b, np.ascontiguousarray(cost)), dtype=np.float64)
    from scipy.optimize import linprog
    from scipy.sparse import eye, kron, vstack

    a_eq = kron(eye(n_x), np.ones((1, n_y))).tocsr()
    b_eq = kron(np.ones((1, n_x)), eye(n_y)).tocsr()
    res = linprog(
        cost.ravel(), A_eq=vstack([a_eq, b_eq]), b_eq=np.concatenate([a, b]), bounds=(0, None), method="highs"
    )
    if not res.success:
        raise RuntimeError(f"optimal transport linear programme failed: {res.message}")
    return res.x.reshape(n_x, n_y)


__all__ = ["PermutationMetric", "permutation_distance", "soft_matching_distance", "transport_plan"]
