"""TimeSeries validation, preprocessing records and the file loaders (round trips)."""

import importlib.util
import warnings
from datetime import UTC

import numpy as np
import pytest

from neurodyn.io import TimeSeries, apply_preprocessing, load_timeseries


def rng_data(n=200, c=3, seed=0):
    return np.random.default_rng(seed).standard_normal((n, c))


def test_shapes_and_defaults():
    ts = TimeSeries.from_arrays(rng_data(), dt=0.01)
    assert (ts.n_trials, ts.n_steps, ts.n_channels, ts.n_inputs) == (1, 200, 3, 0)
    assert ts.values.shape == (200, 3) and ts.channel_names == ("ch0", "ch1", "ch2")
    trials = TimeSeries.from_arrays(rng_data(60).reshape(3, 20, 3), inputs=np.ones((3, 20, 1)))
    assert trials.values.shape == (3, 20, 3) and trials.n_inputs == 1


@pytest.mark.parametrize("bad, match", [
    (np.array([[0.0, 1.0], [np.nan, 2.0], [1.0, 3.0]]), "NaN/Inf.*time 1, channel 0"),
    (np.array([[0.0, np.inf], [1.0, 2.0], [1.0, 3.0]]), "first: Inf"),
    (np.array([[1.0, 1.0], [1.0, 2.0], [1.0, 3.0]]), "constant channel.*ch0"),
    (np.ones((1, 2)), "at least 2 time points"),
])
def test_bad_data_raise_clear_errors(bad, match):
    with pytest.raises(ValueError, match=match):
        TimeSeries.from_arrays(bad)


def test_trials_of_different_shapes_get_one_line_errors_naming_the_shapes():
    shapes = r"\(\(10, 2\), \(12, 2\)\)"
    with pytest.raises(ValueError, match=r"data is a list of trials of different shapes " + shapes):
        TimeSeries.from_arrays([rng_data(20, 2)[:10], rng_data(24, 2)[:12]])
    with pytest.raises(ValueError, match=r"inputs is a list of trials of different shapes"):
        TimeSeries.from_arrays(rng_data(20, 2).reshape(2, 10, 2), inputs=[np.ones((10, 1)), np.ones((9, 1))])


def test_input_length_and_sequence_length_checks():
    with pytest.raises(ValueError, match="inputs cover"):
        TimeSeries.from_arrays(rng_data(50), inputs=np.zeros((49, 2)))
    ts = TimeSeries.from_arrays(rng_data(50))
    ts.check_length(49)
    with pytest.raises(ValueError, match="seq_len \\+ 1 = 51"):
        ts.check_length(50)
    with pytest.raises(ValueError, match="dt"):
        TimeSeries.from_arrays(rng_data(), dt=0.0)


def test_standardize_and_replay_on_held_out_data():
    x = rng_data() * [1, 5, 10] + [0, 3, -2]
    train, test = TimeSeries.from_arrays(x).split(0.75)
    st = train.standardize()
    np.testing.assert_allclose(st.values.mean(0), 0, atol=1e-12)
    np.testing.assert_allclose(st.values.std(0), 1, atol=1e-12)
    held = apply_preprocessing(test, st.preprocessing)
    rec = st.preprocessing[-1]
    np.testing.assert_allclose(held.values, (x[150:] - rec["mean"]) / rec["std"])


def test_downsample_keeps_every_kth_point_and_scales_dt():
    x = rng_data(20, 2)
    ts = TimeSeries.from_arrays(x, dt=0.01, inputs=np.arange(20.0)[:, None]).downsample(4)
    np.testing.assert_array_equal(ts.values, x[::4])
    assert ts.dt == pytest.approx(0.04) and ts.inputs[0, :, 0].tolist() == [0, 4, 8, 12, 16]
    replay = apply_preprocessing(TimeSeries.from_arrays(x), ts.preprocessing)
    np.testing.assert_array_equal(replay.values, x[::4])


