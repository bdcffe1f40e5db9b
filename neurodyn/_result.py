"""What every neurodyn result shares: a file format with a name and version, an atomic save, one loader.

A result type is a frozen dataclass that mixes in :class:`Result`, names its file format in
``FORMAT`` (``"neurodyn.<kind>"``), ``FORMAT_VERSION`` and the variables a file must hold
(``REQUIRED``), reports a per-element ``status``, and implements ``to_xarray`` and the class method
``from_xarray``. :meth:`Result.save` writes the dataset as netCDF-4 (HDF5, engine h5netcdf) with the
format attributes, through a temporary file moved into place, so an existing file is never
half-written or replaced by a failed write. :func:`read_result` reads any such file back by its
``format`` attribute (``neurodyn.io.load`` is the public door); each ``load_*`` function and
:meth:`Result.load` go through the same checks.

Formats are registered by name with the dotted path of their class, so that loading a file imports
only the module that defines its type. Settings stored as attributes survive a round trip:
numbers, strings and flat numeric lists are stored as netCDF attributes, anything else (``None``,
booleans, dicts, nested or mixed lists) as JSON text prefixed ``json:``.
"""

from __future__ import annotations

import glob
import hashlib
import importlib
import json
import os
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from neurodyn._guard import available_memory, check_file

#: format name -> "module:Class" of the result type that reads it
FORMATS: dict[str, str] = {
    "neurodyn.fixed_points": "neurodyn.analysis.fixed_points._result:FixedPointResult",
    "neurodyn.cycles": "neurodyn.analysis.plrnn.cycle_result:CycleResult",
    "neurodyn.manifolds": "neurodyn.analysis.plrnn.manifold_result:ManifoldResult",
    "neurodyn.homoclinic": "neurodyn.analysis.plrnn.homoclinic:HomoclinicResult",
    "neurodyn.basins": "neurodyn.analysis.plrnn.basins:BasinResult",
    "neurodyn.lyapunov": "neurodyn.analysis.lyapunov._result:LyapunovResult",
    "neurodyn.reconstruction": "neurodyn.analysis.reconstruction._evaluate:ReconstructionResult",
    "neurodyn.degeneracy": "neurodyn.analysis.degeneracy:DegeneracyResult",
    "neurodyn.degeneracy_features": "neurodyn.analysis.degeneracy:DegeneracyFeatures",
    "neurodyn.rollout": "neurodyn.kernels._result:RolloutResult",
    "neurodyn.sweep": "neurodyn.sweep._dataset:SweepResult",
    "neurodyn.mixture_fit": "neurodyn.tasks.swap_model:MixtureFit",
}

#: files written before every result carried a format attribute, told apart by their variables
LEGACY_LAYOUTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("neurodyn.reconstruction", ("d_stsp", "d_h", "pe", "generated")),
    ("neurodyn.lyapunov", ("exponents", "running", "finite")),
    ("neurodyn.basins", ("label", "steps", "attractor_state")),
    ("neurodyn.homoclinic", ("stable_saddle", "unstable_saddle", "transversal")),
    ("neurodyn.degeneracy", ("dynamics_distance", "weight_distance")),
    ("neurodyn.rollout", ("final", "diverged")),
)

_FORMAT_KEYS = ("format", "format_version")
_JSON = "json:"
_HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"


class ResultFileError(ValueError):
    """A result file that cannot be read: not netCDF-4, damaged, no or unknown format, a newer version.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import numpy as np
    >>> import xarray as xr
    >>> from neurodyn.io import ResultFileError, load
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp) / "other.nc"
    ...     xr.Dataset({"x": ("t", np.zeros(3))}).to_netcdf(path, engine="h5netcdf")
    ...     try:
    ...         load(path)
    ...     except ResultFileError as err:
    ...         print("not a neurodyn result:", "no format attribute" in str(err))
    not a neurodyn result: True
    >>> issubclass(ResultFileError, ValueError)
    True
    """


