"""Ensembles on disk: one checkpoint per network plus an index JSON that lists them."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from neurodyn._result import cannot_write
from neurodyn.tasks._base import Task
from neurodyn.training.ensemble import EnsembleResult

__all__ = ["load_ensemble", "save_ensemble"]

INDEX_FORMAT = "neurodyn-ensemble"
INDEX_VERSION = 1
INDEX_NAME = "ensemble.json"


def save_ensemble(
    result: EnsembleResult, directory: str | os.PathLike, *, task: Task | None = None,
    overwrite: bool = False,
) -> Path:
    """Write ``network_000.pt`` ... (via :func:`neurodyn.io.save_checkpoint`) and ``ensemble.json``.

    Each checkpoint holds its network's own training settings (seed, hyperparameters, ensemble
    index), so it loads and analyses like any singly trained model. The index lists, per network,
    the file, seed, hyperparameters and final training loss.

    Returns
    -------
    Path of the index JSON.

    Raises
    ------
    FileExistsError
        If a checkpoint or the index exists and ``overwrite`` is False (nothing is written then).
    TypeError
        If ``result`` is not an EnsembleResult (a list of models, say) or ``task`` is neither None
        nor a Task.
    ValueError
        If a network's weights hold NaN/Inf (see :func:`neurodyn.io.save_checkpoint`).
    OSError
        One line naming ``directory`` when it cannot be created or written (``PermissionError``,
        ``NotADirectoryError`` when it or a folder above it is a file, ...).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from neurodyn.models import LeakyRNN
    >>> from neurodyn.tasks import FlipFlop
    >>> from neurodyn.training import save_ensemble, train_ensemble
    >>> task = FlipFlop(n_bits=1, n_steps=10)
    >>> result = train_ensemble(lambda seed: LeakyRNN(1, 4, 1, seed=seed), task, n_networks=2, n_iterations=1,
    ...                         batch_size=2, eval_every=0, progress=False)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     index = save_ensemble(result, tmp, task=task)
    ...     print(index.name, sorted(p.name for p in Path(tmp).glob("*.pt")))
    ensemble.json ['network_000.pt', 'network_001.pt']
    """
    from neurodyn.io import save_checkpoint
    from neurodyn.io.checkpoint import check_savable

    if not isinstance(result, EnsembleResult):
        hint = ("; save single models with neurodyn.io.save_checkpoint" if isinstance(result, (list, tuple))
                else "")
        raise TypeError(f"result must be the EnsembleResult of train_ensemble(...), got "
                        f"{type(result).__name__}{hint}")
    for e, model in enumerate(result.models):
        check_savable(model, task, name=f"network {e}")
    directory = Path(directory)
    fix = "choose a folder that can be created and written"
    if directory.exists() and not directory.is_dir():
        raise NotADirectoryError(f"cannot save the ensemble in {directory}: it is a file, not a folder; "
                                 f"{fix}")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise cannot_write(directory, err, fix) from None
    n = len(result.models)
    files = [f"network_{e:03d}.pt" for e in range(n)]
    clash = [f for f in [*files, INDEX_NAME] if (directory / f).exists()]
    if clash and not overwrite:
        raise FileExistsError(f"{directory} already holds {clash[:3]}; pass overwrite=True to replace them")
    entries = []
    for e, (model, name) in enumerate(zip(result.models, files)):
        cfg = result.network_config(e)
        save_checkpoint(directory / name, model, task=task, training=cfg, overwrite=overwrite)
        loss = result.histories[e]["loss"]
        entries.append({"index": e, "file": name, "seed": cfg["seed"],
                        "hyperparameters": cfg["hyperparameters"],
                        "final_loss": loss[-1] if loss else None})
    index = {
        "format": INDEX_FORMAT, "version": INDEX_VERSION, "n_networks": n,
        "model_class": type(result.models[0]).__name__,
        "task": None if task is None else {"name": task.name, "config": task.config()},
        "training": {k: v for k, v in result.config.items() if k not in ("seeds", "hyperparameters")},
        "networks": entries,
    }
    path = directory / INDEX_NAME
    try:
        path.write_text(json.dumps(index, indent=1, default=_plain))
    except OSError as err:
        raise cannot_write(path, err, fix) from None
    return path


def load_ensemble(index_path: str | os.PathLike) -> list[Any]:
    """Load every network listed in an ``ensemble.json`` as :class:`neurodyn.io.Checkpoint` objects.

    Raises
    ------
    FileNotFoundError
        If the index or a listed checkpoint is missing.
    ValueError
        If the file is not an ensemble index or is of a newer version.

    Examples
    --------
    >>> import tempfile
    >>> from neurodyn.models import LeakyRNN
    >>> from neurodyn.tasks import FlipFlop
    >>> from neurodyn.training import load_ensemble, save_ensemble, train_ensemble
    >>> task = FlipFlop(n_bits=1, n_steps=10)
    >>> result = train_ensemble(lambda seed: LeakyRNN(1, 4, 1, seed=seed), task, seeds=[7, 8], n_iterations=1,
    ...                         batch_size=2, eval_every=0, progress=False)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     checkpoints = load_ensemble(save_ensemble(result, tmp, task=task))
    >>> [c.seed for c in checkpoints], type(checkpoints[0].model).__name__
    ([7, 8], 'LeakyRNN')
    """
    from neurodyn.io import load_checkpoint

    path = Path(index_path)
    if path.is_dir():
        path = path / INDEX_NAME
    if not path.exists():
        raise FileNotFoundError(f"no ensemble index at {path}")
    try:
        index = json.loads(path.read_text())
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ValueError(f"{path} is not a neurodyn ensemble index (not JSON)") from None
    if not isinstance(index, dict) or index.get("format") != INDEX_FORMAT:
        found = index.get("format") if isinstance(index, dict) else type(index).__name__
        raise ValueError(f"{path} is not a neurodyn ensemble index (format {found!r})")
    if index.get("version", 0) > INDEX_VERSION:
        raise ValueError(f"{path} has index version {index['version']}; upgrade neurodyn")
    return [load_checkpoint(path.parent / entry["file"]) for entry in index["networks"]]


def _plain(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"cannot write {type(value).__name__} to JSON")
