# %% [markdown]
# # Fitting a recording: an ECG reconstructed by a shallow PLRNN
#
# Dynamical systems reconstruction fits a latent RNN to a recorded time series and judges it by the
# dynamics it generates freely, not by one-step predictions. neurodyn fits by generalized teacher
# forcing (GTF: Hess, Monfared, Brenner & Durstewitz 2023, ICML), which pulls the latent state towards
# the data-inferred one after every step, and scores the free run on held-out data with the
# state-space divergence D_stsp (Koppe et al. 2019, *PLoS Comput Biol* 15:e1007263), the power-spectrum
# distance D_H and the n-step prediction error PE(n), against a linear model and the mean.
#
# The recording is one ECG lead (PPG-DaLiA, Reiss et al. 2019, *Sensors* 19:3079, as prepared for the GTF
# benchmark in DurstewitzLab/GTF-shPLRNN, GPL-3.0), read from `NEURODYN_DATA` or a `shared/data` folder
# (see `neurodyn.io.find_recordings`). A clone without that folder fits a synthetic heartbeat-like
# signal instead and says so. The fit is tiny when the site is built (about
# 30 s of ECG, 250 batches of 16 windows, stronger forcing), so its free run is at best a rough
# oscillation, not yet at the heart's period, and its scores sit near the baselines'; set
# `NEURODYN_FULL=1` for the whole files and 200 × 20 batches of 64, the sizes whose scores and attractor
# the guide's "Fitting recordings" page reports (`python examples/fit_recordings.py` runs this page and
# the other recordings' pages at that size).

# %%
import os

import matplotlib.pyplot as plt
import numpy as np

from neurodyn.analysis import evaluate_reconstruction, find_attracting_cycles
from neurodyn.io import TimeSeries, apply_preprocessing, find_recordings
from neurodyn.models import ShallowPLRNN
from neurodyn.plotting import plot_reconstruction
from neurodyn.training import fit_teacher_forcing, generate

full = os.environ.get("NEURODYN_FULL") == "1"
ecg_dir = find_recordings("ecg_pecuzal5d",
                          stand_in="a synthetic heartbeat-like signal instead of the ECG recording")
n_train, n_test = (None, None) if full else (20_000, 10_000)  # samples at 700 Hz
if ecg_dir is not None:
    source = "ECG recording"
    raw = [np.load(ecg_dir / f"ECG_pecuzal_5d_{part}.npy")[:n, :1] for part, n in (("train", n_train),
                                                                                   ("test", n_test))]
else:
    source = "synthetic heartbeat (recording not found)"
    rng = np.random.default_rng(0)
    t = np.arange(30_000) / 700
    phase = (t / 0.98) % 1.0
    beat = (np.exp(-((phase - 0.40) / 0.012) ** 2) - 0.2 * np.exp(-((phase - 0.43) / 0.01) ** 2)
            + 0.25 * np.exp(-((phase - 0.70) / 0.05) ** 2) + 0.1 * np.exp(-((phase - 0.20) / 0.03) ** 2))
    signal = (beat + 0.01 * rng.standard_normal(len(t)))[:, None]
    raw = [signal[:20_000], signal[20_000:]]
ecg = [TimeSeries.from_arrays(x, dt=1 / 700, channel_names=["ecg"]) for x in raw]

# %% [markdown]
# ## Preprocessing and the fit
#
# Low-passed at 15 Hz without phase shift, embedded with the PECUZAL lags 0, 10, 20, 55 and 68 samples,
# then every 16th sample kept (43.75 Hz), so that a 60-step window spans more than one heartbeat. The
# held-out file is brought into the same space by replaying the recorded preprocessing steps with the
# training statistics. Ten latent units, five of them observed (identity observation), a clipped
# shallow PLRNN as in the GTF paper.

# %%
train = ecg[0].lowpass(15.0).delay_embed([0, 10, 20, 55, 68]).downsample(16).standardize()
test = apply_preprocessing(ecg[1], train.preprocessing)
print(f"{source}: {train.values.shape[0]} training and {test.values.shape[0]} held-out steps of "
      f"{train.values.shape[1]} channels, dt = {train.dt * 1e3:.1f} ms")