def test_lowpass_has_the_squared_butterworth_gain_and_no_phase_shift():
    from scipy import signal

    t = np.arange(4000) / 1000.0  # 1 kHz
    slow, fast = np.sin(2 * np.pi * 5 * t), np.sin(2 * np.pi * 100 * t + 0.3)
    ts = TimeSeries.from_arrays(np.c_[slow + fast, 2 * slow], dt=1e-3).lowpass(20.0, order=4)
    sos = signal.butter(4, 20.0, fs=1000.0, output="sos")
    gain = np.abs(signal.sosfreqz(sos, worN=[5.0, 100.0], fs=1000.0)[1]) ** 2  # forward-backward: |H|^2
    mid = slice(1000, 3000)  # away from the edges
    np.testing.assert_allclose(ts.values[mid, 0], gain[0] * slow[mid] + gain[1] * fast[mid], atol=1e-4)
    np.testing.assert_allclose(ts.values[mid, 1], 2 * gain[0] * slow[mid], atol=1e-4)
    assert gain[1] < 1e-5 and gain[0] > 0.99
    assert ts.preprocessing[-1] == {"step": "lowpass", "cutoff": 20.0, "order": 4}
    raw = TimeSeries.from_arrays(np.c_[slow + fast, 2 * slow], dt=1e-3)
    replay = apply_preprocessing(raw, ts.preprocessing)
    np.testing.assert_array_equal(replay.values, ts.values)
    with pytest.raises(ValueError, match="Nyquist"):
        ts.lowpass(600.0)
    with pytest.raises(ValueError, match="order must be >= 1"):
        ts.lowpass(10.0, order=0)
    for bad_order in (2.7, True):
        with pytest.raises(ValueError, match="order must be a positive integer"):
            ts.lowpass(10.0, order=bad_order)
    with pytest.raises(ValueError, match="numerically singular"):
        ts.lowpass(1e-9)
    with pytest.raises(ValueError, match="factor must be a positive integer"):
        ts.downsample(2.5)
    assert ts.data.strides[1] > 0  # contiguous, so torch takes it without a copy error
    record = {"step": "lowpass", "cutoff": 20.0}  # a record without the order replays with the default 4
    np.testing.assert_array_equal(apply_preprocessing(raw, [record]).values, ts.values)
    with pytest.raises(ValueError, match="lower the order or use longer trials"):
        TimeSeries.from_arrays(np.random.default_rng(0).standard_normal((12, 1)), dt=1e-3).lowpass(10.0)


def test_delay_embedding_matches_lagged_copies():
    x = np.arange(30.0)[:, None] ** 1.5
    emb = TimeSeries.from_arrays(x, channel_names=["v"]).delay_embed([0, 2, 5])
    assert emb.channel_names == ("v", "v(t-2)", "v(t-5)") and emb.n_steps == 25
    np.testing.assert_array_equal(emb.values, np.stack([x[5:, 0], x[3:-2, 0], x[:-5, 0]], 1))
    assert emb.preprocessing[-1] == {"step": "delay_embed", "lags": [0, 2, 5], "channels": [0]}
    with pytest.raises(ValueError, match="distinct non-negative"):
        emb.delay_embed([0, 0])


def test_delay_embedding_reproduces_the_ecg_benchmark(shared_data):
    ecg = np.load(shared_data / "ecg_pecuzal5d" / "ECG_pecuzal_5d_train.npy")[:3000]
    # The file's columns are x(t + lag) for lags 0, 20, 68, 55, 10 (forward shifts); a delay
    # embedding x(t - lag') with lag' = 68 - lag gives the same rows, 68 steps later.
    lags = [68 - lag for lag in (0, 20, 68, 55, 10)]
    emb = TimeSeries.from_arrays(ecg[:, :1]).delay_embed(lags)
    np.testing.assert_array_equal(emb.values, ecg[:-68])


