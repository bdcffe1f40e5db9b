"""Model checkpoints: plain versioned dicts loaded with ``torch.load(weights_only=True)``."""

from __future__ import annotations

import os
import warnings
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from neurodyn._checks import all_finite
from neurodyn._guard import check_file, check_zip
from neurodyn._result import cannot_write, write_atomically
from neurodyn._version import __version__
from neurodyn.models._base import RecurrentModel
from neurodyn.models._registry import MODELS, make_model
from neurodyn.tasks._base import Task
from neurodyn.tasks._registry import make_task

__all__ = ["Checkpoint", "ModelFileError", "load_checkpoint", "save_checkpoint"]

FORMAT = "neurodyn-checkpoint"
VERSION = 1
#: dtype of loaded models unless the model records its own or another is asked for (see load_model)
DEFAULT_DTYPE = torch.float32


class ModelFileError(ValueError):
    """A file that is not a usable model (the message says what was found and what to do).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import torch
    >>> from neurodyn.io import ModelFileError, load_checkpoint
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp) / "weights.pt"
    ...     torch.save({"weight": torch.zeros(2, 2)}, path)  # a plain dict, not a checkpoint
    ...     try:
    ...         load_checkpoint(path)
    ...     except ModelFileError as err:
    ...         print(type(err).__name__, issubclass(type(err), ValueError))
    ModelFileError True
    """


@dataclass(frozen=True)
class Checkpoint:
    """A loaded checkpoint.

    model : the rebuilt model, in eval mode, on CPU
    task : the task it was trained on, or None
    training : training settings (dict), possibly empty
    seed : the training seed, or None
    versions : package versions at save time
    extra : any additional plain data saved with it

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from neurodyn.io import load_checkpoint, save_checkpoint
    >>> from neurodyn.models import GRU
    >>> from neurodyn.tasks import FlipFlop
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = save_checkpoint(Path(tmp) / "gru.pt", GRU(2, 8, 2, seed=0), task=FlipFlop(n_bits=2),
    ...                            training={"seed": 5, "status": "completed", "iterations_run": 10})
    ...     checkpoint = load_checkpoint(path)
    >>> type(checkpoint.model).__name__, checkpoint.task.n_bits, checkpoint.seed, checkpoint.status
    ('GRU', 2, 5, 'completed')
    >>> "torch" in checkpoint.versions
    True
    """

    model: RecurrentModel
    task: Task | None = None
    training: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    versions: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def status(self) -> str | None:
        """The training status recorded with the model (see :func:`training_status`)."""
        return training_status(self.training)


def training_status(training: dict[str, Any]) -> str | None:
    """``"diverged"``, ``"untrained"`` (no iteration or epoch finished), the recorded ``status``
    (``"completed"``, ``"stopped_early"``, ``"target_reached"``, ``"interrupted"``: Ctrl-C ended training),
    or None when nothing was recorded."""
    if training.get("status") == "diverged":
        return "diverged"
    if training.get("iterations_run", training.get("epochs_run")) == 0:
        return "untrained"
    return training.get("status")


def package_versions() -> dict[str, str]:
    return {"neurodyn": str(__version__), "torch": str(torch.__version__), "numpy": str(np.__version__)}


def plain(obj: Any) -> Any:
    """Convert a config tree to types ``torch.load(weights_only=True)`` accepts.

    Raises
    ------
    TypeError
        For values that are not numbers, strings, None, lists/tuples/dicts of those, tensors
        or NumPy arrays.
    """
    if obj is None or isinstance(obj, (bool, int, float, str, torch.Tensor)):
        return obj
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(obj))
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    if isinstance(obj, dict):
        return {str(k): plain(v) for k, v in obj.items()}
    raise TypeError(f"cannot store a {type(obj).__name__} in a checkpoint; use plain values")


