"""Cross-validated linear decoding of task variables from a network's hidden states."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from neurodyn._checks import check_setting
from neurodyn._seed import SeedLike, resolve_seed
from neurodyn.models._base import eval_mode

if TYPE_CHECKING:  # pragma: no cover
    import xarray as xr

__all__ = ["compute_decodability", "compute_decodability_over_time"]


def compute_decodability(
    model: Any, task: Any, *, n_trials: int = 128, n_folds: int = 5, alpha: float = 1.0,
    seed: SeedLike = 12345,
) -> xr.Dataset:
    """How well each task variable (target channel) is linearly decodable from the hidden states.

    The model runs noise-free on ``n_trials`` seeded trials of ``task``; every masked step is a sample.
    For each target channel a ridge map (:class:`~neurodyn.analysis.LinearPredictivity`, penalty
    ``alpha``) from the states is fitted on ``n_folds - 1`` folds of *trials* and scored on the held-out
    trials (``sklearn.model_selection.GroupKFold``, so that steps of one trial never sit on both sides).
    Used to check that a network made dissimilar to others (similarity deflation, Qian & Pehlevan
    2025) still carries the task's variables.

    Parameters
    ----------
    model : RecurrentModel
    task : Task
        Its targets (trial, time, output) are the decoded variables.
    n_trials : int
        Trials of the seeded batch (>= ``n_folds``).
    n_folds : int
        Cross-validation folds over trials (>= 2).
    alpha : float
        Ridge penalty on the squared weights (>= 0).
    seed : int, Generator or None
        Seeds the batch and the assignment of trials to folds.

    Returns
    -------
    xarray.Dataset
        Dim ``variable`` (target channel). ``r2`` (variable): out-of-fold ``R^2`` of the decoded
        variable; ``sign_accuracy`` (variable): fraction of samples whose decoded sign matches a
        ``±1`` target (NaN for other targets). Attrs ``n_trials``, ``n_folds``, ``alpha``, ``seed``.

    Raises
    ------
    ValueError
        For ``n_trials`` or ``n_folds`` not an integer, ``n_folds < 2``, fewer trials than folds, an
        ``alpha`` that is negative or not finite, or a model whose sizes do not match the task.

    Examples
    --------
    A network that copies its input into unit 0 decodes a target equal to that input perfectly:

    >>> import torch
    >>> from neurodyn.models import LeakyRNN
    >>> from neurodyn.tasks import FlipFlop
    >>> from neurodyn.analysis import compute_decodability
    >>> task = FlipFlop(n_bits=1, n_steps=30)
    >>> model = LeakyRNN(1, 4, 1, activation="linear", seed=0)
    >>> ds = compute_decodability(model, task, n_trials=20, n_folds=4, alpha=1e-6)
    >>> ds.r2.dims, ds.sizes["variable"]
    (('variable',), 1)
    >>> bool(0.0 <= float(ds.sign_accuracy[0]) <= 1.0)
    True
    """
    import xarray as xr

    from neurodyn.training.train import check_sizes

    check_setting("n_trials", n_trials, 1, integer=True, hint=" (trials of the seeded batch)")
    _check_folds(n_folds, int(n_trials), alpha)
    check_sizes(model, task)
    seed = resolve_seed(seed)
    batch = task.sample(int(n_trials), seed=seed)
    with eval_mode(model), torch.no_grad():
        x = torch.as_tensor(batch.inputs, dtype=next(model.parameters()).dtype)
        h = model(x, noise=False).states.double().numpy()
    keep = batch.mask.reshape(-1, batch.mask.shape[-1]).max(1) > 0
    H = h.reshape(-1, h.shape[-1])[keep]
    Y = batch.targets.reshape(-1, batch.targets.shape[-1]).astype(np.float64)[keep]
    trial = np.repeat(np.arange(int(n_trials)), h.shape[1])[keep]
    pred, r2 = _cross_validated(H, Y, trial, int(n_trials), int(n_folds), alpha, seed)
    binary = np.all(np.isin(Y, (-1.0, 1.0)), axis=0)
    sign_acc = np.where(binary, (np.sign(pred) == Y).mean(0), np.nan)
    return xr.Dataset({"r2": ("variable", r2), "sign_accuracy": ("variable", sign_acc)},
                      coords={"variable": np.arange(Y.shape[1])},
                      attrs={"n_trials": int(n_trials), "n_folds": int(n_folds), "alpha": float(alpha),
                             "seed": seed})


def _check_folds(n_folds: Any, n_trials: int, alpha: Any) -> None:
    """One-line errors unless ``n_folds`` is an integer in ``[2, n_trials]`` and ``alpha`` finite >= 0."""
    check_setting("n_folds", n_folds, 2, high=max(n_trials, 2), integer=True,
                  hint=f" (folds over trials, at most the {n_trials} trials)")
    check_setting("alpha", alpha, 0, hint=" (ridge penalty on the squared weights)")


def _cross_validated(H: np.ndarray, Y: np.ndarray, trial: np.ndarray, n_trials: int, n_folds: int,
                     alpha: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Out-of-fold ridge predictions of ``Y`` (sample, variable) from ``H`` (sample, unit), folds over
    trials (seeded assignment), and their ``R^2`` per variable."""
    from sklearn.model_selection import GroupKFold

    from neurodyn.analysis.similarity import LinearPredictivity

    order = np.random.default_rng(seed).permutation(n_trials)  # seeded trial-to-fold assignment
    pred = np.zeros_like(Y)
    for train_idx, test_idx in GroupKFold(n_splits=n_folds).split(H, Y, groups=order[trial]):
        pred[test_idx] = LinearPredictivity(alpha=alpha).fit(H[train_idx], Y[train_idx]).predict(H[test_idx])
    with np.errstate(invalid="ignore", divide="ignore"):
        r2 = 1.0 - ((Y - pred) ** 2).sum(0) / ((Y - Y.mean(0)) ** 2).sum(0)
    return pred, r2


