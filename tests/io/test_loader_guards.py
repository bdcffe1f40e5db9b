"""Loaders that check what they read: damaged headers, declared sizes, checksums, fields of the wrong type."""

from __future__ import annotations

import io
import struct
import zipfile

import numpy as np
import pytest
import scipy.io
import torch
import xarray as xr

from neurodyn import _guard
from neurodyn.analysis import find_fixed_points
from neurodyn.io import (
    ModelFileError,
    ResultFileError,
    load,
    load_checkpoint,
    load_model,
    load_timeseries,
)
from neurodyn.models import LeakyRNN


def one_line(info) -> str:
    text = str(info.value)
    assert "\n" not in text
    return text


@pytest.fixture
def ckpt(tmp_path):
    from neurodyn.io import save_checkpoint

    return save_checkpoint(tmp_path / "net.pt", LeakyRNN(1, 3, 1, seed=0))


def edited(path, change, name="edited.pt"):
    obj = torch.load(path, weights_only=True)
    change(obj)
    out = path.with_name(name)
    torch.save(obj, out)
    return out


# -- checkpoints --------------------------------------------------------------------------------
@pytest.mark.parametrize("value, match", [
    (torch.zeros(7, 7), "size mismatch for w_in"),
    ([1.0, 2.0], "w_in"),
])
def test_checkpoint_weights_of_the_wrong_shape_or_type(ckpt, value, match):
    bad = edited(ckpt, lambda o: o["state_dict"].__setitem__("w_in", value))
    for reader in (load_checkpoint, load_model, load):
        with pytest.raises(ModelFileError, match="weights do not fit LeakyRNN") as info:
            reader(bad)
        assert match in one_line(info) and str(bad) in str(info.value)


def test_checkpoint_weights_of_an_integer_type(ckpt):
    bad = edited(ckpt, lambda o: o["state_dict"].__setitem__("w_rec", torch.ones(3, 3, dtype=torch.int64)))
    with pytest.raises(ModelFileError, match="the weight w_rec is stored as torch.int64, not as torch.float"):
        load_checkpoint(bad)


@pytest.mark.parametrize("field, value", [("state_dict", [1]), ("model_config", 3), ("model_class", 5)])
def test_checkpoint_fields_of_the_wrong_type(ckpt, field, value):
    bad = edited(ckpt, lambda o: o.__setitem__(field, value))
    with pytest.raises(ModelFileError, match=f"'{field}' is a {type(value).__name__}") as info:
        load_checkpoint(bad)
    assert "save the model again" in one_line(info)


def _flip_first_data_byte(path, member_suffix):
    raw = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        info = next(i for i in zf.infolist() if i.filename.endswith(member_suffix))
    h = info.header_offset
    n_name, n_extra = struct.unpack("<HH", raw[h + 26:h + 30])
    raw[h + 30 + n_name + n_extra] ^= 0xFF
    out = path.with_name("flipped" + path.suffix)
    out.write_bytes(bytes(raw))
    return out


def test_checkpoint_with_a_bad_crc_is_refused(ckpt):
    bad = _flip_first_data_byte(ckpt, "data/0")
    for reader in (load_checkpoint, load_model):
        with pytest.raises(ModelFileError, match="fails its checksum") as info:
            reader(bad)
        one_line(info)


def test_a_result_file_given_as_a_checkpoint_is_named(tmp_path):
    res = find_fixed_points(lambda h, u: 0.5 * h, state_size=2, initial_states=np.ones((2, 2)))
    path = res.save(tmp_path / "fp.nc").rename(tmp_path / "fp.pt")  # save refuses a .pt name itself
    with pytest.raises(ModelFileError, match="netCDF-4/HDF5 file"):
        load_checkpoint(path)


