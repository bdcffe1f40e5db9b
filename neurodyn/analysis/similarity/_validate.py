"""Input checks and small shared helpers for the representational-similarity measures.

Every measure converts its inputs with :func:`as_matrix` / :func:`as_pair`, which always return new
float64 NumPy arrays, so nothing a caller passes in is ever modified in place. A labelled input (an
``xarray.DataArray``) is put into the layout the measure expects by its dim names (:func:`labelled_order`).
"""

from __future__ import annotations

import inspect
import warnings
from typing import Any

import numpy as np

from neurodyn._checks import float64_copy


class ParamsMixin:
    """``get_params`` / ``set_params`` / ``repr`` from the keyword arguments of ``__init__``, so that the
    estimators work with ``sklearn.base.clone`` and parameter grids without depending on scikit-learn."""

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        names = [p for p in inspect.signature(type(self).__init__).parameters if p != "self"]
        return {name: getattr(self, name) for name in names}

    def set_params(self, **params: Any):
        valid = self.get_params()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(f"{type(self).__name__} has no parameter {name!r}; valid: {sorted(valid)}")
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    def check_fitted(self, attribute: str) -> None:
        """Raise ``RuntimeError`` naming the estimator when ``fit`` has not set ``attribute``."""
        if not hasattr(self, attribute):
            raise RuntimeError(f"{type(self).__name__} is not fitted; call fit(X, Y) first")


def fit_centred_pair(estimator: Any, X: Any, Y: Any) -> tuple[np.ndarray, np.ndarray, int]:
    """Validate paired data and store the per-unit means ``mean_x_``, ``mean_y_`` on ``estimator``.

    The means are zeros when ``estimator.center`` is False. Returns the centred ``X`` (sample, unit_x),
    ``Y`` (sample, unit_y) and ``n_dim = max(unit_x, unit_y)``. Raises as :func:`as_pair`.
    """
    Xa, Ya = as_pair(X, Y)
    estimator.mean_x_ = Xa.mean(axis=0) if estimator.center else np.zeros(Xa.shape[1])
    estimator.mean_y_ = Ya.mean(axis=0) if estimator.center else np.zeros(Ya.shape[1])
    return Xa - estimator.mean_x_, Ya - estimator.mean_y_, max(Xa.shape[1], Ya.shape[1])


def fitted_centred_pair(estimator: ParamsMixin, X: Any, Y: Any) -> tuple[np.ndarray, np.ndarray]:
    """Paired data centred by the means :func:`fit_centred_pair` stored, for ``transform``.

    Raises
    ------
    RuntimeError
        If the estimator is not fitted.
    ValueError
        As :func:`as_pair`, or when ``X`` or ``Y`` has another number of units than the fitted data.
    """
    estimator.check_fitted("mean_x_")
    Xa, Ya = as_pair(X, Y)
    for a, mean, name in ((Xa, estimator.mean_x_, "X"), (Ya, estimator.mean_y_, "Y")):
        if a.shape[1] != mean.size:
            raise ValueError(f"{name} has {a.shape[1]} units but the metric was fitted on {mean.size}")
    return Xa - estimator.mean_x_, Ya - estimator.mean_y_


Layout = tuple[tuple[str, tuple[str, ...]], ...]
UNIT_NAMES = ("unit", "channel", "state_unit", "unit_x", "unit_y")
TRIAL_NAMES = ("trial", "condition", "batch")
#: The layouts the measures read, by number of dims: each axis with the dim names (docs/dims.md) it takes.
MATRIX: dict[int, Layout] = {
    2: (("sample", ("sample", *TRIAL_NAMES, "time")), ("unit", UNIT_NAMES)),
}
TRAJECTORIES: dict[int, Layout] = {
    2: (("time", ("time",)), ("unit", UNIT_NAMES)),
    3: (("trial", TRIAL_NAMES), ("time", ("time",)), ("unit", UNIT_NAMES)),
}
ACTIVITY = {**MATRIX, 3: TRAJECTORIES[3]}  # (sample, unit) or (trial, time, unit), flattened to samples
_KNOWN = {n for layouts in (MATRIX, TRAJECTORIES) for axes in layouts.values() for _, ns in axes for n in ns}


