"""One network of a sweep: train it, analyse it, store everything under ``OUT/items/<key>/``.

Files of an item folder: ``config.json`` (the resolved configuration), ``model.pt`` (checkpoint),
``fixed_points.nc``, ``graph.json`` (the fixed-point graph), ``features.nc`` and
``baseline_features.nc`` (what the per-cell degeneracy needs of the trained network and of the same
network untrained, :func:`~neurodyn.analysis.degeneracy_features`, so the cell stage does only pairwise
work) and, last, ``metrics.json``: an item is finished when its ``metrics.json`` exists. A failed item
writes ``error.json`` instead.
"""

from __future__ import annotations

import json
import math
import time
import traceback
from pathlib import Path
from typing import Any

from neurodyn._result import write_atomically
from neurodyn._threads import one_thread

__all__ = ["read_graph", "read_metrics", "run_group", "run_item"]

METRICS_FILE, ERROR_FILE = "metrics.json", "error.json"
#: per-network degeneracy features of the trained network and of the same network untrained
FEATURE_FILES = {"degeneracy": "features.nc", "baseline": "baseline_features.nc"}


def item_folder(out: str | Path, key: str) -> Path:
    return Path(out) / "items" / key


def write_json(path: Path, obj: Any) -> None:
    write_atomically(path, lambda tmp: Path(tmp).write_text(json.dumps(obj, indent=1, sort_keys=True)))


def read_metrics(out: str | Path, key: str) -> dict[str, Any] | None:
    """The metrics of a finished item, or None if it has not finished, or if its metrics file or one of
    its stored feature files does not read back (damaged or edited): such an item is computed again."""
    folder = item_folder(out, key)
    try:
        metrics = json.loads((folder / METRICS_FILE).read_text())
    except (OSError, ValueError):
        return None
    for name in FEATURE_FILES.values():
        if (folder / name).exists():
            from neurodyn.analysis import DegeneracyFeatures

            try:
                DegeneracyFeatures.load(folder / name)
            except (OSError, ValueError):  # ResultFileError is a ValueError
                return None
    return metrics


def read_error(out: str | Path, key: str) -> str | None:
    path = item_folder(out, key) / ERROR_FILE
    try:
        return json.loads(path.read_text())["error"]
    except (OSError, ValueError, KeyError):
        return None


def build(config: dict[str, Any]):
    """``(task, model)`` of an item's configuration (the model untrained, initialised from its seed)."""
    from neurodyn.models import MODELS
    from neurodyn.tasks import make_task

    task = make_task(config["task"]["name"], **config["task"]["config"])
    cls = MODELS[config["model"]["class"]]
    model = cls(n_inputs=task.n_inputs, n_outputs=task.n_outputs, seed=config["seed"],
                **config["model"]["options"])
    return task, model


def train_item(config: dict[str, Any], *, n_iterations: int | None = None):
    """:func:`neurodyn.training.train` with the item's settings (``n_iterations``: fewer, to calibrate)."""
    from neurodyn.sweep._spec import REGULARIZER_KEYS, forcing_options
    from neurodyn.training import train
    from neurodyn.training.regularizers import make_regularizers

    task, model = build(config)
    tr = config["training"]
    regs = make_regularizers({k: tr[k] for k in REGULARIZER_KEYS}) or None
    return task, train(model, task, n_iterations=n_iterations or tr["n_iterations"],
                       batch_size=tr["batch_size"], lr=tr["lr"], weight_decay=tr["weight_decay"],
                       clip_grad_norm=tr["clip_grad_norm"],
                       loss=tr["loss"], eval_every=tr["eval_every"] if n_iterations is None else 0,
                       seed=config["seed"], regularizers=regs, progress=False, **forcing_options(tr))


def analyse(model, task, analysis: dict[str, Any]):
    """Per-network analyses: task metrics in and out of distribution, fixed points, their graph."""
    from neurodyn.analysis import find_fixed_points, fixed_point_graph
    from neurodyn.training import evaluate

    batch = task.sample(analysis["n_trials"], seed=analysis["seed"])
    metrics = {"id": evaluate(model, task, batch)}
    try:
        ood = task.ood()
    except NotImplementedError:
        metrics["ood"] = {}
    else:
        metrics["ood"] = evaluate(model, ood, ood.sample(analysis["n_trials"], seed=analysis["seed"]))
    fps = find_fixed_points(model, task=task, n_inits=analysis["n_inits"], max_iters=analysis["max_iters"],
                            seed=analysis["seed"])
    graph = fixed_point_graph(fps, model) if analysis["graph"] else None
    return metrics, fps, graph