def register_format(name: str, target: str) -> None:
    """Register the result type that reads format ``name``; ``target`` is ``"module:Class"``."""
    FORMATS[name] = target


class Result:
    """Mixin for result dataclasses: ``FORMAT``, ``FORMAT_VERSION``, ``REQUIRED``, ``save``, ``load``.

    Subclasses implement :meth:`to_xarray` (an ``xarray.Dataset`` with named dims whose attributes
    start with :meth:`format_attrs`) and the class method :meth:`from_xarray`.

    Every result's ``repr`` is one short line (arrays by dtype and shape, see :func:`brief`; a type
    may say more in ``_repr_brief``), also for dataclasses, whose generated ``repr`` would print
    every array; in IPython/Jupyter the display adds the result's ``summary()`` table where it has one.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.lyapunov import LyapunovResult
    >>> result = LyapunovResult(np.zeros((1, 3)), np.zeros((1, 10, 3)), np.arange(10), np.ones(1, bool),
    ...                         jacobian="analytic", n_steps=10, n_transient=0, seed=0)
    >>> repr(result)  # doctest: +ELLIPSIS
    "LyapunovResult(exponents=float64 (1, 3), running=float64 (1, 10, 3), steps=int64 (10,), ...)"
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__repr__" not in cls.__dict__:  # set before @dataclass runs, which then keeps it
            cls.__repr__ = Result.__repr__
            cls._repr_pretty_ = Result._repr_pretty_  # IPython looks for it before a class's __repr__

    def __repr__(self) -> str:
        inner = self._repr_brief()
        return f"{type(self).__name__}({inner})"

    def _repr_brief(self) -> str:
        """The inside of the one-line repr: each dataclass field as :func:`brief` shows it."""
        import dataclasses

        if not dataclasses.is_dataclass(self):
            return f"at {id(self):#x}"
        return ", ".join(f"{f.name}={brief(getattr(self, f.name, None))}" for f in dataclasses.fields(self)
                         if f.repr)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        """IPython's display: the one-line repr, then the ``summary()`` table if the type has one."""
        p.text(repr(self))
        summary = getattr(self, "summary", None)
        if not cycle and callable(summary):
            try:
                text = summary()
            except NotImplementedError:
                return
            p.text("\n" + text)

    FORMAT: ClassVar[str] = ""
    FORMAT_VERSION: ClassVar[int] = 1
    #: variables every file of the format holds (checked before ``from_xarray`` runs)
    REQUIRED: ClassVar[tuple[str, ...]] = ()
    #: formats ``load`` of this type accepts (default: its own)
    READS: ClassVar[tuple[str, ...]] = ()

    def to_xarray(self):  # pragma: no cover - every subclass implements it
        raise NotImplementedError

    @classmethod
    def from_xarray(cls, ds) -> Result:  # pragma: no cover - every subclass implements it
        raise NotImplementedError

    @classmethod
    def format_attrs(cls) -> dict[str, Any]:
        """``{"format": FORMAT, "format_version": FORMAT_VERSION}``."""
        return {"format": cls.FORMAT, "format_version": int(cls.FORMAT_VERSION)}

    def save(self, path: str | Path, *, overwrite: bool = False) -> Path:
        """Write the result as a netCDF-4 file (engine h5netcdf) with its format name and version.

        The file is written to a temporary name beside ``path`` and moved into place, so an
        existing file is replaced only by a complete one, and only with ``overwrite=True`` (as
        :func:`neurodyn.io.save_checkpoint` and the command line); it carries a checksum of its
        values that loading verifies (:func:`write_result_file`). Returns ``path``.

        Raises
        ------
        FileExistsError
            If ``path`` exists and ``overwrite`` is False.
        IsADirectoryError
            If ``path`` is a folder.
        ValueError
            If ``path`` ends in ``.pt``/``.pth``, which :func:`neurodyn.io.load` reads as a model
            checkpoint (end the name in ``.nc``).
        OSError
            If ``path`` cannot be written (one line naming ``path``, e.g. a
            ``NotADirectoryError`` when a file stands where a folder of the path should be).
        """
        path = Path(path)
        if path.suffix.lower() in (".pt", ".pth"):
            raise ValueError(f"{path}: results are netCDF files, and a {path.suffix} file is read as a model "
                             "checkpoint; end the name in .nc")
        if path.is_dir():
            raise IsADirectoryError(f"{path} is a folder; give a file name inside it "
                                    f"(e.g. {path / 'result.nc'})")
        if path.exists() and not overwrite:
            raise FileExistsError(f"{path} exists; pass overwrite=True to replace it")
        ds = self.to_xarray()
        ds.attrs.update(self.format_attrs())
        try:
            write_atomically(path, lambda tmp: write_result_file(ds, tmp, check=type(self)))
        except OSError as err:
            raise cannot_write(path, err, "choose a path in a writable folder") from None
        return path

    @classmethod
    def load(cls, path: str | Path):
        """Read a file of this type (see :func:`read_result` for the errors)."""
        return read_result(path, expect=cls)