def labelled_order(dims: tuple[str, ...], axes: Layout, name: str) -> list[int]:
    """Positions of ``dims`` in the order of ``axes`` (``(axis, accepted dim names)`` pairs).

    Dims with a name of docs/dims.md go to their axis; the others fill the remaining axes in their own
    order, so unnamed dims (``dim_0``, ...) are read by position. ``ValueError`` (one line, naming the dims
    and the fix) when a named dim belongs to none of the axes or two dims name the same axis.
    """
    layout = "(" + ", ".join(axis for axis, _ in axes) + ")"
    fix = (f"rename its dims to {layout} (DataArray.rename) or pass {name}.values to read it by position")
    slots: dict[str, int] = {}
    for pos, dim in enumerate(dims):
        if dim not in _KNOWN:
            continue
        axis = next((a for a, names in axes if dim in names), None)
        if axis is None:
            raise ValueError(f"{name} has dims {dims}, but {dim!r} is not an axis of a {layout} array; {fix}")
        if axis in slots:
            raise ValueError(f"{name} has dims {dims}: both {dims[slots[axis]]!r} and {dim!r} would be its "
                             f"{axis!r} axis of {layout}; {fix}")
        slots[axis] = pos
    rest = iter(pos for pos in range(len(dims)) if pos not in slots.values())
    return [slots[axis] if axis in slots else next(rest) for axis, _ in axes]


def in_layout(x: Any, name: str, layouts: dict[int, Layout] | None = None) -> Any:
    """``x`` itself, or for an ``xarray.DataArray`` its values (no copy), transposed by dim names into
    ``layouts[x.ndim]`` where there is one (see :func:`to_numpy`)."""
    if not type(x).__module__.startswith("xarray"):
        return x
    import xarray as xr

    if not isinstance(x, xr.DataArray):
        return x
    dims = tuple(str(d) for d in x.dims)
    if layouts and len(dims) in layouts:
        x = x.transpose(*[x.dims[k] for k in labelled_order(dims, layouts[len(dims)], name)])
    return x.values


def to_numpy(x: Any, name: str, layouts: dict[int, Layout] | None = None) -> np.ndarray:
    """A new float64 NumPy array holding ``x`` (NumPy array, torch tensor, ``xarray.DataArray`` or nested
    sequence).

    With ``layouts`` (e.g. :data:`MATRIX`), a DataArray whose number of dims has a layout there is
    transposed into it by its dim names (:func:`labelled_order`); otherwise it is read by position. Raises
    ``TypeError`` for complex values (a cast to float would silently drop the imaginary part) and
    ``ValueError`` for anything non-numeric or dims that contradict the layout.
    """
    return float64_copy(in_layout(x, name, layouts), name)


def check_finite(a: np.ndarray, name: str) -> None:
    """Raise ``ValueError`` naming ``name`` when ``a`` holds NaN or Inf."""
    if not np.all(np.isfinite(a)):
        n_bad = int(np.size(a) - np.count_nonzero(np.isfinite(a)))
        raise ValueError(
            f"{name} contains {n_bad} NaN/Inf value(s); drop or impute them before comparing representations"
        )


def as_matrix(x: Any, name: str, *, min_rows: int = 2) -> np.ndarray:
    """Validate a ``(sample, unit)`` matrix and return a float64 copy.

    Raises
    ------
    ValueError
        If ``x`` is not 2-D, has fewer than ``min_rows`` rows or no columns, or holds NaN/Inf.
    """
    a = to_numpy(x, name, MATRIX)
    if a.ndim != 2:
        raise ValueError(
            f"{name} must be 2-D with shape (sample, unit); got shape {a.shape}. "
            "Flatten trials and time into the sample axis first, e.g. states.reshape(-1, n_units)"
        )
    if a.shape[0] < min_rows or a.shape[1] < 1:
        raise ValueError(f"{name} needs at least {min_rows} samples and 1 unit; got shape {a.shape}")
    check_finite(a, name)
    return a


def as_square(x: Any, name: str, what: str) -> np.ndarray:
    """A float64 copy of the square matrix ``x`` (``what`` names it, e.g. ``"(dim, dim) operator"``);
    ``ValueError`` if it is not a non-empty square 2-D array or holds NaN/Inf."""
    a = to_numpy(x, name)
    if a.ndim != 2 or a.shape[0] != a.shape[1] or a.shape[0] < 1:
        raise ValueError(f"{name} must be a square {what}; got shape {a.shape}")
    check_finite(a, name)
    return a


