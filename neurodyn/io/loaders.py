"""Loaders that turn recording files into a validated :class:`~neurodyn.io.timeseries.TimeSeries`.

Formats: ``.npy``, ``.npz``, ``.csv``/``.tsv``, ``.mat`` (scipy.io, MATLAB v4–v7.2), netCDF
(``.nc``, via xarray) and NWB (``.nwb``, needs the optional extra ``nwb``: ``pip install
neurodyn[nwb]``). Arrays are read as ``(time, channel)`` or ``(trial, time, channel)``;
``transpose=True`` swaps the last two axes for files stored ``(channel, time)``.
"""

from __future__ import annotations

import os
import warnings
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from neurodyn._guard import check_declared_size, check_mat_v5, check_npy, check_zip
from neurodyn.io.timeseries import TimeSeries, check_orientation

__all__ = ["load_timeseries"]

SUFFIXES = (".npy", ".npz", ".csv", ".tsv", ".txt", ".mat", ".nc", ".nwb")


def load_timeseries(
    path: str | os.PathLike,
    *,
    key: str | None = None,
    input_key: str | None = None,
    dt: float | None = None,
    transpose: bool = False,
    drop_constant: bool = False,
    bin_size: float | None = None,
) -> TimeSeries:
    """Read a recording into a :class:`TimeSeries`.

    Parameters
    ----------
    path : path
        File with suffix ``.npy``, ``.npz``, ``.csv``/``.tsv``/``.txt``, ``.mat``, ``.nc`` or ``.nwb``.
    key : str, optional
        Array name inside ``.npz``/``.mat``/``.nc`` files (needed when there are several), or for
        NWB the name of a TimeSeries in ``acquisition``/``processing``, or ``"units"`` for the
        units table binned into spike counts.
    input_key : str, optional
        Name of an external-input array in the same file, aligned with the data.
    dt : float, optional
        Sampling interval in seconds; default from the file (a ``time``/``t`` column or
        coordinate, a ``time`` vector beside the data in ``.npz``/``.mat`` files, a scalar ``dt`` in
        ``.npz`` files, NWB rates) or 1.0, with a ``UserWarning`` naming ``dt=``.
    transpose : bool
        Swap the last two axes (for arrays stored ``(channel, time)``, e.g. MATLAB spike matrices).
    drop_constant : bool
        Drop constant channels (e.g. silent units) instead of raising.
    bin_size : float, optional
        NWB units tables: bin width in seconds (default ``dt`` or 0.05).

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        For a directory, an unknown suffix, a missing or ambiguous ``key`` (the message lists the
        names found), a file with no numeric array (e.g. one MATLAB cell array; the message names
        what it holds), a ``key`` for a one-array file (.npy, text tables) or a ``bin_size`` for a
        file other than .nwb, a ``time`` vector in a ``.npz``/``.mat`` file that is not 1-D or not
        evenly spaced (without ``dt=``), or bad data (NaN/Inf, constant channels, mismatched input
        length, more channels than time points: the message names ``transpose=True``).

    Warns
    -----
    UserWarning
        When neither ``dt`` nor the file gives the sampling interval (dt = 1.0 is assumed).
    ImportError
        For ``.nwb`` without pynwb (install the extra ``neurodyn[nwb]``).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import numpy as np
    >>> from neurodyn.io import load_timeseries
    >>> t = np.arange(200) * 0.01
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     np.savez(Path(tmp) / "rec.npz", lfp=np.c_[np.sin(t), np.cos(3 * t)], stim=t[:, None])
    ...     ts = load_timeseries(Path(tmp) / "rec.npz", key="lfp", input_key="stim", dt=0.01)
    >>> ts.data.shape, ts.inputs.shape, ts.dt, ts.continuous  # (trial, time, channel)
    ((1, 200, 2), (1, 200, 1), 0.01, True)
    """
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"no such file: {p}")
    if p.is_dir():
        raise ValueError(f"{p} is a directory, not a recording file; give a file inside it")
    suffix = p.suffix.lower()
    if suffix not in SUFFIXES:
        raise ValueError(f"cannot read {p.name}: unknown suffix {suffix!r}; supported: {', '.join(SUFFIXES)}")
    if key is not None and suffix in (".npy", ".csv", ".tsv", ".txt"):
        raise ValueError(f"{p.name} holds one array, so a key (key= / --key {key}) picks nothing; a key "
                         "names an array in .npz/.mat/.nc files or a series in .nwb files: drop it")
    if bin_size is not None and suffix != ".nwb":
        raise ValueError(f"a bin size (bin_size= / --bin-size {bin_size}) bins the spike times of .nwb units "
                         f"tables; {p.name} holds sampled data: drop it")
    if suffix == ".nwb":
        from neurodyn.io.nwb import read_nwb

        arrays = read_nwb(p, key, input_key, bin_size if bin_size is not None else (dt or 0.05))
    else:
        arrays = READERS[suffix](p, key, input_key)
    x, u = arrays["data"], arrays.get("inputs")
    if transpose:
        x = np.swapaxes(np.asarray(x), -1, -2)
        u = None if u is None else np.swapaxes(np.asarray(u), -1, -2)
    names = arrays.get("channel_names")
    if drop_constant:
        x, names = _drop_constant(np.asarray(x, dtype=np.float64), names)
    src = f"{p}" + (f"[{arrays.get('key')}]" if arrays.get("key") else "")
    n_time = np.shape(x)[-2] if np.ndim(x) >= 2 else np.size(x)
    if dt is None and "dt" not in arrays and "time" in arrays and np.size(arrays["time"][0]) == n_time:
        arrays["dt"] = _dt_from_time(*arrays["time"])  # a vector of another length times something else
    if dt is None and "dt" not in arrays:
        warnings.warn(f"{src} records no sampling interval (no time vector or dt): dt = 1.0 is assumed; pass "
                      f"dt= (seconds) to load_timeseries", UserWarning, stacklevel=2)
    shape = np.shape(x)
    shape = (1, *shape) if len(shape) == 2 else shape
    check_orientation(shape, src, "it was read with transpose=True; drop it" if transpose
                      else "if the file stores (channel, time), add transpose=True")
    try:
        return TimeSeries.from_arrays(
            x, dt=dt if dt is not None else arrays.get("dt", 1.0), channel_names=names, inputs=u,
            source=src,
        )
    except TypeError as err:  # a file of text or other non-numeric values is bad data, not a bad call
        raise ValueError(f"{src}: {err}; save numbers (e.g. x.astype(float))") from None


