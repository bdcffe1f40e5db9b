"""Representational dissimilarity matrices (RDMs) for representational similarity analysis."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from neurodyn.analysis.similarity._validate import (
    as_matrix,
    check_choice,
    check_finite,
    check_square_memory,
    to_numpy,
)

METHODS = ("euclidean", "sqeuclidean", "correlation", "mahalanobis", "crossnobis")


def _precision(noise_cov: Any, n_units: int) -> np.ndarray:
    if noise_cov is None:
        return np.eye(n_units)
    cov = to_numpy(noise_cov, "noise_cov")
    if cov.shape != (n_units, n_units):
        raise ValueError(f"noise_cov must have shape (unit, unit) = {(n_units, n_units)}; got {cov.shape}")
    check_finite(cov, "noise_cov")
    message = ("noise_cov must be a symmetric positive-definite (unit, unit) covariance; symmetrise it "
               "((S + S.T) / 2) or shrink a singular one first (e.g. Ledoit-Wolf)")
    if not np.allclose(cov, cov.T, rtol=1e-8, atol=1e-12 * max(np.abs(cov).max(), 1.0)):
        raise ValueError(message)
    try:
        factor = np.linalg.cholesky(cov)
    except np.linalg.LinAlgError as err:
        raise ValueError(message) from err
    if np.diag(factor).min() ** 2 <= 1e-12 * np.diag(cov).max():  # numerically singular
        raise ValueError(message)
    return np.linalg.inv(cov)


def _labels(values: Any, n_rows: int, name: str) -> np.ndarray:
    import pandas as pd

    lab = np.asarray(values)
    if lab.shape != (n_rows,):
        raise ValueError(f"{name} must have one label per row of X, shape ({n_rows},); got {lab.shape}")
    n_missing = int(np.count_nonzero(pd.isna(lab)))
    if n_missing:
        raise ValueError(f"{name} contains {n_missing} missing label(s) (NaN or None); give every row of X "
                         "a label or drop the unlabelled rows")
    return lab


def _condition_means(X: np.ndarray, conditions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    labels = np.unique(conditions)
    return labels, np.stack([X[conditions == c].mean(axis=0) for c in labels])


def _crossnobis(X: np.ndarray, conditions: np.ndarray, runs: np.ndarray, prec: np.ndarray) -> np.ndarray:
    labels, run_ids = np.unique(conditions), np.unique(runs)
    if run_ids.size < 2:
        raise ValueError("crossnobis needs data from at least 2 runs (partitions); got 1")
    per_run = []
    for r in run_ids:
        in_run = runs == r
        missing = [c for c in labels if not np.any(in_run & (conditions == c))]
        if missing:
            raise ValueError(f"run {r!r} has no observations of condition(s) {missing}")
        per_run.append(_condition_means(X[in_run], conditions[in_run])[1])
    means = np.stack(per_run)  # (run, condition, unit)
    summed = means.sum(axis=0)
    G = summed @ prec @ summed.T - np.einsum("acu,uv,adv->cd", means, prec, means, optimize=True)
    n_runs = run_ids.size
    return _gram_to_distance(G + G.T) / (2 * n_runs * (n_runs - 1))


def _gram_to_distance(G: np.ndarray) -> np.ndarray:
    """``G_ii + G_jj - 2 G_ij`` for a symmetric ``(condition, condition)`` inner-product matrix."""
    d = np.diag(G)
    return d[:, None] + d[None, :] - 2.0 * G


def rdm(
    X: Any,
    *,
    method: Literal["euclidean", "sqeuclidean", "correlation", "mahalanobis", "crossnobis"] = "euclidean",
    conditions: Any = None,
    runs: Any = None,
    noise_cov: Any = None,
) -> np.ndarray:
    """Representational dissimilarity matrix between the conditions of a representation.

    Parameters
    ----------
    X : array or tensor, shape (condition, unit), or (observation, unit) with ``conditions``
        Response patterns. Never modified.
    method : {"euclidean", "sqeuclidean", "correlation", "mahalanobis", "crossnobis"}
        ``euclidean``: ``||x_i - x_j||``; ``sqeuclidean``: ``||x_i - x_j||^2``; ``correlation``: one minus
        the Pearson correlation of the two patterns across units; ``mahalanobis``:
        ``(x_i - x_j)^T S^{-1} (x_i - x_j)`` (squared, ``S = noise_cov``); ``crossnobis``: the cross-validated
        Mahalanobis distance ``mean_{a != b} (x_i^a - x_j^a)^T S^{-1} (x_i^b - x_j^b)`` over ordered pairs of
        distinct runs ``a, b`` of the per-run condition means (Walther et al., 2016); unbiased, so it can be
        negative. All are sums over units: rsatoolbox divides the squared measures by the unit count.
    conditions : array of labels, shape (observation,), optional
        Condition of each row of ``X``. Rows with the same label are averaged before the distance
        (required for ``crossnobis``). The output follows ``numpy.unique(conditions)`` order.
    runs : array of labels, shape (observation,), optional
        Run (partition, independent measurement) of each row; required for, and only used by,
        ``crossnobis``. Every run must contain every condition.
    noise_cov : array, shape (unit, unit), optional
        Noise covariance ``S`` for ``mahalanobis`` / ``crossnobis`` (e.g. of residuals), symmetric positive
        definite; identity if None.

    Returns
    -------
    ndarray, shape (condition, condition)
        Symmetric float64 matrix with a zero diagonal.

    Raises
    ------
    ValueError
        For bad shapes, NaN/Inf, an unknown ``method``, missing ``conditions``/``runs`` for ``crossnobis``,
        missing (NaN or None) labels, a ``noise_cov`` that is not symmetric positive definite, ``noise_cov``
        or ``runs`` given to a method that does not use them, a run lacking a condition, or a
        ``(condition, condition)`` matrix too large for memory.
    TypeError
        For complex input; pass real data (e.g. ``.real`` or ``abs()``).

    References
    ----------
    Nili et al. (2014). A toolbox for representational similarity analysis. PLoS Comput Biol 10.
    Walther et al. (2016). Reliability of dissimilarity measures for multi-voxel pattern analysis.
    NeuroImage 137.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.similarity import rdm
    >>> X = np.array([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]])  # (condition, unit)
    >>> rdm(X).tolist()
    [[0.0, 5.0, 1.0], [5.0, 0.0, 4.242640687119285], [1.0, 4.242640687119285, 0.0]]
    >>> R = rdm(np.r_[X, X + 0.1], conditions=[0, 1, 2, 0, 1, 2], method="sqeuclidean")  # condition means
    >>> round(float(R[0, 1]), 6)
    25.0
    """
    check_choice(method, METHODS, "method")
    if noise_cov is not None and method not in ("mahalanobis", "crossnobis"):
        raise ValueError(f"noise_cov is only used by method='mahalanobis' or 'crossnobis', not {method!r}; "
                         "drop it or choose one of those methods")
    if runs is not None and method != "crossnobis":
        raise ValueError(f"runs is only used by method='crossnobis', not {method!r}; drop it or use "
                         "crossnobis")
    Xa = as_matrix(X, "X")
    labels = None if conditions is None else _labels(conditions, Xa.shape[0], "conditions")
    n_cond = Xa.shape[0] if labels is None else np.unique(labels).size
    check_square_memory("rdm", n_cond, 4, "use fewer conditions (average the observations of each condition "
                        "with conditions=)")
    if method == "crossnobis":
        if conditions is None or runs is None:
            raise ValueError("method='crossnobis' needs conditions= and runs= labels for every row of X")
        cond = _labels(conditions, Xa.shape[0], "conditions")
        D = _crossnobis(Xa, cond, _labels(runs, Xa.shape[0], "runs"), _precision(noise_cov, Xa.shape[1]))
    else:
        if conditions is not None:
            Xa = _condition_means(Xa, _labels(conditions, Xa.shape[0], "conditions"))[1]
        if method == "correlation":
            Z = Xa - Xa.mean(axis=1, keepdims=True)
            norm = np.linalg.norm(Z, axis=1)
            if np.any(norm == 0):
                raise ValueError("correlation distance is undefined for a pattern constant across units")
            Z = Z / norm[:, None]
            D = 1.0 - Z @ Z.T
        else:
            prec = _precision(noise_cov if method == "mahalanobis" else None, Xa.shape[1])
            D = np.maximum(_gram_to_distance(Xa @ prec @ Xa.T), 0.0)
            if method == "euclidean":
                D = np.sqrt(D)
    D = (D + D.T) / 2.0
    np.fill_diagonal(D, 0.0)
    return D


__all__ = ["rdm"]
