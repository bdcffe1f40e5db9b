# %% [markdown]
# # Every task's trial structure
#
# neurodyn's tasks are frozen dataclasses registered by name in `neurodyn.tasks.TASKS`; each draws a
# seeded batch of trials with `sample(n_trials, seed=...)` whose inputs, targets and loss mask are
# `(trial, time, channel)` arrays. They come from the papers that made each one a benchmark:
# flip-flop and sine-wave generation (Sussillo & Barak 2013, *Neural Computation* 25:626), delayed
# discrimination (Romo et al. 1999, *Nature* 399:470), delayed match-to-sample, continuous report
# (Bays et al. 2009, *Journal of Vision* 9:7), path integration (Sorscher et al. 2019, NeurIPS) and
# HMM emulation (Torre et al. 2025). This page draws one trial of every registered task with its
# default settings; nothing is trained, so it is equally fast at every size (`NEURODYN_FULL=1` draws
# three trials of each instead of one).

# %%
import os

import matplotlib.pyplot as plt
import numpy as np

from neurodyn.tasks import TASKS

full = os.environ.get("NEURODYN_FULL") == "1"
n_trials = 3 if full else 1
batches = {name: cls().sample(n_trials, seed=0) for name, cls in sorted(TASKS.items())}

print(f"{'name':<18} {'class':<22} {'loss':<14} {'in':>3} {'out':>3} {'steps':>5} {'dt ms':>5}  periods")
for name, batch in batches.items():
    task = TASKS[name]()
    periods = ", ".join(batch.periods)
    print(f"{name:<18} {type(task).__name__:<22} {task.loss:<14} {task.n_inputs:>3} {task.n_outputs:>3} "
          f"{batch.n_steps:>5} {batch.dt:>5g}  {periods}")

# %% [markdown]
# ## Inputs and targets
#
# Left: the inputs of one trial as an image (channel × time in ms). Right: its targets, one line per
# output channel, with the steps the loss ignores (mask 0) shaded grey. The decision tasks (`romo`,
# `dms`) are trained with cross-entropy, so their target is a class index (0 fixate, 1 and 2 the two
# choices); `hmm` is trained on output distributions, so its targets are one sampled sequence of
# one-hot symbols.

# %%
fig, axes = plt.subplots(len(batches), 2, figsize=(9, 1.6 * len(batches)), layout="constrained",
                         gridspec_kw={"width_ratios": [1, 1.2]})
for row, (name, batch) in zip(axes, batches.items()):
    n_steps = batch.n_steps * n_trials
    time_ms = np.arange(n_steps) * batch.dt
    inputs = np.concatenate(list(batch.inputs), axis=0)    # (time, input), trials side by side
    targets = np.concatenate(list(batch.targets), axis=0)  # (time, output)
    mask = np.concatenate(list(batch.mask), axis=0).max(axis=1)  # (time,)
    row[0].imshow(inputs.T, aspect="auto", interpolation="nearest", cmap="RdBu_r",
                  vmin=-np.abs(inputs).max(), vmax=np.abs(inputs).max(),
                  extent=(0, n_steps * batch.dt, inputs.shape[1] - 0.5, -0.5))
    row[0].set_ylabel(f"{name}\ninput", fontsize=9)
    row[1].plot(time_ms, targets, lw=1.2, drawstyle="steps-mid")
    row[1].fill_between(time_ms, 0, 1, where=mask == 0, step="mid", color="0.85",
                        transform=row[1].get_xaxis_transform(), label="mask 0")
    row[1].set_ylabel("target", fontsize=9)
    row[1].set_xlim(0, time_ms[-1])
for ax in axes[-1]:
    ax.set_xlabel("time (ms)")
axes[0, 0].set_title("inputs")
axes[0, 1].set_title("targets (grey: not in the loss)")
plt.show()
