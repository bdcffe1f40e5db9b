# %% [markdown]
# # Fitting a recording: a hippocampal LFP, delay-embedded
#
# 150 s of local field potential from rat hippocampal area CA1 at 1 kHz (CRCNS hc-2: Mizuseki et al.
# 2009, *Neuron* 64:267; Mizuseki et al. 2012, *Hippocampus* 22:1659), as shipped in the data folder of
# neurodsp-tools/neurodsp (Apache-2.0; CRCNS terms of use apply to the data). One channel carries too
# little state for a dynamical system, so it is delay-embedded (Takens) before the fit, as the ECG is.
# A clipped shallow PLRNN is fitted by generalized teacher forcing (Hess et al. 2023, ICML) with the
# embedded coordinates as its observed units; its free run is scored on the last 20 % with D_stsp,
# D_H and PE(n) against a linear model and the mean, as on the ECG page.
#
# The recording is read from `NEURODYN_DATA` or a `shared/data` folder (see
# `neurodyn.io.find_recordings`); a clone without it fits a synthetic noisy 8 Hz rhythm instead and says
# so. The fit is tiny when the site is built (the first 30 s, 20 hidden units, 20 × 10 batches of 16
# windows); set `NEURODYN_FULL=1` for all 150 s, 64 hidden units and 100 × 20 batches of 64.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np

from neurodyn.analysis import evaluate_reconstruction
from neurodyn.io import TimeSeries, apply_preprocessing, find_recordings, load_timeseries
from neurodyn.models import ShallowPLRNN
from neurodyn.plotting import plot_reconstruction
from neurodyn.training import fit_teacher_forcing

full = os.environ.get("NEURODYN_FULL") == "1"
folder = find_recordings("lfp_neurodsp",
                         stand_in="a synthetic noisy 8 Hz rhythm instead of the LFP recording")
if folder is not None:
    source = "CA1 LFP recording"
    lfp = load_timeseries(folder / "sample_data_2.npy", dt=1e-3)
else:
    source = "synthetic 8 Hz rhythm (recording not found)"
    rng = np.random.default_rng(0)
    t = np.arange(150_000) * 1e-3
    lfp = TimeSeries.from_arrays((1 + 0.3 * np.sin(2 * np.pi * 0.5 * t)) * np.sin(2 * np.pi * 8 * t)
                                 + 0.3 * rng.standard_normal(len(t)), dt=1e-3)
lfp = lfp.time_slice(0, lfp.n_steps if full else 30_000)

# %% [markdown]
# ## Preprocessing and the fit
#
# The first 80 % trains, the last 20 % is held out. Low-passed at 30 Hz without phase shift (theta and
# beta stay, the rest would alias), embedded with lags of 0, 20 and 40 ms (about a quarter and a half of
# a theta cycle), then every 10th sample kept (100 Hz), so that a 40-step window spans three theta
# cycles. The held-out part replays the same steps with the training statistics.

# %%
raw_train, raw_test = lfp.split(0.8)
train = raw_train.lowpass(30.0).delay_embed([0, 20, 40]).downsample(10).standardize()
test = apply_preprocessing(raw_test, train.preprocessing)
print(f"{source}: {train.n_steps} training and {test.n_steps} held-out steps of {train.n_channels} "
      f"embedded channels, dt = {train.dt * 1e3:.0f} ms")
model = ShallowPLRNN(0, 8, 3, n_hidden=64 if full else 20, clipped=True, seed=0)
fit = fit_teacher_forcing(model, train, observation="identity", alpha=0.2, n_epochs=100 if full else 20,
                          batches_per_epoch=20 if full else 10, batch_size=64 if full else 16, seq_len=40,
                          lr=1e-2, lr_end=1e-4 if full else 1e-3, progress=False, seed=0)
print(f"fit {fit.status}; loss {fit.history['loss'][0]:.3f} -> {fit.history['loss'][-1]:.3f}")

# %% [markdown]
# ## Scores of the free run
#
# Lower is better for all three measures; the fitted model runs freely from the first held-out state.

# %%
scores = evaluate_reconstruction(fit.model, train.values, test.values, observation="identity",
                                 n_transient=100, smoothing=2.0, n_bins=20, seed=0)
print(scores.summary())

# %%
plot_reconstruction(scores, test.values, channels=(0, 2), dt=train.dt, channel_names=train.channel_names,
                    title=source)
plt.show()
