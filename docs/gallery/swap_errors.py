# %% [markdown]
# # Swap errors: a network fitted to behaviour vs a task-optimal one
#
# In a two-item continuous-report task, subjects sometimes report the uncued item ("swap errors").
# Radmard, Bays & Lengyel ("Setting up for failure", arXiv:2512.04808) train networks to *reproduce*
# such behaviour, errors included: surrogate reports drawn from a generative model fitted to behaviour,
# matched by a diffusion objective in which the network's noisy response-period dynamics produce a
# sample. This page draws surrogate reports from the swap model of Bays et al. (2009) with a 20 % swap
# rate, trains one network on them with `train_diffusion` and another, task-optimal, by plain `train`,
# fits the swap model to held-out reports of both, and decodes the cued and the uncued item from each
# network's states at every step (the guide's page *Swap errors and the diffusion objective* describes
# the objective).
#
# It runs at a small size when the site is built (a short trial, 32 units, 600 diffusion and 300 plain
# iterations: the networks are barely trained); set `NEURODYN_FULL=1` for the sizes whose numbers the
# guide quotes (64 units, 4,000 and 600 iterations, 2,000 held-out reports: minutes), and
# `NEURODYN_SEED` to change the networks' seed (default 0).
# `python examples/swap_errors.py [--tiny] [--seed S] [--out-dir DIR]` runs this page from the command
# line (full size unless `--tiny`) and writes its fits, a summary and the figure into `DIR`.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
import torch

from neurodyn.analysis import compute_decodability_over_time
from neurodyn.models import LeakyRNN
from neurodyn.plotting import plot_response_errors
from neurodyn.tasks import ContinuousReport, fit_mixture_model, sample_mixture_responses
from neurodyn.training import sample_diffusion, train, train_diffusion

full = os.environ.get("NEURODYN_FULL") == "1"
seed = int(os.environ.get("NEURODYN_SEED", "0"))
swaps = {"kappa": 8.0, "p_target": 0.7, "p_swap": 0.2, "p_guess": 0.1}  # the behaviour to reproduce
timing = ({"fixation_ms": 40.0, "stimulus_ms": 60.0, "delay_min_ms": 100.0, "delay_max_ms": 100.0,
           "cue_ms": 60.0, "response_ms": 200.0} if full else
          {"fixation_ms": 20.0, "stimulus_ms": 40.0, "delay_min_ms": 40.0, "delay_max_ms": 40.0,
           "cue_ms": 40.0, "response_ms": 60.0})
settings = {"task": {"n_items": 2, "n_ring": 8, "output_ring": 8, "kappa": 2.0, **timing, "grace_ms": 0.0,
                     "input_noise": 0.0, "dt": 20.0},
            "n_units": 64 if full else 32, "alpha": 0.5, "diffusion_iterations": 4000 if full else 600,
            "plain_iterations": 600 if full else 300, "batch_size": 64 if full else 32,
            "lr": 3e-3 if full else 2e-2, "n_trials": 2000 if full else 500, "seed": seed}
task = ContinuousReport(**settings["task"])
ring = task.output_ring

# %% [markdown]
# ## Surrogate behaviour
#
# Reports on held-out trials are drawn from the swap model, and the model is fitted back to them: the
# "data" row of the comparison.

# %%
data_batch = task.sample(settings["n_trials"], seed=7)
targets, non_targets = task.items(data_batch)
data = sample_mixture_responses(swaps, targets, non_targets, seed=8)
responses = {"data": (data, targets, non_targets)}
fits = {"data": fit_mixture_model(data, targets, non_targets)}

# %% [markdown]
# ## A network fitted to the behaviour, and a task-optimal one
#
# The diffusion network gets `ring` extra sample channels; in sampling, its response-period dynamics
# denoise them into a report. The task-optimal network is trained by BPTT on the cued item's ring code
# and reports by the population vector of its outputs, on the same held-out trials.

