"""A (channel, time) array is refused, with the fix, by the loader and by TimeSeries.from_arrays alike."""

import numpy as np
import pytest

from neurodyn.io import TimeSeries, load_timeseries

WIDE = np.random.default_rng(0).normal(size=(5, 40))  # (channel, time): 5 channels, 40 steps


def test_from_arrays_refuses_channel_by_time_and_names_the_transpose():
    with pytest.raises(ValueError, match=r"40 channels but only 5 time points.*data\.T") as err:
        TimeSeries.from_arrays(WIDE, dt=0.1)
    assert "\n" not in str(err.value)
    assert TimeSeries.from_arrays(WIDE.T, dt=0.1).n_channels == 5


def test_loader_refuses_channel_by_time_and_names_transpose(tmp_path):
    np.savez(tmp_path / "rec.npz", spikes=WIDE)
    with pytest.raises(ValueError, match=r"rec\.npz\[spikes\] has 40 channels.*add transpose=True"):
        load_timeseries(tmp_path / "rec.npz", key="spikes")
    assert load_timeseries(tmp_path / "rec.npz", key="spikes", transpose=True).data.shape == (1, 40, 5)
    np.savez(tmp_path / "long.npz", spikes=WIDE.T)
    with pytest.raises(ValueError, match="read with transpose=True; drop it"):
        load_timeseries(tmp_path / "long.npz", key="spikes", transpose=True)


def test_trials_count_together():
    assert TimeSeries.from_arrays(np.random.default_rng(1).normal(size=(10, 4, 6))).n_channels == 6


def test_real_m1_spike_matrix_needs_transpose(shared_data):
    with pytest.raises(ValueError, match="15536 channels but only 171 time points.*transpose=True"):
        load_timeseries(shared_data / "reaching_m1_s1_spykesml" / "m1_stevenson_2011.mat", key="spikes")
