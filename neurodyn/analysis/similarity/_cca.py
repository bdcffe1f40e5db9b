"""Canonical correlation measures: mean CCA, SVCCA (Raghu et al., 2017) and PWCCA (Morcos et al., 2018)."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from neurodyn.analysis.similarity._validate import (
    as_pair,
    center,
    check_choice,
    check_variance,
    warn_forced_correlations,
)

_RANK_RTOL = 1e-10
_FIX = "use at least {n} samples or reduce dimensions first (e.g. svcca with fewer components)"


def _orthonormal_basis(Xc: np.ndarray) -> np.ndarray:
    """Orthonormal basis ``(sample, rank)`` of the column space of centred data (numerical rank)."""
    U, s, _ = np.linalg.svd(Xc, full_matrices=False)
    return U[:, s > _RANK_RTOL * max(s.max(initial=0.0), np.finfo(float).tiny)]


def _cca(Xc: np.ndarray, Yc: np.ndarray, measure: str = "CCA") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Canonical correlations (descending) and canonical variates ``(sample, n_cc)`` of both sides of
    centred data; warns where the ranks force correlations to 1 (:func:`warn_forced_correlations`)."""
    Ux, Uy = _orthonormal_basis(Xc), _orthonormal_basis(Yc)
    check_variance(min(Ux.shape[1], Uy.shape[1]), measure)
    warn_forced_correlations(Xc.shape[0] - 1, Ux.shape[1], Uy.shape[1], measure, _FIX)
    A, rho, Bt = np.linalg.svd(Ux.T @ Uy, full_matrices=False)
    return np.clip(rho, 0.0, 1.0), Ux @ A, Uy @ Bt.T


def canonical_correlations(X: Any, Y: Any) -> np.ndarray:
    """Canonical correlations between paired representations, in descending order.

    Parameters
    ----------
    X, Y : array or tensor, shapes (sample, unit_x) and (sample, unit_y)
        Paired responses; centred per unit internally (float64), never modified.

    Returns
    -------
    ndarray, shape (n_cc,)
        ``n_cc = min(rank(Xc), rank(Yc))`` (numerical ranks); values in ``[0, 1]``.

    Raises
    ------
    ValueError
        For non-2-D inputs, differing sample counts or NaN/Inf.
    TypeError
        For complex input; pass real data (e.g. ``.real`` or ``abs()``).

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.similarity import canonical_correlations
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(100, 3))
    >>> Y = np.c_[X[:, :2] @ rng.normal(size=(2, 2)), rng.normal(size=100)]  # shares 2 directions with X
    >>> rho = canonical_correlations(X, Y)
    >>> rho.shape, np.round(rho[:2], 6).tolist(), bool(rho[2] < 0.5)
    ((3,), [1.0, 1.0], True)
    """
    Xa, Ya = as_pair(X, Y)
    return _cca(center(Xa), center(Ya))[0]


def cca_similarity(X: Any, Y: Any, *, kind: Literal["mean_rho", "mean_rho2"] = "mean_rho") -> float:
    """Mean canonical correlation between paired representations.

    Invariant to invertible linear maps and shifts of either representation: equals 1 when one is an
    invertible linear transform of the other.

    Degenerate regime: centring leaves an ``(n_sample - 1)``-dimensional sample space, in which column
    spaces of ranks ``r_x`` and ``r_y`` share at least ``r_x + r_y - (n_sample - 1)`` directions, each a
    canonical correlation of exactly 1 whatever the data. A ``UserWarning`` is issued whenever
    ``r_x + r_y > n_sample - 1``; at ``max(r_x, r_y) = n_sample - 1`` (e.g. ``n_sample <= unit + 1``) the
    value is 1 for any data, independent or not.

    Parameters
    ----------
    X, Y : array or tensor, shapes (sample, unit_x) and (sample, unit_y)
    kind : {"mean_rho", "mean_rho2"}
        Mean of the canonical correlations ``rho_i`` or of ``rho_i^2`` (Yanai's GCD / ``R^2_CCA``), over the
        ``min(rank X, rank Y)`` canonical pairs.

    Returns
    -------
    float in [0, 1]

    Raises
    ------
    ValueError
        For bad inputs or an unknown ``kind``.
    TypeError
        For complex input; pass real data (e.g. ``.real`` or ``abs()``).

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.similarity import cca_similarity
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 4))
    >>> round(cca_similarity(X, X @ rng.normal(size=(4, 4)) + 3.0), 6)  # invertible map and shift: 1
    1.0
    >>> bool(cca_similarity(X, rng.normal(size=(200, 4))) < 0.3)  # independent data
    True
    """
    check_choice(kind, ("mean_rho", "mean_rho2"), "kind")
    Xa, Ya = as_pair(X, Y)
    rho = _cca(center(Xa), center(Ya))[0]
    return float(np.mean(rho if kind == "mean_rho" else rho**2))


