"""Checks made before a loader trusts a file: array headers, declared sizes, zip checksums (numpy only).

A damaged or hostile file can declare an array far larger than itself (allocating it exhausts
memory), carry a ``.npy`` header that NumPy misreads, or hold a zip member whose bytes no longer
match its CRC. These helpers read only headers and checksums and raise one-line errors (the error
class is the caller's) naming the file and what to do, before anything large is allocated.
"""

from __future__ import annotations

import ast
import os
import zipfile
from pathlib import Path
from typing import IO, Any

import numpy as np

__all__ = ["available_memory", "check_declared_size", "check_file", "check_mat_v5", "check_npy", "check_zip",
           "read_npy_header"]

#: longest .npy header NumPy itself accepts without ``max_header_size`` (version 2/3 headers allow more)
_MAX_HEADER = 10_000


def available_memory() -> int:
    """Bytes of memory available to a new allocation (``MemAvailable``, else physical memory)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return 1 << 62


def _gib(n: float) -> str:
    if n >= 2**27:
        return f"{n / 2**30:.3g} GiB"
    return f"{n / 2**20:.3g} MiB" if n >= 2**20 else f"{int(n)} bytes"


def check_file(path: Path, what: str, *, error: type[Exception] = ValueError) -> None:
    """``FileNotFoundError`` if ``path`` does not exist; ``error`` if it is a directory (not a ``what``
    file)."""
    if not path.exists():
        raise FileNotFoundError(f"no such file: {path}")
    if path.is_dir():
        raise error(f"{path} is a directory, not a {what} file")


def check_declared_size(
    shape: tuple[int, ...], dtype: Any, source: str, *, present: int | None = None,
    error: type[Exception] = ValueError,
) -> int:
    """Raise ``error`` if an array of ``shape`` and ``dtype`` cannot be what the file holds.

    Parameters
    ----------
    shape : tuple of int
        The shape the file declares.
    dtype : numpy dtype-like
    source : str
        The file (and member) named in the message.
    present : int, optional
        Bytes of array data actually in the file; fewer than declared means a truncated file.

    Returns
    -------
    int
        The declared size in bytes.

    Raises
    ------
    error
        If the size exceeds ``present`` (truncated) or the memory available now (refused before
        allocating).

    Examples
    --------
    >>> check_declared_size((3, 2), "<f8", "x.npy", present=48)
    48
    >>> check_declared_size((10**12,), "<f8", "x.npy", present=80)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: x.npy is truncated or damaged: its header declares 7.45e+03 GiB of data but only 80 ...
    """
    nbytes = int(np.prod([int(n) for n in shape], dtype=object)) * np.dtype(dtype).itemsize
    if present is not None and nbytes > present:
        raise error(f"{source} is truncated or damaged: its header declares {_gib(nbytes)} of data but only "
                    f"{_gib(present)} follow; write the file again")
    free = available_memory()
    if nbytes > free:
        shape = tuple(int(n) for n in shape)
        raise error(f"{source} declares an array of shape {shape} ({_gib(nbytes)}), more "
                    f"than the memory available ({_gib(free)}); load a part of it or use a larger machine")
    return nbytes


def read_npy_header(f: IO[bytes], source: str, *, error: type[Exception] = ValueError):
    """Read a ``.npy`` header from ``f`` without trusting it: ``(shape, dtype, fortran_order)``.

    Raises
    ------
    error
        For a missing magic string, an unknown format version, a header that is not a valid
        Python literal with ``descr``, ``fortran_order`` and ``shape``, negative dimensions, or a
        dtype holding Python objects.
    """
    fix = "write it again with numpy.save"
    if f.read(6) != b"\x93NUMPY":
        raise error(f"{source} is not a NumPy .npy file (no .npy header); {fix}")
    version = f.read(2)
    if len(version) < 2 or version[0] not in (1, 2, 3):
        raise error(f"{source} has a damaged .npy header (unknown format version); {fix}")
    size_bytes = 2 if version[0] == 1 else 4
    raw = f.read(size_bytes)
    length = int.from_bytes(raw, "little") if len(raw) == size_bytes else -1
    text = f.read(length) if 0 <= length <= _MAX_HEADER * 10 else b""
    try:
        header = ast.literal_eval(text.decode("latin1" if version[0] < 3 else "utf8"))
        descr, fortran, shape = header["descr"], header["fortran_order"], header["shape"]
        dtype = np.lib.format.descr_to_dtype(descr)
        if not isinstance(fortran, bool) or not isinstance(shape, tuple):
            raise ValueError
        shape = tuple(int(n) for n in shape)
    except Exception:  # any malformed header: SyntaxError, KeyError, TypeError, ValueError, ...
        raise error(f"{source} has a damaged .npy header (it does not describe an array); {fix}") from None
    if any(n < 0 for n in shape):
        raise error(f"{source} has a damaged .npy header (negative dimension in {shape}); {fix}")
    if dtype.hasobject:
        raise error(f"{source} holds Python objects, not a numeric array; save a numeric array "
                    f"(e.g. numpy.save(path, x.astype(float)))")
    return shape, dtype, fortran


def check_npy(path: Path, source: str | None = None, *, error: type[Exception] = ValueError):
    """Check a ``.npy`` file's header and declared size against the file; ``(shape, dtype)``."""
    source = source or str(path)
    with open(path, "rb") as f:
        shape, dtype, _ = read_npy_header(f, source, error=error)
        present = path.stat().st_size - f.tell()
    check_declared_size(shape, dtype, source, present=present, error=error)
    return shape, dtype