def compute_decodability_over_time(states: Any, variables: Any, *, names: Sequence[str] | None = None,
                                   n_folds: int = 5, alpha: float = 1.0, seed: SeedLike = 12345,
                                   ) -> xr.Dataset:
    """How well per-trial variables are linearly decodable from the hidden states at each time step.

    At every step a ridge map (:class:`~neurodyn.analysis.LinearPredictivity`, penalty ``alpha``) from
    the states to the variables is fitted on ``n_folds - 1`` folds of trials and scored on the held-out
    ones, as in :func:`compute_decodability` (same folds at every step); e.g. ``(cos, sin)`` of the cued
    and the uncued item over a working-memory delay.

    Parameters
    ----------
    states : array-like, shape (trial, time, unit)
        Hidden states (e.g. ``model(inputs).states`` or those of a sampler).
    variables : array-like, shape (trial, variable)
        One value per trial and variable (constant over time).
    names : sequence of str, optional
        Labels of the variables (default ``0, 1, ...``).
    n_folds : int
        Cross-validation folds over trials (>= 2, at most the number of trials).
    alpha : float
        Ridge penalty (>= 0).
    seed : int, Generator or None
        Seeds the assignment of trials to folds.

    Returns
    -------
    xarray.Dataset
        ``r2`` (time, variable): out-of-fold ``R^2`` (1 perfect, 0 no better than the mean).
        Coords ``time`` (steps) and ``variable``; attrs ``n_trials``, ``n_folds``,
        ``alpha``, ``seed``.

    Raises
    ------
    TypeError
        For ``states`` or ``variables`` given as a mapping (e.g. a dict of variables).
    ValueError
        For arrays of the wrong dimensions or mismatched trials, NaN/Inf in ``states`` or
        ``variables``, states without time steps or units, a constant variable (``R^2`` undefined),
        ``names`` of another length than the variables, ``n_folds`` not an integer in ``[2, trial]``, or an
        ``alpha`` that is negative or not finite.

    Examples
    --------
    A variable held by unit 0 from step 2 on is decodable from then on, not before:

    >>> import numpy as np
    >>> from neurodyn.analysis import compute_decodability_over_time
    >>> rng = np.random.default_rng(0)
    >>> v = rng.standard_normal((40, 1))
    >>> states = 0.01 * rng.standard_normal((40, 4, 3))
    >>> states[:, 2:, 0] += v
    >>> ds = compute_decodability_over_time(states, v, names=["v"], n_folds=4, alpha=1e-3)
    >>> r2 = ds.r2.sel(variable="v").values
    >>> ds.r2.dims, bool((r2[:2] < 0.2).all()), bool((r2[2:] > 0.99).all())
    (('time', 'variable'), True, True)
    """
    import xarray as xr

    from neurodyn.analysis.similarity._validate import check_finite, to_numpy

    for value, name in ((states, "states"), (variables, "variables")):
        if isinstance(value, Mapping):
            raise TypeError(f"{name} must be an array, got a {type(value).__name__}; stack its values, e.g. "
                            f"np.column_stack(list(d.values())), and pass names=list(d)")
    h, y = to_numpy(states, "states"), to_numpy(variables, "variables")
    if h.ndim != 3 or y.ndim != 2 or h.shape[0] != y.shape[0]:
        raise ValueError(f"states must be (trial, time, unit) and variables (trial, variable) with the same "
                         f"trials, got {h.shape} and {y.shape}")
    labels = list(names) if names is not None else list(range(y.shape[1]))
    if len(labels) != y.shape[1]:
        raise ValueError(f"names has {len(labels)} entries for {y.shape[1]} variables; give one name per "
                         "column of variables")
    if h.shape[1] < 1 or h.shape[2] < 1:
        raise ValueError(f"states needs at least 1 time step and 1 unit; got shape {h.shape}")
    check_finite(h, "states")
    check_finite(y, "variables")
    constant = np.flatnonzero(np.all(y == y[:1], axis=0)) if len(y) else []
    if len(constant):
        raise ValueError(f"variable {labels[constant[0]]!r} is constant over trials ({len(constant)} "
                         "constant variable(s)); R^2 is undefined for it: drop it or give values that vary")
    n_trials = h.shape[0]
    _check_folds(n_folds, n_trials, alpha)
    seed = resolve_seed(seed)
    trial = np.arange(n_trials)
    r2 = np.stack([_cross_validated(h[:, t], y, trial, n_trials, int(n_folds), alpha, seed)[1]
                   for t in range(h.shape[1])])
    return xr.Dataset({"r2": (("time", "variable"), r2)},
                      coords={"time": np.arange(h.shape[1]), "variable": labels},
                      attrs={"n_trials": n_trials, "n_folds": int(n_folds), "alpha": float(alpha),
                             "seed": seed})
