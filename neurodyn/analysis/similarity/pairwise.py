"""Distance matrices over many networks, with per-network preprocessing done once."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from neurodyn._budget import MAX_MEMORY, check_memory
from neurodyn._checks import check_device, check_setting
from neurodyn._seed import SeedLike, resolve_seed
from neurodyn.analysis.similarity import _compare_rdms as crdm
from neurodyn.analysis.similarity._cca import cca_similarity, pwcca, svcca
from neurodyn.analysis.similarity._cka import cka
from neurodyn.analysis.similarity._havok import (
    as_trajectories,
    check_fit_options,
    check_rank,
    embedded_length,
    hankel_coordinates,
    lagged_grams,
    operator_from_grams,
    warn_below_full_rank,
)
from neurodyn.analysis.similarity._procrustes import (
    check_alpha,
    partial_whitening,
    procrustes_distance,
    warn_degenerate_whitening,
    whitened_rank,
)
from neurodyn.analysis.similarity._rdm import rdm
from neurodyn.analysis.similarity._validate import (
    ACTIVITY,
    as_matrix,
    check_choice,
    check_variance,
    in_layout,
    to_numpy,
    warn_few_samples,
)
from neurodyn.analysis.similarity.dsa import (
    SCORES,
    align_scores,
    check_search,
    dsa_distance,
    operator_distance,
    prepare_pairs,
)

PER_PAIR: dict[str, Callable[..., float]] = {
    "procrustes": procrustes_distance, "cka": cka, "cca": cca_similarity, "svcca": svcca, "pwcca": pwcca,
}
_BLOCK = 2048


def _flat(a: Any, name: str) -> np.ndarray:
    a = in_layout(a, name, ACTIVITY)
    arr = np.asarray(a.detach().cpu() if type(a).__module__.startswith("torch") else a)
    return as_matrix(arr.reshape(-1, arr.shape[-1]) if arr.ndim == 3 else arr, name)


def _pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(n, k=1)


def pair_block(n_samples: int, n_units: int) -> int:
    """Pairs per batch: at most ``_BLOCK``, and few enough that the gathered ``(pair, sample, unit)``
    features of both networks and the ``(pair, unit, unit)`` products with their SVD workspace stay
    within :data:`MAX_MEMORY`."""
    per_pair = 8.0 * (2 * n_samples * n_units + 3 * n_units**2)
    return int(max(1, min(_BLOCK, MAX_MEMORY // per_pair)))


def _nuclear_and_frob(F: torch.Tensor, i: np.ndarray, j: np.ndarray, nuclear: bool, progress: bool):
    """``||F_i^T F_j||_*`` (or squared Frobenius) for all listed pairs, in memory-bounded blocks."""
    from tqdm.auto import tqdm

    block = pair_block(F.shape[1], F.shape[2])
    out = torch.empty(len(i), dtype=F.dtype, device=F.device)
    for s in tqdm(range(0, len(i), block), disable=not progress, desc="pairwise"):
        M = F[i[s:s + block]].transpose(-1, -2) @ F[j[s:s + block]]
        out[s:s + block] = torch.linalg.svdvals(M).sum(-1) if nuclear else (M**2).sum((-1, -2))
    return out.cpu().numpy()


def _prepare_procrustes(m: np.ndarray, *, alpha: float = 1.0, center: bool = True) -> PreparedActivity:
    check_alpha(alpha)
    mc = m - m.mean(axis=0) if center else m
    return PreparedActivity("procrustes", {"features": mc @ partial_whitening(mc, alpha)},
                            {"alpha": float(alpha), "center": bool(center), "n_samples": int(m.shape[0]),
                             "whitened_rank": whitened_rank(mc) if alpha == 0 else 0})


def _procrustes(prepared: list[PreparedActivity], *, kind="angular", device="cpu", progress=True):
    n_units = max(p.arrays["features"].shape[1] for p in prepared)
    feats = [np.pad(p.arrays["features"], ((0, 0), (0, n_units - p.arrays["features"].shape[1])))
             for p in prepared]
    info = prepared[0].info
    top = sorted(p.info["whitened_rank"] for p in prepared)[-2:]  # the pair closest to the degenerate regime
    warn_degenerate_whitening(info["n_samples"] - bool(info["center"]), top[0], top[1], info["alpha"])
    F = torch.as_tensor(np.stack(feats), dtype=torch.float64, device=device)
    norms = np.linalg.norm(np.stack(feats), axis=(1, 2))
    i, j = _pairs(len(prepared))
    nuc = _nuclear_and_frob(F, i, j, True, progress)
    if kind == "angular":
        for k in np.unique(np.r_[i, j]):
            check_variance(norms[k], "angular Procrustes distance")
        return np.arccos(np.clip(nuc / (norms[i] * norms[j]), -1.0, 1.0))
    sq = norms[i] ** 2 + norms[j] ** 2 - 2.0 * nuc
    return np.sqrt(np.maximum(sq, 0.0) / info["n_samples"])


def _linear_cka(mats, *, device="cpu", progress=True):
    feats = [m - m.mean(axis=0) for m in mats]
    n_units = max(f.shape[1] for f in feats)
    warn_few_samples(feats[0].shape[0], n_units, "biased CKA")  # as cka does for the pairs it biases
    F = torch.as_tensor(np.stack([np.pad(f, ((0, 0), (0, n_units - f.shape[1]))) for f in feats]),
                        dtype=torch.float64, device=device)
    self_hsic = np.sqrt(((F.transpose(-1, -2) @ F) ** 2).sum((-1, -2)).cpu().numpy())
    for h in self_hsic:
        check_variance(h, "CKA")
    i, j = _pairs(len(mats))
    return _nuclear_and_frob(F, i, j, False, progress) / (self_hsic[i] * self_hsic[j])


def _rsa(mats, *, rdm_method="euclidean", compare_method="spearman", device="cpu", progress=True):
    """``(network, network)`` matrix of ``compare_rdms(rdm(X_i), rdm(X_j))``, each RDM built, validated
    and ranked once; the comparisons are one matrix product (per pair only for Kendall's tau-a)."""
    from tqdm.auto import tqdm

    check_choice(compare_method, crdm.METHODS, "compare_method")
    if rdm_method == "crossnobis":
        raise ValueError("rdm_method='crossnobis' needs per-observation labels (conditions=, runs=) that "
                         "pairwise RSA cannot take; build each RDM with rdm(..., method='crossnobis') and "
                         "compare them with compare_rdms, or choose another rdm_method")
    n_pairs = mats[0].shape[0] * (mats[0].shape[0] - 1) // 2
    check_memory("pairwise RSA", 8.0 * 4 * len(mats) * n_pairs, f"4 ({len(mats)}, {n_pairs}) float64 arrays "
                 "of RDM entries", "use fewer conditions or networks")
    V = np.stack([crdm.upper_triangle(rdm(m, method=rdm_method), f"rdm of activity[{k}]")
                  for k, m in enumerate(mats)])
    if V.shape[1] < 2:
        raise ValueError("RSA needs at least 3 conditions (samples) per network")
    if compare_method == "kendall_tau_a":
        ties = [crdm._tie_pairs(v) for v in V]
        n0 = V.shape[1] * (V.shape[1] - 1) / 2
        S = np.diag([(n0 - t) / n0 for t in ties])
        i, j = _pairs(len(mats))
        for a, b in tqdm(zip(i, j), total=len(i), disable=not progress, desc="pairwise RSA"):
            S[a, b] = S[b, a] = crdm._kendall_tau_a(V[a], V[b], ties[a], ties[b])
        return S
    F, G = crdm.rdm_features(V, compare_method)
    Ft, Gt = (torch.as_tensor(M, dtype=torch.float64, device=device) for M in (F, G))
    S = crdm.cosine_matrix(F, G, (Ft @ Gt.T).cpu().numpy())
    S = (S + S.T) / 2.0
    np.fill_diagonal(S, 1.0)
    return S


def _prepare_dsa(a: np.ndarray, *, n_delays: int, rank: int | None = None, delay_interval: int = 1,
                 method: str = "pcr", ridge: float = 1e-8) -> PreparedActivity:
    check_fit_options(method, ridge)
    check_rank(rank)
    S, full_rank, V = hankel_coordinates(a, n_delays=n_delays, delay_interval=delay_interval)
    n_cols = full_rank if rank is None or method == "rrr" else min(int(rank), full_rank)
    past_gram, cross_gram = lagged_grams(V, n_cols)
    fit = {"n_delays": int(n_delays), "delay_interval": int(delay_interval), "method": method,
           "ridge": float(ridge), "rank": None if rank is None else int(rank)}
    return PreparedActivity("dsa", {"past_gram": past_gram, "cross_gram": cross_gram},
                            {**fit, "full_rank": full_rank, "n_cols": n_cols})


DSA_FIT = ("n_delays", "delay_interval", "method", "ridge")


def _dsa(prepared: list[PreparedActivity], *, rank=None, score="angular", n_restarts=32, max_rounds=3,
         max_iter=500, seed: SeedLike = 0, device="cpu", progress=True):
    from tqdm.auto import tqdm

    if score not in SCORES:
        raise ValueError(f"score must be one of {SCORES}; got {score!r}")
    check_search(n_restarts, max_rounds, max_iter)
    check_rank(rank)
    seed = resolve_seed(seed)  # one set of random starts for every block of pairs
    ops, below = [], []
    for k, p in enumerate(prepared):
        r = int(rank) if rank is not None else p.info["rank"] or p.info["full_rank"]
        if not 1 <= r <= p.info["n_cols"]:
            raise ValueError(f"rank must lie in [1, {p.info['n_cols']}] for activity[{k}] (its Hankel matrix "
                             f"rank, or the rank it was prepared at); got {r}")
        if r < p.info["full_rank"]:
            below.append((r, p.info["full_rank"]))
        ops.append(operator_from_grams(p.arrays["past_gram"], p.arrays["cross_gram"], rank=r,
                                       method=p.info["method"], ridge=p.info["ridge"]))
    if below:
        warn_below_full_rank(*below[0], stacklevel=4, suffix=f" ({len(below)} networks)")
    i, j = _pairs(len(ops))
    if score == "wasserstein":
        return np.array([operator_distance(ops[a], ops[b], score=score) for a, b in zip(i, j)])
    out = np.empty(len(i))
    for s in tqdm(range(0, len(i), 256), disable=not progress, desc="pairwise DSA"):
        idx = range(s, min(s + 256, len(i)))
        sizes: dict[int, list[int]] = {}
        for k in idx:
            sizes.setdefault(max(ops[i[k]].shape[0], ops[j[k]].shape[0]), []).append(k)
        for ks in sizes.values():
            prepared_pairs = prepare_pairs([(ops[i[k]], ops[j[k]]) for k in ks], n_restarts, seed)
            out[ks] = align_scores(prepared_pairs, score, max_iter=max_iter, device=device,
                                   n_restarts=n_restarts, max_rounds=max_rounds, seed=seed)
    return out


@dataclass(frozen=True)
class PreparedActivity:
    """One network's activity preprocessed once for a measure of :func:`pairwise_distances`.

    Made by :func:`prepare_activity`; a sequence of them (all for the same measure and options) can be
    passed to :func:`pairwise_distances` in place of the activity, which then does only pairwise work.
    Store one with :meth:`to_xarray` / :meth:`from_xarray` (e.g. per network of a sweep).

    Attributes
    ----------
    metric : str
        ``"procrustes"`` or ``"dsa"``.
    arrays : dict of str to ndarray (float64)
        ``procrustes``: ``features`` ``(sample, unit)``, the centred, partially whitened activity.
        ``dsa``: ``past_gram`` and ``cross_gram``, ``(coord, coord)``: ``P^T P`` and ``P^T F`` of the
        leading eigen-time-delay coordinates (``P`` at times ``t``, ``F`` at ``t + 1``), from which the
        HAVOK operator of any rank up to ``coord`` follows.
    info : dict
        The options it was prepared with and scalars (``n_samples``, ``whitened_rank``, ``layout``: the
        ``(trial, time)`` or ``(sample,)`` sizes, so that networks of other layouts are refused when
        paired; ``full_rank``, ``n_cols``).

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.similarity import prepare_activity
    >>> X = np.random.default_rng(0).normal(size=(40, 3))  # (sample, unit)
    >>> p = prepare_activity(X, metric="procrustes")
    >>> p.metric, p.arrays["features"].shape, p.info["n_samples"]
    ('procrustes', (40, 3), 40)
    """

    metric: str
    arrays: dict[str, np.ndarray] = field(repr=False)
    info: dict[str, Any]

    def to_xarray(self, prefix: str = ""):
        """``xarray.Dataset``: each array as ``<prefix><name>`` on dims ``<prefix><name>_0``, ...; the
        metric and info as the attribute ``<prefix>prepared`` (JSON)."""
        import json

        import xarray as xr

        return xr.Dataset({f"{prefix}{k}": ([f"{prefix}{k}_{d}" for d in range(v.ndim)], v)
                           for k, v in self.arrays.items()},
                          attrs={f"{prefix}prepared": json.dumps({"metric": self.metric, "info": self.info})})

    @classmethod
    def from_xarray(cls, ds, prefix: str = "") -> PreparedActivity:
        """Rebuild from :meth:`to_xarray`'s dataset (or one it was merged into)."""
        import json

        meta = json.loads(ds.attrs[f"{prefix}prepared"])
        names = {"procrustes": ("features",), "dsa": ("past_gram", "cross_gram")}[meta["metric"]]
        arrays = {k: np.asarray(ds[f"{prefix}{k}"].values, dtype=np.float64) for k in names}
        return cls(meta["metric"], arrays,
                   meta["info"])


PREPARE: dict[str, Callable[..., PreparedActivity]] = {"procrustes": _prepare_procrustes, "dsa": _prepare_dsa}


def prepare_activity(activity: Any, *, metric: str, **kwargs: Any) -> PreparedActivity:
    """Preprocess one network's activity for :func:`pairwise_distances`, once.

    Parameters
    ----------
    activity : array, tensor or DataArray
        ``(trial, time, unit)`` trajectories, or ``(sample, unit)`` for ``procrustes`` (a DataArray is
        transposed by its dim names); never modified.
    metric : {"procrustes", "dsa"}
        ``procrustes``: centring and partial whitening (options ``alpha``, ``center`` of
        :func:`procrustes_distance`). ``dsa``: the Hankel embedding, its SVD and the lagged Gram matrices of
        the HAVOK regression (options ``n_delays``, ``rank``, ``delay_interval``, ``method``, ``ridge`` of
        :func:`fit_havok`; with ``rank`` the leading ``rank`` coordinates are kept, so the pairwise stage
        may use any rank up to it).
    **kwargs
        Those options; the pairwise options (``kind``; ``score``, ``n_restarts``, ``seed``, ...) go to
        :func:`pairwise_distances`.

    Returns
    -------
    PreparedActivity

    Raises
    ------
    ValueError
        For another metric, bad activity or options (as the measure itself).
    TypeError
        For ``metric="dsa"`` without ``n_delays``; or complex input (pass real data, e.g. ``.real``).

    Examples
    --------
    Prepared once, compared pairwise: the same matrix as from the raw activity.

    >>> import numpy as np
    >>> from neurodyn.analysis.similarity import pairwise_distances, prepare_activity
    >>> rng = np.random.default_rng(0)
    >>> acts = [rng.normal(size=(2, 30, 3)) for _ in range(3)]  # (trial, time, unit) per network
    >>> prepared = [prepare_activity(a, metric="dsa", n_delays=2) for a in acts]
    >>> D1 = pairwise_distances(prepared, metric="dsa", n_restarts=4, progress=False, device="cpu")
    >>> D2 = pairwise_distances(acts, metric="dsa", n_delays=2, n_restarts=4, progress=False, device="cpu")
    >>> bool(np.array_equal(D1.values, D2.values)), D1.shape
    (True, (3, 3))
    """
    if metric not in PREPARE:
        raise ValueError(f"prepare_activity supports {sorted(PREPARE)}; got {metric!r} (pass the activity "
                         "itself to pairwise_distances for other measures)")
    return _prepare(activity, metric, "activity", kwargs)


def _prepare(activity: Any, metric: str, name: str, kwargs: dict[str, Any]) -> PreparedActivity:
    _refuse_unknown(f"prepare_activity(metric={metric!r})", kwargs, _keyword_options(PREPARE[metric]),
                    " (pass the pairwise ones to pairwise_distances)")
    if metric == "dsa":
        _check_n_delays(kwargs)
        a = as_trajectories(activity, name)
        embedded_length(a, kwargs["n_delays"], kwargs.get("delay_interval", 1), name)
        return _prepare_dsa(a, **kwargs)
    p = _prepare_procrustes(_flat(activity, name), **kwargs)
    p.info["layout"] = list(_lead_shape(activity, name))  # (trial, time) or (sample,): checked when paired
    return p


def _pairwise_prepared(prepared: list[PreparedActivity], metric: str, device: Any, progress: bool,
                       kwargs: dict[str, Any]) -> np.ndarray:
    """The K(K-1)/2 values (upper triangle, row order) of prepared networks: only pairwise work."""
    if metric == "dsa":
        return _dsa(prepared, device=device, progress=progress, **kwargs)
    if len({p.info["n_samples"] for p in prepared}) != 1:
        raise ValueError("all networks need the same samples (conditions x time) for this measure; got "
                         f"sample counts {sorted({p.info['n_samples'] for p in prepared})}")
    return _procrustes(prepared, device=device, progress=progress, **kwargs)


def _check_prepared(prepared: Sequence[PreparedActivity], metric: Any, kwargs: dict[str, Any]) -> None:
    for k, p in enumerate(prepared):
        if not isinstance(p, PreparedActivity):
            raise ValueError(f"activity[{k}] is not prepared while activity[0] is; prepare every network "
                             "with prepare_activity, or none")
        if p.metric != metric:
            raise ValueError(f"activity[{k}] was prepared for {p.metric!r}, not {metric!r}; prepare it again")
    if metric == "procrustes":  # stored before the layout was recorded: not known
        _check_layouts([tuple(p.info["layout"]) if "layout" in p.info else None for p in prepared])
    fit = ("alpha", "center") if metric == "procrustes" else DSA_FIT
    for name in fit:
        values = {json_safe(p.info[name]) for p in prepared}
        if len(values) > 1:
            raise ValueError(f"networks were prepared with different {name} ({sorted(values, key=str)}); "
                             "prepare them with the same options")
        if name in kwargs and json_safe(kwargs[name]) not in values:
            raise ValueError(f"{name}={kwargs[name]!r} differs from the {name} the activity was prepared "
                             f"with ({values.pop()!r}); drop it or prepare again")


def _check_n_delays(kwargs: dict[str, Any]) -> None:
    if "n_delays" not in kwargs:
        raise TypeError("metric='dsa' needs n_delays= (the number of delay-embedded copies of the activity, "
                        "as for dsa_distance; a few, e.g. n_delays=5, is typical)")


def _options(metric: Any) -> tuple[str, ...] | None:
    """The keyword options a named measure takes (those of its per-pair function); None for a callable."""
    if not isinstance(metric, str):
        return None
    fn = {"rsa": _rsa, "dsa": dsa_distance}.get(metric, PER_PAIR.get(metric))
    return None if fn is None else _keyword_options(fn, skip=("device", "progress"))


def _keyword_options(fn: Callable[..., Any], skip: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The keyword-only parameters of ``fn``, in order, but those in ``skip``."""
    import inspect

    return tuple(k for k, v in inspect.signature(fn).parameters.items()
                 if v.kind is inspect.Parameter.KEYWORD_ONLY and k not in skip)


def _refuse_unknown(call: str, kwargs: dict[str, Any], allowed: tuple[str, ...], hint: str = "") -> None:
    """A one-line ``TypeError`` naming the first option of ``kwargs`` that ``call`` does not take."""
    unknown = sorted(set(kwargs) - set(allowed))
    if unknown:
        raise TypeError(f"{call} got an unexpected keyword argument {unknown[0]!r}; its options are "
                        f"{list(allowed)}{hint}")


def _check_options(metric: Any, kwargs: dict[str, Any]) -> None:
    """A one-line ``TypeError`` for an option the measure does not take (every path, fast ones included)."""
    if isinstance(metric, str) and metric not in (*PER_PAIR, "dsa", "rsa"):
        choices = sorted([*PER_PAIR, "dsa", "rsa"])
        raise ValueError(f"unknown metric {metric!r}; choose one of {choices} or pass a callable")
    allowed = _options(metric)
    if allowed is not None:
        _refuse_unknown(f"metric={metric!r}", kwargs, allowed)


def _lead_shape(a: Any, name: str) -> tuple[int, ...]:
    """``(trial, time)`` of trajectories or ``(sample,)`` of a flat matrix (a DataArray in its layout)."""
    return tuple(np.shape(in_layout(a, name, ACTIVITY)))[:-1]


def _check_layouts(leads: Sequence[tuple[int, ...] | None]) -> None:
    """Refuse (trial, time, unit) activity whose (trial, time) layouts differ, or next to flat (sample,
    unit) activity: flattened to samples, they would pair samples that do not correspond, even when the
    sample counts agree. ``leads[k]`` is :func:`_lead_shape` of ``activity[k]`` (None: not known)."""
    three = [(k, lead) for k, lead in enumerate(leads) if lead is not None and len(lead) == 2]
    flat = next(((k, lead) for k, lead in enumerate(leads) if lead is not None and len(lead) == 1), None)
    if three and flat is not None:
        raise ValueError(f"all networks need the same layout for this measure, which pairs samples: "
                         f"activity[{three[0][0]}] is (trial, time, unit) with (trial, time) = {three[0][1]} "
                         f"but activity[{flat[0]}] is flat (sample, unit) with {flat[1][0]} samples; reshape "
                         "both the same way, e.g. each a.reshape(-1, n_units), or pass all as (trial, time, "
                         "unit)")
    for k, lead in three[1:]:
        if lead != three[0][1]:
            first, lead0 = three[0]
            raise ValueError(f"all networks need the same samples for this measure, which pairs them: "
                             f"activity[{first}] has (trial, time) = {lead0} but activity[{k}] has {lead}; "
                             "use the same trials and times for every network (dsa does not pair them)")


def _network_list(activity: Any) -> list[Any]:
    """The networks as a list (any iterable of them); a one-line ``TypeError`` for a mapping."""
    if isinstance(activity, Mapping):
        raise TypeError(f"activity must be a sequence of arrays, got a {type(activity).__name__}; pass "
                        "list(d.values()) and names=list(d)")
    return list(activity)


def network_names(names: Sequence[str] | None, n: int) -> list[str]:
    """One unique label per network (default ``"0"``, ``"1"``, ...)."""
    if isinstance(names, str):
        raise TypeError(f"names must be a list with one label per network, not the str {names!r} (it would "
                        "be split into characters); pass a list, e.g. names=['net0', 'net1']")
    labels = [str(k) for k in range(n)] if names is None else [str(s) for s in names]
    if len(labels) != n:
        raise ValueError(f"names has {len(labels)} entries for {n} networks")
    repeated = next((s for s in labels if labels.count(s) > 1), None)
    if repeated is not None:
        raise ValueError(f"names must be unique; {repeated!r} appears {labels.count(repeated)} times (label "
                         "each network once, e.g. with its seed)")
    return labels


def json_safe(v: Any) -> Any:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v


def pairwise_distances(
    activity: Sequence[Any],
    *,
    metric: str | Callable[..., float] = "procrustes",
    names: Sequence[str] | None = None,
    device: Any = None,
    progress: bool = True,
    **kwargs: Any,
):
    """Matrix of a similarity measure between every pair of networks.

    Each network is preprocessed once (centring and partial whitening for ``procrustes``, centring and
    its own HSIC for linear ``cka``, its RDM, validated and ranked, for ``rsa``, the HAVOK/DMD operator
    fit for ``dsa``) and the K(K-1)/2 comparisons then run batched in torch (float64) on ``device``
    (for ``rsa`` with Kendall's tau-a, one rank comparison per pair). Other measures (``cca``, ``svcca``,
    ``pwcca``, ``cka`` with a non-linear kernel or debiased, any callable ``f(X, Y, **kwargs)``) are
    called once per pair.

    Parameters
    ----------
    activity : sequence (or other iterable) of arrays, tensors or DataArrays
        One entry per network: ``(trial, time, unit)`` trajectories (flattened to ``(sample, unit)`` for
        the representational measures) or ``(sample, unit)`` matrices, all in the same one of these two
        layouts; samples (conditions) must be paired across networks for all measures but ``dsa``. Unit
        counts may differ. A DataArray is transposed by its dim names (``unit``, ``trial``, ``time``, ...,
        see ``docs/similarity.md``). Never modified.
    metric : {"procrustes", "cka", "rsa", "dsa", "cca", "svcca", "pwcca"} or callable
        ``rsa``: ``compare_rdms(rdm(X_i, method=rdm_method), rdm(X_j, method=rdm_method),
        method=compare_method)`` with keyword options ``rdm_method`` (default ``"euclidean"``; any
        :func:`rdm` method that needs no labels or noise covariance) and ``compare_method`` (default
        ``"spearman"``; any :func:`compare_rdms` method); the samples are the conditions.
    names : list of str, optional
        Unique network labels (default ``"0"``, ``"1"``, ...); not one ``str``.
    device : torch device, optional
        Default: CUDA when available, else CPU.
    progress : bool
        tqdm progress bar over blocks of pairs.
    **kwargs
        Options of the per-pair function (:func:`procrustes_distance`, :func:`cka`, :func:`dsa_distance`,
        ...); an option the measure does not take is refused. ``dsa`` needs ``n_delays`` (as
        :func:`dsa_distance`; there is no default).

    Returns
    -------
    xarray.DataArray, dims (network, network_)
        Symmetric, the per-pair value on each off-diagonal entry; the diagonal holds the measure of a
        network with itself (0 for distances, 1 for similarities; for ``rsa`` with ``kendall_tau_a`` the
        fraction of untied entries of the RDM). ``attrs`` record the metric and options.

    Raises
    ------
    ValueError
        For fewer than 2 networks, mismatched sample counts or (trial, time) layouts, or trajectories
        next to flat ``(sample, unit)`` activity (for the measures that pair samples, all but ``dsa``),
        bad inputs (DataArray dims that contradict the layout included), an unknown metric, repeated
        ``names`` or a malformed or unavailable ``device``.
    TypeError
        For an option the measure does not take (e.g. a misspelt one), ``dsa`` without ``n_delays``,
        ``activity`` given as a mapping, ``names`` given as one ``str``, or complex input (pass real data,
        e.g. ``.real``).

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.similarity import pairwise_distances
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(50, 4))
    >>> Q, _ = np.linalg.qr(rng.normal(size=(4, 4)))
    >>> activity = [X, X @ Q, rng.normal(size=(50, 6))]  # (sample, unit) per network
    >>> D = pairwise_distances(activity, metric="procrustes", names=["a", "b", "c"], progress=False)
    >>> D.dims, D.shape
    (('network', 'network_'), (3, 3))
    >>> round(float(D.sel(network="a", network_="b")), 6), bool(D[0, 2] > 0.5)  # a and b: one rotation apart
    (0.0, True)
    """
    import xarray as xr

    activity = _network_list(activity)
    if len(activity) < 2:
        raise ValueError(f"pairwise_distances needs at least 2 networks; got {len(activity)}")
    n = len(activity)
    names = network_names(names, n)
    device = check_device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    label = metric if isinstance(metric, str) else getattr(metric, "__name__", "callable")
    similarity = label in ("cka", "cca", "svcca", "pwcca", "rsa")
    i, j = _pairs(n)
    diagonal = 1.0 if similarity else 0.0
    _check_options(metric, kwargs)
    if metric != "dsa" and not any(isinstance(a, PreparedActivity) for a in activity):
        _check_layouts([_lead_shape(a, f"activity[{k}]") for k, a in enumerate(activity)])
    if any(isinstance(a, PreparedActivity) for a in activity):
        _check_prepared(activity, metric, kwargs)
        pair_kw = {k: v for k, v in kwargs.items() if k not in (*DSA_FIT, "alpha", "center")}
        values = _pairwise_prepared(list(activity), metric, device, progress, pair_kw)
    elif metric in PREPARE:
        fit_names = ("alpha", "center") if metric == "procrustes" else (*DSA_FIT, "rank")
        fit_kw = {k: v for k, v in kwargs.items() if k in fit_names}
        pair_kw = {k: v for k, v in kwargs.items() if k not in fit_names}
        prepared = [_prepare(a, metric, f"activity[{k}]", fit_kw) for k, a in enumerate(activity)]
        values = _pairwise_prepared(prepared, metric, device, progress, pair_kw)
    else:
        mats = [_flat(a, f"activity[{k}]") for k, a in enumerate(activity)]
        if len({m.shape[0] for m in mats}) != 1:
            raise ValueError("all networks need the same samples (conditions x time) for this measure; got "
                             f"sample counts {sorted({m.shape[0] for m in mats})}")
        if metric == "rsa":
            kwargs = {"rdm_method": "euclidean", "compare_method": "spearman", **kwargs}
            S = _rsa(mats, device=device, progress=progress, **kwargs)
            values, diagonal = S[i, j], np.diag(S)
        elif (metric == "cka" and kwargs.get("kernel", "linear") == "linear" and not kwargs.get("debiased")
              and kwargs.get("sigma") is None):  # cka itself refuses sigma with the linear kernel
            values = _linear_cka(mats, device=device, progress=progress)
        else:
            fn = metric if callable(metric) else PER_PAIR[metric]
            values = np.array([fn(mats[a], mats[b], **kwargs) for a, b in zip(i, j)])
    D = np.zeros((n, n))
    D[i, j] = D[j, i] = values
    D[np.arange(n), np.arange(n)] = diagonal
    attrs = {"metric": label, "kind": "similarity" if similarity else "distance"}
    attrs.update({k: str(v) if v is None or isinstance(v, (tuple, list)) else v for k, v in kwargs.items()})
    return xr.DataArray(D, dims=("network", "network_"), coords={"network": names, "network_": names},
                        name=f"{label}_pairwise", attrs=attrs)


def embed_distances(D: Any, *, n_components: int = 2, method: str = "mds", seed: SeedLike = 0) -> np.ndarray:
    """Low-dimensional embedding of networks from their distance matrix, for plots.

    Parameters
    ----------
    D : xarray.DataArray, array or tensor, shape (network, network)
        Symmetric distances with zero diagonal (e.g. from :func:`pairwise_distances`); a tensor may be on
        any device.
    n_components : int
        Dimensions of the embedding, ``1 <= n_components <= network``.
    method : {"mds"}
        Metric multidimensional scaling (``sklearn.manifold.MDS``, precomputed dissimilarities).
    seed : SeedLike
        Seeds the MDS initialisation.

    Returns
    -------
    ndarray, shape (network, n_components)

    Raises
    ------
    ValueError
        For a non-numeric, non-square, asymmetric or non-finite matrix, a similarity matrix from
        :func:`pairwise_distances` (pass ``1 - S``), fewer than 2 networks, ``n_components`` not an integer
        in ``[1, network]``, or an unknown method.
    TypeError
        For a complex matrix.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.similarity import embed_distances
    >>> points = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 4.0]])
    >>> D = np.linalg.norm(points[:, None] - points[None], axis=-1)  # a 3-4-5 triangle
    >>> Y = embed_distances(D, n_components=2, seed=0)
    >>> Y.shape, round(float(np.linalg.norm(Y[1] - Y[2])), 2)  # MDS keeps the distances
    ((3, 2), 5.0)
    """
    from sklearn.manifold import MDS

    M = to_numpy(D, "D")
    if M.ndim != 2 or M.shape[0] != M.shape[1] or not np.all(np.isfinite(M)):
        raise ValueError(f"D must be a finite square (network, network) matrix; got shape {M.shape}")
    if M.shape[0] < 2:
        raise ValueError(f"D must hold the distances of at least 2 networks; got shape {M.shape}")
    check_setting("n_components", n_components, 1, high=M.shape[0], integer=True,
                  hint=f" (at most the {M.shape[0]} networks of D)")
    if not np.allclose(M, M.T, atol=1e-10):
        raise ValueError("D must be symmetric; symmetrise it first, e.g. (D + D.T) / 2")
    if np.allclose(np.diag(M), 1.0, atol=1e-6):
        raise ValueError("D has ones on its diagonal, like a similarity (e.g. cka, rsa), where distances "
                         "have a zero diagonal; pass 1 - S")
    if np.any(M < 0) or not np.allclose(np.diag(M), 0.0, atol=1e-6):
        raise ValueError("D must hold non-negative distances with a zero diagonal")
    if method != "mds":
        raise ValueError(f"method must be 'mds'; got {method!r}")
    import inspect

    params = inspect.signature(MDS).parameters
    key = {"metric": "precomputed"} if "metric_mds" in params else {"dissimilarity": "precomputed"}
    extra = {"init": "random"} if "init" in params else {}
    mds = MDS(n_components=n_components, random_state=resolve_seed(seed) % 2**32, n_init=4, **key, **extra)
    return mds.fit_transform(M)


__all__ = ["PreparedActivity", "embed_distances", "pairwise_distances", "prepare_activity"]