# -- recordings ---------------------------------------------------------------------------------
def test_empty_and_truncated_mat_files(tmp_path):
    good = tmp_path / "good.mat"
    scipy.io.savemat(good, {"x": np.random.default_rng(0).normal(size=(50, 3))})
    raw = good.read_bytes()
    (tmp_path / "empty.mat").write_bytes(b"")
    with pytest.raises(ValueError, match="empty.mat is empty") as info:
        load_timeseries(tmp_path / "empty.mat")
    one_line(info)
    for cut in (100, len(raw) // 2, len(raw) - 8):
        (tmp_path / "cut.mat").write_bytes(raw[:cut])
        with pytest.raises(ValueError, match="cut.mat is not a readable MATLAB .mat file") as info:
            load_timeseries(tmp_path / "cut.mat")
        one_line(info)
    assert load_timeseries(good).n_channels == 3


def test_mat_file_declaring_a_huge_array_is_refused_before_reading(tmp_path):
    good = tmp_path / "good.mat"
    scipy.io.savemat(good, {"x": np.ones((50, 3)) * np.arange(3)})
    raw = bytearray(good.read_bytes())
    i = raw.find(struct.pack("<ii", 50, 3))
    raw[i:i + 8] = struct.pack("<ii", 10**9, 10**3)
    (tmp_path / "huge.mat").write_bytes(bytes(raw))
    with pytest.raises(ValueError, match=r"huge.mat.*\(1000000000, 1000\)") as info:
        load_timeseries(tmp_path / "huge.mat")  # the data hold 150 values, not 10**12
    one_line(info)


def npy_bytes(arr):
    buf = io.BytesIO()
    np.save(buf, arr)
    return buf.getvalue()


def test_damaged_npy_header_is_not_called_python_objects(tmp_path):
    raw = bytearray(npy_bytes(np.random.default_rng(0).normal(size=(40, 2))))
    raw[20:22] = b"XX"  # inside the header's dict literal
    (tmp_path / "bad.npy").write_bytes(bytes(raw))
    with pytest.raises(ValueError, match="bad.npy has a damaged .npy header") as info:
        load_timeseries(tmp_path / "bad.npy")
    assert "Python objects" not in one_line(info)


def test_truncated_npy_is_reported_as_truncated(tmp_path):
    raw = npy_bytes(np.random.default_rng(0).normal(size=(40, 2)))
    (tmp_path / "cut.npy").write_bytes(raw[:200])
    match = "cut.npy is truncated or damaged: its header declares 640 bytes"
    with pytest.raises(ValueError, match=match) as info:
        load_timeseries(tmp_path / "cut.npy")
    assert "Python objects" not in one_line(info)


def test_object_npy_is_still_reported_as_python_objects(tmp_path):
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match="holds Python objects"):
        load_timeseries(tmp_path / "obj.npy")


def test_huge_declared_npy_is_refused_without_allocating(tmp_path, monkeypatch):
    buf = io.BytesIO()
    header = {"descr": "<f8", "fortran_order": False, "shape": (10**6, 10**5)}
    np.lib.format.write_array_header_1_0(buf, header)
    (tmp_path / "huge.npy").write_bytes(buf.getvalue() + b"\0" * 64)
    with pytest.raises(ValueError, match="header declares 745 GiB of data but only 64 bytes follow"):
        load_timeseries(tmp_path / "huge.npy")
    # a complete file larger than the memory available is refused too (available memory patched)
    np.save(tmp_path / "big.npy", np.arange(2000.0).reshape(1000, 2))
    monkeypatch.setattr(_guard, "available_memory", lambda: 1000)
    match = r"big.npy declares an array of shape \(1000, 2\) \(16000 bytes\), more than the memory available"
    with pytest.raises(ValueError, match=match + r" \(1000 bytes\)"):
        load_timeseries(tmp_path / "big.npy")


def test_npz_with_a_bad_crc_or_a_huge_member_is_refused(tmp_path):
    path = tmp_path / "rec.npz"
    np.savez(path, x=np.random.default_rng(0).normal(size=(40, 2)))
    with pytest.raises(ValueError, match="fails its checksum"):
        load_timeseries(_flip_first_data_byte(path, "x.npy"))
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f8", "fortran_order": False, "shape": (10**9, 10)})
    with zipfile.ZipFile(tmp_path / "huge.npz", "w") as zf:
        zf.writestr("x.npy", buf.getvalue() + b"\0" * 80)
    with pytest.raises(ValueError, match=r"huge.npz\[x\] is truncated or damaged"):
        load_timeseries(tmp_path / "huge.npz")


