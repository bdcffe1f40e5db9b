"""Comparison of representational dissimilarity matrices (Nili et al., 2014; Diedrichsen et al., 2021)."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from neurodyn.analysis.similarity._validate import check_choice, check_finite, check_square_memory, to_numpy

METHODS = ("pearson", "spearman", "kendall_tau_a", "cosine", "whitened_pearson", "whitened_cosine")


def upper_triangle(R: Any, name: str = "R") -> np.ndarray:
    """Entries above the diagonal of a square RDM, row by row (``scipy.spatial.distance.squareform`` order).

    A 1-D input is taken to be such a vector already and is returned as a float64 copy.

    Raises
    ------
    ValueError
        If ``R`` is neither 1-D nor square 2-D, is not symmetric, or holds NaN/Inf.
    TypeError
        For complex input; pass real data (e.g. ``.real`` or ``abs()``).
    """
    a = to_numpy(R, name)
    check_finite(a, name)
    if a.ndim == 1:
        n = (1 + np.sqrt(1 + 8 * a.size)) / 2
        if a.size < 1 or n != int(n):
            raise ValueError(f"{name} as a vector must have n(n-1)/2 entries; got {a.size}")
        return a
    if a.ndim != 2 or a.shape[0] != a.shape[1] or a.size == 0:
        raise ValueError(
            f"{name} must be a square (condition, condition) RDM or its upper triangle; got shape {a.shape}"
        )
    if not np.allclose(a, a.T, rtol=1e-8, atol=1e-10 * max(np.abs(a).max(), 1.0)):
        raise ValueError(f"{name} is not symmetric; pass a symmetric RDM (e.g. (R + R.T) / 2)")
    return a[np.triu_indices(a.shape[0], k=1)]


def _n_conditions(n_pairs: int) -> int:
    return int(round((1 + np.sqrt(1 + 8 * n_pairs)) / 2))


def _whitening_cov(n_cond: int) -> np.ndarray:
    """Covariance ``V = (C C^T) ∘ (C C^T)`` of RDM-vector estimates under i.i.d. pattern noise.

    ``C`` is the ``(pair, condition)`` contrast matrix with +1 / -1 for the two conditions of each pair
    (Diedrichsen et al., 2021, for independent noise of equal variance in all conditions).
    """
    i, j = np.triu_indices(n_cond, k=1)
    C = np.zeros((i.size, n_cond))
    C[np.arange(i.size), i] = 1.0
    C[np.arange(i.size), j] = -1.0
    xi = C @ C.T
    return xi * xi


def _tie_pairs(a: np.ndarray) -> float:
    """Number of pairs of entries of ``a`` that are tied."""
    counts = np.unique(a, return_counts=True)[1]
    return float(np.sum(counts * (counts - 1) / 2))


def _kendall_tau_a(a: np.ndarray, b: np.ndarray, ties_a: float | None = None,
                   ties_b: float | None = None) -> float:
    """Kendall's tau-a from scipy's tau-b and the tied pairs of each vector (pass them when known)."""
    from scipy.stats import kendalltau

    n0 = a.size * (a.size - 1) / 2
    ties_a = _tie_pairs(a) if ties_a is None else ties_a
    ties_b = _tie_pairs(b) if ties_b is None else ties_b
    if ties_a == n0 or ties_b == n0:
        raise ValueError("RDM comparison is undefined for a constant RDM")
    tau_b = kendalltau(a, b, variant="b").statistic
    return float(tau_b * np.sqrt((n0 - ties_a) * (n0 - ties_b)) / n0)


def _ranks(V: np.ndarray) -> np.ndarray:
    """Ranks (1-based, ties averaged) along each row: one unstable sort, ``scipy.stats.rankdata`` only for
    the rows that hold ties (rankdata's stable sort costs several times more on long RDM vectors)."""
    from scipy.stats import rankdata

    order = np.argsort(V, axis=1)
    tied = np.any(np.diff(np.take_along_axis(V, order, axis=1), axis=1) == 0, axis=1)
    ranks = np.empty_like(V)
    np.put_along_axis(ranks, order, np.broadcast_to(np.arange(1.0, V.shape[1] + 1), V.shape), axis=1)
    if np.any(tied):
        ranks[tied] = rankdata(V[tied], axis=1)
    return ranks


def rdm_features(V: np.ndarray, method: str) -> tuple[np.ndarray, np.ndarray]:
    """Per-RDM vectors ``F``, ``G`` with ``compare_rdms(R_i, R_j) = F_i.G_j / sqrt(F_i.G_i F_j.G_j)``.

    For every method but ``kendall_tau_a``: ranks (``spearman``), mean removal (``pearson``, ``spearman``,
    ``whitened_pearson``) and the whitening solve ``G = V^{-1} F`` are done once per RDM, so many RDMs
    are compared by one matrix product ``F @ G.T``.

    Parameters
    ----------
    V : ndarray, shape (rdm, n_pair)
        Upper triangles of the RDMs (float64).
    method : str
        A :func:`compare_rdms` method other than ``kendall_tau_a``.

    Returns
    -------
    F, G : ndarray, shape (rdm, n_pair)
        ``G`` is ``F`` itself for the unwhitened methods.
    """
    if method == "spearman":
        V = _ranks(V)
    F = V - V.mean(axis=1, keepdims=True) if method in ("pearson", "spearman", "whitened_pearson") else V
    if not method.startswith("whitened"):
        return F, F
    check_square_memory("whitened RDM comparison", V.shape[1], 3, "use fewer conditions or an unwhitened "
                        "method (pearson, spearman, cosine)")
    return F, np.linalg.solve(_whitening_cov(_n_conditions(V.shape[1])), F.T).T


def cosine_matrix(F: np.ndarray, G: np.ndarray, cross: np.ndarray) -> np.ndarray:
    """``cross_ij / sqrt(F_i.G_i F_j.G_j)`` for the ``(rdm, rdm)`` products ``cross = F @ G.T``."""
    norms = np.einsum("kp,kp->k", F, G)
    if np.any(norms <= 0):
        raise ValueError("RDM comparison is undefined for a constant RDM")
    return cross / np.sqrt(norms[:, None] * norms[None, :])


def compare_rdms(
    R1: Any,
    R2: Any,
    *,
    method: Literal[
        "pearson", "spearman", "kendall_tau_a", "cosine", "whitened_pearson", "whitened_cosine"
    ] = "spearman",
) -> float:
    """Similarity of two RDMs over their upper triangles (diagonal excluded).

    Parameters
    ----------
    R1, R2 : array or tensor, shape (condition, condition) or (n_pair,)
        Symmetric RDMs, e.g. from :func:`~neurodyn.analysis.rdm`, or their upper triangles
        in row-major order (``n_pair = n_condition (n_condition - 1) / 2``).
    method : str
        ``pearson``: correlation of the entries. ``spearman`` (default): Pearson correlation of their ranks
        (ties averaged); unchanged by any strictly increasing map of either RDM. ``kendall_tau_a``:
        ``(concordant - discordant) / (n_pair (n_pair - 1) / 2)``, ties counted as neither, recommended for
        models predicting tied dissimilarities (Nili et al., 2014). ``cosine``: uncentred cosine.
        ``whitened_pearson`` / ``whitened_cosine``: ``a^T V^{-1} b / sqrt(a^T V^{-1} a  b^T V^{-1} b)`` with
        ``V`` the covariance of RDM estimates under i.i.d. noise, after subtracting each vector's mean for the
        Pearson version (Diedrichsen et al., 2021; rsatoolbox's ``corr_cov`` / ``cosine_cov``).

    Returns
    -------
    float in [-1, 1]

    Raises
    ------
    ValueError
        For non-symmetric or differently sized RDMs, NaN/Inf, constant RDMs, an unknown ``method``, or a
        whitened method whose ``(pair, pair)`` covariance would not fit in memory.
    TypeError
        For complex input; pass real data (e.g. ``.real`` or ``abs()``).

    References
    ----------
    Nili et al. (2014). A toolbox for representational similarity analysis. PLoS Comput Biol 10.
    Diedrichsen et al. (2021). Comparing representational geometries using whitened unbiased-distance-
    matrix similarity. Neurons, Behavior, Data analysis, and Theory 5(3).

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.similarity import compare_rdms, rdm
    >>> rng = np.random.default_rng(0)
    >>> R = rdm(rng.normal(size=(6, 10)))  # 6 conditions
    >>> compare_rdms(R, R ** 2)  # Spearman: any increasing map of the distances gives 1
    1.0
    >>> round(compare_rdms(R, R, method="kendall_tau_a"), 6)
    1.0
    """
    check_choice(method, METHODS, "method")
    a, b = upper_triangle(R1, "R1"), upper_triangle(R2, "R2")
    if a.size != b.size:
        raise ValueError(f"R1 and R2 compare different numbers of condition pairs: {a.size} vs {b.size}")
    if a.size < 2:
        raise ValueError("RDM comparison needs at least 3 conditions (2 condition pairs)")
    if method == "kendall_tau_a":
        return _kendall_tau_a(a, b)
    F, G = rdm_features(np.stack([a, b]), method)
    return float(cosine_matrix(F, G, F @ G.T)[0, 1])

__all__ = ["compare_rdms", "upper_triangle"]