def test_npy_npz_csv_mat_netcdf_round_trips(tmp_path):
    from scipy.io import savemat

    x, u = rng_data(40, 2), rng_data(40, 1, seed=1)
    np.save(tmp_path / "a.npy", x)
    np.savez(tmp_path / "b.npz", data=x, inputs=u, dt=np.float64(0.002))
    t = 0.5 + 0.01 * np.arange(40)
    np.savetxt(tmp_path / "c.csv", np.c_[t, x], delimiter=",", header="time,left,right", comments="")
    savemat(tmp_path / "d.mat", {"spikes": x.T, "other": u})
    TimeSeries.from_arrays(x, dt=0.004, channel_names=["p", "q"]).to_xarray().to_netcdf(
        tmp_path / "e.nc", engine="h5netcdf")
    a = load_timeseries(tmp_path / "a.npy")
    b = load_timeseries(tmp_path / "b.npz", input_key="inputs")
    c = load_timeseries(tmp_path / "c.csv")
    d = load_timeseries(tmp_path / "d.mat", key="spikes", transpose=True)
    e = load_timeseries(tmp_path / "e.nc")
    for ts in (a, b, c, d, e):
        np.testing.assert_allclose(ts.values, x, rtol=1e-12)
    np.testing.assert_array_equal(b.inputs[0], u)
    assert b.dt == 0.002 and c.channel_names == ("left", "right") and c.dt == pytest.approx(0.01)
    assert e.dt == pytest.approx(0.004) and e.channel_names == ("p", "q")
    with pytest.raises(ValueError, match="several arrays.*other.*spikes"):
        load_timeseries(tmp_path / "d.mat")
    with pytest.raises(ValueError, match="unknown suffix"):
        load_timeseries(tmp_path / "a.npy").__class__ and load_timeseries(_touch(tmp_path / "f.xyz"))
    with pytest.raises(FileNotFoundError):
        load_timeseries(tmp_path / "missing.npy")


def _touch(p):
    p.write_text("")
    return p


def test_drop_constant_channels_of_spike_counts(tmp_path):
    counts = np.random.default_rng(0).poisson(2.0, (100, 4)).astype(float)
    counts[:, 2] = 0
    np.save(tmp_path / "s.npy", counts)
    with pytest.raises(ValueError, match="constant channel"):
        load_timeseries(tmp_path / "s.npy")
    ts = load_timeseries(tmp_path / "s.npy", drop_constant=True)
    assert ts.channel_names == ("ch0", "ch1", "ch2") and ts.n_channels == 3


def test_m1_spike_counts_load(shared_data):
    ts = load_timeseries(shared_data / "reaching_m1_s1_spykesml" / "m1_stevenson_2011.mat", key="spikes",
                         transpose=True, dt=0.05, drop_constant=True)
    assert ts.n_steps == 15536 and 100 < ts.n_channels <= 171


@pytest.mark.skipif(importlib.util.find_spec("pynwb") is None, reason="pynwb (extra 'nwb') not installed")
def test_nwb_timeseries_and_binned_units(tmp_path):
    from datetime import datetime

    from pynwb import NWBHDF5IO, NWBFile
    from pynwb import TimeSeries as NWBSeries

    x = rng_data(100, 2)
    nwb = NWBFile(session_description="test", identifier="t1", session_start_time=datetime.now(UTC))
    nwb.add_acquisition(NWBSeries(name="lfp", data=x, unit="V", rate=250.0))
    spikes = [np.array([0.01, 0.02, 0.26, 0.9]), np.array([0.5, 0.51, 0.55])]
    for st in spikes:
        nwb.add_unit(spike_times=st)
    with NWBHDF5IO(str(tmp_path / "r.nwb"), "w") as io:
        io.write(nwb)
    ts = load_timeseries(tmp_path / "r.nwb", key="lfp")
    np.testing.assert_allclose(ts.values, x)
    assert ts.dt == pytest.approx(1 / 250)
    units = load_timeseries(tmp_path / "r.nwb", key="units", bin_size=0.25)
    edges = 0.25 * np.arange(5)
    expected = np.stack([np.histogram(s, edges)[0] for s in spikes], 1)
    np.testing.assert_array_equal(units.values, expected)
    with pytest.raises(ValueError, match="no time series 'nope'.*lfp"):
        load_timeseries(tmp_path / "r.nwb", key="nope")


def test_replayed_standardisation_warns_when_new_data_are_on_another_scale():
    x = rng_data()
    st = TimeSeries.from_arrays(x).standardize()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        apply_preprocessing(TimeSeries.from_arrays(x[:100] * 1.2), st.preprocessing)  # near 1: silent
    scaled = x * [1.0, 5.0, 0.1]
    with pytest.warns(UserWarning, match=r"std far from 1 .* in ch1 \(std 5\.?\d*\), ch2 \(std 0\.1\d*\); "
                                         r"they are likely in other units"):
        apply_preprocessing(TimeSeries.from_arrays(scaled), st.preprocessing)
