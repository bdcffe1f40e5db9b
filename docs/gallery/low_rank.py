# %% [markdown]
# # Which loadings a low-rank network needs
#
# A bistable rank-1 tanh network (α = 0.2) is the ground truth: heavy-tailed `m` (Student t, 6 degrees
# of freedom, unit variance), `n = 2.2 m + 0.5 noise`, no bias. Three sets of per-neuron loadings are
# compared: the ground truth's, a plain `LowRankRNN` fitted to its trajectories by teacher forcing
# (one unit per neuron, brought to the truth's gauge by regressing its `m` on the truth's), and a
# network sampled from the maximum-entropy law that keeps the truth's latent dynamics
# (`fit_maxent_loadings`). `compute_loading_structure` flags the correlations between loading
# components that the ground truth does not have. The page runs small (100 neurons, 20 plain-fit
# epochs, 40 flow epochs); set `NEURODYN_FULL=1` for 500 neurons, 100 and 100 epochs.
# See the guide page "Low-rank inference" for the method and the three-case table.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
import torch

from neurodyn.analysis import compute_loading_structure, fit_maxent_loadings
from neurodyn.models import LowRankRNN
from neurodyn.training import fit_teacher_forcing

full = os.environ.get("NEURODYN_FULL") == "1"
n_units, plain_epochs, flow_epochs = (500, 100, 100) if full else (100, 20, 40)
torch.set_num_threads(1)

rng = np.random.default_rng(0)
m = rng.standard_t(6, (n_units, 1)) / np.sqrt(6 / 4)
truth_rows = np.c_[m, 2.2 * m + 0.5 * rng.standard_normal((n_units, 1)), np.zeros(n_units)]
truth = LowRankRNN.from_loadings(torch.as_tensor(truth_rows), rank=1, alpha=0.2).double()

# %% [markdown]
# ## A plain fit to the truth's trajectories
#
# 16 trajectories of 60 steps from states on the truth's manifold, fitted by generalized teacher
# forcing from a random initialisation.

# %%
with torch.no_grad():
    h0 = torch.as_tensor(np.tanh(rng.uniform(-2, 2, (16, 1)) @ m.T))
    states = truth(None, h0, n_steps=60).states.float()
fit = fit_teacher_forcing(LowRankRNN(0, n_units, n_units, rank=1, alpha=0.2, seed=0), states,
                          observation="identity", alpha=0.2, n_epochs=plain_epochs, batches_per_epoch=10,
                          batch_size=16, seq_len=30, lr=5e-2, lr_end=5e-3, progress=False, seed=0)
rows = fit.model.loadings().detach().double().numpy()
q = np.linalg.lstsq(rows[:, :1], m, rcond=None)[0]  # the gauge m -> m q, n -> n / q
plain_rows = np.c_[rows[:, :1] @ q, rows[:, 1:2] / q, rows[:, 2:]]
print(f"plain fit: {fit.status}, final loss {fit.history['loss'][-1]:.4f}")

# %% [markdown]
# ## The maximum-entropy law, and the structure each set carries

# %%
law = fit_maxent_loadings(truth, n_epochs=flow_epochs, n_check=8, seed=0)
maxent_rows = law.sample_loadings(seed=1).numpy()
print(f"max-ent law: {law.status}, residual sd of n {law.residual_scale.round(2)}")
for name, rows_ in (("plain fit", plain_rows), ("max-ent sample", maxent_rows)):
    ds = compute_loading_structure(rows_, truth, seed=0)
    flagged = [f"{a}-{b} ({float(ds.corr.sel(loading=a, loading_=b)):.2f})"
               for i, a in enumerate(ds.loading.values) for b in ds.loading.values[i + 1:]
               if bool(ds.spurious.sel(loading=a, loading_=b))]
    print(f"{name}: correlations the truth lacks {flagged or 'none'} (threshold "
          f"{float(ds.corr_threshold):.2f}); excess kurtosis of m {float(ds.excess_kurtosis[0]):.2f} "
          f"(truth {float(ds.excess_kurtosis_reference[0]):.2f})")

# %%
sets = {"ground truth": truth_rows, "plain fit": plain_rows, "max-ent sample": maxent_rows}
fig, axes = plt.subplots(1, 3, figsize=(11, 3.4), layout="constrained")
for (label, r), colour in zip(sets.items(), ("k", "tab:red", "tab:blue")):
    axes[0].scatter(r[:, 0], r[:, 1], s=6, alpha=0.6, color=colour, label=label)
    axes[1].scatter(r[:, 0], r[:, 2], s=6, alpha=0.6, color=colour)
    axes[2].hist(r[:, 0], bins=30, histtype="step", density=True, color=colour)
axes[0].set(xlabel="m", ylabel="n", title="n against m")
axes[1].set(xlabel="m", ylabel="b", title="bias against m")
axes[2].set(xlabel="m", ylabel="density", title="distribution of m")
axes[0].legend(fontsize=7)
plt.show()