def test_netcdf_with_an_unknown_extra_dim_is_refused(tmp_path):
    rng = np.random.default_rng(0)
    xr.Dataset({"data": (("session", "time", "channel"), rng.normal(size=(2, 30, 3)))}).to_netcdf(
        tmp_path / "extra.nc", engine="h5netcdf")
    with pytest.raises(ValueError, match="'session' is none of trial, time, channel") as info:
        load_timeseries(tmp_path / "extra.nc")
    one_line(info)
    xr.Dataset({"data": (("trial", "time", "channel", "probe"), rng.normal(size=(2, 30, 3, 2)))}).to_netcdf(
        tmp_path / "four.nc", engine="h5netcdf")
    with pytest.raises(ValueError, match="'probe' is none of"):
        load_timeseries(tmp_path / "four.nc")
    # named dims in another order are still put in (trial, time, channel) order
    xr.Dataset({"data": (("channel", "time"), rng.normal(size=(3, 30)))}).to_netcdf(
        tmp_path / "ok.nc", engine="h5netcdf")
    assert load_timeseries(tmp_path / "ok.nc").data.shape == (1, 30, 3)


def test_truncated_netcdf_recording(tmp_path):
    xr.Dataset({"data": (("time", "channel"), np.random.default_rng(0).normal(size=(30, 3)))}).to_netcdf(
        tmp_path / "rec.nc", engine="h5netcdf")
    raw = (tmp_path / "rec.nc").read_bytes()
    (tmp_path / "cut.nc").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(ValueError, match="cut.nc is not a readable netCDF-4 file") as info:
        load_timeseries(tmp_path / "cut.nc")
    one_line(info)


# -- result files -------------------------------------------------------------------------------
@pytest.fixture
def fp_file(tmp_path):
    res = find_fixed_points(lambda h, u: 0.5 * h + 1.0, state_size=2, initial_states=np.ones((3, 2)))
    return res.save(tmp_path / "fp.nc")


def rewrite(path, change):
    ds = xr.load_dataset(path, engine="h5netcdf")
    ds.attrs.pop("content_sha256", None)  # an edit written without the checksum (else refused as damaged)
    change(ds).to_netcdf(path, engine="h5netcdf")
    return path


def test_result_with_all_nan_states_is_refused(fp_file):
    rewrite(fp_file, lambda ds: ds.assign(state=ds["state"] * np.nan))
    with pytest.raises(ResultFileError, match="every state is NaN or Inf") as info:
        load(fp_file)
    one_line(info)


def test_result_with_integer_stability_labels_is_refused(fp_file):
    rewrite(fp_file, lambda ds: ds.assign(stability=("fixed_point", np.zeros(ds.sizes["fixed_point"], int))))
    with pytest.raises(ResultFileError, match="'stability' holds int64 values, not text labels"):
        load(fp_file)


def test_result_with_unknown_stability_labels_is_refused(fp_file):
    labels = np.array(["stabel"] * 1)
    rewrite(fp_file, lambda ds: ds.assign(stability=("fixed_point", labels.repeat(ds.sizes["fixed_point"]))))
    with pytest.raises(ResultFileError, match="unknown stability label"):
        load(fp_file)


# -- checkpoint versions and formats ------------------------------------------------------------
@pytest.mark.parametrize("version", ["1", 1.0, None, True])
def test_checkpoint_version_of_another_type(ckpt, version):
    bad = edited(ckpt, lambda o: o.__setitem__("version", version))
    with pytest.raises(ModelFileError, match=f"version is stored as {type(version).__name__}") as info:
        load_checkpoint(bad)
    assert "save the model again" in one_line(info)


def test_checkpoint_from_a_newer_release_with_an_unknown_option(ckpt):
    def newer(o):
        o["versions"]["neurodyn"] = "9.0"
        o["model_config"]["synaptic_delay"] = 2

    match = "model LeakyRNN has option.s. synaptic_delay that this neurodyn"
    with pytest.raises(ModelFileError, match=match) as info:
        load_model(edited(ckpt, newer))
    assert "written by neurodyn 9.0: upgrade neurodyn" in one_line(info)


def test_checkpoint_of_a_newer_version_number(ckpt):
    with pytest.raises(ModelFileError, match="checkpoint format version 2, newer .* upgrade neurodyn"):
        load_checkpoint(edited(ckpt, lambda o: o.__setitem__("version", 2)))


def test_checkpoint_of_a_foreign_format(ckpt):
    bad = edited(ckpt, lambda o: o.__setitem__("format", "lightning-checkpoint"))
    with pytest.raises(ModelFileError, match="is a 'lightning-checkpoint' file, not a 'neurodyn-checkpoint'"):
        load_checkpoint(bad)


