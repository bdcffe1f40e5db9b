"""The sweep's results gathered into one labelled dataset: one dim per grid key, plus ``seed``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from neurodyn._result import Result

__all__ = ["SweepResult"]

#: per-cell scalars of a DegeneracyResult
CELL_SUMMARIES = ("behaviour_degeneracy_id", "behaviour_degeneracy_ood", "dynamics_degeneracy",
                  "weight_degeneracy")
#: variables that hold wall-clock times (they differ from run to run)
TIMING = ("train_seconds", "analysis_seconds")


@dataclass(frozen=True)
class SweepResult(Result):
    """A sweep's gathered results (format ``neurodyn.sweep``), with what this run computed.

    Attributes
    ----------
    dataset : xarray.Dataset
        Dims: one per grid key (coordinates: its values), ``seed`` and ``seed_`` (second network of a
        pair). Per network (grid..., seed): ``status`` (``"ok"``/``"failed"``), ``error``, ``key``,
        ``train_status``, ``iterations_run``, ``final_train_loss``, ``id_<metric>`` and ``ood_<metric>``
        (task metrics on the in-distribution batch and on ``task.ood()``'s; NaN where absent),
        fixed-point counts ``n_fixed_points``, ``n_stable``, ``n_saddle``, ``n_unstable``,
        ``n_marginal``, ``n_slow_points``, graph counts, ``topology`` (class of its fixed-point
        graph within the cell, -1 if none) and ``train_seconds``/``analysis_seconds`` (wall clock).
        Per cell (grid...): ``behaviour_degeneracy_id``, ``behaviour_degeneracy_ood``,
        ``dynamics_degeneracy``, ``weight_degeneracy`` (Huang et al. 2025), the same four of the untrained
        networks (their initial weights) prefixed ``baseline_``, ``n_topologies``,
        ``n_networks`` (finished) and ``cell_status``. Per pair (grid..., seed, seed_):
        ``dynamics_distance`` and ``weight_distance``. Attributes: the spec (JSON) and the grid keys.
    n_computed, n_skipped, n_failed : int
        Items trained in this run, found finished, failed (in this run or before).
    status : ndarray of str, shape (item,)
        Per network, flattened in grid order.

    Examples
    --------
    >>> import tempfile
    >>> from neurodyn.io import load
    >>> from neurodyn.sweep import run_sweep
    >>> spec = {"task": {"name": "flipflop", "n_bits": 1, "n_steps": 8}, "model": {"n_units": 4},
    ...         "training": {"n_iterations": 2, "batch_size": 4, "eval_every": 0},
    ...         "analysis": {"n_trials": 8, "n_inits": 8, "dynamics_metric": "procrustes"},
    ...         "grid": {"model.gain": [1.0]}, "seeds": 2}
    >>> with tempfile.TemporaryDirectory() as out:
    ...     result = run_sweep(spec, out, workers=0, progress=False)
    ...     back = load(out + "/sweep.nc")
    >>> print(result)
    sweep of 2 networks: 2 computed, 0 skipped (finished before), 0 failed
    >>> result.status.tolist(), type(back).__name__, back.n_items
    (['ok', 'ok'], 'SweepResult', 2)
    """

    dataset: Any
    n_computed: int = 0
    n_skipped: int = 0
    n_failed: int = 0

    FORMAT: ClassVar[str] = "neurodyn.sweep"
    FORMAT_VERSION: ClassVar[int] = 1
    REQUIRED: ClassVar[tuple[str, ...]] = ("status", "key", "dynamics_degeneracy", "weight_degeneracy")

    @property
    def status(self) -> np.ndarray:
        return np.asarray(self.dataset["status"].values).ravel()

    @property
    def n_items(self) -> int:
        return int(self.status.size)

    def to_xarray(self):
        """The dataset (with the format attributes)."""
        ds = self.dataset.copy()
        ds.attrs.update(self.format_attrs())
        return ds

    @classmethod
    def from_xarray(cls, ds) -> SweepResult:
        """Rebuild from a dataset written by :meth:`save` (this run's counts are not stored: 0).

        A dataset of another result type (its ``format`` attribute) or without the sweep's variables
        (``REQUIRED``) raises a one-line :class:`~neurodyn.io.ResultFileError` (a ``ValueError``)."""
        from neurodyn._result import ResultFileError, check_format

        if "format" in getattr(ds, "attrs", {}):
            check_format(ds, cls)
        missing = [name for name in cls.REQUIRED if name not in getattr(ds, "variables", {})]
        if missing:
            raise ResultFileError(f"not a {cls.FORMAT} dataset: it lacks the variables {', '.join(missing)}; "
                                  "give the dataset of run_sweep or SweepResult.load")
        return cls(dataset=ds, n_failed=int((np.asarray(ds["status"].values) != "ok").sum()))

    def __str__(self) -> str:
        return (f"sweep of {self.n_items} networks: {self.n_computed} computed, {self.n_skipped} skipped "
                f"(finished before), {self.n_failed} failed")


def build_dataset(spec, items, metrics: dict[str, dict], errors: dict[str, str], cells: dict[tuple, Any]):
    """Assemble the :class:`SweepResult` dataset from item metrics and cell summaries."""
    import xarray as xr

    dims = spec.dims
    shape = tuple(len(v) for v in spec.grid.values())
    n_seed = len(spec.seeds)
    index = {cell: np.unravel_index(i, shape) for i, cell in enumerate(spec.cells)} if shape else {}
    seed_pos = {s: i for i, s in enumerate(spec.seeds)}
    item_dims, pair_dims = (*dims, "seed"), (*dims, "seed", "seed_")

    def arr(fill, dtype=np.float64, extra=(n_seed,)):
        return np.full((*shape, *extra), fill, dtype=dtype)

    data: dict[str, np.ndarray] = {
        "status": arr("missing", object), "error": arr("", object), "key": arr("", object),
        "train_status": arr("", object), "iterations_run": arr(-1, np.int64),
        "final_train_loss": arr(np.nan), "topology": arr(-1, np.int64),
        **{t: arr(np.nan) for t in TIMING},
    }
    metric_names = {part: sorted({k for m in metrics.values() for k in m.get(part, {})})
                    for part in ("id", "ood")}
    for part, names in metric_names.items():
        for name in names:
            data[f"{part}_{name}"] = arr(np.nan)
    count_names = sorted({k for m in metrics.values() for k in m.get("fixed_points", {})})
    for name in count_names:
        data[name] = arr(-1, np.int64)
    for item in items:
        at = (*index[item.cell], seed_pos[item.seed])
        data["key"][at] = item.key
        m = metrics.get(item.key)
        if m is None:
            data["status"][at] = "failed" if item.key in errors else "missing"
            data["error"][at] = errors.get(item.key, "")
            continue
        data["status"][at] = "ok"
        data["train_status"][at] = m["train_status"]
        data["iterations_run"][at] = m["iterations_run"]
        data["final_train_loss"][at] = m["final_train_loss"]
        data["train_seconds"][at] = m["seconds"]["train"]
        data["analysis_seconds"][at] = m["seconds"]["analysis"]
        for part, names in metric_names.items():
            for name in names:
                data[f"{part}_{name}"][at] = m[part].get(name, np.nan)
        for name in count_names:
            data[name][at] = m["fixed_points"].get(name, -1)
    cell_data = {**{k: arr(np.nan, extra=()) for k in CELL_SUMMARIES},
                 **{f"baseline_{k}": arr(np.nan, extra=()) for k in CELL_SUMMARIES},
                 "n_topologies": arr(0, np.int64, extra=()), "n_networks": arr(0, np.int64, extra=()),
                 "cell_status": arr("", object, extra=()), "cell_error": arr("", object, extra=())}
    pair = {"dynamics_distance": arr(np.nan, extra=(n_seed, n_seed)),
            "weight_distance": arr(np.nan, extra=(n_seed, n_seed))}
    by_key = {it.key: it for it in items}
    for cell, summary in cells.items():
        at = index[cell]
        cell_data["cell_status"][at] = summary["status"]
        cell_data["cell_error"][at] = summary.get("error", "")
        cell_data["n_networks"][at] = len(summary["items"])
        cell_data["n_topologies"][at] = summary["n_topologies"]
        pos = [seed_pos[by_key[k].seed] for k in summary["items"]]
        for k, cls in zip(summary["items"], summary["topology"]):
            data["topology"][(*at, seed_pos[by_key[k].seed])] = cls
        base = summary.get("baseline")
        if base is not None:
            for name in CELL_SUMMARIES:
                cell_data[f"baseline_{name}"][at] = getattr(base, name)
        res = summary.get("degeneracy")
        if res is not None:
            for name in CELL_SUMMARIES:
                cell_data[name][at] = getattr(res, name)
            sel = np.ix_(pos, pos)
            pair["dynamics_distance"][at][sel] = res.dynamics
            pair["weight_distance"][at][sel] = res.weights
    coords = {d: list(v) for d, v in zip(dims, spec.grid.values())}
    coords.update(seed=list(spec.seeds), seed_=list(spec.seeds))
    variables = {k: (item_dims, v) for k, v in data.items()}
    variables.update({k: (dims, v) for k, v in cell_data.items()})
    variables.update({k: (pair_dims, v) for k, v in pair.items()})
    attrs = {"spec": json.dumps(spec.to_dict(), sort_keys=True), "grid_keys": json.dumps(list(spec.grid)),
             "reference": "Huang, Singh, Martinelli & Rajan (2025), NeurIPS; Maheswaranathan et al. (2019)"}
    return xr.Dataset(variables, coords=coords, attrs=attrs)