def save_checkpoint(
    path: str | os.PathLike,
    model: RecurrentModel,
    *,
    task: Task | None = None,
    training: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
    overwrite: bool = False,
) -> Path:
    """Save ``model`` (class name + config + state_dict) with its task and training settings.

    The file is a plain dict (format ``"neurodyn-checkpoint"``, version 1) holding only tensors,
    numbers, strings, lists and dicts, so :func:`load_checkpoint` reads it with
    ``torch.load(weights_only=True)``. It is written to a temporary file and moved into place, so
    an interrupted save never corrupts an existing file.

    Raises
    ------
    FileExistsError
        If ``path`` exists and ``overwrite`` is False.
    TypeError
        If ``path`` is not a str or path (e.g. the arguments swapped: the message names the order
        ``save_checkpoint(path, model)``), ``model`` is not a registered neurodyn model or ``task`` is
        neither None nor a Task.
    ValueError
        If the model's weights hold NaN/Inf (which :func:`load_checkpoint` refuses); nothing is written.
    OSError
        One line naming ``path`` when it cannot be written (``PermissionError``, ``NotADirectoryError``
        when a folder of the path is a file, ...).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from neurodyn.io import save_checkpoint
    >>> from neurodyn.models import LeakyRNN
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = save_checkpoint(Path(tmp) / "net.pt", LeakyRNN(1, 4, 1))
    ...     print(path.name)
    ...     try:
    ...         save_checkpoint(path, LeakyRNN(1, 4, 1))  # an existing file is kept
    ...     except FileExistsError:
    ...         print("exists")
    net.pt
    exists
    """
    if not isinstance(path, (str, os.PathLike)):
        swapped = isinstance(model, (str, os.PathLike))
        raise TypeError(f"path must be a file path (str or os.PathLike), got {type(path).__name__}"
                        + ("; the arguments are swapped: call save_checkpoint(path, model)" if swapped
                           else "; call save_checkpoint(path, model)"))
    path = Path(path)
    if path.exists() and not overwrite:
        raise FileExistsError(f"{path} exists; pass overwrite=True (--overwrite) to replace it")
    check_savable(model, task)
    name = type(model).__name__
    training = dict(training or {})
    payload = plain({
        "format": FORMAT,
        "version": VERSION,
        "model_class": name,
        "model_config": model.config(),
        "state_dict": {k: v.detach().cpu().clone() for k, v in model.state_dict().items()},
        "task": None if task is None else {"name": task.name, "config": task.config()},
        "training": training,
        "seed": training.get("seed"),
        "versions": package_versions(),
        "extra": dict(extra or {}),
    })
    try:
        write_atomically(path, lambda tmp: torch.save(payload, tmp))
    except OSError as err:
        raise cannot_write(path, err, "choose a path in a writable folder") from None
    return path


def check_savable(model: Any, task: Any = None, *, name: str = "model") -> None:
    """The checks :func:`save_checkpoint` makes before writing anything: ``model`` a registered neurodyn
    model with finite weights (one-line ``TypeError`` / ``ValueError``; ``name`` is how the message
    calls it), ``task`` None or a Task (``TypeError``)."""
    kind = type(model).__name__
    if MODELS.get(kind) is not type(model):
        raise TypeError(f"{kind} is not a registered neurodyn model; cannot checkpoint it")
    if task is not None and not isinstance(task, Task):
        raise TypeError(f"task must be a Task (e.g. FlipFlop(...) or make_task({task!r:.40}) for a name) or "
                        f"None, got {type(task).__name__}")
    bad = [k for k, v in model.state_dict().items()
           if isinstance(v, torch.Tensor) and v.is_floating_point() and not all_finite(v)]
    if bad:
        raise ValueError(f"the {name}'s weights contain NaN/Inf (in {', '.join(bad[:5])}), which a "
                         "checkpoint cannot hold (load_checkpoint refuses them); save a model with finite "
                         "weights (a diverged training run keeps its last finite weights in result.model)")


def is_checkpoint(obj: Any) -> bool:
    return isinstance(obj, dict) and obj.get("format") == FORMAT


