# %% [markdown]
# # Training a network on each task
#
# One leaky RNN per task, trained by `neurodyn.train` (Adam, batches of 64, seed 0, stopping early at
# accuracy 0.99 except for path integration, which runs all its iterations) and evaluated on fresh trials
# (seed 1) of the task and of its out-of-distribution variant `task.ood()`: longer delays, closer pairs,
# untrained frequencies, longer paths. The HMM emulator gets only noise and is trained by
# `train_distribution` with a Sinkhorn divergence between batches of whole emission sequences (Torre et
# al. 2025).
#
# The table below holds every task's settings at two sizes. The site runs the small one (a few dozen
# iterations: the networks are barely trained); `NEURODYN_FULL=1` runs the full one, whose numbers the
# guide's page *Tasks* quotes (minutes per task). `NEURODYN_TASK` trains only the task it names, and the
# variants are `NEURODYN_TWO_ITEMS=1` (continuous report of two items with a retro-cue, where swap errors
# appear), `NEURODYN_PLACE_CELLS=1` (path integration read out by place cells) and
# `NEURODYN_DIVERGENCE=mmd` (the HMM emulator trained with MMD). `python examples/tasks/TASK.py [--tiny]`
# runs this page for one task from the command line (full size unless `--tiny`) and prints its report.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
import torch

import neurodyn
from neurodyn.models import LeakyRNN
from neurodyn.tasks import (
    ContinuousReport,
    DelayedDiscrimination,
    DelayedMatchToSample,
    HMMEmulation,
    PathIntegration,
    SineWave,
    compute_dwell_times,
    compute_emission_frequencies,
)
from neurodyn.training.distribution import sample_emissions, train_distribution

full = os.environ.get("NEURODYN_FULL") == "1"
names = [os.environ["NEURODYN_TASK"]] if os.environ.get("NEURODYN_TASK") else [
    "romo", "dms", "sine_wave", "path_integration", "continuous_report", "hmm_emulation"]
variants = {"n_items": 2 if os.environ.get("NEURODYN_TWO_ITEMS") == "1" else 1,
            "targets": "place_cells" if os.environ.get("NEURODYN_PLACE_CELLS") == "1" else "position",
            "divergence": os.environ.get("NEURODYN_DIVERGENCE", "sinkhorn")}

# every task's class and settings at the site's size and at full size ("task": its fields beyond the defaults)
SETTINGS = {
    "romo": {"class": DelayedDiscrimination,
             "site": {"task": {"fixation_ms": 100, "stimulus_ms": 100, "delay_min_ms": 100,
                               "delay_max_ms": 300, "decision_ms": 100, "grace_ms": 40},
                      "n_units": 32, "alpha": 0.5, "n_iterations": 60, "lr": 1e-2},
             "full": {"task": {}, "n_units": 64, "alpha": 0.2, "n_iterations": 1000, "lr": 3e-3}},
    "dms": {"class": DelayedMatchToSample,
            "site": {"task": {"n_stimuli": 2, "fixation_ms": 100, "sample_ms": 100, "delay_min_ms": 100,
                              "delay_max_ms": 300, "test_ms": 100, "decision_ms": 100, "grace_ms": 40},
                     "n_units": 32, "alpha": 0.5, "n_iterations": 60, "lr": 3e-3},
            "full": {"task": {}, "n_units": 64, "alpha": 0.2, "n_iterations": 1000, "lr": 3e-3}},
    "sine_wave": {"class": SineWave,
                  "site": {"task": {"n_frequencies": 2, "duration_ms": 500, "dt": 20},
                           "n_units": 32, "alpha": 1.0, "n_iterations": 60, "lr": 1e-2},
                  "full": {"task": {}, "n_units": 64, "alpha": 0.1, "n_iterations": 1500, "lr": 3e-3}},
    "path_integration": {"class": PathIntegration,
                         "site": {"task": {"n_dims": 2, "targets": variants["targets"], "n_place_cells": 64,
                                           "duration_ms": 200},
                                  "n_units": 32, "alpha": 1.0, "n_iterations": 60, "lr": 3e-3,
                                  "target_metric": None},
                         "full": {"task": {"n_dims": 2, "targets": variants["targets"], "n_place_cells": 512,
                                           "duration_ms": 400},
                                  "n_units": 128, "alpha": 1.0, "n_iterations": 1000, "lr": 3e-3,
                                  "target_metric": None}},
    "continuous_report": {"class": ContinuousReport,
                          "site": {"task": {"n_items": variants["n_items"], "n_ring": 8, "fixation_ms": 60,
                                            "stimulus_ms": 100, "delay_min_ms": 100, "delay_max_ms": 300,
                                            "cue_ms": 60, "response_ms": 120, "grace_ms": 40},
                                   "n_units": 32, "alpha": 0.5, "n_iterations": 60, "lr": 1e-2},
                          "full": {"task": {"n_items": variants["n_items"]},
                                   "n_units": 64, "alpha": 0.2, "n_iterations": 1000, "lr": 3e-3}},
    "hmm_emulation": {"class": HMMEmulation,
                      "site": {"task": {"n_states": 2, "topology": "linear", "n_steps": 12, "n_noise": 8},
                               "n_units": 16, "alpha": 0.1, "gain": 1.5, "n_iterations": 20,
                               "batch_size": 64, "lr": 1e-2, "epsilon": 0.02, "n_samples": 256},
                      "full": {"task": {"n_states": 2, "topology": "linear", "n_steps": 20, "n_noise": 8},
                               "n_units": 64, "alpha": 0.1, "gain": 1.5, "n_iterations": 800,
                               "batch_size": 256, "lr": 1e-2, "epsilon": 0.02, "n_samples": 2000}},
}

