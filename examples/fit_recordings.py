# %% [markdown]
# # Fitting RNNs to recordings: ECG, EEG, spike counts and fMRI
#
# Dynamical systems reconstruction with neurodyn: load a recording, preprocess it (recorded steps),
# fit a latent RNN by generalized teacher forcing (Hess et al., ICML 2023), and score the freely
# generated dynamics on held-out data with D_stsp, D_H and PE(n) against two baselines (a linear
# model fitted by least squares and the mean). Set `NEURODYN_TINY=1` for a seconds-long smoke run (CI).
# The recordings are read from the first `shared/data` folder found from the working directory upwards
# (the repository's `../shared/data`) or from `NEURODYN_DATA`; the figure and the score table are
# written to `NEURODYN_OUT` (default `runs/fit_recordings` in the repository, ignored by git).
#
# Data (see each folder's README):
# * ECG — PPG-DaLiA (Reiss et al. 2019, Sensors 19:3079) as prepared for the GTF benchmark
#   (Hess, Monfared, Brenner & Durstewitz 2023, ICML; DurstewitzLab/GTF-shPLRNN, GPL-3.0).
# * EEG — PhysioNet EEG Motor Movement/Imagery, subject S001 run R01 (Schalk et al. 2004, IEEE TBME
#   51:1034; Goldberger et al. 2000, Circulation 101:e215; ODC-BY), smoothed and z-scored as in
#   mackelab/smc_rnns.
# * Spike counts — macaque M1 during reaching (Stevenson et al. 2011, J Neurophysiol 106:764;
#   KordingLab/spykesML, MIT), 50 ms bins.
# * fMRI — BOLD time series of 20 regions of interest of one subject in a cognitive task with blocks
#   (Koppe et al. 2014, NeuroImage 101:236; Kramer et al. 2022, ICML), the file `fmri.npy` of
#   DurstewitzLab/ALRNN-DSR (GPL-3.0; no separate licence for the data: research and testing use only).

# %%
import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from neurodyn.analysis import find_attracting_cycles
from neurodyn.analysis.reconstruction import evaluate_reconstruction
from neurodyn.io import TimeSeries, apply_preprocessing, load_timeseries
from neurodyn.models import LeakyRNN, ShallowPLRNN
from neurodyn.training import fit_teacher_forcing, generate

TINY = os.environ.get("NEURODYN_TINY", "0") not in ("0", "")


def find_upwards(name: str) -> Path | None:
    """The first ``folder / name`` that exists, for ``folder`` = the working directory and its parents."""
    here = Path.cwd()
    return next((d / name for d in (here, *here.parents) if (d / name).exists()), None)


DATA = Path(os.environ.get("NEURODYN_DATA") or find_upwards("shared/data") or "shared/data")
REPO = find_upwards("pyproject.toml")  # the repository root's pyproject.toml, if run inside it
OUT = Path(os.environ.get("NEURODYN_OUT")  # created when the first file is written
           or (REPO.parent if REPO else Path.cwd()) / "runs" / "fit_recordings")
EPOCHS, BATCHES, BATCH = (2, 3, 8) if TINY else (60, 20, 64)
N_POINTS = 3000 if TINY else 40_000
if not DATA.is_dir():
    raise SystemExit(f"recordings not found at {DATA}; set NEURODYN_DATA to the shared data folder")
FMRI_INPUTS = os.environ.get("NEURODYN_FMRI_INPUTS")
if FMRI_INPUTS and not Path(FMRI_INPUTS).is_file():
    raise SystemExit(f"NEURODYN_FMRI_INPUTS names {FMRI_INPUTS}, which is not a file; fix or unset it")
scores = {}

# %% [markdown]
# ## ECG: delay embedding and a clipped shallow PLRNN
# One lead of the ECG (700 Hz), low-passed at 15 Hz without phase shift (so that the sharp QRS complex
# does not alias), embedded with the PECUZAL lags 0, 10, 20, 55 and 68 samples, then every 16th sample
# kept (43.75 Hz) so that a 60-step training window spans more than one heartbeat (about 43 steps).
# Ten latent units, five of them observed, give the model memory beyond the embedding. The fitted
# model's attractor is identified exactly: `find_attracting_cycles` follows the orbit from the
# data-inferred state until it returns to itself and solves the cycle of the linear regions it visited;
# a stable k-cycle has all monodromy eigenvalues inside the unit circle. When no orbit closes, the
# largest Lyapunov exponent (`lyapunov_spectrum`, nats per step) tells chaos (> 0) from a quasi-periodic
# orbit (≈ 0).

