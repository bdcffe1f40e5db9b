"""Structure in a set of loading rows beyond a reference: correlations with a permutation threshold,
skew and excess kurtosis."""

from __future__ import annotations

from typing import Any

import numpy as np

from neurodyn._budget import check_memory
from neurodyn._checks import check_setting
from neurodyn._seed import SeedLike, numpy_rng, resolve_seed

__all__ = ["compute_loading_structure"]


def compute_loading_structure(
    loadings: Any, reference: Any = None, *, names: Any = None, level: float = 0.05,
    n_permutations: int = 200, seed: SeedLike = 0,
) -> Any:
    """Correlations between loading components, and the ones a reference distribution does not have.

    A plain fitted low-rank network can carry structure in its per-neuron loadings that the
    dynamics do not require: correlations between components (e.g. the bias with ``m``), skew or
    heavy tails. This measures, for loading rows (unit, loading), the Pearson correlation of every
    pair of components and flags those above a family-wise permutation threshold: each column is
    permuted independently ``n_permutations`` times and the threshold is the ``1 - level``
    quantile of the largest off-diagonal ``|corr|`` (so a sample with independent components has
    any pair flagged with probability about ``level``). Given ``reference`` rows (e.g. the ground
    truth's, or a sample of :meth:`MaxEntLoadings.sample_loadings`), a pair is *spurious* when it
    is flagged in ``loadings`` but not in ``reference`` (each with its own threshold, so the
    samples may differ in size). Constant columns have no correlation (NaN, never flagged).

    Correlations involving ``m`` and ``n`` depend on the gauge ``(m, n) -> (m Q, n Q^-T)`` (see
    :func:`compute_low_rank_statistics`): bring both sets to one gauge first (e.g. regress the
    fitted ``m`` on the reference's when the units correspond).

    Parameters
    ----------
    loadings : array or LowRankRNN, shape (unit, loading)
        Loading rows as :meth:`LowRankRNN.loadings` (a model is converted with it); any dtype, NaN
        not allowed.
    reference : array or LowRankRNN, shape (unit', loading), optional
        Rows of the reference distribution (same components, any number of units).
    names : sequence of str, optional
        Component names (default ``model.loading_names()`` when ``loadings`` or ``reference`` is
        a model, else ``c0, c1, ...``).
    level : float
        Family-wise false-positive rate of the threshold, in (0, 1).
    n_permutations : int
        Permutations for the threshold (>= 1 / level).
    seed : int, numpy/torch Generator or None
        Seeds the permutations; same seed ⇒ same thresholds.

    Returns
    -------
    xarray.Dataset
        Dims ``loading`` and ``loading_`` (the same components). ``corr`` (loading, loading_),
        ``significant`` (loading, loading_; bool, off-diagonal), ``skew`` and ``excess_kurtosis``
        (loading; 0 for a Gaussian), ``corr_threshold`` (scalar); with ``reference`` also the same
        four with suffix ``_reference`` and ``spurious`` (loading, loading_; bool). Attributes:
        ``level``, ``n_permutations``, ``seed``, ``n_units`` (and ``n_units_reference``,
        ``n_spurious``: the number of spurious pairs).

    Raises
    ------
    ValueError
        For rows that are not 2-D, hold NaN/Inf, have fewer than 4 units or fewer than 2
        non-constant components, or a reference with another number of components; a ``level``
        outside (0, 1), ``n_permutations`` not an integer >= 1 or too few for it, or more than the
        memory available can hold (the estimate is made before allocating).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.standard_normal((500, 3))            # independent components
    >>> fitted = rng.standard_normal((500, 3))
    >>> fitted[:, 2] += 0.5 * fitted[:, 0]                # a correlation the truth does not have
    >>> ds = compute_loading_structure(fitted, truth, names=["m0", "n0", "b"], seed=0)
    >>> int(ds.n_spurious), bool(ds.spurious.sel(loading="m0", loading_="b"))
    (1, True)
    >>> round(float(ds.corr_threshold), 2), round(float(ds.corr.sel(loading="m0", loading_="b")), 2)
    (0.1, 0.44)
    """
    import xarray as xr

    if not 0 < float(level) < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    check_setting("n_permutations", n_permutations, 1, integer=True, hint=" (permutations for the threshold)")
    if int(n_permutations) < 1 / float(level):
        raise ValueError(f"n_permutations = {n_permutations} is too few for level {level}; "
                         f"use at least {int(np.ceil(1 / level))}")
    check_memory("compute_loading_structure", 8.0 * int(n_permutations),
                 f"one maximum per permutation, n_permutations={int(n_permutations)}",
                 "lower n_permutations (default 200)")
    x, default_names = _rows(loadings, "loadings")
    if reference is not None:
        y, reference_names = _rows(reference, "reference")
        default_names = reference_names if hasattr(reference, "loadings") else default_names
    names = list(default_names if names is None else names)
    if len(names) != x.shape[1]:
        raise ValueError(f"names has {len(names)} entries for {x.shape[1]} loading components; "
                         "give one name per column")
    seed = resolve_seed(seed)
    corr, thr = _corr_and_threshold(x, level, int(n_permutations), numpy_rng(seed, 0))
    dims = ("loading", "loading_")
    data = {"corr": (dims, corr), "significant": (dims, _flags(corr, thr)),
            "skew": (("loading",), _standard_moment(x, 3)),
            "excess_kurtosis": (("loading",), _standard_moment(x, 4) - 3.0), "corr_threshold": ((), thr)}
    attrs = {"level": float(level), "n_permutations": int(n_permutations), "seed": seed,
             "n_units": x.shape[0]}
    if reference is not None:
        if y.shape[1] != x.shape[1]:
            raise ValueError(f"reference has {y.shape[1]} loading components but loadings has {x.shape[1]}; "
                             "give rows of the same components")
        corr_r, thr_r = _corr_and_threshold(y, level, int(n_permutations), numpy_rng(seed, 1))
        sig_r = _flags(corr_r, thr_r)
        data.update({"corr_reference": (dims, corr_r), "significant_reference": (dims, sig_r),
                     "skew_reference": (("loading",), _standard_moment(y, 3)),
                     "excess_kurtosis_reference": (("loading",), _standard_moment(y, 4) - 3.0),
                     "corr_threshold_reference": ((), thr_r),
                     "spurious": (dims, data["significant"][1] & ~sig_r)})
        attrs.update(n_units_reference=y.shape[0], n_spurious=int(np.triu(data["spurious"][1], 1).sum()))
    return xr.Dataset(data, coords={"loading": names, "loading_": names}, attrs=attrs)