def checkpoint_from_dict(obj: dict[str, Any], source: str = "checkpoint", *,
                         dtype: torch.dtype | None = None) -> Checkpoint:
    """Rebuild a :class:`Checkpoint` from the dict stored by :func:`save_checkpoint`; ``dtype``
    converts the model before its weights are copied in (so float64 weights load exactly).

    Raises
    ------
    ModelFileError
        One line naming the problem and what to do: a version stored with another type or newer
        than this release, model or task options this release lacks (a newer release wrote the
        file), an unknown model class or task, fields of the wrong type, weights whose names,
        shapes or types do not fit the model, or NaN/Inf weights.
    """
    version = obj.get("version", 0)
    if isinstance(version, bool) or not isinstance(version, int):
        raise ModelFileError(f"{source}: the checkpoint version is stored as {type(version).__name__} "
                             f"{version!r}, not as an integer; the file was not written by neurodyn or was "
                             "edited: save the model again")
    versions = obj.get("versions")
    written_by = versions.get("neurodyn") if isinstance(versions, dict) else None
    if version > VERSION:
        raise ModelFileError(
            f"{source} is checkpoint format version {version}, newer than this neurodyn "
            f"({__version__}) reads; upgrade neurodyn"
        )
    for name, kind in (("model_class", str), ("model_config", dict), ("state_dict", dict),
                       ("task", (dict, type(None))), ("training", (dict, type(None))),
                       ("extra", (dict, type(None))), ("versions", (dict, type(None)))):
        if name in ("model_class", "model_config", "state_dict") and name not in obj:
            raise ModelFileError(f"{source}: the checkpoint has no {name!r}; it is incomplete or was edited: "
                                 "save the model again")
        if name in obj and not isinstance(obj[name], kind):
            want = kind.__name__ if isinstance(kind, type) else kind[0].__name__
            raise ModelFileError(f"{source}: the checkpoint's {name!r} is a {type(obj[name]).__name__}, not "
                                 f"a {want}; the file was not written by neurodyn or was edited: "
                                 "save the model again")
    cls = MODELS.get(obj["model_class"])
    if cls is None:
        raise ModelFileError(f"{source}: unknown model class {obj['model_class']!r}; known: "
                             f"{', '.join(sorted(MODELS))}{_newer(written_by)}")
    _check_options(cls, obj["model_config"], f"{source}: model {obj['model_class']}", written_by)
    try:
        model = make_model(obj["model_class"], **obj["model_config"])
    except Exception as err:  # constructors raise ValueError/TypeError for values they refuse
        raise ModelFileError(f"{source}: the stored {obj['model_class']} settings are unusable "
                             f"({_one_line(err)}); save the model again") from None
    model = with_dtype(model, dtype)
    expected = model.state_dict()
    for name, value in obj["state_dict"].items():
        want = expected.get(name)
        if isinstance(value, torch.Tensor) and isinstance(want, torch.Tensor) \
                and value.dtype.is_floating_point != want.dtype.is_floating_point:
            raise ModelFileError(f"{source}: the weight {name} is stored as {value.dtype}, not as "
                                 f"{want.dtype}; the file is damaged or was edited: save the model again")
    try:
        missing, unexpected = model.load_state_dict(obj["state_dict"], strict=False)
    except Exception as err:  # RuntimeError for wrong shapes, values that are not tensors
        raise ModelFileError(f"{source}: the weights do not fit {obj['model_class']} "
                             f"({_one_line(err, skip='Error(s) in loading state_dict')}); the file is "
                             "damaged or was edited: save the model again") from None
    if missing or unexpected:
        raise ModelFileError(
            f"{source}: state_dict does not match {obj['model_class']} "
            f"(missing {list(missing)}, unexpected {list(unexpected)})"
        )
    check_finite(obj["state_dict"], source)
    model.eval()
    task = None
    if obj.get("task"):
        spec = obj["task"]
        from neurodyn.tasks._registry import TASKS

        if not isinstance(spec.get("name"), str) or not isinstance(spec.get("config", {}), dict):
            raise ModelFileError(f"{source}: the stored task has no valid name and config; "
                                 "save the model again")
        if spec["name"] not in TASKS:
            raise ModelFileError(f"{source}: unknown task {spec['name']!r}; known tasks: "
                                 f"{', '.join(sorted(TASKS))}{_newer(written_by)}")
        _check_options(TASKS[spec["name"]], spec.get("config", {}), f"{source}: task {spec['name']}",
                       written_by)
        try:
            task = make_task(spec["name"], **spec.get("config", {}))
        except Exception as err:
            raise ModelFileError(f"{source}: the stored task settings are unusable ({_one_line(err)}); "
                                 "save the model again") from None
    seed = obj.get("seed")
    return Checkpoint(
        model=model,
        task=task,
        training=dict(obj.get("training") or {}),
        seed=seed if isinstance(seed, int) else None,
        versions=dict(obj.get("versions") or {}),
        extra=dict(obj.get("extra") or {}),
    )


def with_dtype(model: RecurrentModel, dtype: torch.dtype | None) -> RecurrentModel:
    """``model`` converted to ``dtype`` (unchanged for None); a PLRNN-family model records it."""
    if dtype is None:
        return model
    model = model.to(dtype)
    if hasattr(model, "dtype_name"):
        model.dtype_name = str(dtype).replace("torch.", "")
    return model


def _one_line(err: Exception, skip: str = "") -> str:
    lines = [ln.strip() for ln in str(err).splitlines()
             if ln.strip() and not (skip and ln.strip().startswith(skip))]
    return (" ".join(lines) or type(err).__name__)[:160]


def _newer(written_by: Any) -> str:
    if isinstance(written_by, str) and written_by != str(__version__):
        return f" (the file was written by neurodyn {written_by}, this is {__version__}: use that release)"
    return ""


