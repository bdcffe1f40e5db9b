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

from neurodyn._threads import one_thread
from neurodyn.sweep._item import (
    FEATURE_FILES,
    build,
    degeneracy_options,
    item_folder,
    read_graph,
    write_json,
)
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


def cell_features(out: str | Path, key: str, name: str, task):
    """An item's stored degeneracy features (``name``: ``"degeneracy"`` or ``"baseline"``), or its network
    (from the checkpoint, or rebuilt untrained) where they were not stored."""
    from neurodyn.analysis import DegeneracyFeatures
    from neurodyn.io import load_checkpoint

    folder = item_folder(out, key)
    path = folder / FEATURE_FILES[name]
    if path.exists():
        return DegeneracyFeatures.load(path)
    if name == "degeneracy":
        return load_checkpoint(folder / "model.pt").model
    return build(json.loads((folder / "config.json").read_text()))[1]


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
        (``baseline.nc``, the reference level of each measure), are saved beside it. Each network's
        features come from its item folder (``features.nc``, ``baseline_features.nc``), so this stage does
        only pairwise work; items stored without them are rolled out here instead.
    """
    from neurodyn.analysis import compute_solution_degeneracy, compute_topology_classes

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
                config = json.loads((item_folder(out, item_keys[0]) / "config.json").read_text())
                task = build(config)[0]
                for name in ("degeneracy", "baseline"):
                    compute_solution_degeneracy(
                        [cell_features(out, k, name, task) for k in item_keys], task,
                        **degeneracy_options(analysis), weight_kind=analysis["weight_kind"],
                        names=list(item_keys)).save(folder / f"{name}.nc", overwrite=True)
        except Exception as err:  # recorded in the cell and the dataset; the sweep goes on
            summary.update(status="failed", error=" ".join(f"{type(err).__name__}: {err}".split()),
                           traceback=traceback.format_exc())
    write_json(folder / "cell.json", summary)
    return read_cell(out, key)
