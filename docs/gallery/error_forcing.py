# %% [markdown]
# # Error forcing, teacher forcing and plain training across delays
#
# Sağtekin, Bredenberg & Savin (NeurIPS 2025) report that error forcing — nudging the state of a
# training rollout orthogonally towards the zero-error manifold after every step — makes a larger
# fraction of networks learn, and reach lower test error, than teacher forcing or plain BPTT, increasingly
# so as the delay grows, and that it helps the local RFLO rule too. This page runs two sweeps
# (`neurodyn.sweep`, resumable) on delayed XOR over the delay between the two pulses: BPTT, TF-BPTT and
# EF-BPTT (forcing none / teacher / error, learning by backpropagation through time), and RFLO and
# EF-RFLO (random feedback local online learning without and with error forcing). Every network is then
# evaluated without forcing on held-out trials; it has *learned* when its held-out accuracy reaches
# `learned` (the guide's page *Error forcing and RFLO* describes the forcing and what the paper reports).
#
# When the site is built the page only checks that the pipeline runs (1 seed, 6 units, 2 iterations:
# no network learns); set `NEURODYN_FULL=1` for the sizes whose numbers the guide quotes: 10 seeds per
# method and delay, delays 320, 800, 1600 and 3200 ms (from where plain BPTT learns every network to
# where it fails on most), 24 units, 300 iterations of 32 trials, 256 held-out trials (200 networks).
# The sweeps are written to `NEURODYN_OUT` (default: a new temporary folder) and run on a local Dask
# cluster of `NEURODYN_WORKERS` workers (default 0: one by one, in this process).
# `python examples/error_forcing.py [--tiny] [--workers N] [--out-dir DIR]` runs this page from the
# command line (full size unless `--tiny`) and writes the sweeps, a summary and the figure into `DIR`.

# %%
import os
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from scipy.stats import binomtest

from neurodyn.sweep import run_sweep

full = os.environ.get("NEURODYN_FULL") == "1"
out = Path(os.environ.get("NEURODYN_OUT") or tempfile.mkdtemp(prefix="error_forcing_"))
workers = int(os.environ.get("NEURODYN_WORKERS", "0"))
learned = 0.95  # held-out accuracy at which a network counts as having learned
methods = (("BPTT", "bptt", "none"), ("TF-BPTT", "bptt", "teacher"), ("EF-BPTT", "bptt", "error"),
           ("RFLO", "rflo", "none"), ("EF-RFLO", "rflo", "error"))  # (label, learning rule, forcing)
if full:
    settings = {"delays": [320.0, 800.0, 1600.0, 3200.0], "seeds": 10, "n_units": 24,
                "training": {"n_iterations": 300, "batch_size": 32, "lr": 1e-2, "eval_every": 0},
                "analysis": {"n_trials": 256, "n_inits": 1, "max_iters": 1}}
else:
    settings = {"delays": [20.0, 60.0], "seeds": 1, "n_units": 6,
                "training": {"n_iterations": 2, "batch_size": 4, "lr": 1e-2, "eval_every": 0},
                "analysis": {"n_trials": 8, "n_inits": 1, "max_iters": 5}}

# %% [markdown]
# ## The two sweeps
#
# One sweep per learning rule, each a grid over the delay (ms; `dt` 20 ms) and the forcing, with
# `settings["seeds"]` networks per point. Forcing strength 0.5, not annealed. Each network's held-out
# accuracy and MSE come from the sweep's per-network analysis, whose fixed-point search is cut to one
# initial state and one iteration at full size (the page does not use it), so the time goes to training.

# %%
def spec(rule: str) -> dict:
    """The sweep of one learning rule: grid over the delay and the forcing."""
    forcings = ["none", "teacher", "error"] if rule == "bptt" else ["none", "error"]
    return {
        "task": {"name": "delayed_xor", "dt": 20.0, "pulse_ms": 40.0, "go_ms": 40.0, "wait_ms": 40.0,
                 "jitter_ms": 40.0, "response_ms": 60.0},
        "model": {"name": "LeakyRNN", "n_units": settings["n_units"], "alpha": 0.2},
        "training": {**settings["training"], "learning_rule": rule, "forcing_strength": 0.5},
        "analysis": {**settings["analysis"], "graph": False, "dynamics_metric": "procrustes"},
        "grid": {"task.delay_ms": settings["delays"], "training.forcing": forcings},
        "seeds": settings["seeds"],
    }