def _drop_constant(x: np.ndarray, names: Any) -> tuple[np.ndarray, Any]:
    if x.ndim not in (1, 2, 3):
        return x, names  # TimeSeries.from_arrays names the problem
    if x.size == 0:
        raise ValueError(f"the recording is empty (shape {x.shape}); there is nothing to fit")
    flat = x.reshape(-1, x.shape[-1]) if x.ndim > 1 else x[:, None]
    keep = flat.max(axis=0) != flat.min(axis=0)
    if not keep.any():
        raise ValueError("every channel is constant; there is nothing to fit")
    names = None if names is None else [n for n, k in zip(names, keep) if k]
    return x[..., keep], names


def _pick(found: dict[str, Any], key: str | None, path: Path, preferred=("data", "x", "X")) -> str:
    """Choose the array name: ``key`` if given, else the only array, else a conventional name."""
    arrays = [k for k, v in found.items() if isinstance(v, np.ndarray) and v.dtype != object]
    if key is not None:
        if key not in found:
            raise ValueError(f"{path.name} has no array {key!r}; found: {', '.join(sorted(found))}")
        return key
    if len(arrays) == 1:
        return arrays[0]
    for k in preferred:
        if k in arrays:
            return k
    if not arrays:
        held = ", ".join(f"{k} ({_kind(v)})" for k, v in sorted(found.items()))
        raise ValueError(f"{path.name} holds no numeric array, only: {held or 'nothing'}; a cell or struct "
                         f"array must be made numeric first: read it (e.g. scipy.io.loadmat) and pass the "
                         f"trials to TimeSeries.from_arrays, or save each as a numeric matrix")
    raise ValueError(f"{path.name} holds several arrays ({', '.join(sorted(arrays))}); choose one with key=")


