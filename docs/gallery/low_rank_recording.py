# %% [markdown]
# # Maximum-entropy loadings of a network fitted to macaque M1
#
# Spike counts of 171 units in primary motor cortex during centre-out reaching (Stevenson et al. 2011,
# *J Neurophysiol* 106:764; via KordingLab/spykesML, MIT) are binned into 100 ms bins, square-rooted,
# smoothed (Gaussian, sd 1.5 bins), z-scored on the training part (the first 80 % of the time) and
# scaled by 1/4 into tanh's range. A rank-2 tanh `LowRankRNN` with one unit per recorded unit
# (α = 0.2, i.e. τ = 500 ms) is fitted by generalized teacher forcing (identity observation), its
# identifiable statistics are computed (`compute_low_rank_statistics`), and the maximum-entropy law of
# its loadings that keeps its latent dynamics is fitted (`fit_maxent_loadings`). Networks sampled from
# the law are set beside the fitted one on the held-out part: stable points of the latent map, and
# k-step prediction of the held-out latent trajectory `κ = nᵀx / N` (R²). Controls: the fitted network
# with `n` shuffled across units (keeps every marginal, breaks `E[n | m, b]`) and persistence
# (`κ[t+k] = κ[t]`).
#
# The recording is read from `NEURODYN_DATA` or a `shared/data` folder (see
# `neurodyn.io.find_recordings`); a clone without it fits synthetic Poisson counts driven by a slow
# rotation instead and says so. It runs at a small size when the site is built (the 30 most active
# units, the first 1,500 bins, 2 × 3 training batches of 8 windows, 20 flow epochs, 8 check networks,
# 2 sampled networks); set `NEURODYN_FULL=1` for every unit with spikes in both parts (up to 171), 60 ×
# 20 batches of 32 windows of 30 bins, 100 flow epochs, 32 check networks and 5 sampled networks, the
# sizes whose numbers the guide's page "Low-rank inference" reports, `NEURODYN_RANK` for another rank
# (default 2) and `NEURODYN_SEED` for another seed (default 0).
# `python examples/low_rank_recording.py [--tiny] [--data-dir DIR] [--rank R] [--out-dir OUT]` runs
# this page from the command line and writes `results.json`, the law (`maxent.pt`) and the figure
# into `OUT`.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
import torch

from neurodyn.analysis import find_fixed_points
from neurodyn.analysis.low_rank import compute_low_rank_statistics, fit_maxent_loadings, latent_map
from neurodyn.io import TimeSeries, find_recordings, load_timeseries
from neurodyn.models import LowRankRNN
from neurodyn.training import fit_teacher_forcing

full = os.environ.get("NEURODYN_FULL") == "1"
rank = int(os.environ.get("NEURODYN_RANK") or 2)
seed = int(os.environ.get("NEURODYN_SEED") or 0)
size = (dict(n_units=171, n_bins=None, n_epochs=60, batches_per_epoch=20, batch_size=32, flow_epochs=100,
             n_samples=5, n_check=32) if full else
        dict(n_units=30, n_bins=1500, n_epochs=2, batches_per_epoch=3, batch_size=8, flow_epochs=20,
             n_samples=2, n_check=8))
ALPHA = 0.2  # dt / tau with 100 ms bins and tau = 500 ms
HORIZONS = (1, 5, 10)  # prediction horizons, in 100 ms bins
torch.set_num_threads(1)  # every matrix here is small: more threads only contend

folder = find_recordings("reaching_m1_s1_spykesml",
                         stand_in="synthetic Poisson counts instead of the M1 recording")
if folder is not None:
    source = str(folder / "m1_stevenson_2011.mat")
    raw = load_timeseries(source, key="spikes", transpose=True, dt=0.05, drop_constant=True)
else:
    source = "synthetic counts (recording not found)"
    gen = np.random.default_rng(0)
    drive = np.sin(2 * np.pi * np.arange(16000)[:, None] / 40 + gen.uniform(0, 2 * np.pi, 60))
    raw = TimeSeries.from_arrays(gen.poisson(np.exp(drive - 1.0)).astype(float), dt=0.05)

# %% [markdown]
# ## Binning and smoothing
#
# The most active units with spikes in both parts; the last 20 % of the time is held out.