def degeneracy_options(analysis: dict[str, Any]) -> dict[str, Any]:
    """Options of :func:`~neurodyn.analysis.degeneracy_features` and ``compute_solution_degeneracy``."""
    return {"n_trials": analysis["n_trials"], "seed": analysis["seed"],
            "dynamics_metric": analysis["dynamics_metric"]}


def store_features(folder: Path, config: dict[str, Any], task, model) -> None:
    """Write the degeneracy features of the trained ``model`` and of the item's untrained network."""
    from neurodyn.analysis import degeneracy_features

    opts = degeneracy_options(config["analysis"])
    for name, net in (("degeneracy", model), ("baseline", build(config)[1])):
        degeneracy_features(net, task, **opts).save(folder / FEATURE_FILES[name], overwrite=True)


def fixed_point_counts(fps, graph) -> dict[str, int]:
    good = fps.converged & (fps.order == 1)
    out = {"n_fixed_points": int(good.sum()), "n_slow_points": int((~fps.converged & (fps.order == 1)).sum())}
    for label in ("stable", "saddle", "unstable", "marginal"):
        out[f"n_{label}"] = int((good & (fps.stability == label)).sum())
    if graph is not None:
        out["n_graph_edges"] = int(graph.number_of_edges())
        out["n_graph_unmatched"] = int(graph.graph["n_unmatched"])
    return out


def run_item(item: Any, out: str | Path) -> dict[str, Any]:
    """Train and analyse one network of a sweep; write its folder; never raises for the item's own errors.

    Parameters
    ----------
    item : SweepItem
    out : path
        The sweep's output folder; the item writes ``out/items/<item.key>/`` (atomically, file by file,
        ``metrics.json`` last).

    Returns
    -------
    dict
        The item's metrics (``status`` ``"ok"``), or ``{"key", "status": "failed", "error"}`` after
        writing ``error.json`` when training or an analysis raised.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from neurodyn.sweep import load_spec, run_item
    >>> spec = load_spec({"task": {"name": "flipflop", "n_bits": 1, "n_steps": 8}, "model": {"n_units": 4},
    ...                   "training": {"n_iterations": 2, "batch_size": 4, "eval_every": 0},
    ...                   "analysis": {"n_trials": 8, "n_inits": 8}, "grid": {"model.gain": [1.0]},
    ...                   "seeds": 1})
    >>> item = spec.items()[0]
    >>> with tempfile.TemporaryDirectory() as out:
    ...     metrics = run_item(item, out)
    ...     written = (Path(out) / "items" / item.key / "metrics.json").exists()
    >>> metrics["status"], metrics["key"] == item.key, written
    ('ok', True, True)
    """
    return run_group([item], out)[0]


def run_group(items: list[Any], out: str | Path) -> list[dict[str, Any]]:
    """:func:`run_item` for items of one grid cell; with ``training.ensemble`` they train as one
    :func:`~neurodyn.training.train_ensemble` call (each network equal, to float rounding, to the one
    trained alone), else one after the other. Returns one result per item."""
    folders = [item_folder(out, it.key) for it in items]
    for it, folder in zip(items, folders):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / ERROR_FILE).unlink(missing_ok=True)
        write_json(folder / "config.json", it.config)
    results = []
    with one_thread():
        trained: list[Any] = []
        if items[0].config["training"].get("ensemble") and len(items) > 1:
            try:
                t0 = time.perf_counter()
                trained = _train_ensemble(items)
                per = (time.perf_counter() - t0) / len(items)
                trained = [(*t, per) for t in trained]
            except Exception as err:  # every network of the group fails with the same error
                return [_failed(it, folder, err) for it, folder in zip(items, folders)]
        for k, (it, folder) in enumerate(zip(items, folders)):
            try:
                if trained:
                    task, model, train_info, seconds = trained[k]
                else:
                    t0 = time.perf_counter()
                    task, result = train_item(it.config)
                    model = result.model
                    train_info = _train_info(result.config, result.history, result.status)
                    seconds = time.perf_counter() - t0
                metrics = _finish(it, folder, task, model, train_info, seconds)
            except Exception as err:  # recorded in the item folder and the dataset; the sweep goes on
                results.append(_failed(it, folder, err))
            else:
                write_json(folder / METRICS_FILE, metrics)
                results.append(metrics)
    return results


