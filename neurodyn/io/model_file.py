"""One entry point that turns any supported model file into a neurodyn model."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from neurodyn.io.checkpoint import (
    Checkpoint,
    ModelFileError,
    checkpoint_from_dict,
    describe,
    is_checkpoint,
    read_torch_file,
)
from neurodyn.io.foreign import model_from_state_dict
from neurodyn.models import RecurrentModel
from neurodyn.tasks import Task

ARRAY_SUFFIXES = (".npz", ".mat")


@dataclass(frozen=True)
class LoadedModel:
    """What :func:`load_model` returns: the model, its task (if known) and where it came from.

    source : ``"checkpoint"``, ``"state_dict"`` or ``"arrays"``
    checkpoint : the full :class:`Checkpoint` when ``source == "checkpoint"``
    """

    model: RecurrentModel
    task: Task | None
    source: str
    checkpoint: Checkpoint | None = None


def load_model(path: str | os.PathLike, *, arch: str | None = None) -> LoadedModel:
    """Load a model from a neurodyn checkpoint, a torch ``state_dict`` or an array file.

    Supported files: a ``.pt`` written by :func:`neurodyn.io.save_checkpoint`; a plain
    ``state_dict`` of a single-layer ``torch.nn.RNN`` / ``GRU`` / ``LSTM`` (optionally under a
    prefix, with an optional ``nn.Linear`` readout; ``arch`` is needed for plain RNNs); and
    ``.npz`` / ``.mat`` files holding PLRNN-family arrays (``arch`` in plrnn, shplrnn,
    clipped-shplrnn, alrnn). Nothing pickled is ever executed (``weights_only=True``).

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ModelFileError
        With a one-line description of what was found when the file is not a usable model.
    """
    path = Path(path)
    if path.suffix.lower() in ARRAY_SUFFIXES:
        if not path.exists():
            raise FileNotFoundError(f"no such file: {path}")
        try:
            from neurodyn.io.plrnn_arrays import load_plrnn_arrays
        except ImportError:
            raise ModelFileError(f"{path}: array files are not supported by this version") from None
        if arch is None:
            raise ModelFileError(
                f"{path} holds arrays; name the architecture with --arch plrnn|shplrnn|clipped-shplrnn|alrnn"
            )
        return LoadedModel(load_plrnn_arrays(path, arch), None, "arrays")
    obj = read_torch_file(path)
    if is_checkpoint(obj):
        ckpt = checkpoint_from_dict(obj, str(path))
        return LoadedModel(ckpt.model, ckpt.task, "checkpoint", ckpt)
    if isinstance(obj, dict) and isinstance(obj.get("state_dict"), dict) and "format" not in obj:
        obj = obj["state_dict"]
    if isinstance(obj, dict) and obj and all(isinstance(k, str) for k in obj):
        return LoadedModel(model_from_state_dict(obj, arch, str(path)), None, "state_dict")
    raise ModelFileError(
        f"{path} is neither a neurodyn checkpoint nor a state_dict (found {describe(obj)})"
    )