# %%
def preprocess(raw: TimeSeries, *, n_units: int, n_bins: int | None) -> tuple[TimeSeries, TimeSeries]:
    """Bin (100 ms), take square roots, smooth (Gaussian, sd 1.5 bins), z-score on the training part
    and scale by 1/4; returns (train, test) series of the ``n_units`` most active units."""
    counts = raw.values if n_bins is None else raw.values[: 2 * n_bins]
    t = counts.shape[0] // 2
    binned = counts[: 2 * t].reshape(t, 2, counts.shape[1]).sum(1).astype(np.float64)
    lags = np.arange(-5, 6)
    kernel = np.exp(-0.5 * (lags / 1.5) ** 2)
    smooth = np.stack([np.convolve(np.sqrt(c), kernel / kernel.sum(), mode="same") for c in binned.T], 1)
    split = int(0.8 * t)
    active = (smooth[:split].std(0) > 0) & (smooth[split:].std(0) > 0)  # spikes in both parts
    top = np.sort(np.flatnonzero(active)[np.argsort(binned[:, active].mean(0))[::-1][:n_units]])
    smooth = smooth[:, top]
    mean, std = smooth[:split].mean(0), smooth[:split].std(0)
    x = (smooth - mean) / std / 4.0
    names = [raw.channel_names[i] for i in top]
    return (TimeSeries.from_arrays(x[:split], dt=0.1, channel_names=names, source=source),
            TimeSeries.from_arrays(x[split:], dt=0.1, channel_names=names, source=source))


train, test = preprocess(raw, n_units=size["n_units"], n_bins=size["n_bins"])
n = train.n_channels
print(f"{source}: {n} units, {train.n_steps} training and {test.n_steps} held-out bins of 100 ms")

# %% [markdown]
# ## The fit, its identifiable statistics and the max-ent law

# %%
model = LowRankRNN(0, n, n, rank=rank, alpha=ALPHA, seed=seed)
fit = fit_teacher_forcing(model, train, observation="identity", alpha=0.2, n_epochs=size["n_epochs"],
                          batches_per_epoch=size["batches_per_epoch"],
                          batch_size=size["batch_size"], seq_len=30, lr=1e-2, lr_end=1e-4, progress=False,
                          seed=seed)
fit.raise_if_diverged()
fitted = fit.model.double()
stats = compute_low_rank_statistics(fitted)
law = fit_maxent_loadings(fitted, seed=seed, n_epochs=size["flow_epochs"], n_check=size["n_check"])
nets = [law.sample_network(seed=100 + s) for s in range(size["n_samples"])]
n_vec = fitted.loadings().double()[:, rank:2 * rank]
kappa = torch.as_tensor(test.values, dtype=torch.float64) @ n_vec / n  # held-out latent path (time, rank)
print(f"{n} units, rank {rank}: fit {fit.status}, max-ent {law.status} (error {law.dynamics_error:.3f}, "
      f"tolerance {law.tolerance:.3f}, s = {law.residual_scale.round(3)})")

# %% [markdown]
# ## The fitted network, the sampled ones and the controls on the held-out part

# %%
def predict(model: LowRankRNN, kappa: torch.Tensor, k: int) -> torch.Tensor:
    """``k`` steps of the model's latent map from each ``kappa[t]``: predictions of ``kappa[t + k]``."""
    pred = kappa[:-k]
    for _ in range(k):
        pred = latent_map(model, pred)
    return pred


def r2(pred: torch.Tensor, target: torch.Tensor) -> float:
    return float(1 - (pred - target).pow(2).sum() / (target - target.mean(0)).pow(2).sum())


def stable_points(model: LowRankRNN, kappa: torch.Tensor) -> np.ndarray:
    """Stable fixed points (point, rank) of the latent map, from 64 starts spread over the data's range."""
    lo, hi = kappa.min(0).values.numpy(), kappa.max(0).values.numpy()
    starts = lo + (hi - lo) * np.random.default_rng(0).uniform(-0.5, 1.5, (64, model.rank))
    res = find_fixed_points(lambda h, u: latent_map(model, h), state_size=model.rank, initial_states=starts,
                            seed=0)
    fp = res.fixed_points()
    return np.asarray(fp.states[fp.stability == "stable"], dtype=np.float64).reshape(-1, model.rank)