# %%
lags = [0, 10, 20, 55, 68]
ecg_raw = [TimeSeries.from_arrays(np.load(DATA / "ecg_pecuzal5d" / f"ECG_pecuzal_5d_{part}.npy")[:n, :1],
                                  dt=1 / 700, channel_names=["ecg"])
           for part, n in (("train", 3000 if TINY else None), ("test", 1500 if TINY else None))]
train = ecg_raw[0].lowpass(15.0).delay_embed(lags).downsample(16).standardize()
test = apply_preprocessing(ecg_raw[1], train.preprocessing)  # the training statistics, replayed
model = ShallowPLRNN(0, 10, 5, n_hidden=8 if TINY else 50, clipped=True, seed=0)
fit = fit_teacher_forcing(model, train, observation="identity", alpha=0.15, n_epochs=2 if TINY else 200,
                          batches_per_epoch=BATCHES, batch_size=BATCH, seq_len=60, lr=1e-2, lr_end=1e-4,
                          progress=not TINY, seed=0)
ecg = evaluate_reconstruction(fit.model, train.values, test.values, observation="identity",
                              n_transient=200 if TINY else 1000, smoothing=2.0, n_bins=20, lyapunov=True)
scores["ECG"] = ecg
print(ecg.summary())
settled = generate(fit.model, test.values[0], 200 if TINY else 2000, observation="identity").states[-1]
cycles = find_attracting_cycles(fit.model, settled, n_transient=100 if TINY else 3000, max_order=300)
print(cycles.summary())


def dominant_period(x: np.ndarray, lo: int = 20, hi: int = 80) -> int:
    """Lag of the highest autocorrelation peak in [lo, hi) time steps."""
    x = x - x.mean()
    ac = np.correlate(x, x, "full")[len(x) - 1:] / np.arange(len(x), 0, -1)
    return lo + int(np.argmax(ac[lo:hi]))


def attractor_kind(cycles, max_lyapunov: float, amplitude: float, tol: float = 0.01) -> str:
    """Name what the orbit settled on: an exact cycle, a fixed point, chaos or a quasi-periodic orbit."""
    if cycles.n_cycles:
        k, rho = int(cycles.order[0]), float(np.abs(cycles.eigenvalues[0]).max())
        if k == 1:
            return f"fixed point (max |eigenvalue| {rho:.2f})"
        return f"limit cycle, an exact {cycles.stability[0]} {k}-cycle (max |eigenvalue| {rho:.2f})"
    if amplitude < 1e-3:
        return "fixed point"
    return "chaotic attractor" if max_lyapunov > tol else "quasi-periodic orbit"


period_data, period_gen = dominant_period(test.values[:, 0]), dominant_period(ecg.generated[:, 0])
amplitude = float(ecg.generated[-500:, 0].std())
ecg_kind = attractor_kind(cycles, ecg.max_lyapunov, amplitude)
period = (f"no oscillation left (the data's period is {period_data} steps)" if ecg_kind.startswith("fixed")
          or amplitude < 1e-3 else f"period {period_gen} steps generated vs {period_data} in the data "
          f"({period_gen * 16 / 700:.3f} s vs {period_data * 16 / 700:.3f} s)")
print(f"ECG attractor: {ecg_kind}; max Lyapunov exponent {ecg.max_lyapunov:.4f} per step; {period}")

# %%
fig, axes = plt.subplots(1, 2, figsize=(10, 4))
axes[0].plot(test.values[:200, 0], label="held-out data")
axes[0].plot(ecg.generated[:200, 0], label="generated (free run)")
axes[0].set(xlabel="time step (22.9 ms)", ylabel="ECG (z-scored)", title="ECG: time course")
axes[0].legend()
axes[1].plot(test.values[:, 0], test.values[:, 2], lw=0.3, label="data")
if cycles.n_cycles:
    loop = np.vstack([cycles.states, cycles.states[:1]])  # identity readout: units 0-4 are observed
    axes[1].plot(loop[:, 0], loop[:, 2], "o-", ms=2, lw=1.0, label=f"exact {cycles.order[0]}-cycle")
