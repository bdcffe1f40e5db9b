# %% [markdown]
# # Basins of attraction of a PLRNN and their exact boundary
#
# A bistable piecewise-linear RNN sends every initial state to one of two stable fixed points.
# `compute_basins` labels a grid of initial states by the attractor they reach; the boundary between
# the two basins is the stable manifold of the saddle between them, which `find_manifolds` grows
# exactly, region by region, as polygonal pieces (Eisenmann et al., "Detecting invariant manifolds in
# ReLU-based RNNs", ICLR 2026; fixed points from the SCYFI search of Eisenmann et al. 2023, NeurIPS).
# The model is a 2-D shallow PLRNN with closed-form answers: stable points (4, 1) and (−2, 1), and a
# saddle at (−1/2, 1). The grid has 41 × 41 states when the site is built; `NEURODYN_FULL=1` uses
# 201 × 201.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np

from neurodyn.analysis import compute_basins, find_cycles, find_manifolds
from neurodyn.analysis.plrnn import basin_boundary
from neurodyn.models import ShallowPLRNN
from neurodyn.plotting import plot_phase_portrait

full = os.environ.get("NEURODYN_FULL") == "1"
n_grid = 201 if full else 41

# x' = f(x) + relu(y)/2, y' = (y + 1)/2, where f has slope 2 for |x| < 1 and 1/2 outside
normals = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])
mixing = np.array([[-1.5, 1.5, 0.5], [0.0, 0.0, 0.0]])
model = ShallowPLRNN.from_arrays(np.array([2.0, 0.5]), mixing, normals, np.array([0.0, 0.5]),
                                 np.array([-1.0, -1.0, 0.0]))
cycles = find_cycles(model, max_order=1, exhaustive=True)
print(cycles.summary())

# %% [markdown]
# ## Basins on a grid, and the boundary as a manifold
#
# Each grid state is iterated until it comes within `tol` of an attractor; states that never do (on
# the boundary itself, they converge to the saddle) are labelled undecided. The fractions are printed
# per attractor, and the boundary's pieces near the saddle are checked against the line
# `x = −1/2 − (y − 1)/3` that the algebra gives.

# %%
bounds = [(-4.0, 5.0), (-4.0, 5.0)]
basins = compute_basins(model, cycles, grid=(bounds, n_grid), max_steps=300)
stable = find_manifolds(model, cycles, kind="stable", box=(-4.0, 5.0))
boundary = basin_boundary(stable)
points = np.concatenate([piece.samples for piece in boundary])
near = (points[:, 1] > 0) & (np.abs(points[:, 0]) < 1)
error = np.abs(points[near, 0] - (-0.5 - (points[near, 1] - 1) / 3)).max()
print("label   attractor      fraction of the grid")
for label, fraction in sorted(basins.fractions.items()):
    where = np.array2string(basins.attractors[label][0], precision=3) if label >= 0 else "-"
    print(f"{label:>5}   {where:<14} {fraction:.3f}")
print(f"{len(boundary)} boundary pieces; largest distance from x = -1/2 - (y - 1)/3 near the saddle: "
      f"{error:.1e}")

# %%
fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), layout="constrained")
plot_phase_portrait(model, cycles=cycles, manifolds=stable, basins=basins, ax=axes[0], limits=bounds)
axes[0].set_title("basins, switching lines and the saddle's stable manifold")
steps = np.asarray(basins.steps, dtype=float).reshape(n_grid, n_grid)
image = axes[1].imshow(steps.T, origin="lower", extent=(*bounds[0], *bounds[1]), cmap="magma",
                       aspect="auto")
fig.colorbar(image, ax=axes[1], label="steps to reach an attractor")
axes[1].set(xlabel="unit 0", ylabel="unit 1", title="convergence time (slow near the boundary)")
plt.show()