results = {rule: run_sweep(spec(rule), out / rule, workers=workers, progress=full)
           for rule in ("bptt", "rflo")}

# %% [markdown]
# ## Fraction learned, with its 95 % interval, and held-out error
#
# Per method and delay: how many of the finished networks learned (`k / n`), the Wilson 95 % interval of
# that fraction (`scipy.stats.binomtest`), and the median held-out MSE over all networks of the point;
# then the median loss of the last training batch, taken (as in training) before each step's forcing.

# %%
def learned_counts(accuracy: np.ndarray) -> dict:
    """Networks learned per delay, of those finished, with the Wilson 95 % interval of the fraction.

    ``accuracy`` : (delay, seed), held-out accuracy; NaN where a network did not finish.
    """
    k = (accuracy >= learned).sum(axis=1)
    n = (~np.isnan(accuracy)).sum(axis=1)
    ci = [binomtest(int(ki), int(ni)).proportion_ci(method="wilson") if ni else (np.nan, np.nan)
          for ki, ni in zip(k, n)]
    return {"n_learned": k.tolist(), "n_networks": n.tolist(),
            "fraction_learned": (k / np.maximum(n, 1)).tolist(),
            "fraction_ci95": [[float(c[0]), float(c[1])] for c in ci]}


summary = {}
for label, rule, forcing in methods:
    ds = results[rule].dataset.sel(forcing=forcing)
    accuracy, mse = ds["id_accuracy"].values, ds["id_mse"].values  # (delay, seed), held out, unforced
    train_loss = ds["final_train_loss"].values  # (delay, seed), last training batch, forced where forcing
    summary[label] = {**learned_counts(accuracy), "median_test_mse": np.nanmedian(mse, axis=1).tolist(),
                      "median_final_train_loss": np.nanmedian(train_loss, axis=1).tolist()}

header = [f"{d:g} ms: {column}" for d in settings["delays"] for column in ("learned [95 % CI]", "median MSE")]
print("| method | " + " | ".join(header) + " |")
print("|---|" + "---|" * len(header))
for label, s in summary.items():
    cells = [f"{k} / {n} [{lo:.2f}, {hi:.2f}] | {m:#.2g}" for k, n, (lo, hi), m
             in zip(s["n_learned"], s["n_networks"], s["fraction_ci95"], s["median_test_mse"])]
    print(f"| {label} | " + " | ".join(cells) + " |")
for label, s in summary.items():
    print(f"{label:>8}: median final training loss {np.round(s['median_final_train_loss'], 3).tolist()}")

# %% [markdown]
# ## The figure
#
# The fraction of networks that learned (bars: Wilson 95 % interval) and their median held-out MSE
# against the delay, per method (dashed: the local rule).

# %%
fig, axes = plt.subplots(1, 2, figsize=(9, 3.5), constrained_layout=True)
delays = np.array(settings["delays"])
for j, (label, _, _) in enumerate(methods):
    style = "--" if "RFLO" in label else "-"
    s = summary[label]
    frac, ci = np.array(s["fraction_learned"]), np.array(s["fraction_ci95"]).reshape(-1, 2)
    shifted = delays * 1.05 ** (j - 2)  # side by side, so that the intervals do not hide each other
    axes[0].errorbar(shifted, frac, yerr=np.abs(ci.T - frac), fmt=style, marker="o", capsize=3, label=label)
    axes[1].plot(delays, s["median_test_mse"], style, marker="o", label=label)
axes[0].set(ylabel=f"fraction learned (accuracy ≥ {learned})", ylim=(-0.05, 1.05))
axes[1].set(ylabel="median held-out MSE", yscale="log")
for ax in axes:
    ax.set(xlabel="delay (ms)", xscale="log")
    ax.set_xticks(delays, [f"{d:g}" for d in delays])
    ax.minorticks_off()
axes[0].legend(fontsize=8)
fig.suptitle(f"delayed XOR, {settings['n_units']} units, {settings['seeds']} seeds per point")
plt.show()