def _check_options(cls: type, config: dict[str, Any], what: str, written_by: Any) -> None:
    """Raise :class:`ModelFileError` for stored options that ``cls`` does not take (a newer release)."""
    import inspect

    params = inspect.signature(cls).parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return
    unknown = sorted(str(k) for k in config if k not in params)
    if unknown:
        who = (f"neurodyn {written_by}" if isinstance(written_by, str) and written_by != str(__version__)
               else "another neurodyn release")
        raise ModelFileError(f"{what} has option(s) {', '.join(unknown)} that this neurodyn ({__version__}) "
                             f"lacks; it was written by {who}: upgrade neurodyn to read it")


def load_checkpoint(path: str | os.PathLike) -> Checkpoint:
    """Load a checkpoint written by :func:`save_checkpoint` (never runs pickled code).

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ModelFileError
        If the file is not a neurodyn checkpoint (use :func:`neurodyn.io.load_model` for plain
        ``state_dict`` files of ``torch.nn.RNN``/``GRU``/``LSTM``), or holds NaN/Inf weights.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import torch
    >>> from neurodyn.io import load_checkpoint, save_checkpoint
    >>> from neurodyn.models import LeakyRNN
    >>> model = LeakyRNN(2, 6, 1, dale=True, seed=3)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     loaded = load_checkpoint(save_checkpoint(Path(tmp) / "net.pt", model)).model
    >>> bool(torch.equal(loaded.params().w_rec, model.params().w_rec)), loaded.training  # in eval mode
    (True, False)
    """
    return checkpoint_from_file_object(read_torch_file(path), path)


def checkpoint_from_file_object(obj: Any, path: str | os.PathLike) -> Checkpoint:
    """The :class:`Checkpoint` in ``obj``, as read from ``path`` by :func:`read_torch_file`."""
    if isinstance(obj, dict) and "format" in obj and not is_checkpoint(obj):
        raise ModelFileError(f"{path} is a {obj['format']!r} file, not a {FORMAT!r}; read it with "
                             "neurodyn.io.load (neurodyn.io.load_model reads plain state_dicts)")
    if not is_checkpoint(obj):
        raise ModelFileError(
            f"{path} is not a neurodyn checkpoint (found {describe(obj)}); "
            "use neurodyn.io.load_model for plain state_dicts"
        )
    return checkpoint_from_dict(obj, str(path))


def read_torch_file(path: str | os.PathLike) -> Any:
    """``torch.load(path, weights_only=True)`` with one-line errors for the usual failures.

    The zip container is checked first (every member against its CRC), so a damaged file is
    refused instead of yielding garbage weights; an HDF5/netCDF file is named as such.
    """
    path = Path(path)
    check_file(path, "model", error=ModelFileError)
    if path.stat().st_size == 0:
        raise ModelFileError(f"{path} is empty, not a model file; save the model again")
    with open(path, "rb") as f:
        head = f.read(8)
    if head == b"\x89HDF\r\n\x1a\n":
        raise ModelFileError(f"{path} is a netCDF-4/HDF5 file (a result file?), not a model checkpoint; read "
                             "results with neurodyn.io.load")
    if zipfile.is_zipfile(path):
        check_zip(path, str(path), error=ModelFileError)
    try:
        with warnings.catch_warnings():  # torch's note on a foreign pickle protocol, before its error
            warnings.filterwarnings("ignore", message="Detected pickle protocol", category=UserWarning)
            return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # torch raises many types for foreign files
        text = str(err)
        raw_pickle = head[:1] == b"\x80" and not zipfile.is_zipfile(path)
        if "Unsupported global" in text or "GLOBAL " in text or raw_pickle:
            raise ModelFileError(
                f"{path} contains pickled Python objects, which neurodyn never loads; save "
                "model.state_dict() (or use neurodyn.io.save_checkpoint) instead"
            ) from None
        raise ModelFileError(
            f"{path} is not a PyTorch file (torch.load could not read it: {type(err).__name__}); "
            "expected a .pt checkpoint or state_dict"
        ) from None


def check_finite(state_dict: dict[str, Any], source: str) -> None:
    """Raise :class:`ModelFileError` if any tensor holds NaN or Inf."""
    bad = [k for k, v in state_dict.items()
           if isinstance(v, torch.Tensor) and v.is_floating_point() and not all_finite(v)]
    if bad:
        raise ModelFileError(f"{source}: weights contain NaN/Inf in {', '.join(bad[:5])}")


def describe(obj: Any) -> str:
    """A short description of a loaded object, for error messages."""
    if isinstance(obj, dict):
        keys = list(obj)[:6]
        return f"a dict with keys {keys}{' …' if len(obj) > 6 else ''}"
    if isinstance(obj, torch.Tensor):
        return f"a single tensor of shape {tuple(obj.shape)}"
    return f"an object of type {type(obj).__name__}"
