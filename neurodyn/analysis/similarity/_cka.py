"""Centred kernel alignment (Kornblith et al., 2019), biased and debiased (Song et al., 2012)."""

from __future__ import annotations

import math
import numbers
from typing import Any, Literal

import numpy as np

from neurodyn._checks import check_setting
from neurodyn.analysis.similarity._validate import (
    as_matrix,
    as_pair,
    center,
    check_choice,
    check_square_memory,
    check_variance,
    warn_few_samples,
)


def _sq_distances(X: np.ndarray) -> np.ndarray:
    sq = np.sum(X**2, axis=1)
    return np.maximum(sq[:, None] + sq[None, :] - 2.0 * X @ X.T, 0.0)


def rbf_bandwidth(X: Any, *, factor: float = 1.0) -> float:
    """Default RBF bandwidth: ``factor`` times the median Euclidean distance between distinct samples.

    Parameters
    ----------
    X : array or tensor, shape (sample, unit)
    factor : float > 0

    Returns
    -------
    float
        ``sigma = factor * median_{i<j} ||x_i - x_j||`` (the diagonal zeros are excluded).

    Raises
    ------
    ValueError
        If ``factor <= 0``, for bad input, if all samples coincide (the median distance is 0), or if the
        ``(sample, sample)`` distances would not fit in memory.
    TypeError
        For complex input; pass real data (e.g. ``.real`` or ``abs()``).

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.similarity import rbf_bandwidth
    >>> X = np.array([[0.0], [1.0], [3.0]])  # pairwise distances 1, 2, 3
    >>> rbf_bandwidth(X), rbf_bandwidth(X, factor=0.5)
    (2.0, 1.0)
    """
    check_setting("factor", factor, 0, strict=True, hint=" (multiple of the median distance)")
    Xa = as_matrix(X, "X")
    check_square_memory("rbf_bandwidth", Xa.shape[0], 4, "pass sigma explicitly or use fewer samples")
    iu = np.triu_indices(Xa.shape[0], k=1)
    median = float(np.median(np.sqrt(_sq_distances(Xa)[iu])))
    if median == 0.0:
        raise ValueError("median pairwise distance is 0 (samples coincide); pass sigma explicitly")
    return factor * median


def _positive(value: Any) -> bool:
    """Whether ``value`` is a finite real number > 0 (not a bool or a string)."""
    real = isinstance(value, numbers.Real) and not isinstance(value, bool)
    return real and math.isfinite(value) and value > 0


def _gram(Xa: np.ndarray, kernel: str, sigma: float | None) -> np.ndarray:
    if kernel == "linear":
        Xc = center(Xa)
        return Xc @ Xc.T
    return np.exp(-_sq_distances(Xa) / (2.0 * sigma**2))


def _hsic_biased(K: np.ndarray, L: np.ndarray) -> float:
    """``tr(K H L H)`` with ``H`` the centring matrix (the ``1/(n-1)^2`` factor cancels in CKA)."""
    Kc = K - K.mean(axis=0) - K.mean(axis=1)[:, None] + K.mean()
    Lc = L - L.mean(axis=0) - L.mean(axis=1)[:, None] + L.mean()
    return float(np.sum(Kc * Lc))


def _hsic_unbiased(K: np.ndarray, L: np.ndarray) -> float:
    """Unbiased HSIC estimator of Song et al. (2012), up to the factor ``1 / (n (n - 3))``."""
    n = K.shape[0]
    Kt, Lt = K - np.diag(np.diag(K)), L - np.diag(np.diag(L))
    term1 = np.sum(Kt * Lt)
    term2 = Kt.sum() * Lt.sum() / ((n - 1) * (n - 2))
    term3 = 2.0 / (n - 2) * float(Kt.sum(axis=0) @ Lt.sum(axis=1))
    return float(term1 + term2 - term3)


def _hsic_linear_features(X: np.ndarray, Y: np.ndarray, debiased: bool) -> float:
    """Linear-kernel HSIC from the ``(unit, unit)`` cross-products, without ``(sample, sample)`` matrices.

    Equals ``_hsic_biased`` / ``_hsic_unbiased`` of ``K = X X^T``, ``L = Y Y^T`` for centred ``X``, ``Y``;
    costs ``O(n_sample unit_x unit_y)`` instead of ``O(n_sample^2 (unit_x + unit_y))``.
    """
    cross = np.sum((X.T @ Y) ** 2)
    if not debiased:
        return float(cross)
    n = X.shape[0]
    kd, ld = np.sum(X**2, axis=1), np.sum(Y**2, axis=1)
    sx, sy = X.sum(axis=0), Y.sum(axis=0)
    k1, l1 = X @ sx - kd, Y @ sy - ld  # row sums of K and L with zeroed diagonals
    term1 = cross - kd @ ld
    term2 = (sx @ sx - kd.sum()) * (sy @ sy - ld.sum()) / ((n - 1) * (n - 2))
    term3 = 2.0 / (n - 2) * float(k1 @ l1)
    return float(term1 + term2 - term3)


