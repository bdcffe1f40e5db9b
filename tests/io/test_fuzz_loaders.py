"""Property-based fuzzing of every file loader: damaged bytes and structurally wrong contents.

Each loader gets at least 200 generated inputs (truncated, bit-flipped, empty, spliced, wrong dtype,
NaN/Inf-filled, huge declared shapes, extra or missing keys). The outcome must be a one-line error of the
package's error classes or ``ValueError``/``OSError`` (never another exception type), or a load whose
result passes the same validity checks a clean file does (never garbage).
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import torch
import xarray as xr
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from neurodyn.analysis import find_fixed_points
from neurodyn.io import (
    Checkpoint,
    ModelFileError,
    ResultFileError,
    TimeSeries,
    load,
    load_model,
    load_timeseries,
    save_checkpoint,
)
from neurodyn.models import LeakyRNN

#: no shrinking: a failure is reported as generated (shrinking netCDF cases can take minutes)
FUZZ = settings(max_examples=200, deadline=None, derandomize=True, database=None,
                phases=[Phase.explicit, Phase.generate], report_multiple_bugs=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
#: netCDF cases cost ~0.1-0.5 s each (a write and an HDF5 open): the structured ones run fewer examples,
#: the 200 byte-level cases per netCDF loader stay
FUZZ_NETCDF = settings(FUZZ, max_examples=60)
ALLOWED = (ModelFileError, ResultFileError, ValueError, OSError)


# -- clean files, built once in memory ------------------------------------------------------------
def _bytes_of(write) -> bytes:
    buf = io.BytesIO()
    write(buf)
    return buf.getvalue()


RNG = np.random.default_rng(0)
X = RNG.normal(size=(40, 3))


def _ckpt_bytes(tmp: Path) -> bytes:
    return save_checkpoint(tmp / "clean.pt", LeakyRNN(1, 3, 1, seed=0), overwrite=True).read_bytes()


def _nc_bytes(ds: xr.Dataset, tmp: Path) -> bytes:
    ds.to_netcdf(tmp / "clean.nc", engine="h5netcdf")
    return (tmp / "clean.nc").read_bytes()


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("clean")
    scipy.io.savemat(tmp / "clean.mat", {"x": X})
    fp = find_fixed_points(lambda h, u: 0.5 * h + 1.0, state_size=2, initial_states=np.ones((3, 2)))
    fp.save(tmp / "fp.nc")
    ts = TimeSeries.from_arrays(X, dt=0.01)
    return {
        ".pt": _ckpt_bytes(tmp),
        ".npy": _bytes_of(lambda b: np.save(b, X)),
        ".npz": _bytes_of(lambda b: np.savez(b, x=X, u=X[:, :1])),
        ".csv": ("time,a,b,c\n" + "\n".join(f"{i * 0.01},{r[0]},{r[1]},{r[2]}"
                                             for i, r in enumerate(X))).encode(),
        ".mat": (tmp / "clean.mat").read_bytes(),
        ".nc": _nc_bytes(ts.to_xarray(), tmp),
        "result": (tmp / "fp.nc").read_bytes(),
    }


# -- damage -------------------------------------------------------------------------------------
@st.composite
def damaged(draw, data: bytes) -> bytes:
    """``data`` truncated, bit-flipped, emptied, spliced with random bytes, or extended."""
    kind = draw(st.sampled_from(["truncate", "flip", "empty", "splice", "append", "zero"]))
    n = len(data)
    if kind == "empty":
        return b""
    if kind == "truncate":
        return data[: draw(st.integers(0, n - 1))]
    if kind == "append":
        return data + draw(st.binary(min_size=1, max_size=64))
    out = bytearray(data)
    if kind == "flip":
        for pos in draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=8)):
            out[pos] ^= 1 << draw(st.integers(0, 7))
        return bytes(out)
    start = draw(st.integers(0, n - 1))
    length = draw(st.integers(1, 256))
    fill = bytes(length) if kind == "zero" else draw(st.binary(min_size=length, max_size=length))
    out[start:start + length] = fill
    return bytes(out[:n])


def outcome(call):
    """Run ``call``; return the result, or None after checking that the error is allowed and one line."""
    try:
        return call()
    except ALLOWED as err:
        text = str(err)
        assert text and "\n" not in text, f"{type(err).__name__} message is not one line: {text!r}"
        return None
    # any other exception type propagates and fails the test


def check_timeseries(ts) -> None:
    assert isinstance(ts, TimeSeries)
    assert ts.data.dtype == np.float64 and ts.data.ndim == 3 and ts.n_steps >= 2 and ts.n_channels >= 1
    assert np.isfinite(ts.data).all() and np.isfinite(ts.dt) and ts.dt > 0
    ts.validate()


def check_checkpoint(ckpt) -> None:
    assert isinstance(ckpt, Checkpoint)
    for name, value in ckpt.model.state_dict().items():
        assert torch.isfinite(value).all(), name


def check_result(res) -> None:
    assert type(res).__name__ == "FixedPointResult"
    assert res.states.shape[0] == res.q.shape[0] == res.stability.shape[0]
    good = res.converged
    assert np.isfinite(res.states[good]).all() and np.isfinite(res.q[good]).all()
    assert set(res.stability.tolist()) <= {"stable", "saddle", "unstable", "marginal"}


def write(tmp: Path, name: str, data: bytes) -> Path:
    path = tmp / name
    path.write_bytes(data)
    return path


# -- byte-level damage of every format ----------------------------------------------------------
RECORDING = (load_timeseries, check_timeseries)  # loader, check of what loads


def _case(kind: str, name: str, read, check, *marks):
    """A byte-level case: the clean file ``kind`` damaged, written to ``name``, read and checked."""
    return pytest.param(kind, name, read, check, marks=marks, id=kind)


@pytest.mark.parametrize(("kind", "name", "read", "check"), [
    *[_case(suffix, f"rec{suffix}", *RECORDING) for suffix in (".npy", ".npz", ".csv", ".mat")],
    _case(".nc", "rec.nc", *RECORDING, pytest.mark.slow),
    _case(".pt", "net.pt", lambda path: load_model(path).checkpoint, check_checkpoint),
    _case("result", "fp.nc", load, check_result, pytest.mark.slow),
])
def test_damaged_files(clean, tmp_path_factory, kind, name, read, check):
    """Recordings, checkpoints and result files damaged byte by byte: an allowed one-line error, or a
    load that passes the checks of a clean file."""
    tmp = tmp_path_factory.mktemp("damaged")

    @FUZZ
    @given(data=st.data())
    def run(data):
        path = write(tmp, name, data.draw(damaged(clean[kind])))
        loaded = outcome(lambda: read(path))
        if loaded is not None:
            check(loaded)

    run()


# -- structurally wrong contents ----------------------------------------------------------------
DTYPES = ["<f8", "<f4", "<i8", "|u1", "|b1", "<c16", "<U3", "<M8[s]"]
SPECIAL = st.sampled_from([np.nan, np.inf, -np.inf, 0.0, 1.0, 1e308])


@st.composite
def arrays(draw):
    """Small arrays of any of DTYPES and 0-4 dims, possibly holding NaN/Inf."""
    shape = tuple(draw(st.lists(st.integers(0, 6), min_size=0, max_size=4)))
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    values = RNG.normal(size=shape) * 3
    if values.size and draw(st.booleans()):
        flat = values.reshape(-1)
        for i in draw(st.lists(st.integers(0, flat.size - 1), min_size=1, max_size=4)):
            flat[i] = draw(SPECIAL)
    if dtype.kind == "U":
        return values.astype(str).astype(dtype)
    if dtype.kind == "M":
        return np.zeros(shape, dtype=dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        return values.astype(dtype)


def npy_header(shape, descr="<f8") -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": shape})
    return buf.getvalue()


def test_npy_and_npz_contents(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("arrays")

    @FUZZ
    @given(arr=arrays(), huge=st.booleans(), dims=st.lists(st.integers(10**5, 10**7), min_size=1, max_size=3),
           as_npz=st.booleans(), extra_key=st.booleans())
    def run(arr, huge, dims, as_npz, extra_key):
        if huge:  # a header that declares far more than follows
            raw = npy_header(tuple(dims)) + b"\0" * 64
        else:
            raw = _bytes_of(lambda b: np.save(b, arr))
        if as_npz:
            buf = io.BytesIO()
            with zipfile.ZipFile(buf, "w") as zf:
                zf.writestr("x.npy", raw)
                if extra_key:
                    zf.writestr("y.npy", _bytes_of(lambda b: np.save(b, X)))
            path = write(tmp, "rec.npz", buf.getvalue())
        else:
            path = write(tmp, "rec.npy", raw)
        ts = outcome(lambda: load_timeseries(path, key="x" if as_npz else None))
        if ts is not None:
            assert not huge
            check_timeseries(ts)
            finite = arr.dtype.kind in "biuf" and np.isfinite(arr).all()
            assert finite, "a recording with NaN/Inf or non-numbers loaded"

    run()


@pytest.mark.slow
def test_netcdf_recording_contents(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ncrec")
    names = ["trial", "time", "channel", "session", "probe"]

    @FUZZ_NETCDF
    @given(arr=arrays(), dims=st.permutations(names), extra_var=st.booleans(),
           key=st.sampled_from([None, "data", "z"]))
    def run(arr, dims, extra_var, key):
        if arr.dtype.kind == "M":
            arr = arr.astype("<i8")
        ds = xr.Dataset({"data": (tuple(dims[: arr.ndim]), arr)})
        if extra_var:
            ds["other"] = (("time2",), np.arange(5.0))
        ds.to_netcdf(tmp / "rec.nc", engine="h5netcdf")
        ts = outcome(lambda: load_timeseries(tmp / "rec.nc", key=key))
        if ts is not None:
            check_timeseries(ts)
            used = set(dims[: arr.ndim])
            assert not (used & {"session", "probe"} and used & {"trial", "time", "channel"}), "dims mixed"

    run()


def _checkpoint_dict(tmp: Path) -> dict:
    return torch.load(tmp / "clean.pt", weights_only=True)


SHAPES = st.lists(st.integers(0, 4), max_size=2).map(tuple)
VALUES = st.one_of(st.none(), st.integers(-3, 10**12), st.floats(allow_nan=True), st.text(max_size=5),
                   st.lists(st.integers(0, 3), max_size=3),
                   st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
                   st.builds(lambda s: torch.full(s, float("nan")), SHAPES),
                   st.builds(lambda s: torch.zeros(s, dtype=torch.int64), SHAPES))


def test_checkpoint_contents(clean, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ckdict")
    (tmp / "clean.pt").write_bytes(clean[".pt"])
    base = _checkpoint_dict(tmp)

    @FUZZ
    @given(where=st.sampled_from(["top", "state_dict", "model_config", "task"]),
           op=st.sampled_from(["drop", "add", "set"]), pick=st.integers(0, 50), value=VALUES)
    def run(where, op, pick, value):
        obj = {k: (dict(v) if isinstance(v, dict) else v) for k, v in base.items()}
        target = obj if where == "top" else obj.get(where)
        if where == "task":
            obj["task"] = target = {"name": "flipflop", "config": {"n_bits": 2}}
        keys = list(target)
        key = keys[pick % len(keys)]
        if op == "drop":
            del target[key]
        elif op == "add":
            target[f"unknown_{pick}"] = value
        else:
            target[key] = value
        torch.save(obj, tmp / "net.pt")
        ckpt = outcome(lambda: load_model(tmp / "net.pt"))
        if ckpt is not None and ckpt.checkpoint is not None:
            check_checkpoint(ckpt.checkpoint)

    run()


@pytest.mark.slow
def test_result_file_contents(clean, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("resds")
    (tmp / "clean.nc").write_bytes(clean["result"])
    base = xr.load_dataset(tmp / "clean.nc", engine="h5netcdf")
    variables = sorted(base.data_vars)

    @FUZZ_NETCDF
    @given(op=st.sampled_from(["drop", "int", "text", "nan", "inf", "newdim", "format", "version"]),
           pick=st.integers(0, 50),
           value=VALUES.filter(lambda v: not isinstance(v, (torch.Tensor, dict, list))))
    def run(op, pick, value):
        ds = base.copy(deep=True)
        name = variables[pick % len(variables)]
        if op == "drop":
            ds = ds.drop_vars(name)
        elif op == "int":
            ds[name] = ds[name].dims, np.arange(ds[name].size).reshape(ds[name].shape)
        elif op == "text":
            ds[name] = ds[name].dims, np.full(ds[name].shape, "x")
        elif op in ("nan", "inf"):
            if ds[name].dtype.kind == "f":
                ds[name] = ds[name].dims, np.full(ds[name].shape, np.nan if op == "nan" else np.inf)
        elif op == "newdim":
            ds[name] = ds[name].expand_dims(extra=2)
        elif op == "format":
            ds.attrs["format"] = "neurodyn.spikes" if value is None else value
        else:
            ds.attrs["format_version"] = 0 if value is None else value
        ds.to_netcdf(tmp / "fp.nc", engine="h5netcdf")
        res = outcome(lambda: load(tmp / "fp.nc"))
        if res is not None:
            check_result(res)

    run()


@pytest.mark.slow
def test_damaged_nwb_recordings(tmp_path_factory):
    pytest.importorskip("pynwb")
    from datetime import UTC, datetime

    from pynwb import NWBHDF5IO, NWBFile
    from pynwb import TimeSeries as NWBSeries

    tmp = tmp_path_factory.mktemp("nwb")
    start = datetime(2026, 1, 1, tzinfo=UTC)
    nwb = NWBFile(session_description="fuzz", identifier="f1", session_start_time=start)
    nwb.add_acquisition(NWBSeries(name="lfp", data=X, unit="V", rate=100.0))
    with NWBHDF5IO(str(tmp / "clean.nwb"), "w") as io:
        io.write(nwb)
    clean = (tmp / "clean.nwb").read_bytes()

    @FUZZ
    @given(data=st.data())
    def run(data):
        path = write(tmp, "rec.nwb", data.draw(damaged(clean)))
        ts = outcome(lambda: load_timeseries(path, key="lfp"))
        if ts is not None:
            check_timeseries(ts)

    run()