def brief(value: Any, width: int = 40) -> str:
    """A short text for one field of a repr: arrays and tensors by dtype and shape (``float64 (9, 16)``),
    dicts by their size, long sequences by their length, anything else its ``repr`` cut to ``width``.

    Examples
    --------
    >>> import numpy as np
    >>> brief(np.zeros((9, 16))), brief({"a": 1, "b": 2}), brief(3.5), brief("x" * 60)
    ('float64 (9, 16)', '{2 entries}', '3.5', "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...")
    """
    shape = getattr(value, "shape", None)
    if shape is not None and hasattr(value, "dtype"):
        kind = "Tensor " if type(value).__module__.startswith("torch") else ""
        dtype = str(value.dtype).removeprefix("torch.")
        return f"{kind}{dtype} {tuple(shape)}"
    if isinstance(value, Mapping):
        return f"{{{len(value)} entr{'y' if len(value) == 1 else 'ies'}}}"
    if isinstance(value, (list, tuple)) and len(value) > 4:
        return f"{type(value).__name__} of {len(value)}"
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


class TorchResult:
    """Mixin for results that hold network weights, stored as a plain ``.pt`` dict: subclasses set
    ``FORMAT`` (registered in ``neurodyn.io._torch_result.TORCH_FORMATS``) and ``FORMAT_VERSION`` and
    implement ``to_dict`` (a plain versioned dict) and the class method ``from_dict``."""

    FORMAT: ClassVar[str] = ""
    FORMAT_VERSION: ClassVar[int] = 1

    def save(self, path: str | Path, *, overwrite: bool = False) -> Path:
        """Write ``to_dict()`` to ``path`` (``.pt``) atomically; ``FileExistsError`` if it exists, unless
        ``overwrite=True``. Returns ``path``."""
        from neurodyn.io._torch_result import save_torch_result

        return save_torch_result(path, self.to_dict(), overwrite=overwrite)

    @classmethod
    def load(cls, path: str | Path):
        """Read a file written by :meth:`save` (``ResultFileError`` for another or a damaged file)."""
        from neurodyn.io._torch_result import read_torch_result

        return read_torch_result(path, expect=cls)


#: attribute holding the SHA-256 of a result file's values (:func:`content_digest`), checked on reading
DIGEST_ATTR = "content_sha256"