def _svd_reduce(Xc: np.ndarray, keep: float | int) -> np.ndarray:
    U, s, _ = np.linalg.svd(Xc, full_matrices=False)
    if isinstance(keep, (int, np.integer)) and not isinstance(keep, bool):
        if keep < 1:
            raise ValueError(f"keep as a number of components must be >= 1; got {keep}")
        n_keep = min(int(keep), s.size)
    else:
        if not 0.0 < float(keep) <= 1.0:
            raise ValueError(f"keep as a variance fraction must lie in (0, 1]; got {keep}")
        frac = np.cumsum(s**2) / np.sum(s**2)
        n_keep = int(np.searchsorted(frac, float(keep) - 1e-12) + 1)
    return U[:, :n_keep] * s[:n_keep]


def svcca(X: Any, Y: Any, *, keep: float | int = 0.99) -> float:
    """SVCCA: mean canonical correlation after reducing each representation by SVD (Raghu et al., 2017).

    Parameters
    ----------
    X, Y : array or tensor, shapes (sample, unit_x) and (sample, unit_y)
    keep : float in (0, 1] or int
        A float keeps, for each network separately, the fewest leading principal components whose
        variance fraction reaches ``keep`` (default 0.99); an int keeps that many components.

    Returns
    -------
    float in [0, 1]
        Mean of the canonical correlations between the reduced representations. Warns when the kept
        components ``k_x + k_y`` exceed ``n_sample - 1`` (see :func:`cca_similarity`); reducing the
        dimensions is the cure.

    Raises
    ------
    ValueError
        For bad inputs or an invalid ``keep``.
    TypeError
        For complex input; pass real data (e.g. ``.real`` or ``abs()``).

    References
    ----------
    Raghu, Gilmer, Yosinski & Sohl-Dickstein (2017). SVCCA: Singular vector canonical correlation analysis
    for deep learning dynamics and interpretability. NeurIPS 30.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.similarity import svcca
    >>> rng = np.random.default_rng(0)
    >>> latent = rng.normal(size=(200, 2))
    >>> X = latent @ rng.normal(size=(2, 10)) + 1e-3 * rng.normal(size=(200, 10))  # 10 units, 2 dims
    >>> Y = latent @ rng.normal(size=(2, 8))
    >>> round(svcca(X, Y, keep=2), 3)  # the 2 leading components of each carry the shared signal
    1.0
    """
    Xa, Ya = as_pair(X, Y)
    Xr, Yr = _svd_reduce(center(Xa), keep), _svd_reduce(center(Ya), keep)
    return float(np.mean(_cca(Xr, Yr, "SVCCA")[0]))


def pwcca(X: Any, Y: Any) -> float:
    """Projection-weighted CCA (Morcos, Raghu & Bengio, 2018).

    ``sum_i a_i rho_i / sum_i a_i`` with weights ``a_i = sum_j |<h_i, x_j>|``: ``h_i`` are the unit-norm
    canonical variates and ``x_j`` the centred units of the network with fewer units (``X`` on a tie),
    following the authors' reference implementation (which, unlike this one, does not centre the units
    in the weights).

    Parameters
    ----------
    X, Y : array or tensor, shapes (sample, unit_x) and (sample, unit_y)

    Returns
    -------
    float in [0, 1]
        Warns in the degenerate regime of :func:`cca_similarity` (1 for any data when
        ``n_sample <= unit + 1``).

    Raises
    ------
    ValueError
        For bad inputs.
    TypeError
        For complex input; pass real data (e.g. ``.real`` or ``abs()``).

    References
    ----------
    Morcos, Raghu & Bengio (2018). Insights on representational similarity in neural networks with
    canonical correlation. NeurIPS 31.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.similarity import pwcca
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3))
    >>> round(pwcca(X, X @ rng.normal(size=(3, 5))), 6), bool(pwcca(X, rng.normal(size=(200, 3))) < 0.3)
    (1.0, True)
    """
    Xa, Ya = as_pair(X, Y)
    Xc, Yc = center(Xa), center(Ya)
    rho, Hx, Hy = _cca(Xc, Yc, "PWCCA")
    acts, variates = (Xc, Hx) if Xa.shape[1] <= Ya.shape[1] else (Yc, Hy)
    weights = np.sum(np.abs(variates.T @ acts), axis=1)
    return float(np.sum(weights * rho) / np.sum(weights))


__all__ = ["canonical_correlations", "cca_similarity", "pwcca", "svcca"]
