"""The sampling interval: from a time vector beside the data (.npz/.mat), else 1.0 with a warning."""

import warnings

import numpy as np
import pytest
from scipy.io import savemat

from neurodyn.io import load_timeseries

X = np.random.default_rng(0).normal(size=(40, 3))


def test_mat_time_vector_sets_dt_also_when_stored_rounded(tmp_path):
    t = np.round(12.591 + 0.05 * np.arange(40), 3)[None]  # (1, time), like MATLAB's row vectors
    savemat(tmp_path / "rec.mat", {"spikes": X.T, "time": t})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ts = load_timeseries(tmp_path / "rec.mat", key="spikes", transpose=True)
    assert ts.dt == pytest.approx(0.05)
    assert load_timeseries(tmp_path / "rec.mat", key="spikes", transpose=True, dt=0.01).dt == 0.01


def test_npz_time_vector_sets_dt(tmp_path):
    np.savez(tmp_path / "rec.npz", x=X, time=0.002 * np.arange(40))
    assert load_timeseries(tmp_path / "rec.npz", key="x").dt == pytest.approx(0.002)


def test_uneven_time_vector_is_refused_unless_dt_is_given(tmp_path):
    t = np.cumsum(np.r_[0.0, np.full(19, 0.01), np.full(20, 0.02)])
    np.savez(tmp_path / "rec.npz", x=X, time=t)
    with pytest.raises(ValueError, match=r"rec\.npz\['time'\] is not evenly spaced .*pass dt="):
        load_timeseries(tmp_path / "rec.npz", key="x")
    assert load_timeseries(tmp_path / "rec.npz", key="x", dt=0.01).dt == 0.01


def test_npy_without_dt_warns_once_naming_dt(tmp_path):
    np.save(tmp_path / "x.npy", X)
    with pytest.warns(UserWarning, match=r"dt = 1\.0 is assumed; pass dt=") as rec:
        assert load_timeseries(tmp_path / "x.npy").dt == 1.0
    assert len(rec) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_timeseries(tmp_path / "x.npy", dt=0.1).dt == 0.1
