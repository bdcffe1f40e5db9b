# %% [markdown]
# # Solution degeneracy across seeds and sizes
#
# Networks trained on one task from different initial weights all solve it, but do they solve it the
# same way? Huang, Singh, Martinelli & Rajan (2025, NeurIPS) measure the spread at three levels:
# behaviour (the standard deviation of the task loss across networks, in and out of distribution:
# longer trials, rarer pulses), dynamics (the mean pairwise dynamical similarity distance, DSA, of their
# hidden-state trajectories on one shared seeded batch) and weights (the mean pairwise
# permutation-invariant distance of the recurrent weights). `compute_solution_degeneracy` computes all
# three. Here one ensemble of 2-bit flip-flop networks per network size, differing only in their seed,
# is trained in one batched loop each (`train_ensemble`). The page trains 2 seeds × 8 and 12 units for
# 60 iterations when the site is built; set `NEURODYN_FULL=1` for 10 seeds × 16 and 32 units and 800
# iterations. `python examples/degeneracy_flipflop.py [--tiny] [--out-dir DIR]` runs this page from the
# command line (full size unless `--tiny`) and writes the result (`degeneracy.nc`) and the figure
# (`degeneracy.png`) into `DIR`.

# %%
import os
import warnings

import matplotlib.pyplot as plt
import numpy as np

from neurodyn.analysis import compute_solution_degeneracy, embed_distances
from neurodyn.models import LeakyRNN
from neurodyn.plotting import plot_embedding, plot_solution_degeneracy
from neurodyn.tasks import FlipFlop
from neurodyn.training import evaluate, train_ensemble

full = os.environ.get("NEURODYN_FULL") == "1"
task = FlipFlop(n_bits=2, n_steps=64 if full else 40, p_pulse=0.1)
sizes, n_seeds = ((16, 32), 10) if full else ((8, 12), 2)
models, names, size_of = [], [], []
for k, n_units in enumerate(sizes):
    seeds = [100 * k + s for s in range(n_seeds)]
    ensemble = train_ensemble(
        lambda seed, n=n_units: LeakyRNN(task.n_inputs, n, task.n_outputs, alpha=0.5, seed=seed),
        task, seeds=seeds, n_iterations=800 if full else 60, batch_size=64 if full else 32, lr=1e-2,
        eval_every=0, progress=False)
    models += ensemble.models
    names += [f"N{n_units}-s{s}" for s in seeds]
    size_of += [n_units] * n_seeds
accuracy = [evaluate(m, task, seed=1)["accuracy"] for m in models]
print(f"{len(models)} networks, mean accuracy {np.mean(accuracy):.3f}")

# %% [markdown]
# ## Three levels of degeneracy
#
# All networks see one shared, seeded batch of trials. DSA compares delay-embedded linear operators,
# so a rotation or relabelling of units leaves the distance at zero; the weight distance is taken up to
# a permutation of the units (networks of different sizes are compared after padding the smaller one).

# %%
with warnings.catch_warnings():
    warnings.simplefilter("ignore", UserWarning)  # DSA below full rank at these small sizes
    result = compute_solution_degeneracy(
        models, task, n_trials=64 if full else 16, seed=0, names=names,
        dynamics_kwargs={"n_delays": 5, "rank": 10} if full else
        {"n_delays": 3, "rank": 6, "n_restarts": 8, "max_iter": 200})
print(f"{'network':<8} {'loss (in distribution)':>23} {'loss (OOD)':>11}")
for name, b_id, b_ood in zip(result.names, result.behaviour_id, result.behaviour_ood):
    print(f"{name:<8} {b_id:23.4f} {b_ood:11.4f}")
print(f"behaviour degeneracy  {result.behaviour_degeneracy_id:.4f} (in distribution), "
      f"{result.behaviour_degeneracy_ood:.4f} (OOD)")
print(f"dynamics degeneracy   {result.dynamics_degeneracy:.4f} (mean pairwise DSA distance)")
print(f"weight degeneracy     {result.weight_degeneracy:.4f} (mean pairwise weight distance)")

# %% [markdown]
# ## The figure
#
# The three levels, and the networks placed by multidimensional scaling of their DSA distances,
# coloured by size.

# %%
fig = plt.figure(figsize=(15, 3.8), layout="constrained")
axes = fig.subplots(1, 4)
plot_solution_degeneracy(result, axes=axes[:3])
plot_embedding(embed_distances(result.dynamics, seed=0), ax=axes[3], color=np.asarray(size_of),
               colorbar_label="units")
axes[3].set_title("DSA embedding (MDS)")
plt.show()
