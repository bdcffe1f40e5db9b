# %% [markdown]
# # Fitting a recording: fMRI BOLD signals of 20 regions
#
# BOLD time series of 20 regions of interest of one subject doing a cognitive task in blocks (Koppe et
# al. 2014, *NeuroImage* 101:236; Kramer et al. 2022, ICML): five blocks of 72 scans, concatenated, each
# region z-scored, as in the file `fmri.npy` of DurstewitzLab/ALRNN-DSR (GPL-3.0; the data carry no
# licence of their own, so this page uses them for research and demonstration only and cites the
# papers). The file holds no task inputs, so the model runs autonomously (`n_inputs = 0`); the fitting
# guide shows how inputs are given. A clipped shallow PLRNN with one latent unit per region (identity
# observation) is fitted by generalized teacher forcing (Hess et al. 2023, ICML); its free run is scored
# on the last block with D_stsp (Gaussian-mixture estimate), D_H with the smoothing 1.0 of the AL-RNN
# benchmark and PE(n), against a linear model and the mean.
#
# The recording is read from `NEURODYN_DATA` or a `shared/data` folder (see
# `neurodyn.io.find_recordings`); a clone without it fits 20 synthetic slow oscillations instead and
# says so. The fit is tiny when the site is built (16 hidden units, 20 × 10 batches of 16 windows); set
# `NEURODYN_FULL=1` for 64 hidden units and 20 × 20 batches of 32, the sizes whose scores the guide's
# "Fitting recordings" page reports.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np

from neurodyn.analysis import evaluate_reconstruction
from neurodyn.io import TimeSeries, find_recordings
from neurodyn.models import ShallowPLRNN
from neurodyn.plotting import plot_reconstruction
from neurodyn.training import fit_teacher_forcing

full = os.environ.get("NEURODYN_FULL") == "1"
folder = find_recordings("fmri_koppe_nback",
                         stand_in="20 synthetic slow oscillations instead of the fMRI recording")
names = [f"ROI {i}" for i in range(20)]
if folder is not None:
    source = "fMRI recording"
    bold = TimeSeries.from_arrays(np.load(folder / "fmri_alrnn_example.npy"), channel_names=names)
else:
    source = "synthetic slow oscillations (recording not found)"
    rng = np.random.default_rng(0)
    scan = np.arange(360)[:, None]
    bold = TimeSeries.from_arrays(np.sin(2 * np.pi * scan / rng.uniform(15, 40, 20) + rng.uniform(0, 6, 20))
                                  + 0.3 * rng.standard_normal((360, 20)), channel_names=names)

# %% [markdown]
# ## Preprocessing and the fit
#
# The first four blocks (288 scans) train and the last block (72 scans) is held out, both z-scored with
# the training statistics. Time is counted in scans (`dt = 1`).

# %%
train, test = bold.split(0.8)
train = train.standardize()
stats = train.preprocessing[-1]
test = test.standardize(stats["mean"], stats["std"])
print(f"{source}: {train.n_steps} training and {test.n_steps} held-out scans of {train.n_channels} regions")
model = ShallowPLRNN(0, 20, 20, n_hidden=64 if full else 16, clipped=True, seed=0)
fit = fit_teacher_forcing(model, train, observation="identity", alpha=0.2, n_epochs=20,
                          batches_per_epoch=20 if full else 10, batch_size=32 if full else 16, seq_len=30,
                          lr=5e-3, lr_end=1e-4 if full else 1e-3, progress=False, seed=0)
print(f"fit {fit.status}; loss {fit.history['loss'][0]:.3f} -> {fit.history['loss'][-1]:.3f}")

# %% [markdown]
# ## Scores of the free run
#
# Lower is better for all three measures. The free run starts from the first held-out scan; its first
# `n_transient` generated scans (500, or 20 when the site is built) are dropped before the rest is
# scored against the held-out block, and the prediction error is taken 5 scans ahead.

# %%
scores = evaluate_reconstruction(fit.model, train.values, test.values, observation="identity",
                                 n_transient=500 if full else 20, pe_steps=5, smoothing=1.0, method="gmm",
                                 seed=0)
print(scores.summary())

# %%
plot_reconstruction(scores, test.values, channels=(0, 1), n_show=72, channel_names=names, title=source)
plt.show()

# %% [markdown]
# ## With the task inputs (a file you supply)
#
# The study's stimulus inputs (5 binary regressors per scan: triangle, square and three task
# instructions) are only in `NBKO_PLRNN_dataset.mat` (Kramer et al. 2022), which has no stated licence,
# so this section runs only when the environment variable `NEURODYN_FMRI_INPUTS` names a copy you may
# use: that `.mat` (subject 6 is read) or a `.npz` with `bold` (block, scan, roi) and `inputs` (block,
# scan, input). Blocks 1-4 train with the inputs fed at every step (`n_inputs = 5`); the free run is
# driven by block 5's inputs from its first scan and scored, after 5 scans, against a linear ARX model
# `x' = A x + C u' + c` fitted by least squares, and the mean.

# %%
inputs_file = os.environ.get("NEURODYN_FMRI_INPUTS")
scores_inputs = None
if inputs_file and not os.path.isfile(inputs_file):
    raise SystemExit(f"NEURODYN_FMRI_INPUTS names {inputs_file}, which is not a file; fix or unset it")
if inputs_file and inputs_file.endswith(".mat"):
    from scipy.io import loadmat

    subject = loadmat(inputs_file, squeeze_me=True)["Data"][6]
    blocks = [np.stack([b.T for b in subject[key].item()]).astype(float) for key in ("X", "Inp")]
elif inputs_file:
    with np.load(inputs_file) as f:
        blocks = [f["bold"].astype(float), f["inputs"].astype(float)]
if inputs_file:
    driven = TimeSeries.from_arrays(blocks[0][:4], inputs=blocks[1][:4]).standardize()
    stats = driven.preprocessing[-1]
    x_test = (blocks[0][4] - stats["mean"]) / stats["std"]
    model = ShallowPLRNN(driven.n_inputs, driven.n_channels, driven.n_channels, n_hidden=64 if full else 8,
                         clipped=True, seed=0)
    fit = fit_teacher_forcing(model, driven, observation="identity", alpha=0.2, n_epochs=60 if full else 2,
                              batches_per_epoch=20 if full else 3, batch_size=32, seq_len=30, lr=5e-3,
                              lr_end=1e-4, progress=False, seed=0)
    scores_inputs = evaluate_reconstruction(
        fit.model, driven.data.reshape(-1, driven.n_channels), x_test, observation="identity",
        inputs_train=driven.inputs.reshape(-1, driven.n_inputs), inputs_test=blocks[1][4], n_transient=5,
        pe_steps=3, smoothing=1.0, method="gmm", seed=0)
    print(scores_inputs.summary())
else:
    print("fMRI with task inputs skipped: set NEURODYN_FMRI_INPUTS to the study's .mat or a .npz with "
          "'bold' and 'inputs'")
