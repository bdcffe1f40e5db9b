# %% [markdown]
# # Lyapunov spectra: a chaotic and a stable network
#
# A random rate network `h ← tanh(W h)` with weights `W ~ N(0, g²/N)` is silent for gain `g < 1` and
# chaotic for `g > 1` (Sompolinsky, Crisanti & Sommers 1988, *Physical Review Letters* 61:259). The
# Lyapunov spectrum tells the two apart: `lyapunov_spectrum` propagates tangent vectors with the
# one-step Jacobians and re-orthonormalises them by QR (Benettin et al. 1980, *Meccanica* 15:9;
# Eckmann & Ruelle 1985, *Reviews of Modern Physics* 57:617). A positive largest exponent means
# chaos; the Kaplan–Yorke dimension (Kaplan & Yorke 1979) counts how many directions the attractor
# spreads along. The page runs a 32-unit network for 2,000 steps when the site is built; set
# `NEURODYN_FULL=1` for 128 units and 20,000 steps.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np

from neurodyn.analysis import lyapunov_spectrum
from neurodyn.models import LeakyRNN

full = os.environ.get("NEURODYN_FULL") == "1"
n_units, n_steps = (128, 20_000) if full else (32, 2_000)


def network(gain):
    """A discrete-time (alpha = 1) tanh network with recurrent weights N(0, gain² / n_units)."""
    return LeakyRNN(0, n_units, 1, alpha=1.0, gain=gain, seed=0)


spectra = {label: lyapunov_spectrum(network(g), n_steps=n_steps, n_transient=500, seed=0)
           for label, g in (("stable, g = 0.5", 0.5), ("chaotic, g = 2.5", 2.5))}
for label, result in spectra.items():
    print(f"{label}: λ1 = {result.max_exponent[0]:+.3f} per step, "
          f"Kaplan–Yorke dimension {result.kaplan_yorke_dimension()[0]:.2f}, status {result.status[0]}")

# %% [markdown]
# ## The transition to chaos
#
# The largest exponent and the Kaplan–Yorke dimension over a range of gains (shorter runs). Below
# `g = 1` the origin attracts everything (λ1 < 0, dimension 0); just above it a network this small
# often settles on a limit cycle or torus first (λ1 ≈ 0), and chaos (λ1 > 0, a dimension of several
# units) takes over as the gain grows.

# %%
gains = np.array([0.5, 1.0, 1.5, 2.0, 2.5, 3.0])
sweep = [lyapunov_spectrum(network(g), n_steps=n_steps // 2, n_transient=250, seed=0) for g in gains]
lam1 = np.array([r.max_exponent[0] for r in sweep])
dim = np.array([r.kaplan_yorke_dimension()[0] for r in sweep])
print(" gain   λ1 (per step)   Kaplan–Yorke dim")
for g, l1, d in zip(gains, lam1, dim):
    print(f"{g:5.1f}   {l1:+13.3f}   {d:16.2f}")

# %%
fig, axes = plt.subplots(1, 3, figsize=(11, 3.2), layout="constrained")
for label, result in spectra.items():
    axes[0].plot(np.arange(1, n_units + 1), result.exponents[0], ".-", label=label)
    axes[1].plot(result.steps, result.running[0, :, 0], label=label)
axes[0].axhline(0, color="k", lw=0.8)
axes[0].set(xlabel="exponent index", ylabel="λ (nats per step)", title="spectrum")
axes[0].legend(fontsize=8)
axes[1].axhline(0, color="k", lw=0.8)
axes[1].set(xlabel="steps", ylabel="running estimate of λ1", title="convergence")
axes[2].plot(gains, lam1, "o-", color="C3", label="λ1")
axes[2].axhline(0, color="k", lw=0.8)
axes[2].axvline(1, color="0.6", ls=":")
axes[2].set(xlabel="gain g", ylabel="λ1 (nats per step)", title="against the gain")
twin = axes[2].twinx()
twin.plot(gains, dim, "s--", color="C2", label="Kaplan–Yorke dimension")
twin.set_ylabel("Kaplan–Yorke dimension", color="C2")
plt.show()