def cka(
    X: Any,
    Y: Any,
    *,
    kernel: Literal["linear", "rbf"] = "linear",
    debiased: bool = False,
    sigma: float | tuple[float, float] | None = None,
    sigma_factor: float = 1.0,
) -> float:
    """Centred kernel alignment between paired representations (Kornblith et al., 2019).

    ``CKA = HSIC(K, L) / sqrt(HSIC(K, K) HSIC(L, L))`` for the ``(sample, sample)`` Gram matrices ``K`` of
    ``X`` and ``L`` of ``Y``. Linear CKA equals ``||Yc^T Xc||_F^2 / (||Xc^T Xc||_F ||Yc^T Yc||_F)`` and is
    invariant to rotations, isotropic scaling and shifts.

    Parameters
    ----------
    X, Y : array or tensor, shapes (sample, unit_x) and (sample, unit_y)
        Paired responses; float64 copies are used, inputs are never modified.
    kernel : {"linear", "rbf"}
        ``linear``: ``K = Xc Xc^T``. ``rbf``: ``K_ij = exp(-||x_i - x_j||^2 / (2 sigma_X^2))``.
    debiased : bool
        False: the biased (plug-in) HSIC ``tr(K H L H)``; it tends to 1 for unrelated representations
        when samples are few relative to units, so a ``UserWarning`` is issued when
        ``n_sample <= max(unit_x, unit_y)``. True: the unbiased HSIC estimator of Song et al. (2012), as
        used for debiased CKA by Nguyen, Raghu & Kornblith (2021); needs ``n_sample >= 4`` and can be
        slightly negative.
    sigma : float or (float, float) or None
        RBF bandwidths (same units as the data) for ``X`` and ``Y``; a single float is used for both.
        None (default): ``sigma_factor * median pairwise distance`` of each network separately, see
        :func:`rbf_bandwidth`, which returns the value used so it can be recorded.
    sigma_factor : float
        Multiplier of the median distance when ``sigma`` is None (default 1.0).

    Returns
    -------
    float
        In ``[0, 1]`` for the biased estimator.

    Raises
    ------
    ValueError
        For bad inputs, unknown ``kernel``, non-positive bandwidths, a ``sigma`` that is not one value
        or a pair, ``sigma`` given with ``kernel="linear"``, fewer than 4 samples when debiased, or
        ``(sample, sample)`` Gram matrices (RBF, or at most as many samples as units) too large for memory.
    TypeError
        For complex input; pass real data (e.g. ``.real`` or ``abs()``).

    References
    ----------
    Kornblith, Norouzi, Lee & Hinton (2019). Similarity of neural network representations revisited. ICML.
    Song, Smola, Gretton, Bedo & Borgwardt (2012). Feature selection via dependence maximization. JMLR 13.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.similarity import cka
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(100, 5))
    >>> Q, _ = np.linalg.qr(rng.normal(size=(5, 5)))
    >>> round(cka(X, 3.0 * X @ Q + 1.0), 6)  # invariant to rotation, isotropic scaling and shifts
    1.0
    >>> bool(cka(X, rng.normal(size=(100, 5)), debiased=True) < 0.1)  # unrelated
    True
    >>> round(cka(X, X, kernel="rbf"), 6)
    1.0
    """
    check_choice(kernel, ("linear", "rbf"), "kernel")
    Xa, Ya = as_pair(X, Y, min_rows=4 if debiased else 2)
    if not debiased:
        warn_few_samples(Xa.shape[0], max(Xa.shape[1], Ya.shape[1]), "biased CKA")
    sig_x = sig_y = None
    if kernel == "linear" and sigma is not None:
        raise ValueError("sigma is the RBF bandwidth; it has no effect with kernel='linear'")
    features = kernel == "linear" and Xa.shape[0] > max(Xa.shape[1], Ya.shape[1])
    if not features:  # (sample, sample) Gram matrices and their centred copies
        check_square_memory("cka", Xa.shape[0], 6, "use fewer samples (or the linear kernel with more "
                            "samples than units, which needs no (sample, sample) matrix)")
    if kernel == "rbf":
        if sigma is None:
            check_setting("sigma_factor", sigma_factor, 0, strict=True,
                          hint=" (multiple of the median distance)")
            sig_x, sig_y = rbf_bandwidth(Xa, factor=sigma_factor), rbf_bandwidth(Ya, factor=sigma_factor)
        else:
            sig = (sigma, sigma) if np.isscalar(sigma) else tuple(np.ravel(sigma))
            if len(sig) != 2:
                raise ValueError(f"sigma must be one bandwidth or a pair (sigma_X, sigma_Y); got {sigma!r}")
            sig_x, sig_y = sig
        if not all(_positive(s) for s in (sig_x, sig_y)):
            raise ValueError(f"RBF bandwidths must be finite numbers > 0; got {sig_x!r}, {sig_y!r}")
    if features:
        Xc, Yc = center(Xa), center(Ya)
        hxy, hxx, hyy = (_hsic_linear_features(A, B, debiased) for A, B in ((Xc, Yc), (Xc, Xc), (Yc, Yc)))
    else:
        K, L = _gram(Xa, kernel, sig_x), _gram(Ya, kernel, sig_y)
        hsic = _hsic_unbiased if debiased else _hsic_biased
        hxy, hxx, hyy = hsic(K, L), hsic(K, K), hsic(L, L)
    check_variance(hxx * hyy, "CKA")
    return float(hxy / np.sqrt(hxx * hyy))


__all__ = ["cka", "rbf_bandwidth"]
