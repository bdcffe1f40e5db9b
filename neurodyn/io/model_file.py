"""One entry point that turns any supported model file into a neurodyn model."""

from __future__ import annotations

import os
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from neurodyn._guard import check_file
from neurodyn.io.checkpoint import (
    DEFAULT_DTYPE,
    Checkpoint,
    ModelFileError,
    checkpoint_from_dict,
    describe,
    is_checkpoint,
    read_torch_file,
    with_dtype,
)
from neurodyn.io.foreign import ARCHS as STATE_DICT_ARCHS
from neurodyn.io.foreign import model_from_state_dict
from neurodyn.models import RecurrentModel
from neurodyn.tasks import Task

if TYPE_CHECKING:
    import torch

__all__ = ["LoadedModel", "load_model"]

ARRAY_SUFFIXES = (".npz", ".mat")


@dataclass(frozen=True)
class LoadedModel:
    """What :func:`load_model` returns: the model, its task (if known) and where it came from.

    source : ``"checkpoint"``, ``"state_dict"`` or ``"arrays"``
    checkpoint : the full :class:`Checkpoint` when ``source == "checkpoint"``

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import torch
    >>> from neurodyn.io import load_model
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     torch.save(torch.nn.LSTM(2, 4).state_dict(), Path(tmp) / "lstm.pt")
    ...     loaded = load_model(Path(tmp) / "lstm.pt")
    >>> type(loaded.model).__name__, loaded.source, loaded.task, loaded.checkpoint
    ('LSTM', 'state_dict', None, None)
    """

    model: RecurrentModel
    task: Task | None
    source: str
    checkpoint: Checkpoint | None = None

    @property
    def description(self) -> str:
        """What was loaded, for reports and figure titles: ``"torch.nn.RNN (tanh), 64 units"`` for a
        converted state_dict, ``"LeakyRNN, 64 units"`` for a checkpoint, ``"PLRNN, 3 latent dims"``."""
        model, name = self.model, type(self.model).__name__
        if self.source == "state_dict":
            name = {"GRU": "torch.nn.GRU", "LSTM": "torch.nn.LSTM"}.get(
                name, f"torch.nn.RNN ({model.config().get('activation')})")
        if hasattr(model, "n_latent"):
            return f"{name}, {model.n_latent} latent dims"
        return f"{name}, {model.n_units} units"