else:
    axes[1].plot(ecg.generated[-300:, 0], ecg.generated[-300:, 2], lw=1.0, label="fitted attractor")
axes[1].set(xlabel="x(t)", ylabel="x(t - 20 samples)", title=ecg_kind.split(" (")[0])
axes[1].legend()
fig.tight_layout()
OUT.mkdir(parents=True, exist_ok=True)
fig.savefig(OUT / "ecg_attractor.png", dpi=120)
print(f"wrote {OUT / 'ecg_attractor.png'}")

# %% [markdown]
# ## EEG: 64 channels, an affine observation model
# A 16-dimensional latent shPLRNN observed through a learned affine map; D_stsp uses the Gaussian
# mixture estimate for this many channels.

# %%
eeg = load_timeseries(DATA / "eeg_physionet_eegmmidb_s001r01" / "EEG_data_smoothed.npy", dt=1 / 160)
eeg_train, eeg_test = eeg.split(0.8)
eeg_train = eeg_train.standardize()
rec = eeg_train.preprocessing[-1]
eeg_test = eeg_test.standardize(rec["mean"], rec["std"])
model = ShallowPLRNN(0, 16, eeg.n_channels, n_hidden=8 if TINY else 256, clipped=True, seed=0)
fit = fit_teacher_forcing(model, eeg_train, observation="affine", alpha=0.1, n_epochs=EPOCHS,
                          batches_per_epoch=BATCHES, batch_size=BATCH, seq_len=50, lr=1e-3, lr_end=1e-5,
                          progress=not TINY, seed=0)
scores["EEG"] = evaluate_reconstruction(fit.model, eeg_train.values, eeg_test.values, observation="affine",
                                        n_transient=100 if TINY else 500, smoothing=2.0, method="gmm")
print(scores["EEG"].summary())

# %% [markdown]
# ## Spike counts: Poisson observation model
# The 20 most active M1 units in 50 ms bins; rates are `softplus(B z + b)` of a small latent model.

# %%
m1 = load_timeseries(DATA / "reaching_m1_s1_spykesml" / "m1_stevenson_2011.mat", key="spikes",
                     transpose=True, dt=0.05, drop_constant=True)
