# %% [markdown]
# # Solution degeneracy across seeds
#
# Networks trained on one task from different initial weights all solve it, but do they solve it the
# same way? Huang, Singh, Martinelli & Rajan (2025, NeurIPS) measure the spread at three levels:
# behaviour (the standard deviation of the task loss across networks, in and out of distribution),
# dynamics (the mean pairwise dynamical similarity distance, DSA, of their hidden-state trajectories)
# and weights (the mean pairwise permutation-invariant distance of the recurrent weights).
# `compute_solution_degeneracy` computes all three. Here an ensemble of 2-bit flip-flop networks
# differing only in their seed is trained in one batched loop (`train_ensemble`); the page trains 4
# networks of 12 units for 100 iterations when the site is built; set `NEURODYN_FULL=1` for 8 networks
# of 32 units and 800 iterations.

# %%
import os
import warnings

import matplotlib.pyplot as plt

from neurodyn.analysis import compute_solution_degeneracy
from neurodyn.models import LeakyRNN
from neurodyn.plotting import plot_solution_degeneracy
from neurodyn.tasks import FlipFlop
from neurodyn.training import train_ensemble

full = os.environ.get("NEURODYN_FULL") == "1"
n_networks, n_units, n_iterations = (8, 32, 800) if full else (4, 12, 100)
task = FlipFlop(n_bits=2, n_steps=64 if full else 40, p_pulse=0.1)
ensemble = train_ensemble(
    lambda seed: LeakyRNN(task.n_inputs, n_units, task.n_outputs, alpha=0.5, seed=seed), task,
    seeds=range(n_networks), n_iterations=n_iterations, batch_size=32, lr=1e-2, eval_every=0,
    progress=False)

# %% [markdown]
# ## Three levels of degeneracy
#
# All networks see one shared, seeded batch of trials. DSA compares delay-embedded linear operators,
# so a rotation or relabelling of units leaves the distance at zero; the weight distance is taken up to
# a permutation of the units.

# %%
with warnings.catch_warnings():
    warnings.simplefilter("ignore", UserWarning)  # DSA below full rank at these small sizes
    result = compute_solution_degeneracy(
        ensemble.models, task, n_trials=64 if full else 16, seed=0,
        names=[f"seed {s}" for s in range(n_networks)],
        dynamics_kwargs={"n_delays": 5, "rank": 10} if full else
        {"n_delays": 3, "rank": 6, "n_restarts": 8, "max_iter": 200})
print(f"{'network':<8} {'loss (in distribution)':>23} {'loss (OOD)':>11}")
for name, b_id, b_ood in zip(result.names, result.behaviour_id, result.behaviour_ood):
    print(f"{name:<8} {b_id:23.4f} {b_ood:11.4f}")
print(f"behaviour degeneracy  {result.behaviour_degeneracy_id:.4f} (in distribution), "
      f"{result.behaviour_degeneracy_ood:.4f} (OOD)")
print(f"dynamics degeneracy   {result.dynamics_degeneracy:.4f} (mean pairwise DSA distance)")
print(f"weight degeneracy     {result.weight_degeneracy:.4f} (mean pairwise weight distance)")

# %%
fig, axes = plt.subplots(1, 3, figsize=(12, 3.6), layout="constrained")
plot_solution_degeneracy(result, axes=axes)
plt.show()
