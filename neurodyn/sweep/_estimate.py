"""What a sweep will cost, from a short calibration run of a few of its networks."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from neurodyn._threads import one_thread
from neurodyn.sweep._item import analyse, train_item
from neurodyn.sweep._spec import SweepSpec, load_spec

__all__ = ["estimate_sweep"]


def estimate_sweep(
    spec: str | Path | Mapping[str, Any] | SweepSpec,
    *,
    n_iterations: int = 5,
    n_cells: int = 3,
    workers: int = 1,
) -> dict[str, Any]:
    """Estimate a sweep's cost by training a few of its networks for a few iterations and extrapolating.

    The first network of up to ``n_cells`` grid cells (spread over the grid) is trained for
    ``n_iterations`` iterations after one warm-up iteration; the time per iteration is extrapolated to
    the spec's ``n_iterations``. Its analyses are timed once with at most 16 fixed-point starts and
    scaled to ``n_inits``. Times are per core (one thread per network, as the sweep runs them).

    Parameters
    ----------
    spec : path of a TOML file, dict or SweepSpec
    n_iterations : int
        Training iterations of each calibration run.
    n_cells : int
        Grid cells calibrated (their mean cost stands for every network).
    workers : int
        Worker processes the wall-clock estimate assumes.

    Returns
    -------
    dict
        ``n_items``, ``n_cells`` (of the grid), ``seconds_per_item`` (mean, one core),
        ``train_seconds_per_item``, ``analysis_seconds_per_item``, ``core_hours`` (all items) and
        ``wall_hours`` (with ``workers`` workers, items spread evenly).

    Raises
    ------
    ValueError
        For a bad spec or settings below 1.

    Examples
    --------
    >>> est = estimate_sweep({"task": {"name": "flipflop", "n_bits": 1, "n_steps": 8},
    ...                       "model": {"alpha": 1.0}, "training": {"n_iterations": 100},
    ...                       "analysis": {"n_inits": 8, "max_iters": 20},
    ...                       "grid": {"model.n_units": [4, 8]}, "seeds": 3}, n_iterations=2)
    >>> est["n_items"], est["n_cells"], est["seconds_per_item"] > 0
    (6, 2, True)
    """
    for name, value in (("n_iterations", n_iterations), ("n_cells", n_cells), ("workers", workers)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    spec = load_spec(spec)
    items = spec.items()
    cells = spec.cells
    chosen = sorted({int(round(i)) for i in np.linspace(0, len(cells) - 1, min(n_cells, len(cells)))})
    train_s, analysis_s = [], []
    for c in chosen:
        item = next(it for it in items if it.cell == cells[c])
        total_iters = item.config["training"]["n_iterations"]
        k = min(n_iterations, total_iters)
        with one_thread():
            train_item(item.config, n_iterations=1)  # warm-up: imports, allocations
            t0 = time.perf_counter()
            task, result = train_item(item.config, n_iterations=k)
            train_s.append((time.perf_counter() - t0) / k * total_iters)
            a = dict(item.config["analysis"])
            scale = a["n_inits"] / min(a["n_inits"], 16)
            a["n_inits"] = min(a["n_inits"], 16)
            t0 = time.perf_counter()
            analyse(result.model, task, a)
            analysis_s.append((time.perf_counter() - t0) * scale)
    per_item = float(np.mean(train_s) + np.mean(analysis_s))
    return {
        "n_items": len(items), "n_cells": len(cells), "calibrated_cells": len(chosen),
        "train_seconds_per_item": float(np.mean(train_s)),
        "analysis_seconds_per_item": float(np.mean(analysis_s)),
        "seconds_per_item": per_item, "core_hours": per_item * len(items) / 3600.0,
        "wall_hours": per_item * math.ceil(len(items) / workers) / 3600.0, "workers": workers,
    }