def write_result_file(ds, path: str | Path, check: type | None = None) -> None:
    """Write ``ds`` as a netCDF-4 file (engine h5netcdf) that :func:`read_result` can verify.

    Text variables are stored as fixed-width character arrays (NetCDF ``char``, decoded back to
    strings on reading) rather than HDF5 variable-length strings, whose heap pointers a damaged
    file can turn into an endless read inside HDF5. The file is then read back and the SHA-256 of
    its decoded values (:func:`content_digest`) is stored as the attribute ``content_sha256``, so a
    value or setting changed on disk later (a flipped byte, a bad copy, an edit) is refused on reading
    instead of being returned. With ``check`` (a result type) the file read back must also pass that
    type's reading checks, so that nothing is saved that cannot be loaded. Writes in place: use it
    through :func:`write_atomically`.

    Raises
    ------
    ValueError
        For text that a file cannot hold as it is (a NUL character, a lone surrogate), naming the
        variable or setting, or (with ``check``) a result that would not read back.
    """
    import h5py
    import xarray as xr

    _check_text(ds)
    encoding = {name: {**var.encoding, "dtype": "S1"} for name, var in ds.variables.items()
                if var.dtype.kind in "OUS" and "dtype" not in var.encoding}
    ds.to_netcdf(path, engine="h5netcdf", encoding=encoding)
    with xr.open_dataset(path, engine="h5netcdf") as back:
        back = back.load()
    if check is not None:  # what reading the file will do, so that a result is never saved unreadable
        try:
            check_format(back, check, "the file")
            check.from_xarray(back)
        except (ValueError, TypeError, KeyError, IndexError) as err:
            reason = " ".join(str(err).split())[:200] or type(err).__name__
            raise ValueError(f"this {check.__name__} cannot be saved: it would not read back "
                             f"({reason})") from None
    with h5py.File(path, "r+") as f:
        f.attrs[DIGEST_ATTR] = np.bytes_(content_digest(back))


def content_digest(ds) -> str:
    """SHA-256 (hex) of the attributes of ``ds`` (but ``content_sha256``) and of every variable,
    coordinates included, in name order: its name, dims, shape and values (every NaN counted as the
    same NaN; text as UTF-8, whatever its NumPy dtype).

    Examples
    --------
    >>> import numpy as np
    >>> import xarray as xr
    >>> a = xr.Dataset({"x": ("t", [1.0, np.nan]), "s": ("t", np.array(["ab", "c"], dtype=object))})
    >>> b = a.copy(deep=True)
    >>> content_digest(a) == content_digest(b)
    True
    >>> b["x"][0] = 2.0
    >>> content_digest(a) == content_digest(b)
    False
    """
    h = hashlib.sha256()
    for key in sorted(k for k in map(str, ds.attrs) if k != DIGEST_ATTR):
        value = ds.attrs[key]
        value = value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else _python(value)
        h.update(f"{key}\x1f{value!r}\x1e".encode("utf-8", "surrogatepass"))
    for name in sorted(map(str, ds.variables)):
        var = ds.variables[name]
        values = np.asarray(var.values)
        text = values.dtype.kind in "OUS"
        kind = "text" if text else values.dtype.str
        h.update(f"{name}\x1f{','.join(map(str, var.dims))}\x1f{values.shape}\x1f{kind}\x1e".encode())
        if text:
            h.update("\x1f".join(_text(v) for v in values.ravel()).encode("utf-8", "surrogatepass"))
        else:
            if values.dtype.kind in "fc":
                values = np.where(np.isnan(values), np.nan, values).astype(values.dtype, copy=False)
            h.update(np.ascontiguousarray(values).tobytes())
    return h.hexdigest()


def _check_text(ds) -> None:
    """A one-line ``ValueError`` for text in ``ds`` (variables or settings) that a result file cannot
    hold unchanged: a NUL character (a char array ends there) or a lone surrogate (not UTF-8)."""
    items = [(f"variable {name!r}", v) for name, var in ds.variables.items() if var.dtype.kind in "OU"
             for v in np.asarray(var.values).ravel()]
    items += [(f"setting {key!r}", v) for key, v in ds.attrs.items()]
    for where, value in items:
        if not isinstance(value, str):
            continue
        if "\x00" in value:
            raise ValueError(f"the {where} holds a NUL character ({value!r}), which a result file cannot "
                             "store; remove it")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(f"the {where} holds text that is not valid Unicode ({value!r}); "
                             "remove the lone surrogate") from None


def _text(value: Any) -> str:
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else str(value)