def shuffled(model: LowRankRNN, seed: int = 0) -> LowRankRNN:
    """The network with ``n`` permuted across units: same marginals, no ``E[n | m, b]`` structure."""
    rows = model.loadings().double()
    perm = torch.as_tensor(np.random.default_rng(seed).permutation(rows.shape[0]))
    rows[:, model.rank:2 * model.rank] = rows[perm, model.rank:2 * model.rank]
    return LowRankRNN.from_loadings(rows, rank=model.rank, alpha=model.alpha).double()


def summarise(model: LowRankRNN) -> dict:
    pts = stable_points(model, kappa)
    return {"r2": {k: r2(predict(model, kappa, k), kappa[k:]) for k in HORIZONS}, "n_stable": int(len(pts)),
            "stable_points": pts.round(4).tolist()}


results = {
    "scale": {"n_units": n, "n_bins_train": train.n_steps, "n_bins_test": test.n_steps, "rank": rank,
              "bin_ms": 100, **{k: v for k, v in size.items() if k not in ("n_units", "n_bins")}},
    "fit": {"status": fit.status, "final_loss": float(fit.history["loss"][-1])},
    "unidentified_fraction_n": np.asarray(stats.unidentified_fraction).round(4).tolist(),
    "maxent": {"status": law.status, "tolerance": law.tolerance, "dynamics_error": law.dynamics_error,
               "residual_scale": law.residual_scale.tolist(), "entropy": law.entropy,
               "fitted_n_sd": n_vec.std(0).tolist()},
    "persistence_r2": {k: r2(kappa[:-k], kappa[k:]) for k in HORIZONS},
    "fitted": summarise(fitted),
    "shuffled_n": summarise(shuffled(fitted, seed)),
    "samples": [summarise(net) for net in nets],
}
for name in ("fitted", "shuffled_n"):
    print(f"{name:>10}: R2 {results[name]['r2']}, {results[name]['n_stable']} stable points")
for i, s in enumerate(results["samples"]):
    print(f"{'sample ' + str(i):>10}: R2 {s['r2']}, {s['n_stable']} stable points")
print(f"persistence R2 {results['persistence_r2']}")

# %% [markdown]
# ## The figure
#
# Held-out κ₀ with 5-step predictions of the fitted and of a sampled network; the per-unit loadings of
# both; the stable points of their latent maps over the held-out trajectory.

# %%
k = 5
fig, ax = plt.subplots(1, 3, figsize=(13, 3.8), layout="constrained")
t = np.arange(kappa.shape[0]) * 0.1
show = slice(0, min(600, kappa.shape[0]))
ax[0].plot(t[show], kappa[show, 0], color="k", lw=1, label="held-out data")
for model, name, color in ((fitted, "fitted", "C0"), (nets[0], "max-ent sample", "C1")):
    ax[0].plot(t[k:][show], predict(model, kappa, k)[show, 0], color=color, lw=1, label=f"{name}, {k}-step")
ax[0].set(xlabel="time (s)", ylabel="kappa_0 = n_0 . x / N", title="held-out latent trajectory")
ax[0].legend(fontsize=7)
fr, sr = fitted.loadings().double(), nets[0].loadings().double()
ax[1].scatter(fr[:, 0], fr[:, rank], s=8, label="fitted network", color="C0")
ax[1].scatter(sr[:, 0], sr[:, rank], s=8, label="sampled network", color="C1", alpha=0.6)
ax[1].set(xlabel="m_0", ylabel="n_0", title="per-unit loadings")
ax[1].legend(fontsize=7)
ax[2].plot(kappa[:, 0], kappa[:, -1], color="0.7", lw=0.5)
fp = np.asarray(results["fitted"]["stable_points"]).reshape(-1, rank)
ax[2].scatter(fp[:, 0], fp[:, -1], s=80, marker="o", facecolor="none", edgecolor="C0", label="fitted",
              zorder=3)
for i, s in enumerate(results["samples"]):
    sp = np.asarray(s["stable_points"]).reshape(-1, rank)
    ax[2].scatter(sp[:, 0], sp[:, -1], s=20, marker="x", color="C1", label="sampled" if i == 0 else None,
                  zorder=3)
ax[2].set(xlabel="kappa_0", ylabel=f"kappa_{rank - 1}", title="stable points of the latent map")
ax[2].legend(fontsize=7)
plt.show()