def _rows(obj: Any, what: str) -> tuple[np.ndarray, list[str]]:
    """Loading rows as a float64 array (unit, loading) and default names; checks shape and values."""
    if hasattr(obj, "loadings") and callable(obj.loadings):
        x, names = obj.loadings().detach().double().cpu().numpy(), list(obj.loading_names())
    else:
        x = np.asarray(obj.detach().cpu() if hasattr(obj, "detach") else obj, dtype=np.float64)
        names = [f"c{j}" for j in range(x.shape[1])] if x.ndim == 2 else []
    if x.ndim != 2:
        raise ValueError(f"{what} must have shape (unit, loading), got {x.shape}")
    if x.shape[0] < 4:
        raise ValueError(f"{what} has {x.shape[0]} units; correlations need at least 4")
    if not np.isfinite(x).all():
        raise ValueError(f"{what} contain NaN or Inf; drop or repair those units first")
    n_varying = int((x.std(0) > 1e-12 * (1 + np.abs(x).max(0))).sum())  # as _corr_and_threshold
    if n_varying < 2:
        raise ValueError(f"{what} has {n_varying} non-constant component(s) of {x.shape[1]}; correlations "
                         "need at least 2 that vary across units")
    return x, names


def _corr_and_threshold(x: np.ndarray, level: float, n_perm: int, rng: np.random.Generator
                        ) -> tuple[np.ndarray, float]:
    """Correlation matrix (NaN where a column is constant) and the permutation threshold of max |corr|."""
    z = x - x.mean(0)
    sd = np.sqrt((z ** 2).mean(0))
    varying = sd > 1e-12 * (1 + np.abs(x).max(0))
    z = np.where(varying, z / np.where(varying, sd, 1.0), 0.0)
    n, d = z.shape
    corr = np.full((d, d), np.nan)
    idx = np.flatnonzero(varying)
    corr[np.ix_(idx, idx)] = z[:, idx].T @ z[:, idx] / n
    if idx.size < 2:
        return corr, np.inf
    off = ~np.eye(idx.size, dtype=bool)
    maxima = np.empty(n_perm)
    zv = z[:, idx]
    for k in range(n_perm):
        p = np.take_along_axis(zv, rng.permuted(np.tile(np.arange(n)[:, None], (1, idx.size)), axis=0), 0)
        maxima[k] = np.abs(p.T @ p / n)[off].max()
    return corr, float(np.quantile(maxima, 1 - level))


def _flags(corr: np.ndarray, threshold: float) -> np.ndarray:
    """Off-diagonal pairs whose ``|corr|`` exceeds the threshold (NaN never does)."""
    flags = np.abs(np.nan_to_num(corr)) > threshold
    np.fill_diagonal(flags, False)
    return flags


def _standard_moment(x: np.ndarray, k: int) -> np.ndarray:
    """k-th standardised moment per column (NaN for a constant column)."""
    z = x - x.mean(0)
    var = (z ** 2).mean(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(var > 0, (z ** k).mean(0) / np.where(var > 0, var, 1.0) ** (k / 2), np.nan)