def cannot_write(path: str | Path, err: OSError, fix: str) -> OSError:
    """The one-line error to raise (``from None``) when writing ``path`` failed with ``err``: it names
    the caller's ``path`` (never a temporary file), why, and ``fix``. A file where a folder of the path
    should be gives a ``NotADirectoryError``; otherwise the error keeps ``err``'s class (always an
    ``OSError``)."""
    path = Path(path)
    above = path.absolute()
    while not above.exists() and above != above.parent:
        above = above.parent
    if above.exists() and not above.is_dir() and above != path.absolute():
        return NotADirectoryError(f"cannot write {path}: {above} is a file, not a folder; {fix}")
    kind = OSError if isinstance(err, FileExistsError) else type(err)
    return kind(f"cannot write {path} ({err.strerror or _text(err)}); {fix}")


def write_atomically(path: str | Path, write: Callable[[str], Any]) -> Path:
    """Call ``write(tmp)`` on a temporary file beside ``path``, then move it into place.

    The temporary file is hidden (``.name.<pid>.*.tmp``) and removed if ``write`` fails; temporary
    files that killed processes left beside ``path`` are removed first (see
    :func:`remove_stale_temporaries`); the final file gets the usual permissions (``0o666`` less the
    umask). Returns ``path``.
    """
    write_atomically_together({path: write})
    return Path(path)


def write_atomically_together(writes: Mapping[str | Path, Callable[[str], Any]]) -> list[Path]:
    """Write several files (e.g. a result and its figure) so that a failure replaces none of them.

    Each ``write(tmp)`` fills a temporary file beside its path; only when all have succeeded are
    they moved into place, one ``os.replace`` after another (nothing is computed in between). A
    failure or a kill before that leaves every existing file as it was; the temporaries are
    removed on failure, and by the next write to the same paths after a kill.

    The environment variable ``NEURODYN_WRITE_DELAY`` (seconds) pauses after each temporary file
    is written, so that tests can kill a command during its final write.
    """
    paths = [Path(p) for p in writes]
    tmps: list[str] = []
    try:
        for path, write in zip(paths, writes.values()):
            path.parent.mkdir(parents=True, exist_ok=True)
            remove_stale_temporaries(path)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp")
            os.close(fd)
            tmps.append(tmp)
            write(tmp)
            mask = os.umask(0)  # mkstemp creates the file 0600
            os.umask(mask)
            os.chmod(tmp, 0o666 & ~mask)
            delay = os.environ.get("NEURODYN_WRITE_DELAY")
            if delay:
                time.sleep(float(delay))
        for path, tmp in zip(paths, tmps):
            os.replace(tmp, path)
    finally:
        for tmp in tmps:
            if os.path.exists(tmp):
                os.remove(tmp)
    return paths


#: temporary files of earlier releases carried no process id; such a file is stale after this long
_STALE_AFTER_S = 3600.0


def remove_stale_temporaries(path: str | Path) -> list[Path]:
    """Remove the hidden temporary files of :func:`write_atomically` that killed processes left
    beside ``path``: those whose process no longer runs (and, without a process id, those older than
    an hour). Files of running processes are kept. Returns the files removed.
    """
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    removed = []
    try:
        candidates = list(folder.glob(f".{glob.escape(path.name)}.*.tmp"))
    except OSError:
        return removed
    for tmp in candidates:
        middle = tmp.name[len(path.name) + 2:-len(".tmp")]
        pid_text = middle.split(".", 1)[0] if "." in middle else ""
        try:
            if pid_text.isdigit():
                if _running(int(pid_text)):
                    continue
            elif time.time() - tmp.stat().st_mtime < _STALE_AFTER_S:
                continue
            tmp.unlink()
            removed.append(tmp)
        except OSError:  # removed meanwhile, or not ours to remove
            continue
    return removed


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


