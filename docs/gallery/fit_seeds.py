# %% [markdown]
# # Reconstruction scores over seeds, with confidence intervals: ECG and Lorenz-63
#
# Fits a clipped shallow PLRNN by generalized teacher forcing (Hess, Monfared, Brenner & Durstewitz,
# ICML 2023) with several seeds per data set, scores every fit on held-out data against the linear
# (VAR(1)) and mean baselines (`evaluate_reconstruction`) and reports the mean and a 95 % Student-t
# confidence interval over seeds of D_stsp, D_H and PE(n), plus the binned D_stsp's saturation value
# (`state_space_divergence_max`: what any run scores that misses every cell the data visit) and the
# fitted models' largest Lyapunov exponent.
#
# * **ECG** (PPG-DaLiA, Reiss et al. 2019, as prepared for the GTF benchmark, read from `NEURODYN_DATA`
#   or a `shared/data` folder, see `neurodyn.io.find_recordings`; without it the page fits Lorenz-63
#   only and says so): the paper's model (M = 5 latent units, H = 250 hidden units, affine observation,
#   constant α = 0.3) on the preprocessing of the ECG page (15 Hz low-pass, PECUZAL delay embedding 0,
#   10, 20, 55, 68, every 16th sample kept); training is shorter than the paper's.
# * **Lorenz-63** simulated here with `scipy.integrate.solve_ivp` (σ = 10, ρ = 28, β = 8/3, sampling
#   0.01, every 5th point kept: Δt = 0.05), z-scored by the training part's statistics; clipped
#   shPLRNN M = 3, H = 100, identity observation, adaptive α from 1 (the GTF reference defaults).
#   Its largest Lyapunov exponent per unit time, λ₁ / Δt, is compared with the true system's 0.906
#   (Sprott 2003).
#
# When the site is built the page fits 3 seeds per data set for 2 epochs of 3 batches of 8 windows, with
# 8 hidden units, on short stretches of the data (seconds); set `NEURODYN_FULL=1` for the sizes of the
# guide's table (the whole files, the sizes above; at the default 300 epochs about 1.5 CPU-minutes per
# ECG fit and 1 per Lorenz-63 fit). `NEURODYN_SEEDS` sets the number of
# seeds (default 5 at full size), `NEURODYN_EPOCHS` the training length at full size (default 300 epochs
# of 20 batches of 64 windows), `NEURODYN_ONLY` one data set ("ECG" or "Lorenz-63"), and
# `NEURODYN_FITS` a folder of finished fits to reuse. `python examples/dsr_seeds.py [--tiny]
# [--out-dir DIR]` runs this page from the command line (full size unless `--tiny`), stores every fit in
# `DIR/fits` as it finishes (a rerun resumes) and writes the scores (`dsr_seeds.nc`, dims `data`,
# `seed`, `model`), the table (`dsr_seeds.md`) and the figure (`dsr_seeds.png`) into `DIR`.

# %%
import json
import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import scipy.stats
import xarray as xr

from neurodyn.analysis.reconstruction import evaluate_reconstruction, lorenz63
from neurodyn.io import TimeSeries, apply_preprocessing, find_recordings
from neurodyn.models import ShallowPLRNN
from neurodyn.training import fit_teacher_forcing

full = os.environ.get("NEURODYN_FULL") == "1"
n_seeds = int(os.environ.get("NEURODYN_SEEDS", "5" if full else "3"))
epochs = int(os.environ.get("NEURODYN_EPOCHS", "300")) if full else 2
batches, batch_size = (20, 64) if full else (3, 8)
only = os.environ.get("NEURODYN_ONLY", "")
fits_dir = Path(os.environ["NEURODYN_FITS"]) if os.environ.get("NEURODYN_FITS") else None

# %% [markdown]
# ## The data sets and fit settings

# %%
setups = {}
ecg_dir = find_recordings("ecg_pecuzal5d", stand_in="Lorenz-63 only")
if ecg_dir is not None and only in ("", "ECG"):
    ecg_raw = [TimeSeries.from_arrays(np.load(ecg_dir / f"ECG_pecuzal_5d_{part}.npy")[:n, :1], dt=1 / 700)
               for part, n in (("train", None if full else 4000), ("test", None if full else 3000))]
    ecg_train = ecg_raw[0].lowpass(15.0).delay_embed([0, 10, 20, 55, 68]).downsample(16).standardize()
    ecg_test = apply_preprocessing(ecg_raw[1], ecg_train.preprocessing)
    setups["ECG"] = dict(train=ecg_train.values, test=ecg_test.values, latent=5, hidden=250 if full else 8,
                         observation="affine", fit=dict(alpha=0.3), pe_steps=20, dt=16 / 700)
if only in ("", "Lorenz-63"):
    lorenz = TimeSeries.from_arrays(lorenz63(75_000 if full else 3000)[::5], dt=0.05)
    lorenz_train, lorenz_test = lorenz.split(2 / 3)  # split first: the z-score uses the training part only
    lorenz_train = lorenz_train.standardize()
    lorenz_test = apply_preprocessing(lorenz_test, lorenz_train.preprocessing)
    setups["Lorenz-63"] = dict(train=lorenz_train.values, test=lorenz_test.values, latent=3,
                               hidden=100 if full else 8, observation="identity",
                               fit=dict(alpha=1.0, adaptive_alpha=True), pe_steps=10, dt=0.05)