# %%
fitted = train_diffusion(LeakyRNN(task.n_inputs + ring, settings["n_units"], ring, alpha=settings["alpha"],
                                  seed=seed),
                         task, behaviour=swaps, n_iterations=settings["diffusion_iterations"],
                         batch_size=settings["batch_size"], lr=settings["lr"], eval_every=0,
                         progress=full, seed=seed)
reports, diffusion_states, batch = sample_diffusion(fitted.model, task, settings["n_trials"], seed=9)
t_net, nt_net = task.items(batch)
responses["diffusion"] = (reports, t_net, nt_net)

optimal = train(LeakyRNN(task.n_inputs, settings["n_units"], ring, alpha=settings["alpha"], seed=seed), task,
                n_iterations=settings["plain_iterations"], batch_size=settings["batch_size"],
                lr=settings["lr"], eval_every=0, progress=full, seed=seed,
                backend="auto" if full else "torch")  # at the small size Numba's compilation would dominate
with torch.no_grad():
    run = optimal.model(torch.as_tensor(batch.inputs), noise=False)
responses["task_optimal"] = (task.reports(run.outputs.numpy(), batch), t_net, nt_net)
for name in ("diffusion", "task_optimal"):
    fits[name] = fit_mixture_model(*responses[name])
for name, fit in fits.items():
    print(f"{name:>13}: kappa {fit.kappa:.2f}, p_target {fit.p_target:.3f}, p_swap {fit.p_swap:.3f}, "
          f"p_guess {fit.p_guess:.3f}")

# %% [markdown]
# ## The cued and the uncued item over the trial
#
# At every step a ridge map from the states decodes `(cos, sin)` of each item (cross-validated R²,
# averaged over cos and sin).

# %%
def items_over_time(states: np.ndarray, targets: np.ndarray, non_targets: np.ndarray) -> dict:
    """Mean R² of (cos, sin) of the cued and of the uncued item decoded from the states at each step."""
    angles = np.stack([targets, non_targets[:, 0]], 1)
    variables = np.concatenate([np.cos(angles), np.sin(angles)], 1)  # cos cued, cos uncued, sin ..
    ds = compute_decodability_over_time(states, variables, n_folds=5 if full else 4, alpha=1.0, seed=0)
    r2 = ds.r2.transpose("time", "variable").values
    return {"cued": r2[:, [0, 2]].mean(1).tolist(), "uncued": r2[:, [1, 3]].mean(1).tolist()}


decoded = {"diffusion": items_over_time(diffusion_states, t_net, nt_net),
           "task_optimal": items_over_time(run.states.numpy(), t_net, nt_net)}
periods = {k: v[0].tolist() for k, v in batch.periods.items()}  # (start, end) steps of each period

# %% [markdown]
# ## The figure
#
# Report errors of the data and of both networks, each with its fitted swap model (the bump at the
# uncued item's offset is spread over the circle, since that offset differs from trial to trial), and
# the decodability of both items over the trial.

# %%
fig, axes = plt.subplots(1, 4, figsize=(17, 3.4), layout="constrained")
titles = {"data": "surrogate data", "diffusion": "network (diffusion)",
          "task_optimal": "task-optimal network"}
for ax, name in zip(axes, titles):
    plot_response_errors(fits[name], *responses[name], ax=ax, label=titles[name])
    ax.set_title(titles[name])
ax = axes[3]
for name, style in (("diffusion", "-"), ("task_optimal", ":")):
    for item, colour in (("cued", "C0"), ("uncued", "C3")):
        ax.plot(decoded[name][item], style, color=colour, label=f"{item}, {titles[name]}")
for label in ("delay", "cue", "response"):
    start, end = periods[label]
    ax.axvspan(start - 0.5, end - 0.5, alpha=0.08 if label != "cue" else 0.18, color="k")
    ax.text((start + end) / 2 - 0.5, 1.02, label, ha="center", fontsize=8)
ax.set(xlabel="time step", ylabel="decoding R² (cos, sin)", ylim=(-0.1, 1.1))
ax.legend(fontsize=7, loc="lower left")
plt.show()