@pytest.mark.parametrize("shape", [(0, 10, 3), (2, 0, 3), (2, 10, 0), (0, 3)])
@pytest.mark.parametrize("drop_constant", [False, True])
def test_empty_recordings_get_a_one_line_error(tmp_path, shape, drop_constant):
    np.save(tmp_path / "empty.npy", np.zeros(shape))
    with pytest.raises(ValueError) as info:
        load_timeseries(tmp_path / "empty.npy", drop_constant=drop_constant)
    text = one_line(info)
    assert "zero-size" not in text
    assert "empty" in text or "need at least 2 time points, 1 channel and 1 trial" in text


def test_a_text_array_is_a_value_error_naming_the_file(tmp_path):
    np.save(tmp_path / "words.npy", np.array([["a", "b"], ["c", "d"]]))
    with pytest.raises(ValueError, match="words.npy: data must be a numeric array"):
        load_timeseries(tmp_path / "words.npy")


def test_result_file_declaring_a_huge_variable_is_refused_before_reading(fp_file):
    import h5py

    with h5py.File(fp_file, "a") as f:  # chunks never written: HDF5 would fill 745 GiB on reading
        f.create_dataset("junk", shape=(10**11,), dtype="f8", chunks=(1000,))
    with pytest.raises(ResultFileError, match="declares 745 GiB of variables, more than the memory"):
        load(fp_file)


@pytest.mark.parametrize("compressed", [False, True])
def test_mat_file_with_a_damaged_data_tag_does_not_crash_the_reader(tmp_path, compressed):
    # a zeroed tag under a matrix that declares (50, 3) made scipy's reader run past its buffer and
    # kill the process (segmentation fault); the file is refused before scipy reads it
    x = np.random.default_rng(0).normal(size=(50, 3))
    good = tmp_path / "good.mat"
    scipy.io.savemat(good, {"x": x}, do_compression=compressed)
    raw = bytearray(good.read_bytes())
    if compressed:
        import zlib

        size = struct.unpack_from("<I", raw, 132)[0]
        body = bytearray(zlib.decompress(bytes(raw[136:136 + size])))
        tag = body.find(struct.pack("<II", 9, 50 * 3 * 8))
        body[tag:tag + 8] = bytes(8)
        packed = zlib.compress(bytes(body))
        raw = raw[:128] + struct.pack("<II", 15, len(packed)) + packed
    else:
        tag = raw.find(struct.pack("<II", 9, 50 * 3 * 8))
        raw[tag:tag + 8] = bytes(8)
    (tmp_path / "bad.mat").write_bytes(bytes(raw))
    match = r"bad.mat is not a readable MATLAB .mat file.*\(50, 3\) matrix holds 0 bytes"
    with pytest.raises(ValueError, match=match):
        load_timeseries(tmp_path / "bad.mat")
    assert load_timeseries(good).n_steps == 50


def test_recording_options_that_would_be_ignored_are_refused(tmp_path):
    data = np.random.default_rng(0).normal(size=(30, 2))
    np.save(tmp_path / "rec.npy", data)
    np.savetxt(tmp_path / "rec.csv", data, delimiter=",")
    (tmp_path / "folder.npy").mkdir()
    with pytest.raises(ValueError, match="folder.npy is a directory, not a recording file"):
        load_timeseries(tmp_path / "folder.npy")
    for name in ("rec.npy", "rec.csv"):
        with pytest.raises(ValueError, match=rf"{name} holds one array, so a key \(key= / --key x\) picks"):
            load_timeseries(tmp_path / name, key="x")
        with pytest.raises(ValueError, match=r"a bin size \(bin_size= / --bin-size 0.1\) bins the spike"):
            load_timeseries(tmp_path / name, bin_size=0.1)
        assert load_timeseries(tmp_path / name).data.shape[-1] == 2  # without them the file loads


def test_a_mat_file_of_one_cell_array_names_what_it_holds(tmp_path):
    cells = np.empty((1, 3), dtype=object)
    for i in range(3):
        cells[0, i] = np.random.default_rng(i).normal(size=(20, 2))
    path = tmp_path / "trials.mat"
    scipy.io.savemat(path, {"Data": cells})
    with pytest.raises(ValueError, match=r"^trials\.mat holds no numeric array, only: Data \(cell/struct "
                                         r"array, shape \(1, 3\)\); .*TimeSeries\.from_arrays"):
        load_timeseries(path)