for name, s in setups.items():
    print(f"{name}: train {s['train'].shape}, test {s['test'].shape} (time, channel), step {s['dt']:.4f} s")


# %% [markdown]
# ## Fit and score every seed
#
# The free run starts at the first held-out point; `n_transient` steps are dropped before scoring. A fit
# found in `NEURODYN_FITS` (a file per data set, seed and training length) is reused instead of refitted;
# `new_fits` holds the fits made here, under the name of their file.

# %%
def fit_file(name: str, seed: int) -> str:
    """The file name of one finished fit: data set, seed and training length."""
    return f"{name}_{seed}_{epochs if full else 'tiny'}.json"


def fit_and_score(name: str, seed: int) -> dict:
    """Fit one seed to data set ``name`` and score it: the measures per model, Lyapunov exponent, status."""
    s = setups[name]
    model = ShallowPLRNN(0, s["latent"], s["train"].shape[1], n_hidden=s["hidden"], clipped=True, seed=seed)
    fit = fit_teacher_forcing(model, s["train"], observation=s["observation"], n_epochs=epochs,
                              batches_per_epoch=batches, batch_size=batch_size, seq_len=60, lr=1e-2,
                              lr_end=1e-4, progress=False, seed=seed, **s["fit"])
    res = evaluate_reconstruction(fit.model, s["train"], s["test"], observation=s["observation"],
                                  n_transient=1000 if full else 200, pe_steps=s["pe_steps"], smoothing=2.0,
                                  n_bins=20, lyapunov=True, seed=seed)
    return {"d_stsp": res.d_stsp.tolist(), "d_h": res.d_h.tolist(), "pe": res.pe.tolist(),
            "status": list(res.status), "fit_status": fit.status, "max_lyapunov": res.max_lyapunov,
            "d_stsp_max": res.settings["d_stsp_max"]}


rows, new_fits = {}, {}
for seed in range(n_seeds):
    for name in setups:
        done = fits_dir / fit_file(name, seed) if fits_dir is not None else None
        if done is not None and done.exists():
            rows[name, seed] = json.loads(done.read_text())
        else:
            rows[name, seed] = new_fits[fit_file(name, seed)] = fit_and_score(name, seed)
models = ["fitted", "linear", "mean"]
names = list(setups)
ds = xr.Dataset(
    {m: (("data", "seed", "model"), np.array([[rows[n, k][m] for k in range(n_seeds)] for n in names]))
     for m in ("d_stsp", "d_h", "pe")}
    | {v: (("data", "seed"), np.array([[rows[n, k][v] for k in range(n_seeds)] for n in names]))
       for v in ("max_lyapunov", "d_stsp_max")},
    coords={"data": names, "seed": np.arange(n_seeds), "model": models,
            "dt": ("data", [setups[n]["dt"] for n in names])},
    attrs={"n_epochs": epochs, "batches_per_epoch": batches, "batch_size": batch_size, "tiny": int(not full)},
)


# %% [markdown]
# ## Mean and 95 % confidence interval over seeds
#
# Lower is better for all three measures. The baselines do not depend on the seed.

# %%
def ci(x: np.ndarray) -> str:
    """``mean ± half-width`` of the 95 % Student-t interval of the mean over seeds."""
    x = np.asarray(x, dtype=float)
    half = scipy.stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x)) if len(x) > 1 else np.nan
    return f"{x.mean():.3f} ± {half:.3f}"


lines = ["| data | model | D_stsp | D_H | PE(n) |", "|---|---|---|---|---|"]
for n in names:
    for m in models:
        cell = ds.sel(data=n, model=m)
        lines.append(f"| {n} | {m} | {ci(cell.d_stsp)} | {ci(cell.d_h)} | {ci(cell.pe)} |")
table = "\n".join(lines)
print(table)
for n in names:
    lam = ds.max_lyapunov.sel(data=n).values
    print(f"{n}: D_stsp saturation value {float(ds.d_stsp_max.sel(data=n).mean()):.3f}; largest Lyapunov "
          f"exponent per step {ci(lam)}, per second {ci(lam / setups[n]['dt'])}; per seed "
          + ", ".join(f"{v:.4f}" for v in lam))

# %% [markdown]
# ## Every seed's scores
#
# D_stsp and D_H of each seed's fit (dots) beside the baselines (lines), per data set; the dashed line is
# D_stsp's saturation value, which a free run that misses every cell the data visit scores.

# %%
fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.2), layout="constrained")
for ax, measure in zip(axes, ("d_stsp", "d_h")):
    for i, n in enumerate(names):
        values = ds[measure].sel(data=n)
        ax.plot(np.full(n_seeds, i), values.sel(model="fitted"), "o", color="C0",
                label="fitted (per seed)" if i == 0 else None)
        for m, color in (("linear", "C1"), ("mean", "C2")):
            ax.hlines(float(values.sel(model=m).mean()), i - 0.3, i + 0.3, color=color,
                      label=m if i == 0 else None)
        if measure == "d_stsp":
            ax.hlines(float(ds.d_stsp_max.sel(data=n).mean()), i - 0.3, i + 0.3, color="k",
                      linestyle="--", label="saturation" if i == 0 else None)
    ax.set(xticks=range(len(names)), xticklabels=names, xlim=(-0.5, len(names) - 0.5),
           ylabel={"d_stsp": "D_stsp", "d_h": "D_H"}[measure])
axes[0].legend(fontsize="small")
plt.show()