def _kind(value: Any) -> str:
    """How a loaded value is described in messages: ``cell/struct array, shape (1, 4)``, ``str``, ..."""
    if isinstance(value, np.ndarray):
        what = "cell/struct array" if value.dtype == object or value.dtype.names else f"{value.dtype} array"
        return f"{what}, shape {value.shape}"
    return type(value).__name__


def _read_npy(p: Path, key: str | None, input_key: str | None) -> dict[str, Any]:
    if input_key is not None:
        raise ValueError(f"{p.name} is a .npy file, which holds one array, but inputs were asked for "
                         f"(input_key / --input-key {input_key}); save data and inputs together in a .npz "
                         f"(np.savez(path, x=data, u=inputs)) or TimeSeries.from_arrays(data, inputs=...)")
    with open(p, "rb") as f:
        magic = f.read(6)
    if magic != b"\x93NUMPY":
        raise ValueError(f"{p.name} is not a NumPy .npy file (no .npy header); write it with numpy.save, "
                         f"or give a text table a .csv/.tsv/.txt suffix")
    check_npy(p, p.name)
    try:
        return {"data": np.load(p, allow_pickle=False)}
    except (ValueError, OSError, EOFError) as err:  # the header was checked: the data part is damaged
        raise ValueError(f"{p.name} is truncated or damaged ({' '.join(str(err).split())[:100]}); "
                         f"write it again with numpy.save") from None


def _read_npz(p: Path, key: str | None, input_key: str | None) -> dict[str, Any]:
    if p.stat().st_size == 0:
        raise ValueError(f"{p.name} is empty; write the arrays with numpy.savez")
    if not zipfile.is_zipfile(p):
        raise ValueError(f"{p.name} is not a NumPy .npz archive (not a zip file); write it with numpy.savez")
    check_zip(p, p.name, npy_members=True)
    try:
        with np.load(p, allow_pickle=False) as f:
            found = {k: f[k] for k in f.files}
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as err:
        raise ValueError(f"{p.name} is truncated or damaged ({' '.join(str(err).split())[:100]}); "
                         f"write it again with numpy.savez") from None
    k = _pick(found, key, p)
    out = {"data": found[k], "key": k}
    if input_key is not None:
        out["inputs"] = found[_pick(found, input_key, p)]
    if "dt" in found and np.ndim(found["dt"]) == 0:
        out["dt"] = float(found["dt"])
    elif k != "time" and "time" in found:
        out["time"] = (found["time"], f"{p.name}['time']")
    return out


def _dt_from_time(time: Any, source: str) -> float:
    """The sampling interval of an evenly spaced time vector stored beside the data (``.npz``/``.mat``).

    Steps may differ by up to 5 % of the mean step (times stored rounded, e.g. to milliseconds); a
    vector that is not 1-D or not evenly spaced is refused (``dt=`` overrides it)."""
    t = np.asarray(time, dtype=np.float64).ravel() if np.asarray(time).dtype.kind in "biuf" else None
    if t is None or np.asarray(time).squeeze().ndim != 1 or len(t) < 2 or not np.all(np.isfinite(t)):
        shape = np.shape(time)
        raise ValueError(f"{source} (shape {shape}) is not a finite 1-D time vector to read the sampling "
                         f"interval from; pass dt= (seconds)")
    steps = np.diff(t)
    dt = (t[-1] - t[0]) / (len(t) - 1)
    if not dt > 0 or np.max(np.abs(steps - dt)) > 0.05 * dt:
        raise ValueError(f"{source} is not evenly spaced (steps from {steps.min():.6g} to {steps.max():.6g} "
                         f"s), so it gives no sampling interval; resample the data, or pass dt= (seconds)")
    return float(dt)


