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
from neurodyn.analysis.similarity import fit_havok, pairwise_distances, weight_distance

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
    was = model.training
    model.eval()
    roll = model(x, noise=False)
    model.train(was)
    return roll.outputs.cpu().numpy(), roll.states.double().cpu().numpy()


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

    Parameters
    ----------
    models : sequence of RecurrentModel
        At least 2 networks with the task's input and output sizes; never modified (put in eval mode
        only for the rollout).
    task : Task
    n_trials : int
        Trials of the shared condition batch.
    seed : SeedLike
        Seeds the batches (recorded in ``settings``); same seed, same result.
    behaviour_metric : str
        A key of the evaluation metrics (``"loss"``, or e.g. ``"accuracy"``).
    dynamics_metric : str
        Any metric of :func:`~neurodyn.analysis.pairwise_distances`; similarity measures (``"cka"``, ...)
        are turned into distances ``1 - s``.
    dynamics_kwargs : mapping, optional
        Options of that metric; for DSA default ``{"n_delays": 5, "rank": 10}`` (the rank is lowered to
        the smallest network's full rank).
    weight_kind : {"euclidean", "angular"}
        See :func:`~neurodyn.analysis.weight_distance`.
    names : sequence of str, optional
    device : torch device
    progress : bool

    Returns
    -------
    DegeneracyResult

    Raises
    ------
    ValueError
        For fewer than 2 models, mismatched sizes or an unknown ``behaviour_metric``.

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
    from neurodyn.training import evaluate

    if len(models) < 2:
        raise ValueError(f"degeneracy needs at least 2 networks; got {len(models)}")
    for k, m in enumerate(models):
        if m.n_inputs != task.n_inputs or m.n_outputs != task.n_outputs:
            raise ValueError(f"models[{k}] has {m.n_inputs} inputs / {m.n_outputs} outputs; task "
                             f"{task.name!r} needs {task.n_inputs} / {task.n_outputs}")
    seed_int = resolve_seed(seed)
    names = [f"net{k}" for k in range(len(models))] if names is None else [str(s) for s in names]
    batch = task.sample(n_trials, seed=seed_int)
    try:
        ood_task = task.ood()
        ood_batch = ood_task.sample(n_trials, seed=seed_int)
    except NotImplementedError:
        ood_task = ood_batch = None
    status, b_id, b_ood, states, w_rec = [], [], [], [], []
    for m in models:
        metrics = evaluate(m, task, batch, device=device)
        if behaviour_metric not in metrics:
            raise ValueError(f"behaviour_metric {behaviour_metric!r} is not evaluated; available: "
                             f"{', '.join(metrics)}")
        b_id.append(metrics[behaviour_metric])
        b_ood.append(np.nan if ood_batch is None else evaluate(m, ood_task, ood_batch, device=device)
                     [behaviour_metric])
        states.append(_run(m, batch, device)[1])
        w = getattr(m.params(), "w_rec", None)
        w_rec.append(None if w is None else w.detach().double().cpu().numpy())
        status.append("ok" if w is not None else "no w_rec: weight distance not computed")
    kw = dict(dynamics_kwargs or {})
    if dynamics_metric == "dsa":
        kw = {**DEFAULT_DSA, **kw}
        kw["rank"] = _feasible_rank(states, kw)
    D = pairwise_distances(states, metric=dynamics_metric, names=names, device=device, progress=progress,
                           **kw)
    dyn = (1.0 - D.values) if D.attrs["kind"] == "similarity" else D.values
    n = len(models)
    W = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            if w_rec[i] is None or w_rec[j] is None:
                W[i, j] = W[j, i] = np.nan
            else:
                W[i, j] = W[j, i] = weight_distance(w_rec[i], w_rec[j], kind=weight_kind)
    settings = {"task": task.name, "task_config": task.config(), "n_trials": int(n_trials), "seed": seed_int,
                "behaviour_metric": behaviour_metric, "dynamics_metric": dynamics_metric,
                "dynamics_kwargs": {k: v for k, v in kw.items()}, "weight_kind": weight_kind,
                "ood": ood_task is not None}
    b_id, b_ood = np.asarray(b_id, float), np.asarray(b_ood, float)
    return DegeneracyResult(
        names=tuple(names), behaviour_id=b_id, behaviour_ood=b_ood, dynamics=dyn, weights=W,
        behaviour_degeneracy_id=float(np.std(b_id)),
        behaviour_degeneracy_ood=float(np.std(b_ood)) if ood_task is not None else float("nan"),
        dynamics_degeneracy=_mean_offdiag(dyn), weight_degeneracy=_mean_offdiag(W),
        status=tuple(status), settings=settings,
    )


def _feasible_rank(states: list[np.ndarray], kw: dict[str, Any]) -> int | None:
    if kw.get("rank") is None:
        return None
    smallest = min(fit_havok(s, n_delays=kw["n_delays"], delay_interval=kw.get("delay_interval", 1),
                             warn=False).full_rank for s in states)
    return int(min(kw["rank"], smallest))


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


__all__ = ["DegeneracyResult", "compare_to_references", "compute_solution_degeneracy"]
