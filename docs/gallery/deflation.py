# %% [markdown]
# # Similarity deflation: a second, different solution
#
# Iterative neural similarity deflation (Qian & Pehlevan 2025) trains network k on the task while
# penalising how well the hidden states of networks 0 … k−1 linearly predict its own:
# `task loss + λ · R²(h_k | h_0 … h_{k−1}) + activity penalty · mean(h_k²)`. The activity penalty closes
# the loophole of inflating task-irrelevant variance; `compare_to_references` checks the result on
# held-out trials with cross-validated predictivity, CKA and Procrustes side by side. Here network 0 is
# trained normally on the 2-bit flip-flop, network 1 with deflation against it, and network 2 normally
# from another seed for comparison. The page trains 10-unit networks for 100 iterations when the site
# is built; set `NEURODYN_FULL=1` for 32 units and 1,500 iterations.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
import torch

import neurodyn
from neurodyn.analysis import compare_to_references
from neurodyn.models import LeakyRNN
from neurodyn.tasks import FlipFlop
from neurodyn.training import train_deflated

full = os.environ.get("NEURODYN_FULL") == "1"
task = FlipFlop(n_bits=2, n_steps=64 if full else 24, p_pulse=0.1)
n_units = 32 if full else 10
settings = {"n_iterations": 1500 if full else 100, "batch_size": 64 if full else 32, "lr": 1e-2,
            "progress": False, "eval_every": 0}


def net(seed):
    return LeakyRNN(task.n_inputs, n_units, task.n_outputs, alpha=0.5, seed=seed)


net0 = neurodyn.train(net(0), task, seed=0, **settings).model
deflated = train_deflated(net(1), task, reference_models=[net0], lam=1.0, ridge=0.1,
                          activity_penalty=1e-2, seed=1, **settings).model
standard = neurodyn.train(net(2), task, seed=2, **settings).model

# %% [markdown]
# ## Against network 0, on held-out trials
#
# Predictivity is the cross-validated ridge R² of each network's states from network 0's; CKA is a
# similarity (1 = same geometry), the angular Procrustes distance a distance in radians.

# %%
scores = {name: compare_to_references(model, [net0], task, n_trials=32, seed=12345)
          for name, model in (("deflated (net 1)", deflated), ("standard (net 2)", standard))}
keys = sorted(scores["standard (net 2)"])
print(f"{'measure':<22}" + "".join(f"{name:>18}" for name in scores))
for key in keys:
    print(f"{key:<22}" + "".join(f"{scores[name][key]:18.3f}" for name in scores))

# %% [markdown]
# ## The figure
#
# Left: the three measures for both networks. Right: one held-out trial's hidden states of each
# network, projected on its own first two principal components.

# %%
measures = [k for k in ("predictivity", "cka", "procrustes") if k in keys]
fig, axes = plt.subplots(1, 4, figsize=(13, 3.2), layout="constrained")
x = np.arange(len(measures))
for i, (name, score) in enumerate(scores.items()):
    axes[0].bar(x + 0.4 * i - 0.2, [score[m] for m in measures], width=0.4, label=name)
axes[0].set_xticks(x, measures)
axes[0].set_title("against network 0")
axes[0].legend(fontsize=8)
batch = task.sample(1, seed=7)
for ax, (title, model) in zip(axes[1:], (("network 0", net0), ("network 1 (deflated)", deflated),
                                          ("network 2 (standard)", standard))):
    with torch.no_grad():
        h = model(torch.as_tensor(batch.inputs), noise=False).states[0].numpy()  # (time, unit)
    h = h - h.mean(axis=0)
    pcs = h @ np.linalg.svd(h, full_matrices=False)[2][:2].T
    ax.plot(pcs[:, 0], pcs[:, 1], ".-", lw=0.8, ms=3)
    ax.set(title=title, xlabel="PC 1", ylabel="PC 2")
plt.show()