def _read_csv(p: Path, key: str | None, input_key: str | None) -> dict[str, Any]:
    delim = "\t" if p.suffix.lower() == ".tsv" else ","
    try:
        with open(p) as f:
            first = f.readline().strip()
    except UnicodeDecodeError:
        raise ValueError(f"{p.name} is not a text file; give a comma- or tab-separated table of numbers"
                         ) from None
    cells = [c.strip() for c in first.split(delim)]
    try:
        [float(c) for c in cells]
        header = None
    except ValueError:
        header = cells
    arr = _load_table(p, delim, skiprows=0 if header is None else 1)
    out: dict[str, Any] = {}
    names = header or [f"ch{i}" for i in range(arr.shape[1])]
    if header is not None and header[0].lower() in ("time", "t"):
        t = arr[:, 0]
        if len(t) > 1:
            out["dt"] = float(np.median(np.diff(t)))
        arr, names = arr[:, 1:], names[1:]
    if input_key is not None:
        cols = [i for i, n in enumerate(names) if n.startswith(input_key)]
        if not cols:
            raise ValueError(f"{p.name} has no columns starting with {input_key!r}; found {names}")
        out["inputs"] = arr[:, cols]
        keep = [i for i in range(len(names)) if i not in cols]
        arr, names = arr[:, keep], [names[i] for i in keep]
    out.update(data=arr, channel_names=names)
    return out


def _load_table(p: Path, delim: str, skiprows: int) -> np.ndarray:
    """Numeric rows of a text table as (row, column); one clean ``ValueError`` for anything else."""
    sep = "tab" if delim == "\t" else "comma"
    fix = (f"a {p.suffix} file needs an optional header line, then one row of {sep}-separated numbers "
           f"per time step")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "input contained no data" → the error below
        try:
            arr = np.loadtxt(p, delimiter=delim, skiprows=skiprows, ndmin=2)
        except ValueError as err:
            raise ValueError(f"{p.name} is not a numeric table ({str(err).rstrip('.')}); {fix}") from None
        except UnicodeDecodeError:
            raise ValueError(f"{p.name} is not a text file; {fix}") from None
    if arr.size == 0:
        raise ValueError(f"{p.name} has no numeric rows{' after its header' if skiprows else ''}; {fix}")
    return arr


def _read_mat(p: Path, key: str | None, input_key: str | None) -> dict[str, Any]:
    from scipy.io import loadmat, whosmat

    if p.stat().st_size == 0:
        raise ValueError(f"{p.name} is empty; save the recording with MATLAB save(..., '-v7') or "
                         f"scipy.io.savemat")
    check_mat_v5(p, p.name)  # scipy's reader crashes the process on some damaged elements
    try:
        for name, shape, cls in whosmat(p):
            if cls in _MAT_ITEMSIZE:
                check_declared_size(shape, _MAT_ITEMSIZE[cls], f"{p.name}[{name!r}]")
        found = {k: v for k, v in loadmat(p, squeeze_me=False).items() if not k.startswith("__")}
    except NotImplementedError:
        raise ValueError(
            f"{p.name} is a MATLAB v7.3 (HDF5) file; read it with h5py and pass arrays") from None
    except ValueError as err:
        if str(err).startswith(p.name):  # our own size check
            raise
        raise _mat_error(p, err) from None
    except Exception as err:  # scipy raises MatReadError, OSError, IndexError, ... for damaged files
        raise _mat_error(p, err) from None
    k = _pick(found, key, p)
    arr = found[k]
    if arr.dtype == object or arr.dtype.names:
        raise ValueError(f"{p.name}[{k!r}] is a cell/struct array; extract a numeric array first")
    out = {"data": arr, "key": k}
    if input_key is not None:
        out["inputs"] = found[_pick(found, input_key, p)]
    if k != "time" and "time" in found:
        out["time"] = (found["time"], f"{p.name}['time']")
    return out


#: element type of the MATLAB classes whose shape whosmat reports
_MAT_ITEMSIZE = {"double": "f8", "single": "f4", "int8": "i1", "uint8": "u1", "int16": "i2", "uint16": "u2",
                 "int32": "i4", "uint32": "u4", "int64": "i8", "uint64": "u8", "logical": "u1"}


