# %% [markdown]
# # Flip-flop memories as fixed points
#
# A recurrent network trained on the 3-bit flip-flop task stores each of the 2³ bit patterns as a
# stable fixed point; saddles with one unstable direction sit between neighbouring memories
# (Sussillo & Barak 2013, *Neural Computation* 25:626). This page trains a small network, finds its
# fixed points and draws the paper-ready figure. It runs at a small size when the site is built; set
# `NEURODYN_FULL=1` for the sizes of `make demo` (64 units, 1,500 iterations, 1,024 initial states).
# `python examples/flipflop_fixed_points.py [--tiny] [--out-dir DIR]` runs this page from the command
# line (full size unless `--tiny`) and writes its fixed points and figure into `DIR`.

# %%
import os

import matplotlib.pyplot as plt
import torch

import neurodyn
from neurodyn.models import LeakyRNN
from neurodyn.tasks import FlipFlop

full = os.environ.get("NEURODYN_FULL") == "1"
task = FlipFlop(n_bits=3, n_steps=64, p_pulse=0.1)
model = LeakyRNN(task.n_inputs, 64 if full else 32, task.n_outputs, alpha=1.0, seed=0)
trained = neurodyn.train(model, task, n_iterations=1500 if full else 300, batch_size=64, lr=1e-2,
                         seed=0, target_metric=("accuracy", 0.999), progress=False)
metrics = neurodyn.training.evaluate(trained.model, task, seed=1)
print(f"accuracy {metrics['accuracy']:.3f} after {trained.config['iterations_run']} iterations")

# %% [markdown]
# ## Fixed points and their stability
#
# Candidates start from states the network visits during the task; each is driven to a zero of
# `F(h) - h` and classified by the eigenvalues of the Jacobian there.

# %%
fps = neurodyn.analysis.find_fixed_points(trained.model, task=task, n_inits=1024 if full else 256, seed=0)
print(fps.summary())

# %% [markdown]
# ## The figure
#
# Fixed points in the first principal components of the task trajectories (grey), coloured by
# stability, with each saddle's unstable directions drawn as segments and the leading eigenvalues
# beside them.

# %%
batch = task.sample(16, seed=2)
with torch.no_grad():
    states = trained.model(torch.as_tensor(batch.inputs), noise=False).states.numpy()
title = neurodyn.plotting.condition_title(fps, model="LeakyRNN")
axes = neurodyn.plotting.plot_fixed_point_figure(fps, trajectories=states, title=title)
plt.show()
