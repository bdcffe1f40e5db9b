"""Per grid cell: pairwise distances and degeneracy at three levels, and the distinct fixed-point topologies.

A cell's results are stored under ``OUT/cells/<key>/`` (``degeneracy.nc``, ``cell.json``), keyed by the
keys of its finished networks and the analysis options, so a rerun reuses them.
"""

from __future__ import annotations

import json
import traceback
from pathlib import Path
from typing import Any

import numpy as np

from neurodyn.sweep._item import build, item_folder, one_thread, read_graph, write_json
from neurodyn.sweep._spec import config_key

__all__ = ["cell_key", "run_cell"]


def cell_key(item_keys: list[str], analysis: dict[str, Any], cell: tuple[Any, ...]) -> str:
    """Hash of a cell's grid values, finished networks and analysis options."""
    return config_key({"cell": list(cell), "items": list(item_keys), "analysis": analysis})


def cell_folder(out: str | Path, key: str) -> Path:
    return Path(out) / "cells" / key


def read_cell(out: str | Path, key: str) -> dict[str, Any] | None:
    """The stored summary of a finished cell, with its DegeneracyResult (or None), or None if not finished."""
    from neurodyn.analysis import DegeneracyResult

    folder = cell_folder(out, key)
    try:
        summary = json.loads((folder / "cell.json").read_text())
    except (OSError, ValueError):
        return None
    for name in ("degeneracy", "baseline"):
        path = folder / f"{name}.nc"
        summary[name] = DegeneracyResult.load(path) if path.exists() else None
    return summary


def run_cell(item_keys: list[str], out: str | Path, analysis: dict[str, Any], cell: tuple[Any, ...]
             ) -> dict[str, Any]:
    """Degeneracy (Huang et al. 2025) and topology classes of the finished networks of one grid cell.

    Parameters
    ----------
    item_keys : list of str
        Keys of the cell's finished networks, in seed order.
    out : path
        The sweep's output folder.
    analysis : dict
        The spec's analysis options.
    cell : tuple
        The cell's grid values.

    Returns
    -------
    dict
        ``key``, ``status`` (``"ok"``, ``"too few networks"`` or ``"failed"``), ``error``, ``topology``
        (class per network) and ``n_topologies``; the :class:`~neurodyn.analysis.DegeneracyResult` of the
        trained networks (``degeneracy.nc``) and of the same networks untrained, at their initial weights
        (``baseline.nc``, the reference level of each measure), are saved beside it.
    """
    from neurodyn.analysis import compute_solution_degeneracy, compute_topology_classes
    from neurodyn.io import load_checkpoint

    key = cell_key(item_keys, analysis, cell)
    folder = cell_folder(out, key)
    graphs = [read_graph(out, k) for k in item_keys]
    classes = compute_topology_classes(graphs) if graphs else np.zeros(0, dtype=np.int64)
    summary: dict[str, Any] = {
        "key": key, "items": list(item_keys), "status": "ok", "error": "",
        "topology": classes.tolist(),
        "n_topologies": int(classes.max() + 1) if (classes >= 0).any() else 0,
    }
    if len(item_keys) < 2:
        summary["status"] = "too few networks"
    else:
        try:
            with one_thread():
                ckpts = [load_checkpoint(item_folder(out, k) / "model.pt") for k in item_keys]
                untrained = [build(json.loads((item_folder(out, k) / "config.json").read_text()))[1]
                             for k in item_keys]
                for name, models in (("degeneracy", [c.model for c in ckpts]), ("baseline", untrained)):
                    compute_solution_degeneracy(
                        models, ckpts[0].task, n_trials=analysis["n_trials"], seed=analysis["seed"],
                        dynamics_metric=analysis["dynamics_metric"], weight_kind=analysis["weight_kind"],
                        names=list(item_keys)).save(folder / f"{name}.nc")
        except Exception as err:  # recorded in the cell and the dataset; the sweep goes on
            summary.update(status="failed", error=" ".join(f"{type(err).__name__}: {err}".split()),
                           traceback=traceback.format_exc())
    write_json(folder / "cell.json", summary)
    return read_cell(out, key)
