"""Solution degeneracy across task-trained networks: behaviour, dynamics and weights (Huang et al., 2025)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import torch

from neurodyn._result import Result
from neurodyn._seed import SeedLike, resolve_seed
from neurodyn.analysis.similarity import (
    PreparedActivity,
    pairwise_distances,
    prepare_activity,
    weight_distance,
)
from neurodyn.analysis.similarity.pairwise import DSA_FIT, PREPARE, network_names
from neurodyn.models._base import eval_mode

DEFAULT_DSA = {"n_delays": 5, "rank": 10}


@dataclass(frozen=True)
class DegeneracyResult(Result):
    """Degeneracy of a set of networks trained on one task, at three levels (format ``neurodyn.degeneracy``).

    Attributes
    ----------
    names : tuple of str
        Network labels, in order.
    behaviour_id, behaviour_ood : ndarray, shape (network,)
        The behaviour metric of each network on the in-distribution batch and on the batch of
        ``task.ood()`` (NaN where the task has no OOD variant).
    dynamics : ndarray, shape (network, network)
        Pairwise distances of the hidden-state trajectories (``dynamics_metric``).
    weights : ndarray, shape (network, network)
        Pairwise permutation-invariant distances of the recurrent weight matrices (NaN where a model
        has no ``w_rec``).
    behaviour_degeneracy_id, behaviour_degeneracy_ood : float
        Standard deviation across networks of the behaviour metric (``ddof=0``).
    dynamics_degeneracy, weight_degeneracy : float
        Mean over distinct pairs of the distance matrices.
    status : tuple of str
        Per network: ``"ok"`` or what could not be computed.
    settings : dict
        Task, metric names and options, ``n_trials`` and the resolved ``seed``.

    Examples
    --------
    >>> from neurodyn.analysis import compute_solution_degeneracy
    >>> from neurodyn.models import LeakyRNN
    >>> from neurodyn.tasks import FlipFlop
    >>> models = [LeakyRNN(1, 6, 1, seed=s) for s in range(3)]
    >>> result = compute_solution_degeneracy(models, FlipFlop(n_bits=1, n_steps=20), n_trials=4,
    ...                                      dynamics_metric="procrustes")
    >>> result.names, result.dynamics.shape, result.weights.shape
    (('net0', 'net1', 'net2'), (3, 3), (3, 3))
    >>> dict(result.to_xarray().sizes)
    {'network': 3, 'network_': 3}
    """

    names: tuple[str, ...]
    behaviour_id: np.ndarray = field(repr=False)
    behaviour_ood: np.ndarray = field(repr=False)
    dynamics: np.ndarray = field(repr=False)
    weights: np.ndarray = field(repr=False)
    behaviour_degeneracy_id: float
    behaviour_degeneracy_ood: float
    dynamics_degeneracy: float
    weight_degeneracy: float
    status: tuple[str, ...]
    settings: dict[str, Any]

    FORMAT: ClassVar[str] = "neurodyn.degeneracy"
    FORMAT_VERSION: ClassVar[int] = 1
    REQUIRED: ClassVar[tuple[str, ...]] = (
        "behaviour_id", "behaviour_ood", "status", "dynamics_distance", "weight_distance", "network")
    _SUMMARIES: ClassVar[tuple[str, ...]] = (
        "behaviour_degeneracy_id", "behaviour_degeneracy_ood", "dynamics_degeneracy", "weight_degeneracy")

    def to_xarray(self):
        """``xarray.Dataset`` on dims ``network`` / ``network_``; summaries and settings (JSON) as attrs."""
        import xarray as xr

        names = list(self.names)
        pair = ("network", "network_")
        return xr.Dataset(
            {
                "behaviour_id": ("network", self.behaviour_id),
                "behaviour_ood": ("network", self.behaviour_ood),
                "status": ("network", np.array(self.status, dtype=object)),
                "dynamics_distance": (pair, self.dynamics),
                "weight_distance": (pair, self.weights),
            },
            coords={"network": np.array(names, dtype=object), "network_": np.array(names, dtype=object)},
            attrs={
                **self.format_attrs(),
                **{k: getattr(self, k) for k in self._SUMMARIES},
                "settings": json.dumps(self.settings),
                "reference": "Huang, Singh, Martinelli & Rajan (2025), NeurIPS",
            },
        )

    @classmethod
    def from_xarray(cls, ds) -> DegeneracyResult:
        """Rebuild from :meth:`to_xarray`'s dataset (or a file written from one)."""
        return cls(
            names=tuple(str(n) for n in ds["network"].values), behaviour_id=ds["behaviour_id"].values,
            behaviour_ood=ds["behaviour_ood"].values, dynamics=ds["dynamics_distance"].values,
            weights=ds["weight_distance"].values, status=tuple(str(s) for s in ds["status"].values),
            settings=json.loads(ds.attrs.get("settings", "{}")),
            **{k: float(ds.attrs[k]) for k in cls._SUMMARIES},
        )