model = ShallowPLRNN(0, 10, 5, n_hidden=50 if full else 20, clipped=True, seed=0)
fit = fit_teacher_forcing(model, train, observation="identity", alpha=0.15 if full else 0.3,
                          n_epochs=200 if full else 25, batches_per_epoch=20 if full else 10,
                          batch_size=64 if full else 16, seq_len=60, lr=1e-2, lr_end=1e-4 if full else 1e-3,
                          progress=False, seed=0)
print(f"fit {fit.status}; loss {fit.history['loss'][0]:.3f} -> {fit.history['loss'][-1]:.3f}")

# %% [markdown]
# ## Scores of the free run
#
# The fitted model runs freely from the first held-out point; after a transient its trajectory is
# scored against the held-out data (lower is better for all three). The fitted model's largest
# Lyapunov exponent (`lyapunov=True`, nats per time step) is computed too.

# %%
scores = evaluate_reconstruction(fit.model, train.values, test.values, observation="identity",
                                 n_transient=1000 if full else 100, smoothing=2.0, n_bins=20, lyapunov=True)
print(scores.summary())

# %% [markdown]
# ## The attractor, identified exactly
#
# `find_attracting_cycles` follows the orbit from a state the free run settled on until it returns to
# itself and solves the cycle of the linear regions it visited; a stable k-cycle has all monodromy
# eigenvalues inside the unit circle. When no orbit closes, the largest Lyapunov exponent tells chaos
# (> 0) from a quasi-periodic orbit (≈ 0). The dominant period of the free run (the highest
# autocorrelation peak between 20 and 80 steps) is compared with the data's.

# %%
settled = generate(fit.model, test.values[0], 2000 if full else 200, observation="identity").states[-1]
cycles = find_attracting_cycles(fit.model, settled, n_transient=3000 if full else 100, max_order=300)
print(cycles.summary())


def dominant_period(x: np.ndarray, lo: int = 20, hi: int = 80) -> int:
    """Lag of the highest autocorrelation peak in [lo, hi) time steps."""
    x = x - x.mean()
    ac = np.correlate(x, x, "full")[len(x) - 1:] / np.arange(len(x), 0, -1)
    return lo + int(np.argmax(ac[lo:hi]))


amplitude = float(scores.generated[-500:, 0].std())
if cycles.n_cycles:
    k, rho = int(cycles.order[0]), float(np.abs(cycles.eigenvalues[0]).max())
    kind = (f"fixed point (max |eigenvalue| {rho:.2f})" if k == 1 else
            f"limit cycle, an exact {cycles.stability[0]} {k}-cycle (max |eigenvalue| {rho:.2f})")
elif amplitude < 1e-3:
    kind = "fixed point"
else:
    kind = "chaotic attractor" if scores.max_lyapunov > 0.01 else "quasi-periodic orbit"
period_data, period_gen = dominant_period(test.values[:, 0]), dominant_period(scores.generated[:, 0])
period = (f"no oscillation left (the data's period is {period_data} steps)" if kind.startswith("fixed")
          else f"period {period_gen} steps generated vs {period_data} in the data "
          f"({period_gen * train.dt:.3f} s vs {period_data * train.dt:.3f} s)")
print(f"ECG attractor: {kind}; max Lyapunov exponent {scores.max_lyapunov:.4f} per step; {period}")

# %% [markdown]
# The held-out data and the free run, with the exact cycle (when the orbit closed) in the projection
# on the present and the 20-samples-delayed coordinate.

# %%
names = ["ECG x(t)", "x(t - 10 samples)", "x(t - 20 samples)", "x(t - 55 samples)", "x(t - 68 samples)"]
axes = plot_reconstruction(scores, test.values, channels=(0, 2), dt=train.dt, channel_names=names,
                           title=f"{source}: {kind.split(' (')[0]}")
if cycles.n_cycles:
    loop = np.vstack([cycles.states, cycles.states[:1]])  # identity readout: units 0-4 are the channels
    axes[1].plot(loop[:, 0], loop[:, 2], "o-", ms=2, lw=1.0, label=f"exact {cycles.order[0]}-cycle")
    axes[1].legend()
plt.show()
