"""neurodyn.io.load: checkpoints, and one one-line error per kind of unreadable file (load_* alike)."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from neurodyn._result import FORMATS, decode_attrs, encode_attrs
from neurodyn.analysis import find_fixed_points, find_manifolds, load_fixed_points
from neurodyn.io import Checkpoint, ResultFileError, load, save_checkpoint
from neurodyn.models import PLRNN, LeakyRNN


@pytest.fixture(scope="module")
def result():
    return find_fixed_points(lambda h, u: 0.5 * h + 1.0, state_size=2, initial_states=np.ones((3, 2)))


@pytest.fixture
def saved(result, tmp_path):
    path = tmp_path / "fp.nc"
    result.save(path)
    return path


def rewrite(path, change):
    """The file at ``path`` with its dataset changed by ``change(ds) -> ds``, written back."""
    ds = xr.load_dataset(path, engine="h5netcdf")
    ds.attrs.pop("content_sha256", None)  # an edit written without the checksum (else refused as damaged)
    change(ds).to_netcdf(path, engine="h5netcdf")
    return path


def one_line_error(path, match, reader=load):
    with pytest.raises(ResultFileError, match=match) as info:
        reader(path)
    assert "\n" not in str(info.value)
    return str(info.value)


def test_load_reads_a_checkpoint_and_a_result(saved, tmp_path):
    ckpt = save_checkpoint(tmp_path / "net.pt", LeakyRNN(1, 3, 1, seed=0))
    assert isinstance(load(ckpt), Checkpoint)
    assert type(load(saved)).__name__ == "FixedPointResult"



def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        load(tmp_path / "absent.nc")


def test_not_a_netcdf_file(tmp_path):
    (tmp_path / "notes.nc").write_text("fixed points: 3\n")
    one_line_error(tmp_path / "notes.nc", "not a netCDF-4/HDF5 file")
    (tmp_path / "empty.nc").write_bytes(b"")
    one_line_error(tmp_path / "empty.nc", "is empty")
    xr.Dataset({"a": ("x", [1.0])}).to_netcdf(tmp_path / "classic.nc", engine="scipy")
    one_line_error(tmp_path / "classic.nc", "netCDF-3 file")


def test_truncated_file(saved):
    data = saved.read_bytes()
    saved.write_bytes(data[: len(data) // 2])
    one_line_error(saved, "truncated or damaged.*write it again")


def test_no_format_attribute(tmp_path):
    xr.Dataset({"rates": ("time", np.zeros(3))}).to_netcdf(tmp_path / "other.nc", engine="h5netcdf")
    text = one_line_error(tmp_path / "other.nc", "has no format attribute: it is not a neurodyn result file")
    assert "neurodyn.fixed_points" in text


def test_unknown_format_names_the_formats_this_version_reads(saved):
    rewrite(saved, lambda ds: ds.assign_attrs(format="neurodyn.spikes"))
    text = one_line_error(saved, "unknown result format 'neurodyn.spikes'; this neurodyn reads: ")
    assert all(name in text for name in FORMATS)


def test_newer_version_asks_for_an_upgrade(saved):
    rewrite(saved, lambda ds: ds.assign_attrs(format_version=7))
    one_line_error(saved, r"version 7, newer than this neurodyn reads \(1\); upgrade neurodyn")
    one_line_error(saved, "upgrade neurodyn", reader=load_fixed_points)  # the same checks


@pytest.mark.parametrize("value, kind", [("1", "str"), (1.0, "float"), (np.array([1, 2]), "ndarray")])
def test_version_stored_with_another_type(saved, value, kind):
    rewrite(saved, lambda ds: ds.assign_attrs(format_version=value))
    one_line_error(saved, f"format_version is stored as {kind}.*not as an integer")


def test_format_stored_with_another_type(saved):
    rewrite(saved, lambda ds: ds.assign_attrs(format=np.int64(3)))
    one_line_error(saved, "the format attribute is stored as int64 3, not as text")


def test_missing_variables(saved):
    rewrite(saved, lambda ds: ds.drop_vars(["q", "stability"]))
    one_line_error(saved, "neurodyn.fixed_points file without the variables q, stability")
    one_line_error(saved, "without the variables q, stability", reader=load_fixed_points)


def test_load_function_of_one_type_refuses_another(tmp_path):
    system = PLRNN.from_arrays(np.array([[1.7, 1.0], [0.5, 0.0]]), np.array([[-3.4, 0.0], [0.0, 0.0]]),
                               np.array([1.0, 0.0]))
    find_manifolds(system, [np.array([1 / 2.2, 0.5 / 2.2])], box=3.0, max_depth=1).save(tmp_path / "m.nc")
    one_line_error(tmp_path / "m.nc", "is a neurodyn.manifolds file, not neurodyn.fixed_points or "
                   "neurodyn.cycles; read it with neurodyn.io.load", reader=load_fixed_points)


def test_directory(tmp_path):
    one_line_error(tmp_path, "is a directory")


def test_attributes_round_trip():
    attrs = {"n": 3, "x": 0.5, "inf": float("inf"), "name": "lm", "none": None, "flag": True,
             "ints": [1, 2], "floats": (0.5, 1.0), "empty": [], "words": ["a", "b"],
             "nested": {"a": [1, None]},
             "tricky": "json:not json"}
    back = decode_attrs(encode_attrs(attrs))
    assert back == {**attrs, "floats": [0.5, 1.0]}
    with pytest.raises(TypeError, match="attribute 'obj'"):
        encode_attrs({"obj": object()})