# %% [markdown]
# ## Training and the report of each task
#
# Each task's report is the line its example script prints: its metrics on fresh trials and on the
# out-of-distribution variant; the HMM emulator's compares the emission frequencies and dwell times of the
# network's sequences with the HMM's.

# %%
REPORTS = {  # (metrics, OOD metrics) -> the report line of each supervised task
    "romo": lambda m, ood: (f"accuracy {m['accuracy']:.3f}, fixation {m['fixation_accuracy']:.3f}, "
                            f"closer pairs, more noise (OOD) {ood['accuracy']:.3f}"),
    "dms": lambda m, ood: f"accuracy {m['accuracy']:.3f}, longer delays (OOD) {ood['accuracy']:.3f}",
    "sine_wave": lambda m, ood: (f"R^2 {m['r2']:.3f} (accuracy {m['accuracy']:.3f}), "
                                 f"untrained frequencies R^2 {ood['r2']:.3f}"),
    "path_integration": lambda m, ood: (f"position error {100 * m['position_error_m']:.1f} cm "
                                        f"(R^2 {m['r2']:.3f}); "
                                        f"4x longer paths {100 * ood['position_error_m']:.1f} cm"),
    "continuous_report": lambda m, ood: (", ".join(f"{k} {v:.3f}" for k, v in m.items())
                                         + f"; longer delays (OOD) accuracy {ood['accuracy']:.3f}"),
}


def train_supervised(task, s: dict) -> tuple[dict, dict, tuple]:
    """Train a ``LeakyRNN`` on ``task`` with the settings ``s``; its metrics in and out of distribution, and
    one fresh trial's ``(time_ms (time,), outputs (time, output), targets (time, output))``."""
    model = LeakyRNN(task.n_inputs, s["n_units"], task.n_outputs, alpha=s["alpha"], seed=0)
    result = neurodyn.train(model, task, n_iterations=s["n_iterations"], batch_size=64, lr=s["lr"], seed=0,
                            target_metric=s.get("target_metric", ("accuracy", 0.99)), progress=False)
    metrics = neurodyn.training.evaluate(result.model, task, seed=1)
    ood = neurodyn.training.evaluate(result.model, task.ood(), seed=1)
    batch = task.sample(1, seed=1)
    with torch.no_grad():
        outputs = result.model(torch.as_tensor(batch.inputs), noise=False).outputs[0].numpy()
    targets = batch.targets[0]
    if task.loss == "cross_entropy":  # class-index targets: compare choice probabilities with one-hot targets
        outputs = np.exp(outputs - outputs.max(-1, keepdims=True))
        outputs /= outputs.sum(-1, keepdims=True)
        targets = np.eye(task.n_outputs)[targets[:, 0].astype(int)]
    return metrics, ood, (np.arange(batch.n_steps) * batch.dt, outputs, targets)