def _mean_offdiag(D: np.ndarray) -> float:
    iu = np.triu_indices(D.shape[0], k=1)
    return float(np.nanmean(D[iu])) if np.any(np.isfinite(D[iu])) else float("nan")


@torch.no_grad()
def _run(model, batch, device) -> tuple[np.ndarray, np.ndarray]:
    x = torch.as_tensor(batch.inputs, dtype=next(model.parameters()).dtype, device=device)
    with eval_mode(model):
        roll = model(x, noise=False)
    return roll.outputs.cpu().numpy(), roll.states.double().cpu().numpy()


@dataclass(frozen=True)
class DegeneracyFeatures(Result):
    """What :func:`compute_solution_degeneracy` needs of one network (``neurodyn.degeneracy_features``).

    Computed once per network by :func:`degeneracy_features` (e.g. right after training, as a sweep does),
    so that degeneracy over a set of networks does only pairwise work.

    Attributes
    ----------
    behaviour_id, behaviour_ood : float
        The behaviour metric on the seeded in-distribution batch and on ``task.ood()``'s (NaN if none).
    dynamics : PreparedActivity or ndarray
        The hidden-state trajectories ``(trial, time, unit)`` of the in-distribution batch (noise off),
        prepared for the dynamics metric (:func:`~neurodyn.analysis.similarity.prepare_activity`:
        Procrustes' centred and whitened states, DSA's Hankel-regression Gram matrices), or the
        trajectories themselves (float64) for metrics without a preparation.
    w_rec : ndarray or None, shape (unit, unit)
        Recurrent weights (float64); None if the model has none.
    status : str
        ``"ok"`` or what could not be computed.
    settings : dict
        Task, ``n_trials``, ``seed``, ``behaviour_metric``, ``dynamics_metric`` and its options.

    Examples
    --------
    >>> from neurodyn.analysis import degeneracy_features
    >>> from neurodyn.models import LeakyRNN
    >>> from neurodyn.tasks import FlipFlop
    >>> f = degeneracy_features(LeakyRNN(1, 6, 1, seed=0), FlipFlop(n_bits=1, n_steps=20), n_trials=4,
    ...                         dynamics_metric="procrustes")
    >>> f.dynamics.metric, f.dynamics.arrays["features"].shape, f.w_rec.shape  # (trial * time, unit)
    ('procrustes', (80, 6), (6, 6))
    """

    behaviour_id: float
    behaviour_ood: float
    dynamics: Any = field(repr=False)
    w_rec: np.ndarray | None = field(repr=False)
    status: str
    settings: dict[str, Any]

    FORMAT: ClassVar[str] = "neurodyn.degeneracy_features"
    FORMAT_VERSION: ClassVar[int] = 1
    REQUIRED: ClassVar[tuple[str, ...]] = ("behaviour",)

    def to_xarray(self):
        """``xarray.Dataset``: ``behaviour`` on dim ``split`` (id, ood), ``w_rec`` on ``(unit, unit_)``,
        the dynamics as ``dynamics_<name>`` (or ``states`` on ``(trial, time, unit)``); settings as JSON."""
        import xarray as xr

        ds = xr.Dataset({"behaviour": ("split", np.array([self.behaviour_id, self.behaviour_ood]))},
                        coords={"split": ["id", "ood"]})
        if self.w_rec is not None:
            ds["w_rec"] = (("unit", "unit_"), self.w_rec)
        if isinstance(self.dynamics, PreparedActivity):
            ds = ds.merge(self.dynamics.to_xarray(prefix="dynamics_"), combine_attrs="drop_conflicts")
        else:
            ds["states"] = (("trial", "time", "state_unit"), self.dynamics)
        ds.attrs.update({**self.format_attrs(), "status": self.status, "settings": json.dumps(self.settings)})
        return ds

    @classmethod
    def from_xarray(cls, ds) -> DegeneracyFeatures:
        """Rebuild from :meth:`to_xarray`'s dataset (or a file written from one)."""
        dynamics = (PreparedActivity.from_xarray(ds, prefix="dynamics_") if "dynamics_prepared" in ds.attrs
                    else np.asarray(ds["states"].values, dtype=np.float64))
        b = ds["behaviour"].values
        return cls(behaviour_id=float(b[0]), behaviour_ood=float(b[1]), dynamics=dynamics,
                   w_rec=np.asarray(ds["w_rec"].values, np.float64) if "w_rec" in ds else None,
                   status=str(ds.attrs.get("status", "ok")),
                   settings=json.loads(ds.attrs.get("settings", "{}")))