def as_pair(X: Any, Y: Any, *, min_rows: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Validate paired ``(sample, unit_x)`` and ``(sample, unit_y)`` matrices (same samples, same order)."""
    Xa = as_matrix(X, "X", min_rows=min_rows)
    Ya = as_matrix(Y, "Y", min_rows=min_rows)
    if Xa.shape[0] != Ya.shape[0]:
        raise ValueError(
            f"X and Y must have the same number of samples (rows, paired in the same order); "
            f"got X {Xa.shape} and Y {Ya.shape}"
        )
    return Xa, Ya


def check_square_memory(what: str, n: int, copies: int, fix: str) -> None:
    """One-line ``ValueError`` (:func:`~neurodyn._budget.check_memory`), before allocating, when ``copies``
    ``(n, n)`` float64 matrices would not fit in the memory available now."""
    from neurodyn._budget import check_memory

    check_memory(what, 8.0 * copies * n * n, f"{copies} ({n}, {n}) float64 matrices", fix)


def center(a: np.ndarray) -> np.ndarray:
    """Subtract the column means (per-unit mean over samples); returns a new array."""
    return a - a.mean(axis=0, keepdims=True)


def zero_pad(a: np.ndarray, n_units: int) -> np.ndarray:
    """Append zero columns to a ``(sample, unit)`` matrix up to ``n_units`` columns."""
    if a.shape[1] == n_units:
        return a
    return np.pad(a, ((0, 0), (0, n_units - a.shape[1])))


def check_choice(value: str, options: tuple[str, ...], name: str) -> str:
    """Raise ``ValueError`` unless ``value`` is one of ``options``."""
    if value not in options:
        raise ValueError(f"{name} must be one of {options}; got {value!r}")
    return value


def warn_few_samples(n_samples: int, n_units: int, measure: str) -> None:
    """Warn that ``measure`` is biased towards similarity when samples do not exceed units."""
    if n_samples <= n_units:
        warnings.warn(
            f"{measure}: {n_samples} samples <= {n_units} units; the estimate is strongly biased "
            "towards high similarity (use more samples, reduce dimension first, or a debiased "
            "variant)",
            UserWarning,
            stacklevel=3,
        )


def warn_forced_correlations(n_dims: int, rank_x: int, rank_y: int, measure: str, fix: str) -> None:
    """Warn where the dimensions alone force canonical correlations to 1, whatever the data.

    Column spaces of ranks ``rank_x`` and ``rank_y`` inside the ``n_dims``-dimensional sample space
    (``n_sample - 1`` after centring, which removes the all-ones direction) share at least
    ``rank_x + rank_y - n_dims`` directions, each a canonical correlation of exactly 1; when
    ``max(rank_x, rank_y) == n_dims`` every one of the ``min(rank_x, rank_y)`` correlations is 1, so
    CCA-type measures report perfect similarity for independent data. Silent when
    ``rank_x + rank_y <= n_dims``. ``fix`` is the advice, with ``{n}`` standing for the number of
    samples that leaves no correlation forced.
    """
    forced = rank_x + rank_y - n_dims
    if forced <= 0:
        return
    n_cc = min(rank_x, rank_y)
    what = "all" if forced >= n_cc else f"at least {forced} of the"
    warnings.warn(
        f"{measure}: ranks {rank_x} + {rank_y} exceed the {n_dims}-dimensional sample space (samples - 1 "
        f"after centring), so {what} {n_cc} canonical correlations are 1 for any data; "
        + fix.format(n=rank_x + rank_y + 1),
        UserWarning,
        stacklevel=4,
    )


def check_variance(norm_product: float, measure: str) -> None:
    """Raise ``ValueError`` when a representation has zero variance (the measure is undefined)."""
    if not norm_product > 0:
        raise ValueError(
            f"{measure} is undefined: a representation is constant across samples (zero variance "
            "after centring); drop silent units or samples"
        )


def angle(cosine: float) -> float:
    """``arccos`` of a cosine clipped to ``[-1, 1]`` (round-off can push it slightly outside)."""
    return float(np.arccos(np.clip(cosine, -1.0, 1.0)))
