"""Results that hold trained weights, stored as plain ``.pt`` dicts and read by ``neurodyn.io.load``.

A fitted object with network weights (a flow's vector field) is saved as a versioned plain dict
(``format``, ``version``, tensors, numbers, strings, lists, dicts) with ``torch.save`` through a
temporary file, and read back with ``torch.load(weights_only=True)`` (never pickled code). Formats
are registered by name with the dotted path of their class, so reading a file imports only the
module that defines its type; the class rebuilds itself with ``from_dict(obj)``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from neurodyn._result import ResultFileError, write_atomically

__all__ = ["TORCH_FORMATS", "read_torch_result", "save_torch_result"]

#: format name -> "module:Class" of the type that reads it (``from_dict(obj)``, ``FORMAT_VERSION``)
TORCH_FORMATS: dict[str, str] = {
    "neurodyn.loading_flow": "neurodyn.training.flow_matching:LoadingFlow",
    "neurodyn.maxent_loadings": "neurodyn.analysis.low_rank._maxent:MaxEntLoadings",
}


def save_torch_result(path: str | os.PathLike, payload: dict[str, Any], *, overwrite: bool = False) -> Path:
    """Write ``payload`` (a plain dict with ``format`` and ``version``) with ``torch.save``, atomically.

    Raises
    ------
    FileExistsError
        If ``path`` exists and ``overwrite`` is False (the file is left as it was).
    """
    import torch

    from neurodyn.io.checkpoint import plain

    path = Path(path)
    if path.exists() and not overwrite:
        raise FileExistsError(f"{path} exists; pass overwrite=True to replace it")
    payload = plain(payload)
    write_atomically(path, lambda tmp: torch.save(payload, tmp))
    return path


def is_torch_result(obj: Any) -> bool:
    """Whether a loaded ``.pt`` object is a registered result dict (not a model checkpoint)."""
    return isinstance(obj, dict) and obj.get("format") in TORCH_FORMATS


def read_torch_result(path: str | os.PathLike, obj: Any = None, *, expect: type | None = None) -> Any:
    """Rebuild the result stored in ``path`` (or in ``obj``, already read from it).

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ResultFileError
        One line: not a registered result dict, a file of another type than ``expect``, a version
        newer than this neurodyn reads, or contents that do not fit the format.
    ModelFileError
        For a file that ``torch.load(weights_only=True)`` cannot read.
    """
    import importlib

    from neurodyn.io.checkpoint import describe, read_torch_file

    if obj is None:
        obj = read_torch_file(path)
    if not is_torch_result(obj):
        found = repr(obj["format"]) if isinstance(obj, dict) and "format" in obj else describe(obj)
        raise ResultFileError(f"{path} is not a neurodyn result file (found {found}); "
                              f"read checkpoints with neurodyn.io.load_checkpoint")
    fmt = obj["format"]
    module, name = TORCH_FORMATS[fmt].split(":")
    cls = getattr(importlib.import_module(module), name)
    if expect is not None and cls is not expect:
        raise ResultFileError(f"{path} is a {fmt} file, not {expect.FORMAT}; read it with neurodyn.io.load")
    version = obj.get("version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise ResultFileError(f"{path}: version is stored as {type(version).__name__}, not an integer; the "
                              "file was not written by neurodyn or was edited")
    if version > cls.FORMAT_VERSION:
        raise ResultFileError(f"{path} was written in {fmt} version {version}, newer than this neurodyn "
                              f"reads ({cls.FORMAT_VERSION}); upgrade neurodyn")
    try:
        return cls.from_dict(obj)
    except (KeyError, TypeError, ValueError, RuntimeError, IndexError) as err:
        reason = " ".join(str(err).split())[:160] or type(err).__name__
        raise ResultFileError(f"{path} is a {fmt} file whose contents do not fit its format ({reason}); "
                              "it is damaged or was edited: write it again") from None
