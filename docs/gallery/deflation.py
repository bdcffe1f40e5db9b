# %% [markdown]
# # Similarity deflation: solutions unlike the earlier ones
#
# Iterative neural similarity deflation (INSD; Qian & Pehlevan 2025) trains network 0 normally and each
# network k ≥ 1 on the task while penalising how well the hidden states of networks 0 … k−1 linearly
# predict its own: `task loss + λ · R²(h_k | h_0 … h_{k−1}) + activity penalty · mean(h_k²)`. The
# activity penalty closes the loophole of inflating task-irrelevant variance. Standard networks k ≥ 1
# (other seeds, no deflation) are the control. For every network, on held-out trials of the 2-bit
# flip-flop, `compare_to_references` reports cross-validated predictivity, CKA and Procrustes distance
# from the earlier networks of the chain side by side; the page adds the cross-validated decodability of
# the two bits from the states, the task error in distribution and on the out-of-distribution variant
# (4 × longer trials, twice the pulse rate), and the stable fixed points. The task-error cost of
# deflation is the deflated networks' mean squared error over the standard ones'.
#
# When the site is built the page trains a chain of two 10-unit networks (one deflation step) and one
# standard control for 150 iterations each; set `NEURODYN_FULL=1` for a chain of three 32-unit networks
# and 1,500 iterations. `NEURODYN_DEFLATION_NETWORKS` sets the length of the chain and
# `NEURODYN_DEFLATION_LAM` the weight λ (default 1). `python examples/insd_flipflop.py [--tiny]
# [--n-networks K] [--lam L] [--out-dir DIR]` runs this page from the command line (full size unless
# `--tiny`) and writes all numbers (`insd.json`) and the figure (`insd.png`) into `DIR`.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
import torch

import neurodyn
from neurodyn.analysis import compare_to_references, compute_decodability, find_fixed_points
from neurodyn.models import LeakyRNN
from neurodyn.plotting import plot_fixed_points
from neurodyn.tasks import FlipFlop
from neurodyn.training import evaluate, train_deflation_sequence

full = os.environ.get("NEURODYN_FULL") == "1"
n_networks = int(os.environ.get("NEURODYN_DEFLATION_NETWORKS", "3" if full else "2"))  # networks 0 .. K-1
lam = float(os.environ.get("NEURODYN_DEFLATION_LAM", "1.0"))
task = FlipFlop(n_bits=2, n_steps=64 if full else 30, p_pulse=0.1)
n_units, n_inits = (32, 512) if full else (10, 128)
settings = {"n_iterations": 1500 if full else 150, "batch_size": 64 if full else 32, "lr": 1e-2,
            "progress": False, "eval_every": 0}


def net(seed):
    return LeakyRNN(task.n_inputs, n_units, task.n_outputs, alpha=0.5, seed=seed)


chain = [r.model for r in train_deflation_sequence(net, task, n_networks=n_networks, lam=lam, ridge=0.1,
                                                   activity_penalty=1e-2, seed=0, **settings)]
standards = [neurodyn.train(net(100 + k), task, seed=100 + k, **settings).model for k in range(1, n_networks)]

# %% [markdown]
# ## Every network against the earlier networks of the chain, on held-out trials
#
# Predictivity is the cross-validated ridge R² of a network's states from those of networks 0 … k−1;
# CKA is a similarity (1 = same geometry), the angular Procrustes distance a distance in radians.
# Decodability is the out-of-fold R² of each bit decoded from the states; `ood_` is the task on the
# out-of-distribution variant.


# %%
def describe(model, references):
    """Similarity to ``references`` (if any), decodability, task error in and out of distribution, and
    the fixed points (returned too, for the figure)."""
    row = (compare_to_references(model, references, task, n_trials=64, seed=12345) if references
           else {f"task_{k}": v for k, v in evaluate(model, task, n_trials=64, seed=12345).items()})
    row["decodability_r2"] = compute_decodability(model, task, n_trials=64, seed=12345).r2.values.tolist()
    row.update({f"ood_{k}": v for k, v in evaluate(model, task.ood(), n_trials=64, seed=12345).items()})
    fps = find_fixed_points(model, task=task, n_inits=n_inits, seed=0)
    row["n_stable"] = int(np.sum(fps.fixed_points().stability == "stable"))
    return row, fps


report, points = {}, {}
report["network0"], points[0] = describe(chain[0], [])
for k in range(1, n_networks):
    report[f"deflated{k}"], points[k] = describe(chain[k], chain[:k])
    report[f"standard{k}"], _ = describe(standards[k - 1], chain[:k])

columns = ("predictivity", "cka", "procrustes", "task_mse", "task_accuracy", "ood_mse", "ood_accuracy",
           "n_stable")
print(f"{'network':<12}" + "".join(f"{c:>14}" for c in columns) + "   bit decodability R²")
for name, row in report.items():
    print(f"{name:<12}" + "".join(f"{row[c]:14.3f}" if c in row else f"{'—':>14}" for c in columns[:-1])
          + f"{row['n_stable']:14d}"
          + "   " + ", ".join(f"{r:.2f}" for r in row["decodability_r2"]))

# %% [markdown]
# ## The cost of deflation
#
# The deflated networks' mean squared task error over that of the standard networks of the same steps.

# %%
mse = {kind: float(np.mean([report[f"{kind}{k}"]["task_mse"] for k in range(1, n_networks)]))
       for kind in ("deflated", "standard")}
report["cost"] = {"deflated_mse": mse["deflated"], "standard_mse": mse["standard"],
                  "mse_ratio": mse["deflated"] / mse["standard"]}
report["deflated"], report["standard"] = report["deflated1"], report["standard1"]  # the first step
report["settings"] = {"n_units": n_units, "n_steps": task.n_steps, "lam": lam, "n_networks": n_networks,
                      **{k: v for k, v in settings.items() if k != "progress"}}
print(f"deflated MSE {mse['deflated']:.3f}, standard MSE {mse['standard']:.3f}, "
      f"ratio {report['cost']['mse_ratio']:.1f}")

# %% [markdown]
# ## The figure
#
# The fixed points of network 0 (standard) and network 1 (deflated against it) in the first principal
# components of 16 task trials (grey), coloured by stability.

# %%
batch = task.sample(16, seed=3)
fig = plt.figure(figsize=(11, 5), layout="constrained")
shown = (("network 0 (standard)", chain[0]), ("network 1 (deflated)", chain[1]))
for k, (title, model) in enumerate(shown):
    with torch.no_grad():
        states = model(torch.as_tensor(batch.inputs), noise=False).states.numpy()
    ax = plot_fixed_points(points[k], trajectories=states, ax=fig.add_subplot(1, 2, k + 1, projection="3d"))
    ax.set_title(f"{title}: {report['deflated1' if k else 'network0']['n_stable']} stable points")
plt.show()