def _dynamics_options(dynamics_metric: str, dynamics_kwargs: Mapping[str, Any] | None
                      ) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(preparation options, pairwise options)`` of the dynamics metric (DSA's defaults filled in)."""
    kw = dict(dynamics_kwargs or {})
    if dynamics_metric == "dsa":
        kw = {**DEFAULT_DSA, **kw}
    fit_names = {"dsa": (*DSA_FIT, "rank"), "procrustes": ("alpha", "center")}.get(dynamics_metric, ())
    prepare = {k: v for k, v in kw.items() if k in fit_names}
    return prepare, {k: v for k, v in kw.items() if k not in fit_names}


def _check_model(k: int, m: Any, task: Any) -> None:
    from neurodyn.training.train import check_sizes

    check_sizes(m, task, name=f"models[{k}]")


def _batches(task: Any, n_trials: int, seed: int):
    batch = task.sample(n_trials, seed=seed)
    try:
        ood_task = task.ood()
    except NotImplementedError:
        return batch, None, None
    return batch, ood_task, ood_task.sample(n_trials, seed=seed)


def _features(model, task, batches, settings: dict[str, Any], device) -> DegeneracyFeatures:
    from neurodyn.training import evaluate

    batch, ood_task, ood_batch = batches
    metric = settings["behaviour_metric"]
    metrics = evaluate(model, task, batch, device=device)
    if metric not in metrics:
        raise ValueError(f"behaviour_metric {metric!r} is not evaluated; available: {', '.join(metrics)}")
    b_ood = np.nan if ood_batch is None else evaluate(model, ood_task, ood_batch, device=device)[metric]
    states = _run(model, batch, device)[1]
    dyn = settings["dynamics_metric"]
    if dyn in PREPARE:
        states = prepare_activity(states, metric=dyn, **settings["dynamics_prepare"])
    w = getattr(model.params(), "w_rec", None)
    return DegeneracyFeatures(
        behaviour_id=float(metrics[metric]), behaviour_ood=float(b_ood), dynamics=states,
        w_rec=None if w is None else w.detach().double().cpu().numpy(),
        status="ok" if w is not None else "no w_rec: weight distance not computed", settings=settings)


def _plan(task, n_trials, seed: SeedLike, behaviour_metric, dynamics_metric, dynamics_kwargs
          ) -> tuple[tuple[Any, Any, Any], dict[str, Any]]:
    """The seeded batches (see :func:`_batches`) and the settings the per-network features record."""
    seed_int = resolve_seed(seed)
    batches = _batches(task, n_trials, seed_int)
    prep, pair = _dynamics_options(dynamics_metric, dynamics_kwargs)
    settings = {"task": task.name, "task_config": task.config(), "n_trials": int(n_trials), "seed": seed_int,
                "behaviour_metric": behaviour_metric, "dynamics_metric": dynamics_metric,
                "dynamics_prepare": prep, "dynamics_pairwise": pair, "ood": batches[1] is not None}
    return batches, settings


def degeneracy_features(
    model: Any,
    task: Any,
    *,
    n_trials: int = 64,
    seed: SeedLike = 0,
    behaviour_metric: str = "loss",
    dynamics_metric: str = "dsa",
    dynamics_kwargs: Mapping[str, Any] | None = None,
    device: Any = "cpu",
) -> DegeneracyFeatures:
    """The per-network stage of :func:`compute_solution_degeneracy`, for one network, to store and reuse.

    Evaluates the behaviour metric in and out of distribution, rolls out the hidden states on the seeded
    batch and prepares them for the dynamics metric (:func:`~neurodyn.analysis.similarity.prepare_activity`
    for ``procrustes`` and ``dsa``), and copies the recurrent weights. Passing the features of several
    networks to :func:`compute_solution_degeneracy` gives the same result (bit for bit) as passing the
    networks, with only pairwise work left.

    Parameters
    ----------
    model : RecurrentModel
        Never modified (eval mode only for the rollout).
    task : Task
    n_trials, seed, behaviour_metric, dynamics_metric, dynamics_kwargs, device
        As for :func:`compute_solution_degeneracy` (the pairwise options among ``dynamics_kwargs``, such
        as DSA's ``n_restarts``, are recorded and used there).

    Returns
    -------
    DegeneracyFeatures

    Raises
    ------
    ValueError
        For a model that does not fit the task or an unknown ``behaviour_metric``.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis import compute_solution_degeneracy, degeneracy_features
    >>> from neurodyn.models import LeakyRNN
    >>> from neurodyn.tasks import FlipFlop
    >>> task = FlipFlop(n_bits=1, n_steps=20)
    >>> models = [LeakyRNN(1, 6, 1, seed=s) for s in range(3)]
    >>> opts = {"n_trials": 4, "dynamics_metric": "procrustes"}
    >>> stored = [degeneracy_features(m, task, **opts) for m in models]  # e.g. one per sweep item
    >>> a = compute_solution_degeneracy(stored, task, **opts)
    >>> b = compute_solution_degeneracy(models, task, **opts)
    >>> bool(np.array_equal(a.dynamics, b.dynamics)), a.weight_degeneracy == b.weight_degeneracy
    (True, True)
    """
    _check_model(0, model, task)
    batches, settings = _plan(task, n_trials, seed, behaviour_metric, dynamics_metric, dynamics_kwargs)
    return _features(model, task, batches, settings, device)


def compute_solution_degeneracy(
    models: Sequence[Any],
    task: Any,
    *,
    n_trials: int = 64,
    seed: SeedLike = 0,
    behaviour_metric: str = "loss",
    dynamics_metric: str = "dsa",
    dynamics_kwargs: Mapping[str, Any] | None = None,
    weight_kind: str = "euclidean",
    names: Sequence[str] | None = None,
    device: Any = "cpu",
    progress: bool = False,
) -> DegeneracyResult:
    """Quantify solution degeneracy of networks trained on the same task (Huang et al., 2025).

    * Behaviour: ``behaviour_metric`` (from ``task.evaluate`` plus the masked loss) of each network on one
      seeded batch of ``n_trials`` trials and on a batch of ``task.ood()`` drawn with the same seed;
      the degeneracy is its standard deviation across networks.
    * Dynamics: hidden-state trajectories ``(trial, time, unit)`` of every network on the same
      in-distribution batch (noise off), compared pairwise with ``dynamics_metric`` (default DSA,
      :func:`~neurodyn.analysis.dsa_distance`); the degeneracy is the mean pairwise distance.
    * Weights: pairwise :func:`~neurodyn.analysis.weight_distance` (permutation invariant, smaller
      matrices zero-padded) of the recurrent weights ``params().w_rec``; mean over pairs.

    The per-network stage (:func:`degeneracy_features`) runs once per network; pass its results in
    place of the models to skip it (the same result, bit for bit).

    Parameters
    ----------
    models : sequence (or other iterable) of RecurrentModel or DegeneracyFeatures
        At least 2 networks with the task's input and output sizes (never modified; put in eval mode
        only for the rollout), or their features computed with the same options.
    task : Task
    n_trials : int
        Trials of the shared condition batch.
    seed : SeedLike
        Seeds the batches (recorded in ``settings``); same seed, same result.
    behaviour_metric : str
        A key of the evaluation metrics (``"loss"``, or e.g. ``"accuracy"``).
    dynamics_metric : str
        Any metric of :func:`~neurodyn.analysis.pairwise_distances`; similarity measures (``"cka"``, ...)
        are turned into distances ``1 - s`` (with a zero diagonal).
    dynamics_kwargs : mapping, optional
        Options of that metric; for DSA default ``{"n_delays": 5, "rank": 10}`` (the rank is lowered to
        the smallest network's full rank).
    weight_kind : {"euclidean", "angular"}
        See :func:`~neurodyn.analysis.weight_distance`.
    names : list of str, optional
        Unique network labels (default ``net0``, ``net1``, ...); not one ``str``.
    device : torch device
    progress : bool

    Returns
    -------
    DegeneracyResult

    Raises
    ------
    ValueError
        For fewer than 2 models, mismatched sizes, an unknown ``behaviour_metric``, ``names`` that are
        repeated or of another length, or features computed with other options than these.
    TypeError
        For ``names`` given as one ``str`` (pass a list, one label per network).

    Examples
    --------
    Three copies of one network are not degenerate at all; three different networks are:

    >>> import numpy as np
    >>> from neurodyn.analysis import compute_solution_degeneracy
    >>> from neurodyn.models import LeakyRNN
    >>> from neurodyn.tasks import FlipFlop
    >>> task = FlipFlop(n_bits=1, n_steps=20)
    >>> same = compute_solution_degeneracy([LeakyRNN(1, 6, 1, seed=0)] * 3, task, n_trials=4,
    ...                                    dynamics_metric="procrustes")
    >>> values = same.dynamics_degeneracy, same.weight_degeneracy, same.behaviour_degeneracy_id
    >>> [round(v, 6) for v in values]
    [0.0, 0.0, 0.0]
    >>> other = compute_solution_degeneracy([LeakyRNN(1, 6, 1, seed=s) for s in range(3)], task, n_trials=4,
    ...                                     dynamics_metric="procrustes")
    >>> bool(other.dynamics_degeneracy > 0), bool(other.weight_degeneracy > 0)
    (True, True)
    """
    models = list(models)
    if len(models) < 2:
        raise ValueError(f"degeneracy needs at least 2 networks; got {len(models)}")
    for k, m in enumerate(models):
        if not isinstance(m, DegeneracyFeatures):
            _check_model(k, m, task)
    names = network_names([f"net{k}" for k in range(len(models))] if names is None else names, len(models))
    batches, settings = _plan(task, n_trials, seed, behaviour_metric, dynamics_metric, dynamics_kwargs)
    feats = []
    for k, m in enumerate(models):
        if isinstance(m, DegeneracyFeatures):
            if json.loads(json.dumps(m.settings)) != json.loads(json.dumps(settings)):
                differ = sorted(key for key in settings if m.settings.get(key) != settings[key])
                raise ValueError(f"models[{k}] holds features computed with other options (differ in: "
                                 f"{', '.join(differ)}); compute them again with these options")
            feats.append(m)
        else:
            feats.append(_features(m, task, batches, settings, device))
    kw = dict(settings["dynamics_pairwise"])
    dyn_in = [f.dynamics for f in feats]
    if dynamics_metric == "dsa" and settings["dynamics_prepare"].get("rank") is not None:
        kw["rank"] = int(min(settings["dynamics_prepare"]["rank"], *(d.info["full_rank"] for d in dyn_in)))
    D = pairwise_distances(dyn_in, metric=dynamics_metric, names=names, device=device, progress=progress,
                           **kw)
    dyn = (1.0 - D.values) if D.attrs["kind"] == "similarity" else D.values
    np.fill_diagonal(dyn, 0.0)  # a network's distance to itself (1 - s need not be 0, e.g. for tau-a)
    n = len(models)
    W = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            if feats[i].w_rec is None or feats[j].w_rec is None:
                W[i, j] = W[j, i] = np.nan
            else:
                W[i, j] = W[j, i] = weight_distance(feats[i].w_rec, feats[j].w_rec, kind=weight_kind)
    result_settings = {key: settings[key] for key in ("task", "task_config", "n_trials", "seed",
                                                      "behaviour_metric", "dynamics_metric")}
    result_settings.update(dynamics_kwargs={**settings["dynamics_prepare"], **kw}, weight_kind=weight_kind,
                           ood=settings["ood"])
    b_id = np.array([f.behaviour_id for f in feats], float)
    b_ood = np.array([f.behaviour_ood for f in feats], float)
    return DegeneracyResult(
        names=tuple(names), behaviour_id=b_id, behaviour_ood=b_ood, dynamics=dyn, weights=W,
        behaviour_degeneracy_id=float(np.std(b_id)),
        behaviour_degeneracy_ood=float(np.std(b_ood)) if settings["ood"] else float("nan"),
        dynamics_degeneracy=_mean_offdiag(dyn), weight_degeneracy=_mean_offdiag(W),
        status=tuple(f.status for f in feats), settings=result_settings,
    )


def compare_to_references(
    model: Any,
    references: Sequence[Any],
    task: Any,
    *,
    n_trials: int = 128,
    seed: SeedLike = 12345,
    ridge_alpha: float = 1.0,
) -> dict[str, float]:
    """Similarity of a network's hidden states to those of reference networks on held-out trials.

    Reports several measures side by side, so that a network made dissimilar under one measure (e.g.
    by :func:`neurodyn.training.train_deflated`) can be checked under the others.

    Parameters
    ----------
    model : RecurrentModel
    references : sequence of RecurrentModel
        Their states are concatenated along units for ``predictivity`` and compared one by one for
        the other measures (averaged).
    task : Task
    n_trials : int
        Trials of the seeded batch (samples = trials x time steps).
    seed : SeedLike
        Seeds the batch and the cross-validation folds.
    ridge_alpha : float
        Ridge penalty of :func:`~neurodyn.analysis.linear_predictivity`.

    Returns
    -------
    dict
        ``predictivity`` (5-fold ridge ``R^2`` of the model's states from all references), ``cka`` (mean
        linear CKA), ``procrustes`` (mean angular Procrustes distance, radians), ``activity`` (mean squared
        state) and the model's task metrics prefixed ``task_``.

    Raises
    ------
    ValueError
        For an empty ``references`` or a model whose sizes do not match the task (named, e.g.
        ``references[1]``).
    TypeError
        For a single model given as ``references`` (wrap it in a list).

    Examples
    --------
    >>> from neurodyn.analysis import compare_to_references
    >>> from neurodyn.models import LeakyRNN
    >>> from neurodyn.tasks import FlipFlop
    >>> model = LeakyRNN(1, 6, 1, seed=0)
    >>> scores = compare_to_references(model, [model], FlipFlop(n_bits=1, n_steps=20), n_trials=8)
    >>> round(scores["cka"], 6), round(scores["procrustes"], 6)  # a network against itself
    (1.0, 0.0)
    >>> sorted(k for k in scores if not k.startswith("task_"))
    ['activity', 'cka', 'predictivity', 'procrustes']
    """
    from neurodyn.analysis.similarity import cka, linear_predictivity, procrustes_distance
    from neurodyn.training import evaluate
    from neurodyn.training.train import check_sizes

    if isinstance(references, torch.nn.Module) and not isinstance(references, torch.nn.ModuleList):
        raise TypeError(f"references must be a sequence of models, got a {type(references).__name__}; "
                        "wrap a single one in a list: [reference]")
    references = list(references)
    if len(references) == 0:
        raise ValueError("references is empty; give at least one model")
    check_sizes(model, task)
    for k, r in enumerate(references):
        check_sizes(r, task, name=f"references[{k}]")

    batch = task.sample(n_trials, seed=seed)
    h = _run(model, batch, "cpu")[1]
    H = h.reshape(-1, h.shape[-1])
    refs = [_run(r, batch, "cpu")[1] for r in references]
    R = [r.reshape(-1, r.shape[-1]) for r in refs]
    out = {
        "predictivity": linear_predictivity(np.hstack(R), H, alpha=ridge_alpha, seed=seed).r2,
        "cka": float(np.mean([cka(r, H) for r in R])),
        "procrustes": float(np.mean([procrustes_distance(r, H) for r in R])),
        "activity": float(np.mean(H**2)),
    }
    out.update({f"task_{k}": v for k, v in evaluate(model, task, batch).items()})
    return out


__all__ = ["DegeneracyFeatures", "DegeneracyResult", "compare_to_references", "compute_solution_degeneracy",
           "degeneracy_features"]
