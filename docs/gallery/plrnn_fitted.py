# %% [markdown]
# # Exact PLRNN analyses on fitted and trained networks
#
# The cycle search (SCYFI, Eisenmann et al., NeurIPS 2023) and the manifold construction (Eisenmann,
# Brändle, Monfared & Durstewitz, "Detecting invariant manifolds in ReLU-based RNNs", ICLR 2026) applied
# to networks that were learned rather than written down:
#
# 1. a PLRNN **fitted** by teacher forcing to trajectories of a bistable map, whose basin boundary is
#    the stable manifold of the saddle between its two attractors — traced exactly and checked
#    against simulation with `compute_boundary_agreement`;
# 2. a PLRNN **trained** on a decision task (Romo delayed discrimination), with its fixed points
#    under the delay-period input.
#
# The site build runs both at small sizes; `NEURODYN_FULL=1` trains the decision task 5 times longer
# and uses a finer basin grid. The Lorenz-63 fits and their Lyapunov exponents are in
# `examples/dsr_seeds.py` (see "Fitting recordings"); an ALRNN fitted to Lorenz-63 and analysed with
# these tools is on the gallery page "A fitted Lorenz-63 model, analysed exactly".

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
import torch

from neurodyn.analysis import compute_basins, find_cycles, find_manifolds
from neurodyn.analysis.plrnn import basin_boundary, compute_boundary_agreement
from neurodyn.models import PLRNN
from neurodyn.plotting import plot_phase_portrait
from neurodyn.tasks import DelayedDiscrimination
from neurodyn.training import fit_teacher_forcing, train

full = os.environ.get("NEURODYN_FULL") == "1"

# %% [markdown]
# ## 1. A fitted bistable PLRNN and its basin boundary
#
# The teacher is a two-unit winner-take-all map, `z1' = z1/2 − relu(z2) + 1`, `z2' = z2/2 − relu(z1) + 1`:
# stable points (2, −2) and (−2, 2), a saddle at (2/3, 2/3), and — since swapping the units leaves the
# map unchanged — the diagonal `z1 = z2` as the saddle's stable manifold and the basin boundary. A
# PLRNN with two latent units is fitted by teacher forcing (α = 1: one-step predictions) to 256
# trajectories of 12 steps from random starts in [−4, 4]²; it is then analysed as if nothing were
# known about it: exhaustive fixed-point search, stable manifold of its saddle, basins on a grid.

# %%
teacher = PLRNN.from_arrays(A=[0.5, 0.5], W=[[0.0, -1.0], [-1.0, 0.0]], h=[1.0, 1.0])
z = torch.as_tensor(np.random.default_rng(0).uniform(-4, 4, size=(256, 2)))
trajectories = [z]
with torch.no_grad():
    for _ in range(12):
        trajectories.append(teacher.step(trajectories[-1], None))
data = torch.stack(trajectories, 1).numpy()  # (trial, time, channel)
fit = fit_teacher_forcing(PLRNN(0, 2, 2, seed=0), data, observation="identity", alpha=1.0, n_epochs=40,
                          batches_per_epoch=10, batch_size=64, seq_len=10, lr=0.1, lr_end=1e-2,
                          progress=False, seed=0)
model = fit.model
cycles = find_cycles(model, max_order=1, exhaustive=True)
for state, kind in zip(cycles.states, cycles.stability):
    print(f"{kind:>7} fixed point {np.array2string(state, precision=3)}")

bounds = [(-4.0, 4.0), (-4.0, 4.0)]
n_grid = 81 if full else 41
basins = compute_basins(model, cycles, grid=(bounds, n_grid), max_steps=1000)
stable = find_manifolds(model, cycles, kind="stable", box=(-4.0, 4.0))
check = compute_boundary_agreement(model, stable, basins)
boundary = np.concatenate([p.samples for p in basin_boundary(stable)])
print(f"grid {n_grid} x {n_grid}: basin fractions {basins.fractions}")
print(f"{check.attrs['n_samples']} boundary samples pushed {check.attrs['offset']:.3f} to either side: "
      f"{check.attrs['split_fraction']:.3f} split between the attractors")
print(f"{check.attrs['n_switch']} basin changes on the grid, misassigned fraction "
      f"{check.attrs['misassigned_fraction']:.4f} (tolerance {check.attrs['tol']:.3f}); largest distance "
      f"{float(check.switch_distance.max()):.3f}")
print(f"fitted boundary vs the teacher's diagonal: max |z1 - z2| = "
      f"{np.abs(boundary[:, 0] - boundary[:, 1]).max():.4f}")

# %%
fig, ax = plt.subplots(figsize=(5, 4.5), layout="constrained")
plot_phase_portrait(model, cycles=cycles, manifolds=stable, basins=basins, ax=ax, limits=bounds)
ax.plot(*check.switch_point.values.T, "k.", ms=2, label="basin changes on the grid")
ax.plot([-4, 4], [-4, 4], "w--", lw=0.8, label="teacher's boundary z1 = z2")
ax.legend(loc="lower left", fontsize=7)
ax.set_title("fitted PLRNN: basins and the saddle's stable manifold")
plt.show()

# %% [markdown]
# ## 2. A PLRNN trained on a decision task
#
# Romo delayed discrimination (`DelayedDiscrimination`): f1, a delay of 200–400 ms, f2, then report
# whether f1 > f2 (dt = 20 ms). During the delay the only input is the fixation cue, so the delay
# dynamics are the autonomous map `F(z) = A z + W relu(z) + h + C u` with `u = (1, 0, 0)`; its fixed
# points and 2-cycles are searched with SCYFI (not exhaustive: 2¹² regions).

# %%
task = DelayedDiscrimination(delay_min_ms=200.0, delay_max_ms=400.0, input_noise=0.0)
n_iterations = 1500 if full else 300
trained = train(PLRNN(3, 12, 3, seed=0), task, n_iterations=n_iterations, batch_size=64, lr=1e-2,
                eval_every=n_iterations, progress=False, seed=0)
print(f"{n_iterations} iterations: held-out accuracy {trained.history['eval_accuracy'][-1]:.3f}")
delay = find_cycles(trained.model, max_order=2, u=np.array([1.0, 0.0, 0.0]), n_restarts=50, seed=0)
print(delay.summary())
for state, kind, eig in zip(delay.states, delay.stability, delay.eigenvalues):
    print(f"{kind:>7}: max |eigenvalue| {np.abs(eig).max():.3f}, active units {int((state > 0).sum())}")
