"""Generalised shape metrics: Procrustes distances with partial whitening (Williams et al., 2021)."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from neurodyn._checks import check_setting
from neurodyn.analysis.similarity._validate import (
    ParamsMixin,
    angle,
    check_choice,
    check_variance,
    fit_centred_pair,
    fitted_centred_pair,
    warn_forced_correlations,
    zero_pad,
)

KINDS = ("angular", "euclidean")
_EIG_RTOL = 1e-10
_FIX = "use at least {n} samples, reduce dimensions first, or partial whitening alpha > 0"


def whitened_rank(Xc: np.ndarray) -> int:
    """Rank of the fully whitened data: covariance eigenvalues above ``_EIG_RTOL`` times the largest."""
    s = np.linalg.svd(Xc, compute_uv=False)
    return int(np.sum(s**2 > _EIG_RTOL * max(s.max(initial=0.0) ** 2, np.finfo(float).tiny)))


def warn_degenerate_whitening(n_dims: int, rank_x: int, rank_y: int, alpha: float) -> None:
    """At ``alpha = 0`` ``cos theta = sum_i rho_i / sqrt(rank_x rank_y)`` (canonical correlations
    ``rho_i``): warn where the ranks force some ``rho_i`` to 1 (then, at ``max rank = n_dims``, the
    distance is ``arccos(sqrt(min rank / max rank))`` for any data). ``alpha > 0`` is never degenerate."""
    if alpha == 0:
        warn_forced_correlations(n_dims, rank_x, rank_y, "Procrustes with alpha=0 (CCA)", _FIX)


def check_alpha(alpha: Any) -> None:
    """One-line ``ValueError`` unless the partial-whitening ``alpha`` is a finite number in ``[0, 1]``."""
    check_setting("alpha", alpha, 0, high=1, hint=" (1 = Procrustes, 0 = CCA)")


def partial_whitening(Xc: np.ndarray, alpha: float) -> np.ndarray:
    """Matrix ``Z`` with ``Xc @ Z`` partially whitened: ``Z = alpha I + (1 - alpha) C^{-1/2}``.

    Parameters
    ----------
    Xc : ndarray, shape (sample, unit)
        Column-centred data; ``C = Xc.T @ Xc / n_sample`` is its covariance.
    alpha : float in [0, 1]
        1 leaves the data unchanged (Procrustes), 0 whitens fully (CCA-like). Directions whose
        covariance eigenvalue is below ``1e-10 * max eigenvalue`` are treated as null (pseudo-inverse).

    Returns
    -------
    ndarray, shape (unit, unit)

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.similarity import partial_whitening
    >>> rng = np.random.default_rng(0)
    >>> Xc = rng.normal(size=(500, 2)) * [1.0, 10.0]
    >>> Xc = Xc - Xc.mean(axis=0)
    >>> Z = partial_whitening(Xc, 0.0)  # full whitening: identity covariance
    >>> np.round((Xc @ Z).T @ (Xc @ Z) / 500, 6).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    >>> np.allclose(partial_whitening(Xc, 1.0), np.eye(2))  # alpha = 1 leaves the data unchanged
    True
    """
    n_units = Xc.shape[1]
    if alpha >= 1.0:
        return np.eye(n_units)
    lam, V = np.linalg.eigh(Xc.T @ Xc / Xc.shape[0])
    keep = lam > _EIG_RTOL * max(lam.max(), np.finfo(float).tiny)
    inv_sqrt = np.zeros_like(lam)
    inv_sqrt[keep] = lam[keep] ** -0.5
    return (V * (alpha + (1.0 - alpha) * inv_sqrt)) @ V.T


def aligned_distance(A: np.ndarray, B: np.ndarray, kind: str) -> float:
    """Distance between two aligned ``(sample, dim)`` matrices.

    ``angular``: ``arccos(<A, B>_F / (||A||_F ||B||_F))`` in radians, in ``[0, pi]``.
    ``euclidean``: ``||A - B||_F / sqrt(n_sample)`` (root mean square over samples).
    """
    if kind == "angular":
        norm = np.linalg.norm(A) * np.linalg.norm(B)
        check_variance(norm, "angular distance")
        return angle(np.sum(A * B) / norm)
    return float(np.linalg.norm(A - B) / np.sqrt(A.shape[0]))


class ProcrustesMetric(ParamsMixin):
    """Generalised shape metric between paired representations, as a fitted estimator.

    ``fit`` learns per-network centring, partial whitening and the orthogonal alignment on training
    data; ``score`` evaluates the distance of (held-out) data in the aligned space.

    Parameters
    ----------
    kind : {"angular", "euclidean"}
        ``angular``: arccos of the normalised Frobenius inner product of the aligned data, in radians
        (equals arccos of the normalised nuclear norm ``||Zx^T Zy||_* / (||Zx|| ||Zy||)`` on the fitting
        data). ``euclidean``: ``min_Q ||Zx - Zy Q||_F / sqrt(n_sample)``.
    alpha : float in [0, 1]
        Partial-whitening parameter (see :func:`partial_whitening`); 1 is plain Procrustes.
    center : bool
        Subtract the per-unit training mean (the metric is then invariant to shifts).

    Attributes
    ----------
    mean_x_, mean_y_ : ndarray, shapes (unit_x,), (unit_y,)
    map_x_, map_y_ : ndarray, shapes (unit_x, n_dim), (unit_y, n_dim)
        Whitening, zero-padding to ``n_dim = max(unit_x, unit_y)`` and rotation in one matrix each.

    References
    ----------
    Williams, Kunz, Kornblith & Linderman (2021). Generalized shape metrics on neural representations.
    NeurIPS 34.

    Examples
    --------
    Fit the alignment on training samples, score held-out ones:

    >>> import numpy as np
    >>> from neurodyn.analysis.similarity import ProcrustesMetric
    >>> rng = np.random.default_rng(0)
    >>> Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    >>> X = rng.normal(size=(100, 3))
    >>> metric = ProcrustesMetric(kind="euclidean").fit(X[:50], X[:50] @ Q)
    >>> metric.map_x_.shape, round(metric.score(X[50:], X[50:] @ Q), 6)
    ((3, 3), 0.0)
    """

    def __init__(
        self, *, kind: Literal["angular", "euclidean"] = "angular", alpha: float = 1.0, center: bool = True
    ) -> None:
        self.kind = kind
        self.alpha = alpha
        self.center = center

    def fit(self, X: Any, Y: Any) -> ProcrustesMetric:
        """Fit the alignment on paired ``(sample, unit_x)`` / ``(sample, unit_y)`` data."""
        check_choice(self.kind, KINDS, "kind")
        check_alpha(self.alpha)
        Xc, Yc, n_dim = fit_centred_pair(self, X, Y)
        if self.alpha == 0:
            warn_degenerate_whitening(Xc.shape[0] - bool(self.center), whitened_rank(Xc), whitened_rank(Yc),
                                      self.alpha)
        Zx = zero_pad(partial_whitening(Xc, self.alpha), n_dim)
        Zy = zero_pad(partial_whitening(Yc, self.alpha), n_dim)
        U, _, Vt = np.linalg.svd((Xc @ Zx).T @ (Yc @ Zy))
        self.map_x_ = Zx @ U
        self.map_y_ = Zy @ Vt.T
        return self

    def transform(self, X: Any, Y: Any) -> tuple[np.ndarray, np.ndarray]:
        """Map paired data into the common aligned space, shapes ``(sample, n_dim)`` each."""
        self.check_fitted("map_x_")
        Xc, Yc = fitted_centred_pair(self, X, Y)
        return Xc @ self.map_x_, Yc @ self.map_y_

    def score(self, X: Any, Y: Any) -> float:
        """Distance between paired data under the fitted alignment (see ``kind``)."""
        return aligned_distance(*self.transform(X, Y), self.kind)


def procrustes_distance(
    X: Any,
    Y: Any,
    *,
    kind: Literal["angular", "euclidean"] = "angular",
    alpha: float = 1.0,
    center: bool = True,
) -> float:
    """Generalised shape distance between paired representations (Williams et al., 2021).

    Each network is centred and partially whitened, ``Zx = (X - mean) (alpha I + (1 - alpha) Cx^{-1/2})``
    with ``Cx`` the ``(unit, unit)`` covariance (divided by ``n_sample``), zero-padded to the larger unit
    count and optimally rotated onto the other.

    Parameters
    ----------
    X, Y : array or tensor, shapes (sample, unit_x) and (sample, unit_y)
        Paired responses (same samples in the same order); converted to float64 NumPy, never modified.
    kind : {"angular", "euclidean"}
        ``angular`` (default): ``arccos(||Zx^T Zy||_* / (||Zx||_F ||Zy||_F))`` in radians, in ``[0, pi/2]``;
        invariant to rotations, shifts and (for ``alpha`` 0 or 1) isotropic scaling.
        ``euclidean``: ``min_Q ||Zx - Zy Q||_F / sqrt(n_sample)`` over orthogonal ``Q`` (root mean square over
        samples, in the data's units; netrep's value is this times ``sqrt(n_sample)``). Not scale invariant.
    alpha : float in [0, 1]
        Partial-whitening parameter: 1 (default) is plain Procrustes, 0 is CCA-like (invariant to
        invertible linear maps). Both kinds are metrics for every ``alpha``. At ``alpha = 0`` the angular
        distance is ``arccos(sum_i rho_i / sqrt(r_x r_y))`` (canonical correlations ``rho_i``, ranks
        ``r``) and inherits CCA's degenerate regime: a ``UserWarning`` when ``r_x + r_y > n_sample - 1``
        (``n_sample`` without centring); at ``max(r_x, r_y) = n_sample - 1`` the distance is
        ``arccos(sqrt(min r / max r))`` (0 for equal ranks) for any data. ``alpha > 0`` keeps a share of
        the unwhitened data and has no such regime.
    center : bool
        Subtract the per-unit mean first (default). Without it the distance is not shift invariant.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        For non-2-D inputs, differing sample counts, NaN/Inf, unknown ``kind`` or ``alpha`` outside [0, 1].
    TypeError
        For complex input; pass real data (e.g. ``.real`` or ``abs()``).

    See Also
    --------
    ProcrustesMetric : the same distance as an estimator, to fit on training and score on test data.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.similarity import procrustes_distance
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(100, 4))
    >>> Q, _ = np.linalg.qr(rng.normal(size=(4, 4)))
    >>> round(procrustes_distance(X, 2.0 * X @ Q + 1.0), 6)  # angular: rotation, scale and shift removed
    0.0
    >>> round(procrustes_distance(X, X @ Q, kind="euclidean"), 6)
    0.0
    >>> bool(procrustes_distance(X, rng.normal(size=(100, 4))) > 1.0)  # radians, at most pi / 2
    True
    """
    return ProcrustesMetric(kind=kind, alpha=alpha, center=center).fit(X, Y).score(X, Y)


__all__ = ["ProcrustesMetric", "partial_whitening", "procrustes_distance"]