# -- attributes ----------------------------------------------------------------------------------
def encode_attrs(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """netCDF-safe copies of ``attrs`` that :func:`decode_attrs` turns back into the same values.

    Raises
    ------
    TypeError
        For a value that is neither a number, string, numeric array nor JSON-serialisable.
    """
    return {str(k): _encode(v, k) for k, v in attrs.items()}


def decode_attrs(attrs: Mapping[str, Any], skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """The settings stored by :func:`encode_attrs`, less the format attributes and ``skip``."""
    return {k: _decode(v) for k, v in attrs.items() if k not in _FORMAT_KEYS and k not in skip}


def _encode(value: Any, key: str) -> Any:
    if isinstance(value, str):
        return _JSON + json.dumps(value) if value.startswith(_JSON) else value
    if _is_number(value):
        return value
    if isinstance(value, (list, tuple, np.ndarray)) and len(value) and np.ndim(value) == 1 \
            and all(_is_number(v) for v in _python(np.asarray(value, dtype=object))):
        arr = np.asarray(value)
        return arr.astype(np.int64 if arr.dtype.kind in "iu" else np.float64)
    try:
        return _JSON + json.dumps(value, default=_json_default)
    except TypeError:
        raise TypeError(f"attribute {key!r}: cannot store a {type(value).__name__} in a result file; "
                        "use numbers, strings, lists or dicts") from None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def _python(value: Any) -> Any:
    """NumPy scalars and arrays as Python numbers and lists; other values unchanged."""
    return value.tolist() if isinstance(value, (np.ndarray, np.generic)) else value


def _json_default(value: Any) -> Any:
    if not isinstance(value, (np.ndarray, np.generic)):
        raise TypeError
    return _python(value)


def _decode(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(_JSON):
        return json.loads(value[len(_JSON):])
    return _python(value)


# -- reading -------------------------------------------------------------------------------------
def result_type(fmt: str) -> type:
    """The registered result class of format ``fmt``; raises :class:`ResultFileError` if unknown."""
    if fmt not in FORMATS:
        known = ", ".join(sorted(FORMATS))
        raise ResultFileError(f"unknown result format {fmt!r}; this neurodyn reads: {known}")
    module, name = FORMATS[fmt].split(":")
    return getattr(importlib.import_module(module), name)


def identify(ds, source: str = "dataset") -> tuple[str, int]:
    """``(format, format_version)`` of a dataset, files in the layouts before format attributes included.

    Raises
    ------
    ResultFileError
        Without a format attribute (and no known earlier layout), or when the format or its
        version is stored with another type.
    """
    fmt = ds.attrs.get("format")
    if fmt is None:
        names = set(ds.variables)
        for name, signature in LEGACY_LAYOUTS:
            if names.issuperset(signature):
                return name, 1
        raise ResultFileError(f"{source} has no format attribute: it is not a neurodyn result file "
                              f"(this neurodyn reads: {', '.join(sorted(FORMATS))})")
    if not isinstance(fmt, str):
        raise ResultFileError(f"{source}: the format attribute is stored as {type(fmt).__name__} "
                              f"{_show(fmt)}, not as text; the file was not written by neurodyn or was "
                              "edited")
    version = ds.attrs.get("format_version", 1)
    if isinstance(version, (bool, np.bool_)) or not isinstance(version, (int, np.integer)):
        raise ResultFileError(f"{source}: format_version is stored as {type(version).__name__} "
                              f"{_show(version)}, not as an integer; the file was not written by neurodyn "
                              "or was edited")
    if fmt == "neurodyn.fixed_points" and {"region_code", "region_margin"} <= set(ds.variables):
        return "neurodyn.cycles", int(version)  # exact PLRNN cycles, written under the shared name
    return fmt, int(version)


def _show(value: Any) -> str:
    return repr(_python(value))


def check_format(ds, cls: type, source: str = "dataset") -> str:
    """Raise :class:`ResultFileError` unless ``cls`` reads ``ds``; returns the dataset's format.

    Checks the format name (one of ``cls.READS``, default ``cls.FORMAT``), that its version is at
    most ``cls.FORMAT_VERSION`` and that the variables ``cls.REQUIRED`` are present.
    """
    fmt, version = identify(ds, source)
    reads = cls.READS or (cls.FORMAT,)
    if fmt not in reads:
        raise ResultFileError(f"{source} is a {fmt} file, not {' or '.join(reads)}; read it with "
                              "neurodyn.io.load")
    if version > cls.FORMAT_VERSION:
        raise ResultFileError(f"{source} was written in {fmt} version {version}, newer than this neurodyn "
                              f"reads ({cls.FORMAT_VERSION}); upgrade neurodyn")
    missing = [name for name in cls.REQUIRED if name not in ds.variables]
    if missing:
        raise ResultFileError(f"{source} is a {fmt} file without the variables {', '.join(missing)}; "
                              "it is incomplete or was edited: write it again")
    return fmt


def read_result(path: str | os.PathLike, expect: type | None = None):
    """Read a result file by its ``format`` attribute (as ``expect`` when given).

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ResultFileError
        For a file that is not netCDF-4/HDF5, a truncated or damaged one (also one whose values no
        longer match the checksum :meth:`Result.save` stored), no format attribute, an
        unknown format (the message lists those this version reads), a format or version attribute
        stored with another type, a version newer than this neurodyn reads, missing variables, or
        (with ``expect``) a file of another type.
    """
    import xarray as xr

    path = Path(path)
    _check_hdf5(path)
    try:
        with xr.open_dataset(path, engine="h5netcdf") as ds:
            nbytes = sum(int(v.size) * v.dtype.itemsize for v in ds.variables.values())
            if nbytes > available_memory():
                raise ResultFileError(f"{path} declares {nbytes / 2**30:.3g} GiB of variables, more than the "
                                      "memory available; it is damaged, or read parts of it with xarray")
            ds = ds.load()
    except ResultFileError:
        raise
    except Exception as err:  # h5py raises OSError, KeyError, ValueError, RuntimeError on damage
        reason = str(err).splitlines()[0][:120] if str(err) else type(err).__name__
        raise ResultFileError(f"{path} is truncated or damaged ({reason}); write it again") from None
    _verify_digest(ds, path)
    cls = expect if expect is not None else result_type(identify(ds, str(path))[0])
    check_format(ds, cls, str(path))
    try:
        return cls.from_xarray(ds)
    except ResultFileError:
        raise
    except (ValueError, TypeError, KeyError, IndexError) as err:  # variables of the wrong type or shape
        reason = " ".join(str(err).split())[:160] or type(err).__name__
        raise ResultFileError(f"{path} is a {cls.FORMAT} file whose contents do not fit its format "
                              f"({reason}); it is damaged or was edited: write it again") from None


def _verify_digest(ds, path: Path) -> None:
    """Refuse a file whose values differ from the checksum stored when it was written (files of earlier
    releases carry none); the attribute is dropped from ``ds.attrs`` once checked."""
    stored = ds.attrs.pop(DIGEST_ATTR, None)
    if stored is None:
        return
    if isinstance(stored, bytes):
        stored = stored.decode("ascii", "replace")
    if not isinstance(stored, str) or stored != content_digest(ds):
        raise ResultFileError(f"{path} is damaged: its values no longer match the checksum stored when it "
                              f"was written; write it again (a file edited on purpose: delete its "
                              f"{DIGEST_ATTR} attribute to read it)")


def _check_hdf5(path: Path) -> None:
    check_file(path, "result", error=ResultFileError)
    with open(path, "rb") as f:
        for offset in (0, 512, 1024, 2048):  # HDF5 allows a user block before the signature
            f.seek(offset)
            if f.read(8) == _HDF5_SIGNATURE:
                return
    if path.stat().st_size == 0:
        raise ResultFileError(f"{path} is empty, not a result file (netCDF-4/HDF5)")
    with open(path, "rb") as f:
        if f.read(3) == b"CDF":
            raise ResultFileError(f"{path} is a netCDF-3 file; neurodyn results are netCDF-4 (HDF5) files")
    raise ResultFileError(f"{path} is not a netCDF-4/HDF5 file (no HDF5 signature); neurodyn result files "
                          "are written by Result.save")