top = np.argsort(m1.values.mean(0))[::-1][:20]
counts = m1.select_channels(sorted(top.tolist())).time_slice(0, N_POINTS // 4 if TINY else m1.n_steps)
spk_train, spk_test = counts.split(0.8)
model = LeakyRNN(0, 8, counts.n_channels, activation="tanh", seed=0) if TINY else ShallowPLRNN(
    0, 8, counts.n_channels, n_hidden=64, clipped=True, seed=0)
fit = fit_teacher_forcing(model, spk_train, observation="poisson", alpha=0.5, n_epochs=EPOCHS,
                          batches_per_epoch=BATCHES, batch_size=BATCH, seq_len=40, lr=5e-3, lr_end=1e-4,
                          progress=not TINY, seed=0)
scores["M1 spikes"] = evaluate_reconstruction(fit.model, spk_train.values, spk_test.values,
                                              observation="poisson", n_transient=100, pe_steps=5,
                                              smoothing=2.0, method="gmm")
print(scores["M1 spikes"].summary())

# %% [markdown]
# ## fMRI: 20 BOLD time series
# The file holds only the BOLD signals, shape (time, ROI) = (360, 20): five blocks of 72 scans (TRs)
# concatenated, each ROI z-scored. It has **no task-input columns**; the stimulus and task regressors of
# the study exist only in the MATLAB file of the same folder, which has no stated licence and is not
# used here. The model is therefore fitted without external inputs (`n_inputs = 0`). A `TimeSeries`
# with inputs `(time, input)` would be fed to the model by `fit_teacher_forcing` at every step, and
# `generate(..., inputs=...)` takes the inputs of the generated steps. The first four blocks train, the
# last block (72 scans) is held out; D_H uses the smoothing 1.0 of the AL-RNN benchmark.

# %%
bold = TimeSeries.from_arrays(np.load(DATA / "fmri_koppe_nback" / "fmri_alrnn_example.npy"),
                              channel_names=[f"roi{i}" for i in range(20)])
bold_train, bold_test = bold.split(0.8)
bold_train = bold_train.standardize()
rec = bold_train.preprocessing[-1]
bold_test = bold_test.standardize(rec["mean"], rec["std"])
model = ShallowPLRNN(bold.n_inputs, 20, 20, n_hidden=8 if TINY else 64, clipped=True, seed=0)
fit = fit_teacher_forcing(model, bold_train, observation="identity", alpha=0.2, n_epochs=2 if TINY else 20,
                          batches_per_epoch=BATCHES, batch_size=32, seq_len=30, lr=5e-3, lr_end=1e-4,
                          progress=not TINY, seed=0)
scores["fMRI"] = evaluate_reconstruction(fit.model, bold_train.values, bold_test.values,
                                         observation="identity", n_transient=100 if TINY else 500,
                                         pe_steps=5, smoothing=1.0, method="gmm")
print(scores["fMRI"].summary())

# %% [markdown]
# ## fMRI with task inputs (a file you supply)
# The study's stimulus inputs (5 binary regressors per scan: triangle, square and three task
# instructions) are only in `NBKO_PLRNN_dataset.mat` (Kramer et al. 2022), which has no stated licence,
# so this section runs only when `NEURODYN_FMRI_INPUTS` names a copy you may use: that `.mat` (subject 6
# is read) or a `.npz` with `bold` (block, scan, roi) and `inputs` (block, scan, input). Blocks 1-4
# train, block 5 is held out. The model receives the inputs at every step; its free run is driven by
# the held-out block's inputs from the block's first scan and scored, after 5 scans, against a linear
# ARX model `x' = A x + C u' + c` fitted by least squares and the mean.

# %%
if FMRI_INPUTS:
    if FMRI_INPUTS.endswith(".mat"):
        from scipy.io import loadmat

        subject = loadmat(FMRI_INPUTS, squeeze_me=True)["Data"][6]
        blocks = [np.stack([b.T for b in subject[key].item()]).astype(float) for key in ("X", "Inp")]
    else:
        with np.load(FMRI_INPUTS) as f:
            blocks = [f["bold"].astype(float), f["inputs"].astype(float)]
    driven = TimeSeries.from_arrays(blocks[0][:4], inputs=blocks[1][:4]).standardize()
    rec = driven.preprocessing[-1]
    x_test = (blocks[0][4] - rec["mean"]) / rec["std"]
    model = ShallowPLRNN(driven.n_inputs, driven.n_channels, driven.n_channels, n_hidden=8 if TINY else 64,
                         clipped=True, seed=0)
    fit = fit_teacher_forcing(model, driven, observation="identity", alpha=0.2, n_epochs=2 if TINY else 60,
                              batches_per_epoch=BATCHES, batch_size=32, seq_len=30, lr=5e-3, lr_end=1e-4,
                              progress=not TINY, seed=0)
    scores["fMRI + inputs"] = evaluate_reconstruction(
        fit.model, driven.data.reshape(-1, driven.n_channels), x_test, observation="identity",
        inputs_train=driven.inputs.reshape(-1, driven.n_inputs), inputs_test=blocks[1][4], n_transient=5,
        pe_steps=3, smoothing=1.0, method="gmm")
    print(scores["fMRI + inputs"].summary())
else:
    print("fMRI with task inputs skipped: set NEURODYN_FMRI_INPUTS to the study's .mat or a .npz "
          "with 'bold' and 'inputs'")

# %% [markdown]
# ## Summary
# Lower is better for all three measures. D_stsp and D_H compare free runs with held-out data
# (phase-free), PE(n) the n-step-ahead predictions from data-inferred states.

# %%
lines = ["| data | model | D_stsp | D_H | PE(n) |", "|---|---|---|---|---|"]
for name, res in scores.items():
    for i, m in enumerate(res.models):
        lines.append(f"| {name} | {m} | {res.d_stsp[i]:.3f} | {res.d_h[i]:.3f} | {res.pe[i]:.3f} |")
table = "\n".join(lines)
(OUT / "scores.md").write_text(table + "\n")
print(table)
print(f"wrote {OUT / 'scores.md'}")