def load_model(
    path: str | os.PathLike, *, arch: str | None = None, dtype: str | torch.dtype | None = None
) -> LoadedModel:
    """Load a model from a neurodyn checkpoint, a torch ``state_dict`` or an array file.

    Supported files: a ``.pt`` written by :func:`neurodyn.io.save_checkpoint`; a plain
    ``state_dict`` of a single-layer ``torch.nn.RNN`` / ``GRU`` / ``LSTM`` (optionally under a
    prefix, with an optional ``nn.Linear`` readout; ``arch`` is needed for plain RNNs); and
    ``.npz`` / ``.mat`` files holding PLRNN-family arrays (``arch`` in plrnn, shplrnn,
    clipped-shplrnn, alrnn). Nothing pickled is ever executed (``weights_only=True``).

    One dtype rule: a model loads in the dtype its class is built with, float32 for checkpoints and
    converted state_dicts alike, unless the model records its own (the PLRNN family keeps the dtype
    in its config, float64 for array files, so exact region-wise analyses see the stored numbers);
    ``dtype`` asks for another (float64 weights saved in a checkpoint then load exactly).
    :func:`neurodyn.analysis.find_fixed_points` accepts the result as it is.

    Parameters
    ----------
    path : path-like
    arch : str, optional
        Architecture of a plain state_dict (rnn_tanh, rnn_relu, gru, lstm) or an array file.
    dtype : {"float32", "float64"} or torch dtype, optional
        Parameter dtype of the loaded model (default: the rule above).

    Returns
    -------
    LoadedModel
        ``model``, its ``task`` (checkpoints of task-trained models), ``source`` and ``checkpoint``;
        ``description`` names what was loaded.

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ModelFileError
        With a one-line description of what was found when the file is not a usable model.
    ValueError
        If ``dtype`` is not float32 or float64.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import numpy as np
    >>> import torch
    >>> from neurodyn.io import load_model
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     np.savez(Path(tmp) / "plrnn.npz", A=[0.5, 0.5], W=[[0.0, 0.2], [0.1, 0.0]], h=[1.0, 0.0])
    ...     loaded = load_model(Path(tmp) / "plrnn.npz", arch="plrnn")
    >>> type(loaded.model).__name__, loaded.source, loaded.model.n_latent
    ('PLRNN', 'arrays', 2)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     torch.save(torch.nn.RNN(3, 16).state_dict(), Path(tmp) / "rnn.pt")
    ...     loaded = load_model(Path(tmp) / "rnn.pt", arch="rnn_tanh")
    ...     wide = load_model(Path(tmp) / "rnn.pt", arch="rnn_tanh", dtype="float64")
    >>> loaded.description, loaded.model.w_rec.dtype, wide.model.w_rec.dtype
    ('torch.nn.RNN (tanh), 16 units', torch.float32, torch.float64)
    """
    dtype = _check_dtype(dtype)
    path = Path(path)
    if path.suffix.lower() in ARRAY_SUFFIXES:
        from neurodyn.io.plrnn_arrays import ARCHS as ARRAY_ARCHS
        from neurodyn.io.plrnn_arrays import load_plrnn_arrays

        check_file(path, "model", error=ModelFileError)
        if arch not in ARRAY_ARCHS:
            given = (
                "no --arch given" if arch is None
                else f"--arch {arch} is for .pt state_dicts" if arch in STATE_DICT_ARCHS
                else f"unknown --arch {arch!r}"
            )
            raise ModelFileError(
                f"{path} holds arrays ({given}); name the architecture with --arch {'|'.join(ARRAY_ARCHS)}"
            )
        check_array_file(path)
        try:
            model = load_plrnn_arrays(path, arch)
        except (zipfile.BadZipFile, OSError, EOFError) as err:
            raise ModelFileError(
                f"{path} could not be read ({type(err).__name__}: {err}); write it again"
            ) from None
        return LoadedModel(with_dtype(model, dtype), None, "arrays")
    obj = read_torch_file(path)
    if is_checkpoint(obj):  # the checkpoint names its model class; ``arch`` is not needed
        ckpt = checkpoint_from_dict(obj, str(path), dtype=dtype)
        return LoadedModel(ckpt.model, ckpt.task, "checkpoint", ckpt)
    if arch is not None and arch not in STATE_DICT_ARCHS:
        from neurodyn.io.plrnn_arrays import ARCHS as ARRAY_ARCHS

        what = "is for .npz/.mat array files" if arch in ARRAY_ARCHS else "is unknown"
        raise ModelFileError(
            f"--arch {arch} {what}; {path} is a torch file, which needs --arch "
            f"{'|'.join(STATE_DICT_ARCHS)} for a plain state_dict (a neurodyn checkpoint needs none)"
        )
    if isinstance(obj, dict) and isinstance(obj.get("state_dict"), dict) and "format" not in obj:
        obj = obj["state_dict"]
    if isinstance(obj, dict) and obj and all(isinstance(k, str) for k in obj):
        model = model_from_state_dict(obj, arch, str(path), dtype=dtype or DEFAULT_DTYPE)
        return LoadedModel(model, None, "state_dict")
    raise ModelFileError(
        f"{path} is neither a neurodyn checkpoint nor a state_dict (found {describe(obj)})"
    )


def _check_dtype(dtype: str | torch.dtype | None) -> torch.dtype | None:
    """``dtype`` as a torch dtype (float32 or float64), or None; ``ValueError`` otherwise."""
    if dtype is None:
        return None
    import torch

    name = str(dtype).replace("torch.", "")
    if name not in ("float32", "float64"):
        raise ValueError(f"dtype must be float32 or float64, got {dtype!r}")
    return getattr(torch, name)


def check_array_file(path: Path) -> None:
    """Raise :class:`ModelFileError` unless ``path`` is a readable ``.npz`` archive or MATLAB file."""
    if path.stat().st_size == 0:
        raise ModelFileError(f"{path} is empty; write the arrays with numpy.savez or MATLAB save")
    if path.suffix.lower() == ".npz":
        if not zipfile.is_zipfile(path):
            raise ModelFileError(
                f"{path} is not a NumPy .npz archive; write the arrays with "
                "numpy.savez(path, A=..., W=..., h=...)"
            )
        return
    from scipy.io import whosmat

    try:
        whosmat(path)
    except Exception as err:  # scipy raises several types for files that are not MATLAB files
        raise ModelFileError(
            f"{path} is not a readable MATLAB .mat file ({type(err).__name__}); save the arrays with "
            "MATLAB save(..., '-v7') or scipy.io.savemat (MATLAB v7.3 / HDF5 files are not read)"
        ) from None
