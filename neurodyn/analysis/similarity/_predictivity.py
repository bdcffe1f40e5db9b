"""Cross-validated linear (ridge) predictivity between representations."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from neurodyn._checks import check_setting
from neurodyn._seed import SeedLike, resolve_seed
from neurodyn.analysis.similarity._validate import (
    ParamsMixin,
    as_matrix,
    as_pair,
    check_choice,
    check_variance,
)

_CONSTANT_TARGET = "linear predictivity (R^2 of a constant target)"


class LinearPredictivity(ParamsMixin):
    """Ridge regression from a source representation to a target representation (an estimator).

    Parameters
    ----------
    alpha : float
        Ridge penalty on the squared weights (``sklearn.linear_model.Ridge``), in the squared units of
        the target; an intercept is fitted and not penalised.

    Attributes
    ----------
    coef_ : ndarray, shape (unit_target, unit_source)
    intercept_ : ndarray, shape (unit_target,)

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.similarity import LinearPredictivity
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(100, 3))
    >>> Y = X @ np.array([[1.0], [2.0], [0.0]]) + 5.0
    >>> fit = LinearPredictivity(alpha=1e-6).fit(X, Y)
    >>> np.round(fit.coef_, 3).tolist(), np.round(fit.intercept_, 3).tolist()  # (unit_target, unit_source)
    ([[1.0, 2.0, 0.0]], [5.0])
    >>> round(fit.score(X, Y), 6)
    1.0
    """

    def __init__(self, *, alpha: float = 1.0) -> None:
        self.alpha = alpha

    def fit(self, X: Any, Y: Any) -> LinearPredictivity:
        """Fit the map from source ``X (sample, unit_source)`` to target ``Y (sample, unit_target)``."""
        from sklearn.linear_model import Ridge

        check_setting("alpha", self.alpha, 0, hint=" (ridge penalty on the squared weights)")
        Xa, Ya = as_pair(X, Y)
        model = Ridge(alpha=self.alpha, fit_intercept=True).fit(Xa, Ya)
        # a one-unit target gives 1-D coef_ in recent scikit-learn; keep (unit_target, unit_source)
        self.coef_ = np.reshape(model.coef_, (Ya.shape[1], Xa.shape[1]))
        self.intercept_ = np.reshape(model.intercept_, (Ya.shape[1],))
        return self

    def predict(self, X: Any) -> np.ndarray:
        """Predicted target, shape ``(sample, unit_target)``."""
        self.check_fitted("coef_")
        Xa = as_matrix(X, "X", min_rows=1)
        if Xa.shape[1] != self.coef_.shape[1]:
            raise ValueError(f"X has {Xa.shape[1]} units; the map was fitted on {self.coef_.shape[1]}")
        return Xa @ self.coef_.T + self.intercept_

    def score(self, X: Any, Y: Any) -> float:
        """Variance-weighted ``R^2 = 1 - sum SS_res / sum SS_tot`` of the prediction of ``Y`` (all units)."""
        Xa, Ya = as_pair(X, Y)
        resid = Ya - self.predict(Xa)
        check_variance(float(np.sum((Ya - Ya.mean(axis=0)) ** 2)), _CONSTANT_TARGET)
        return float(1.0 - np.sum(resid**2) / np.sum((Ya - Ya.mean(axis=0)) ** 2))


@dataclass(frozen=True)
class PredictivityResult:
    """Cross-validated predictivity of one representation from another.

    Attributes
    ----------
    r2 : float
        Variance-weighted out-of-fold ``R^2`` (mean of both directions when ``direction="both"``).
    r2_x_to_y, r2_y_to_x : float
        ``R^2`` of predicting ``Y`` from ``X`` and ``X`` from ``Y`` (NaN when not computed).
    r_y, r_x : ndarray, shapes (unit_y,), (unit_x,)
        Per-unit Pearson correlation between out-of-fold predictions and data of the target units
        (NaN for constant units or when that direction was not computed).
    r2_y, r2_x : ndarray, shapes (unit_y,), (unit_x,)
        Per-unit out-of-fold ``R^2``.
    direction, alpha, cv, seed
        The conventions used.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.similarity import linear_predictivity
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 4))
    >>> result = linear_predictivity(X, X[:, :2], alpha=1e-3, direction="both")
    >>> round(result.r2_x_to_y, 3), bool(result.r2_y_to_x < 0.7)  # X predicts its own units, not the reverse
    (1.0, True)
    >>> result.r_y.shape, result.r_x.shape
    ((2,), (4,))
    >>> dict(result.to_xarray().sizes)
    {'unit_y': 2, 'unit_x': 4}
    """

    r2: float
    r2_x_to_y: float
    r2_y_to_x: float
    r_y: np.ndarray = field(repr=False)
    r_x: np.ndarray = field(repr=False)
    r2_y: np.ndarray = field(repr=False)
    r2_x: np.ndarray = field(repr=False)
    direction: str
    alpha: float
    cv: int
    seed: int

    def to_xarray(self):
        """``xarray.Dataset`` with per-unit variables on dims ``unit_x`` / ``unit_y`` and scalars as attrs."""
        import xarray as xr

        return xr.Dataset(
            {
                "r_y": ("unit_y", self.r_y),
                "r2_y": ("unit_y", self.r2_y),
                "r_x": ("unit_x", self.r_x),
                "r2_x": ("unit_x", self.r2_x),
            },
            coords={"unit_y": np.arange(self.r_y.size), "unit_x": np.arange(self.r_x.size)},
            attrs={
                "r2": self.r2,
                "r2_x_to_y": self.r2_x_to_y,
                "r2_y_to_x": self.r2_y_to_x,
                "direction": self.direction,
                "alpha": self.alpha,
                "cv": self.cv,
                "seed": self.seed,
                "measure": "linear_predictivity (ridge, K-fold)",
            },
        )


def _out_of_fold(
    source: np.ndarray, target: np.ndarray, alpha: float, folds
) -> tuple[float, np.ndarray, np.ndarray]:
    pred = np.empty_like(target)
    for train, test in folds:
        pred[test] = LinearPredictivity(alpha=alpha).fit(source[train], target[train]).predict(source[test])
    resid, dev = target - pred, target - target.mean(axis=0)
    ss_tot = np.sum(dev**2, axis=0)
    check_variance(float(np.sum(ss_tot)), _CONSTANT_TARGET)
    with np.errstate(invalid="ignore", divide="ignore"):
        r2_unit = 1.0 - np.sum(resid**2, axis=0) / ss_tot
        pdev = pred - pred.mean(axis=0)
        r_unit = np.sum(pdev * dev, axis=0) / np.sqrt(np.sum(pdev**2, axis=0) * ss_tot)
    return float(1.0 - np.sum(resid**2) / np.sum(ss_tot)), r2_unit, r_unit


def linear_predictivity(
    X: Any,
    Y: Any,
    *,
    alpha: float = 1.0,
    cv: int = 5,
    seed: SeedLike = 0,
    direction: Literal["x_to_y", "y_to_x", "both"] = "x_to_y",
) -> PredictivityResult:
    """Cross-validated ridge predictivity (the "neural predictivity" of Yamins et al., 2014).

    Samples are split into ``cv`` shuffled folds (``sklearn.model_selection.KFold``); for each fold a
    :class:`LinearPredictivity` map is fitted on the other folds and predicts the held-out samples. Scores
    are computed once on the pooled out-of-fold predictions. Not symmetric: use ``direction="both"``.

    Parameters
    ----------
    X, Y : array or tensor, shapes (sample, unit_x) and (sample, unit_y)
        Paired responses; never modified.
    alpha : float
        Ridge penalty (see :class:`LinearPredictivity`).
    cv : int
        Number of folds, ``2 <= cv <= n_sample``.
    seed : SeedLike
        Seeds the fold shuffling; recorded (as an int) in the result. Same seed, same result.
    direction : {"x_to_y", "y_to_x", "both"}

    Returns
    -------
    PredictivityResult

    Raises
    ------
    ValueError
        For bad inputs, ``cv`` not an integer in ``[2, n_sample]``, ``alpha`` negative or not finite, an
        unknown ``direction``, or a predicted representation that is constant across samples (``R^2``
        undefined).
    TypeError
        For complex ``X`` or ``Y``.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.similarity import linear_predictivity
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 5))
    >>> Y = X @ rng.normal(size=(5, 3)) + 0.1 * rng.normal(size=(80, 3))
    >>> result = linear_predictivity(X, Y, alpha=1e-2, cv=4, seed=0)
    >>> bool(result.r2 > 0.95), result.r2_y.shape, result.seed
    (True, (3,), 0)
    >>> linear_predictivity(X, Y, alpha=1e-2, cv=4, seed=0).r2 == result.r2  # same seed, same folds
    True
    """
    from sklearn.model_selection import KFold

    check_choice(direction, ("x_to_y", "y_to_x", "both"), "direction")
    check_setting("alpha", alpha, 0, hint=" (ridge penalty on the squared weights)")
    Xa, Ya = as_pair(X, Y)
    check_setting("cv", cv, 2, high=Xa.shape[0], integer=True, hint=" (folds, at most n_sample)")
    seed_int = resolve_seed(seed)
    folds = list(KFold(n_splits=int(cv), shuffle=True, random_state=seed_int % 2**32).split(Xa))
    nan_x, nan_y = np.full(Xa.shape[1], np.nan), np.full(Ya.shape[1], np.nan)
    xy = _out_of_fold(Xa, Ya, alpha, folds) if direction != "y_to_x" else (np.nan, nan_y, nan_y)
    yx = _out_of_fold(Ya, Xa, alpha, folds) if direction != "x_to_y" else (np.nan, nan_x, nan_x)
    r2 = {"x_to_y": xy[0], "y_to_x": yx[0], "both": (xy[0] + yx[0]) / 2}[direction]
    return PredictivityResult(
        r2=float(r2),
        r2_x_to_y=xy[0],
        r2_y_to_x=yx[0],
        r_y=xy[2],
        r_x=yx[2],
        r2_y=xy[1],
        r2_x=yx[1],
        direction=direction,
        alpha=float(alpha),
        cv=int(cv),
        seed=seed_int,
    )


__all__ = ["LinearPredictivity", "PredictivityResult", "linear_predictivity"]
