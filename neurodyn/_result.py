"""What every neurodyn result shares: a file format with a name and version, an atomic save, one loader.

A result type is a frozen dataclass that mixes in :class:`Result`, names its file format in
``FORMAT`` (``"neurodyn.<kind>"``) and ``FORMAT_VERSION``, and implements ``to_xarray`` and the
class method ``from_xarray``. :meth:`Result.save` writes the dataset as netCDF with the format
attributes, through a temporary file moved into place, so an existing file is never half-written
or replaced by a failed write. :func:`load_result` reads any such file back by its ``format``
attribute (``neurodyn.io.load`` is the public door).

Formats are registered by name with the dotted path of their class, so that loading a file
imports only the module that defines its type.
"""

from __future__ import annotations

import importlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

#: format name -> "module:Class" of the result type that reads it
FORMATS: dict[str, str] = {}


class ResultFileError(ValueError):
    """A result file that cannot be read: not netCDF, no or unknown format, or a newer version."""


def register_format(name: str, target: str) -> None:
    """Register the result type that reads format ``name``; ``target`` is ``"module:Class"``."""
    FORMATS[name] = target


class Result:
    """Mixin for result dataclasses: ``FORMAT``, ``FORMAT_VERSION``, ``to_xarray``, ``save``.

    Subclasses implement :meth:`to_xarray` (an ``xarray.Dataset`` with named dims) and the class
    method :meth:`from_xarray`; the format attributes are added by :meth:`save`.
    """

    FORMAT: ClassVar[str] = ""
    FORMAT_VERSION: ClassVar[int] = 1

    def to_xarray(self):  # pragma: no cover - every subclass implements it
        raise NotImplementedError

    @classmethod
    def from_xarray(cls, ds) -> Result:  # pragma: no cover - every subclass implements it
        raise NotImplementedError

    def save(self, path: str | Path, *, overwrite: bool = True) -> Path:
        """Write the result as a netCDF file (engine h5netcdf) with its format name and version.

        The file is written to a temporary name beside ``path`` and moved into place, so an
        existing file is replaced only by a complete one.

        Raises
        ------
        FileExistsError
            If ``path`` exists and ``overwrite`` is False.
        """
        path = Path(path)
        if path.exists() and not overwrite:
            raise FileExistsError(f"{path} exists; pass overwrite=True to replace it")
        ds = self.to_xarray()
        ds.attrs.update({"format": self.FORMAT, "format_version": int(self.FORMAT_VERSION)})
        write_atomically(path, lambda tmp: ds.to_netcdf(tmp, engine="h5netcdf"))
        return path


def write_atomically(path: str | Path, write: Callable[[str], Any]) -> Path:
    """Call ``write(tmp)`` on a temporary file beside ``path``, then move it into place.

    The temporary file is hidden (``.name.*.tmp``) and removed if ``write`` fails; the final file
    gets the usual permissions (``0o666`` less the umask). Returns ``path``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        mask = os.umask(0)  # mkstemp creates the file 0600
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return path


def result_type(fmt: str) -> type:
    """The registered result class of format ``fmt``; raises :class:`ResultFileError` if unknown."""
    if fmt not in FORMATS:
        known = ", ".join(sorted(FORMATS)) or "none"
        raise ResultFileError(f"unknown result format {fmt!r}; this neurodyn reads: {known}")
    module, name = FORMATS[fmt].split(":")
    return getattr(importlib.import_module(module), name)


def check_format(ds, fmt: str, version: int, source: str = "dataset") -> None:
    """Raise :class:`ResultFileError` unless ``ds`` declares format ``fmt`` at a version <= ``version``."""
    found = ds.attrs.get("format")
    if found != fmt:
        raise ResultFileError(f"{source} is not a {fmt} file (its format attribute is {found!r})")
    try:
        found_version = int(ds.attrs.get("format_version", 1))
    except (TypeError, ValueError):
        raise ResultFileError(
            f"{source} has a malformed format_version {ds.attrs.get('format_version')!r}"
        ) from None
    if found_version > version:
        raise ResultFileError(
            f"{source} was written in {fmt} version {found_version}, newer than this neurodyn reads "
            f"({version}); upgrade neurodyn"
        )
