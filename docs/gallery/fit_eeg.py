# %% [markdown]
# # Fitting a recording: 64-channel scalp EEG through an affine observation model
#
# One minute of resting EEG (eyes open), 64 channels at 160 Hz, from the PhysioNet EEG Motor
# Movement/Imagery database, subject S001 run R01 (Schalk et al. 2004, *IEEE Trans Biomed Eng* 51:1034;
# Goldberger et al. 2000, *Circulation* 101:e215; data ODC-BY), Gaussian-smoothed and z-scored per
# channel as prepared in mackelab/smc_rnns (Apache-2.0) and used as the EEG benchmark of the GTF paper.
# A 16-dimensional clipped shallow PLRNN is fitted by generalized teacher forcing (GTF: Hess, Monfared,
# Brenner & Durstewitz 2023, ICML) and observed through a learned affine map `x = B z + b` (64 × 16);
# its free run is scored on the last 20 % with D_stsp (Gaussian-mixture estimate, for 64 channels),
# D_H and PE(n) against a linear model and the mean, as on the ECG page.
#
# The recording is read from `NEURODYN_DATA` or a `shared/data` folder (see `neurodyn.io.find_recordings`);
# a clone without it fits a synthetic 64-channel mixture of three rhythms instead and says so. The fit
# is tiny when the site is built (20 hidden units, 20 × 10 batches of 16 windows); set `NEURODYN_FULL=1`
# for 256 hidden units and 60 × 20 batches of 64, the sizes whose scores the guide's "Fitting
# recordings" page reports (the GTF paper's EEG model is larger, 512 hidden units, and trained longer).

# %%
import os

import matplotlib.pyplot as plt
import numpy as np

from neurodyn.analysis import evaluate_reconstruction
from neurodyn.io import TimeSeries, find_recordings, load_timeseries
from neurodyn.models import ShallowPLRNN
from neurodyn.plotting import plot_reconstruction
from neurodyn.training import fit_teacher_forcing

full = os.environ.get("NEURODYN_FULL") == "1"
folder = find_recordings("eeg_physionet_eegmmidb_s001r01",
                         stand_in="a synthetic 64-channel mixture of three rhythms instead of the EEG "
                                  "recording")
if folder is not None:
    source = "EEG recording"
    eeg = load_timeseries(folder / "EEG_data_smoothed.npy", dt=1 / 160)
else:
    source = "synthetic 64-channel rhythms (recording not found)"
    rng = np.random.default_rng(0)
    t = np.arange(9640) / 160
    rhythms = np.c_[np.sin(2 * np.pi * 10 * t), np.sin(2 * np.pi * 6 * t + 1), np.sin(2 * np.pi * 1.5 * t)]
    mixed = rhythms @ rng.standard_normal((3, 64)) + 0.3 * rng.standard_normal((len(t), 64))
    eeg = TimeSeries.from_arrays(mixed, dt=1 / 160)

# %% [markdown]
# ## Preprocessing and the fit
#
# The first 80 % trains, the last 20 % is held out; both are z-scored with the training statistics.

# %%
train, test = eeg.split(0.8)
train = train.standardize()
stats = train.preprocessing[-1]
test = test.standardize(stats["mean"], stats["std"])
print(f"{source}: {train.n_steps} training and {test.n_steps} held-out steps of {train.n_channels} "
      f"channels, dt = {train.dt * 1e3:.2f} ms")
model = ShallowPLRNN(0, 16, train.n_channels, n_hidden=256 if full else 20, clipped=True, seed=0)
fit = fit_teacher_forcing(model, train, observation="affine", alpha=0.1, n_epochs=60 if full else 20,
                          batches_per_epoch=20 if full else 10, batch_size=64 if full else 16, seq_len=50,
                          lr=1e-3 if full else 5e-3, lr_end=1e-5 if full else 1e-3, progress=False, seed=0)
print(f"fit {fit.status}; loss {fit.history['loss'][0]:.3f} -> {fit.history['loss'][-1]:.3f}")

# %% [markdown]
# ## Scores of the free run
#
# Lower is better for all three measures; the fitted model runs freely from the first held-out state.

# %%
scores = evaluate_reconstruction(fit.model, train.values, test.values, observation="affine",
                                 n_transient=500 if full else 100, smoothing=2.0, method="gmm", seed=0)
print(scores.summary())

# %%
plot_reconstruction(scores, test.values, channels=(0, 1), dt=train.dt, channel_names=train.channel_names,
                    title=source)
plt.show()