def _failed(item: Any, folder: Path, err: Exception) -> dict[str, Any]:
    message = " ".join(f"{type(err).__name__}: {err}".split())
    write_json(folder / ERROR_FILE, {"key": item.key, "error": message, "traceback": traceback.format_exc()})
    return {"key": item.key, "status": "failed", "error": message}


def _train_info(config: dict[str, Any], history: dict[str, list], status: str) -> dict[str, Any]:
    losses = history.get("loss", [])
    return {"config": config, "status": str(status),
            "iterations_run": int(config.get("iterations_run", len(losses))),
            "final_train_loss": float(losses[-1]) if len(losses) else math.nan}


def _train_ensemble(items: list[Any]) -> list[tuple]:
    from neurodyn.models import MODELS
    from neurodyn.sweep._spec import REGULARIZER_KEYS
    from neurodyn.tasks import make_task
    from neurodyn.training import train_ensemble

    config = items[0].config
    task = make_task(config["task"]["name"], **config["task"]["config"])
    cls, opts, tr = MODELS[config["model"]["class"]], config["model"]["options"], config["training"]

    def factory(seed):
        return cls(n_inputs=task.n_inputs, n_outputs=task.n_outputs, seed=seed, **opts)

    hyper = {k: tr[k] for k in REGULARIZER_KEYS if tr[k]}
    ens = train_ensemble(factory, task, seeds=[it.seed for it in items], hyperparameters=hyper or None,
                         n_iterations=tr["n_iterations"], batch_size=tr["batch_size"], lr=tr["lr"],
                         weight_decay=tr["weight_decay"], clip_grad_norm=tr["clip_grad_norm"],
                         loss=tr["loss"], eval_every=tr["eval_every"], progress=False)
    return [(task, m, _train_info(ens.network_config(e), ens.histories[e], ens.status[e]))
            for e, m in enumerate(ens.models)]


def _finish(item: Any, folder: Path, task, model, train_info: dict[str, Any], train_seconds: float
            ) -> dict[str, Any]:
    from neurodyn.io import save_checkpoint

    t1 = time.perf_counter()
    save_checkpoint(folder / "model.pt", model, task=task, training=train_info["config"],
                    extra={"sweep_key": item.key, "seed": item.seed}, overwrite=True)
    metrics, fps, graph = analyse(model, task, item.config["analysis"])
    fps.save(folder / "fixed_points.nc", overwrite=True)
    if graph is not None:
        write_json(folder / "graph.json", graph_to_dict(graph))
    store_features(folder, item.config, task, model)
    return {
        "key": item.key, "status": "ok", "seed": item.seed, "train_status": train_info["status"],
        "iterations_run": train_info["iterations_run"], "final_train_loss": train_info["final_train_loss"],
        "id": metrics["id"], "ood": metrics["ood"], "fixed_points": fixed_point_counts(fps, graph),
        "seconds": {"train": train_seconds, "analysis": time.perf_counter() - t1},
    }


def graph_to_dict(graph) -> dict[str, Any]:
    """A fixed-point graph as plain JSON data (nodes with attributes, edges with attributes)."""
    return {"graph": {k: v for k, v in graph.graph.items()},
            "nodes": [{"id": int(n), **{k: list(v) if isinstance(v, tuple) else v for k, v in a.items()}}
                      for n, a in graph.nodes(data=True)],
            "edges": [{"source": int(s), "target": int(t), **a} for s, t, a in graph.edges(data=True)]}


def read_graph(out: str | Path, key: str):
    """The fixed-point graph stored for an item (a ``networkx.DiGraph``), or None."""
    import networkx as nx

    path = item_folder(out, key) / "graph.json"
    if not path.exists():
        return None
    data = json.loads(path.read_text())
    g = nx.DiGraph(**data["graph"])
    for node in data["nodes"]:
        attrs = {k: tuple(v) if isinstance(v, list) else v for k, v in node.items() if k != "id"}
        g.add_node(node["id"], **attrs)
    for e in data["edges"]:
        g.add_edge(e["source"], e["target"], **{k: v for k, v in e.items() if k not in ("source", "target")})
    return g