def check_zip(path: Path, source: str | None = None, *, error: type[Exception] = ValueError,
              npy_members: bool = False) -> None:
    """Raise ``error`` unless every member of the zip file ``path`` matches its CRC.

    With ``npy_members`` (``.npz`` archives), each ``.npy`` member's header is also checked and its
    declared size compared with the member's size, before NumPy allocates anything.
    """
    source = source or str(path)
    try:
        with zipfile.ZipFile(path) as zf:
            bad = zf.testzip()
            if bad is not None:
                raise error(f"{source} is damaged: the zip member {bad!r} fails its checksum (CRC); "
                            "write the file again")
            if npy_members:
                for info in zf.infolist():
                    if not info.filename.endswith(".npy"):
                        continue
                    member = f"{source}[{info.filename[:-4]}]"
                    with zf.open(info) as f:
                        shape, dtype, _ = read_npy_header(f, member, error=error)
                        header_len = f.tell()
                    check_declared_size(shape, dtype, member, present=info.file_size - header_len,
                                        error=error)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, NotImplementedError,
            ValueError, RuntimeError) as err:
        if isinstance(err, error):
            raise
        raise error(f"{source} is truncated or damaged ({type(err).__name__}: "
                    f"{' '.join(str(err).split())[:100]}); write the file again") from None


#: MATLAB v5 data types (miINT8 = 1 ...) and their sizes in bytes
_MI_SIZE = {1: 1, 2: 1, 3: 2, 4: 2, 5: 4, 6: 4, 7: 4, 9: 8, 12: 8, 13: 8, 16: 1, 17: 2, 18: 4}
_MI_MATRIX, _MI_COMPRESSED = 14, 15
#: numeric MATLAB array classes (mxDOUBLE_CLASS = 6 ... mxUINT64_CLASS = 15; char data may be UTF-8)
_NUMERIC_CLASSES = {6, 7, 8, 9, 10, 11, 12, 13, 14, 15}


def check_mat_v5(path: Path, source: str | None = None, *, error: type[Exception] = ValueError) -> None:
    """Check the numeric variables of a MATLAB v5/v7 file before ``scipy.io.loadmat`` reads it.

    scipy's reader trusts the sizes in a file: a damaged data element (say, a zeroed tag) under a
    matrix that declares its dimensions makes it read past its buffer and crash the process. This
    walks the top-level elements (decompressing ``miCOMPRESSED`` ones, at most the memory
    available) and raises ``error`` when a numeric matrix's data do not hold
    ``prod(dims)`` elements of their declared type, or an element runs past its container. Char,
    cell, struct and sparse matrices are not inspected. Files that are not v5 (v4, v7.3) are left to
    the reader.
    """
    import struct
    import zlib

    source = source or str(path)
    raw = Path(path).read_bytes()
    if len(raw) < 128 or raw[126:128] not in (b"IM", b"MI"):
        return
    end = "<" if raw[126:128] == b"IM" else ">"

    def bad(what: str) -> Exception:
        return error(f"{source} is not a readable MATLAB .mat file: truncated or damaged ({what}); save it "
                     f"again with MATLAB save(..., '-v7') or scipy.io.savemat")

    def tag(buf: bytes, pos: int) -> tuple[int, int, int, int]:
        """(type, size, data start, next element) of the element at ``pos``."""
        if pos + 8 > len(buf):
            raise bad("an element tag runs past the end")
        first, second = struct.unpack_from(end + "II", buf, pos)
        if first >> 16:  # small data element: size and type packed in 4 bytes, data in the next 4
            if first >> 16 > 4:
                raise bad(f"a small data element declares {first >> 16} bytes")
            return first & 0xFFFF, first >> 16, pos + 4, pos + 8
        size = second
        stop = pos + 8 + size
        if first != _MI_COMPRESSED:
            stop = pos + 8 + ((size + 7) // 8) * 8
        if pos + 8 + size > len(buf):
            raise bad(f"an element declares {size} bytes but {len(buf) - pos - 8} remain")
        return first, size, pos + 8, stop

    def matrix(buf: bytes, start: int, stop: int) -> None:
        kind, size, data, pos = tag(buf, start)  # array flags
        if kind != 6 or size < 8:
            raise bad("a matrix without array flags")
        flags = struct.unpack_from(end + "I", buf, data)[0]
        cls, complex_ = flags & 0xFF, bool(flags & 0x0800)
        kind, size, data, pos = tag(buf, pos)  # dimensions
        if kind != 5 or size % 4:
            raise bad("a matrix without valid dimensions")
        dims = struct.unpack_from(f"{end}{size // 4}i", buf, data)
        if any(d < 0 for d in dims):
            raise bad(f"negative dimensions {dims}")
        if cls not in _NUMERIC_CLASSES:
            return
        _, _, _, pos = tag(buf, pos)  # name
        n = int(np.prod(dims, dtype=object))
        for _ in range(2 if complex_ else 1):
            if pos >= stop:
                raise bad("a matrix without its data")
            kind, size, data, pos = tag(buf, pos)
            if kind not in _MI_SIZE or size != n * _MI_SIZE[kind]:
                raise bad(f"a {tuple(dims)} matrix holds {size} bytes of data type {kind}")
            if pos > stop:
                raise bad("a matrix's data run past it")

    def walk() -> None:
        pos = 128
        while pos < len(raw):
            kind, size, data, nxt = tag(raw, pos)
            if kind == _MI_COMPRESSED:
                try:
                    body = zlib.decompressobj().decompress(raw[data:data + size], available_memory())
                except zlib.error as err:
                    raise bad(f"compressed data: {err}") from None
                if len(body) >= 8:
                    k, _, d, stop = tag(body, 0)
                    if k == _MI_MATRIX:
                        matrix(body, d, stop)
            elif kind == _MI_MATRIX:
                matrix(raw, data, nxt)
            pos = nxt

    try:
        walk()
    except struct.error as err:  # a field cut short
        raise bad(str(err).split(" (")[0]) from None
