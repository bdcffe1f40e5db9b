"""One reader for every neurodyn file: results by their ``format`` attribute, checkpoints by suffix."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from neurodyn._result import ResultFileError, read_result
from neurodyn.io._torch_result import is_torch_result, read_torch_result
from neurodyn.io.checkpoint import checkpoint_from_file_object, read_torch_file

__all__ = ["ResultFileError", "load"]

_TORCH_SUFFIXES = (".pt", ".pth")
_ZIP_MAGIC = b"PK\x03\x04"  # torch.save's default container


def load(path: str | os.PathLike) -> Any:
    """Read a neurodyn file: a result (netCDF-4) by its ``format`` attribute, or a ``.pt`` checkpoint.

    Result files are those written by ``.save(path)`` of any result type (fixed points, cycles,
    manifolds, basins, homoclinic points, Lyapunov spectra, reconstruction scores, degeneracy,
    rollouts) and by the command line's ``--out``; files in the layouts before the format attribute
    are recognised by their variables. See ``docs/formats.md``.

    Parameters
    ----------
    path : path-like
        A ``.nc`` result file, a ``.pt``/``.pth`` checkpoint (any torch zip file), or a ``.pt``
        result with weights (a ``LoadingFlow`` or ``MaxEntLoadings``, by its ``format`` key).

    Returns
    -------
    Result, Checkpoint, LoadingFlow or MaxEntLoadings
        The result type registered for the file's format (e.g. ``FixedPointResult``), or the
        :class:`~neurodyn.io.Checkpoint` of :func:`~neurodyn.io.load_checkpoint`.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ResultFileError
        One line naming the problem: not a netCDF-4/HDF5 file, a truncated or damaged file, no
        format attribute, an unknown format (naming the formats this version reads), a format or
        format_version attribute stored with another type, a format_version newer than this
        release (upgrade neurodyn), or missing variables.
    ModelFileError
        For a checkpoint that cannot be read (see :func:`~neurodyn.io.load_checkpoint`).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import numpy as np
    >>> from neurodyn.analysis import find_fixed_points
    >>> res = find_fixed_points(lambda h, u: 0.5 * h, state_size=2, initial_states=np.ones((3, 2)))
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "fixedpoints.nc"
    >>> _ = res.save(path)
    >>> back = load(path)
    >>> type(back).__name__, back.status.tolist()
    ('FixedPointResult', ['converged'])
    """
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"no such file: {p}")
    if p.is_file() and (p.suffix.lower() in _TORCH_SUFFIXES or _starts_with(p, _ZIP_MAGIC)):
        obj = read_torch_file(p)
        if is_torch_result(obj):
            return read_torch_result(p, obj)
        return checkpoint_from_file_object(obj, p)
    return read_result(p)


def _starts_with(path: Path, magic: bytes) -> bool:
    with open(path, "rb") as f:
        return f.read(len(magic)) == magic
