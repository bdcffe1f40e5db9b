# %% [markdown]
# # Fitting a recording: macaque M1 and S1 spike counts through a Poisson observation model
#
# Spike counts in 50 ms bins from two macaque recordings during reaching (KordingLab/spykesML, MIT):
# primary motor cortex, 171 units on a Utah array during centre-out reaching (Stevenson et al. 2011,
# *J Neurophysiol* 106:764), and somatosensory cortex (area 2), 52 units (Miller lab; Benjamin et al.
# 2018, *Front Comput Neurosci* 12:56). From each area the 20 most active units are fitted by a latent
# RNN whose rates are `softplus(B z + b)`, trained by generalized teacher forcing (Hess et al. 2023,
# ICML) with a Poisson likelihood. The free run is scored on the last 20 % of the bins with D_stsp
# (Gaussian-mixture estimate, on Poisson draws from the generated rates), D_H and PE(n) of the rates,
# against a linear model and the mean.
#
# The recordings are read from `NEURODYN_DATA` or a `shared/data` folder (see
# `neurodyn.io.find_recordings`); a clone without them fits synthetic Poisson counts driven by a slow
# rotation instead and says so. The fits are tiny when the site is built (the first 3,000 bins of each
# area, a tanh RNN of 8 units, 15 × 10 batches of 16 windows); set `NEURODYN_FULL=1` for all bins and a
# clipped shallow PLRNN with 64 hidden units trained for 60 × 20 batches of 64, the sizes whose M1 scores
# the guide's "Fitting recordings" page reports.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np

from neurodyn.analysis import evaluate_reconstruction
from neurodyn.io import TimeSeries, find_recordings, load_timeseries
from neurodyn.models import LeakyRNN, ShallowPLRNN
from neurodyn.plotting import plot_reconstruction
from neurodyn.training import fit_teacher_forcing

full = os.environ.get("NEURODYN_FULL") == "1"
folder = find_recordings("reaching_m1_s1_spykesml",
                         stand_in="synthetic Poisson counts instead of the M1 and S1 recordings")
if folder is not None:
    source = "recording"
    areas = {"M1": load_timeseries(folder / "m1_stevenson_2011.mat", key="spikes", transpose=True, dt=0.05,
                                   drop_constant=True),
             "S1": load_timeseries(folder / "s1_data.mat", key="spikes", dt=0.05, drop_constant=True)}
else:
    source = "synthetic counts (recording not found)"
    rng = np.random.default_rng(0)
    phase = 2 * np.pi * np.arange(6000) / 40  # a 2 s rotation in 50 ms bins
    rates = np.exp(np.c_[np.cos(phase), np.sin(phase)] @ rng.standard_normal((2, 30)) - 1.0)
    areas = {name: TimeSeries.from_arrays(rng.poisson(rates).astype(float), dt=0.05) for name in ("M1", "S1")}

# %% [markdown]
# ## Preprocessing and the fits
#
# Counts are fitted as they are (no z-scoring: the Poisson model needs counts); the first 80 % of the
# bins train, the last 20 % are held out.

# %%
fits = {}
for name, counts in areas.items():
    top = sorted(np.argsort(counts.values.mean(0))[::-1][:20].tolist())  # the 20 most active units
    counts = counts.select_channels(top).time_slice(0, counts.n_steps if full else 3000)
    train, test = counts.split(0.8)
    print(f"{name} {source}: {train.n_steps} training and {test.n_steps} held-out bins of "
          f"{train.n_channels} units, {train.values.mean() / train.dt:.1f} spikes/s per unit on average")
    model = (ShallowPLRNN(0, 8, train.n_channels, n_hidden=64, clipped=True, seed=0) if full
             else LeakyRNN(0, 8, train.n_channels, activation="tanh", seed=0))
    fit = fit_teacher_forcing(model, train, observation="poisson", alpha=0.5, n_epochs=60 if full else 15,
                              batches_per_epoch=20 if full else 10, batch_size=64 if full else 16, seq_len=40,
                              lr=5e-3, lr_end=1e-4 if full else 1e-3, progress=False, seed=0)
    print(f"{name}: fit {fit.status}; loss {fit.history['loss'][0]:.3f} -> {fit.history['loss'][-1]:.3f}")
    fits[name] = (fit, train, test)

# %% [markdown]
# ## Scores of the free runs
#
# Lower is better for all three measures; each model runs freely from the first held-out bin.

# %%
scores = {}
for name, (fit, train, test) in fits.items():
    scores[name] = evaluate_reconstruction(fit.model, train.values, test.values, observation="poisson",
                                           n_transient=100, pe_steps=5, smoothing=2.0, method="gmm", seed=0)
    print(f"{name}\n{scores[name].summary()}\n")

# %%
fig, axes = plt.subplots(len(fits), 2, figsize=(10, 3.4 * len(fits)), layout="constrained")
for row, (name, (_, train, test)) in zip(axes, fits.items()):
    plot_reconstruction(scores[name], test.values, channels=(0, 1), dt=train.dt,
                        channel_names=[f"{c} (counts)" for c in train.channel_names], axes=row,
                        title=f"{name} {source}")
plt.show()