def train_emulator(task, s: dict) -> tuple[dict, dict, tuple, list[str]]:
    """Train a noise-driven ``LeakyRNN`` to emulate the HMM ``task``; its metrics in and out of
    distribution, one sequence of symbols of network and HMM ``(step (time,), network (time, 1), HMM (time,
    1))`` and its report lines."""
    model = LeakyRNN(task.n_inputs, s["n_units"], task.n_outputs, alpha=s["alpha"], gain=s["gain"], seed=0)
    result = train_distribution(model, task, n_iterations=s["n_iterations"], batch_size=s["batch_size"],
                                lr=s["lr"], divergence=variants["divergence"], epsilon=s["epsilon"], seed=0,
                                progress=False)
    emitted, batch = sample_emissions(result.model, task, s["n_samples"], seed=1)
    metrics = task.evaluate(emitted, batch)
    long_emitted, long_batch = sample_emissions(result.model, task.ood(), 256, seed=1)
    ood = task.ood().evaluate(long_emitted, long_batch)
    model_y, hmm_y = emitted.argmax(-1), batch.trial_params["symbols"]
    with np.printoptions(precision=3, suppress=True):
        lines = [f"emission frequencies  RNN {compute_emission_frequencies(model_y, 3)} "
                 f" HMM {compute_emission_frequencies(hmm_y, 3)}",
                 f"dwell times (steps)   RNN {compute_dwell_times(model_y, 3)} "
                 f" HMM {compute_dwell_times(hmm_y, 3)}",
                 ", ".join(f"{k} {v:.3f}" for k, v in metrics.items())]
    return metrics, ood, (np.arange(model_y.shape[1]), model_y[0, :, None], hmm_y[0, :, None]), lines


results, reports, trials = {}, {}, {}
for name in names:
    s = SETTINGS[name]["full" if full else "site"]
    task = SETTINGS[name]["class"](**s["task"])
    if name == "hmm_emulation":
        metrics, ood, trials[name], reports[name] = train_emulator(task, s)
    else:
        metrics, ood, trials[name] = train_supervised(task, s)
        reports[name] = [REPORTS[name](metrics, ood)]
    results[name] = {"metrics": metrics, "ood": ood}
    print(f"{name}:", *reports[name], sep="\n  ")

# %% [markdown]
# ## In and out of distribution
#
# Every metric of every task on fresh trials of the task it was trained on and of its OOD variant.

# %%
print(f"{'task':<18} {'metric':<20} {'trained':>9} {'OOD':>9}")
for name, result in results.items():
    for metric, value in result["metrics"].items():
        print(f"{name:<18} {metric:<20} {value:>9.3f} {result['ood'].get(metric, np.nan):>9.3f}")

# %% [markdown]
# ## One trial of each task
#
# The network's outputs (solid) against the targets (dashed) on one fresh trial; for the decision tasks
# the choice probabilities against the one-hot target class, for the HMM emulator one sequence of the
# network's symbols against one of the HMM's (two independent samples: only their statistics should match).

# %%
fig, axes = plt.subplots(len(trials), 1, figsize=(8, 1.8 * len(trials)), layout="constrained", squeeze=False)
for ax, (name, (time, outputs, targets)) in zip(axes[:, 0], trials.items()):
    for channel in range(outputs.shape[1]):
        ax.plot(time, outputs[:, channel], color=f"C{channel}", lw=1.2, drawstyle="steps-mid")
        ax.plot(time, targets[:, channel], color=f"C{channel}", lw=1.0, ls="--", drawstyle="steps-mid")
    ax.set_ylabel(name, fontsize=8)
    ax.set_xlabel("symbol step" if name == "hmm_emulation" else "time (ms)", fontsize=8)
plt.show()