def _mat_error(p: Path, err: Exception) -> ValueError:
    reason = " ".join(str(err).split())[:100] or type(err).__name__
    return ValueError(f"{p.name} is not a readable MATLAB .mat file: truncated or damaged ({reason}); save "
                      f"it again with MATLAB save(..., '-v7') or scipy.io.savemat")


def _read_netcdf(p: Path, key: str | None, input_key: str | None) -> dict[str, Any]:
    import xarray as xr

    try:
        ds = xr.open_dataset(p, engine="h5netcdf")
    except Exception as err:  # h5py/h5netcdf raise OSError, ValueError, KeyError, ... on damage
        reason = " ".join(str(err).split())[:100] or type(err).__name__
        raise ValueError(f"{p.name} is not a readable netCDF-4 file: truncated or damaged ({reason}); write "
                         f"it again (e.g. TimeSeries.to_xarray().to_netcdf(path))") from None
    with ds:
        k = _pick({n: np.empty(0, dtype=ds[n].dtype) for n in ds.data_vars}, key, p)  # names, no data read
        _check_dims(ds[k], f"{p.name}[{k!r}]")
        check_declared_size(ds[k].shape, ds[k].dtype, f"{p.name}[{k!r}]")
        try:
            da = ds[k].load()
        except Exception as err:
            reason = " ".join(str(err).split())[:100] or type(err).__name__
            raise ValueError(f"{p.name}[{k!r}] could not be read: truncated or damaged ({reason}); write "
                             f"the file again") from None
        if "trial" in da.dims and da.sizes["trial"] == 1 and ds.attrs.get("continuous", 0):
            da = da.isel(trial=0)
        order = [d for d in ("trial", "time", "channel") if d in da.dims]
        if len(order) == da.ndim:
            da = da.transpose(*order)
        out: dict[str, Any] = {"data": da.values, "key": k}
        if "time" in da.coords and da.sizes["time"] > 1:
            out["dt"] = float(np.median(np.diff(da["time"].values.astype(np.float64))))
        elif "dt" in ds.attrs:
            out["dt"] = float(ds.attrs["dt"])
        if "channel" in da.coords:
            out["channel_names"] = [str(c) for c in da["channel"].values]
        if input_key is not None:
            if input_key not in ds.data_vars:
                found = ", ".join(sorted(map(str, ds.data_vars)))
                raise ValueError(f"{p.name} has no array {input_key!r}; found: {found}")
            ui = ds[input_key]
            _check_dims(ui, f"{p.name}[{input_key!r}]", ("trial", "time", "input"))
            if "trial" in ui.dims and ui.sizes["trial"] == 1 and ds.attrs.get("continuous", 0):
                ui = ui.isel(trial=0)
            order = [d for d in ("trial", "time", "input") if d in ui.dims]
            out["inputs"] = (ui.transpose(*order) if len(order) == ui.ndim else ui).values
    return out


def _check_dims(da, source: str, known: tuple[str, ...] = ("trial", "time", "channel")) -> None:
    """Refuse a netCDF array that mixes the named dims with others (never guess which is which)."""
    dims = [str(d) for d in da.dims]
    unknown = [d for d in dims if d not in known]
    if unknown and len(unknown) < len(dims):
        raise ValueError(f"{source} has dims {tuple(dims)}: {', '.join(map(repr, unknown))} is none of "
                         f"{', '.join(known)}; rename it (xarray: ds.rename(...)) or select along it "
                         f"(ds.isel(...)) before loading")
    if len(dims) > 3:
        raise ValueError(f"{source} has {len(dims)} dims {tuple(dims)}; a recording has (time, channel) or "
                         f"(trial, time, channel)")


READERS = {".npy": _read_npy, ".npz": _read_npz, ".csv": _read_csv, ".tsv": _read_csv,
           ".txt": _read_csv, ".mat": _read_mat, ".nc": _read_netcdf}
