# %% [markdown]
# # How a noise-driven network emulates an HMM
#
# Torre et al. (2025) train vanilla RNNs (α = 1) driven only by Gaussian noise to emit symbol sequences
# with the statistics of a hidden Markov model, and take the trained networks apart: without noise the
# activity collapses to a single fixed point; noise drives the state along closed orbits whose rotation
# changes the emissions; slow regions are joined by fast transitions; and a few "kick neurons" initiate
# the transitions. This page trains a vanilla tanh RNN on each HMM with the Sinkhorn divergence
# (`train_distribution`), scores its emissions (`HMMEmulation.evaluate`, also on 4 × longer sequences)
# and measures every claim with `compute_hmm_mechanism`: the noise-free fixed points and their
# stability, the speed at transitions over the median speed, the orbit in the top-two PC plane and where
# the most probable symbol changes along it, and the kick neurons (the guide's page *HMM emulation mechanism*
# describes the functions and sets the measurements beside the paper's claims).
#
# When the site is built the page only trains the 2-state chain, with 8 units for 10 iterations (far
# from trained); set `NEURODYN_FULL=1` for the sizes whose numbers the guide quotes (2- and 3-state
# linear chains, a 3-state cycle and a 3-state fully connected HMM; 16 units, 150 iterations: minutes).
# `NEURODYN_HMM_SCALE=large` trains larger networks on longer sequences for far longer (the 3-state chain
# and cycle; 64 units, 64 noise channels, 48-step sequences, batch 256, 4,000 iterations: about 5 minutes
# of CPU per HMM) and takes them apart at four checkpoints during training as well.
# `NEURODYN_HMMS` chooses the HMMs (topology:states, comma-separated, e.g. `cyclic:3,linear:2`), and
# `NEURODYN_<SETTING>` overrides one entry of `settings` (e.g. `NEURODYN_N_STEPS=48`, `NEURODYN_SEED=1`).
# `python examples/hmm_mechanism.py [--tiny | --scale large] [--out FILE]` runs this page from the command
# line (full size unless `--tiny`) and writes one JSON record per HMM into `FILE`.

# %%
import os
import time

import matplotlib.pyplot as plt
import numpy as np
import torch

from neurodyn.analysis import compute_hmm_mechanism, compute_noise_free_collapse
from neurodyn.models import LeakyRNN
from neurodyn.tasks import HMMEmulation
from neurodyn.training.distribution import sample_emissions, train_distribution

full = os.environ.get("NEURODYN_FULL") == "1"
scale = os.environ.get("NEURODYN_HMM_SCALE") or ("full" if full else "tiny")
scales = {  # n_checkpoints: mechanism analyses at equal intervals of training (0: only at its end)
    "tiny": {"n_units": 8, "n_noise": 8, "n_steps": 12, "n_iterations": 10, "batch_size": 16,
             "n_checkpoints": 0},
    "full": {"n_units": 16, "n_noise": 32, "n_steps": 12, "n_iterations": 150, "batch_size": 64,
             "n_checkpoints": 0},
    "large": {"n_units": 64, "n_noise": 64, "n_steps": 48, "n_iterations": 4000, "batch_size": 256,
              "n_checkpoints": 4},
}
settings = {"stay_prob": 0.9, "alpha": 1.0, "gain": 1.5, "epsilon": 0.02, "lr": 1e-2, "seed": 0,
            **scales[scale]}
settings.update({key: type(value)(os.environ[f"NEURODYN_{key.upper()}"]) for key, value in settings.items()
                 if os.environ.get(f"NEURODYN_{key.upper()}")})
big = scale != "tiny"  # scored and analysed at the guide's sizes
default_hmms = {"tiny": "linear:2", "full": "linear:2,linear:3,cyclic:3,fully_connected:3",
                "large": "linear:3,cyclic:3"}[scale]
hmms = [(topology, int(n)) for topology, n in
        (item.split(":") for item in os.environ.get("NEURODYN_HMMS", default_hmms).split(","))]

# %% [markdown]
# ## Train, score and take apart one network per HMM
#
# Emissions are scored on 1,000 sequences (500 of the 4 × longer variant) at full size; the mechanism
# on 16 noisy trajectories of 200 steps, with noise-free runs of 1,000 steps. `kick units` are the five
# units that move most before a change of the most probable symbol; how many of them are among the five
# units with the largest readout weights tells whether the kicks come from the readout itself. With
# checkpoints, the same scores and noise-free analysis are taken during training (`train_distribution`'s
# `callback`), to see whether the network's fixed points change late in training.

# %%
def score(model: LeakyRNN, task: HMMEmulation) -> tuple[dict, dict]:
    """Emission metrics of ``model`` on ``task``'s sequences and on 4 × longer ones."""
    emitted, batch = sample_emissions(model, task, 1000 if big else 64, seed=1)
    long_emitted, long_batch = sample_emissions(model, task.ood(), 500 if big else 64, seed=1)
    return task.evaluate(emitted, batch), task.ood().evaluate(long_emitted, long_batch)


def analyse(model: LeakyRNN, task: HMMEmulation) -> object:
    """The mechanism dataset of ``model`` (:func:`compute_hmm_mechanism` at the page's sizes); ``None`` when
    the most probable symbol never changes between steady stretches (no orbit or kick analysis then)."""
    try:
        return compute_hmm_mechanism(model, task, n_trials=16 if big else 4, n_steps=200 if big else 60,
                                     window=3 if big else 2, n_quiet_steps=1000 if big else 100, seed=2)
    except ValueError:
        return None


def noise_off(model: LeakyRNN, task: HMMEmulation) -> dict:
    """Where ``model`` goes with its noise off, from the states that :func:`analyse` visits, and how often
    the most probable symbol changes along those noisy trajectories (per step)."""
    batch = task.replace(n_steps=200 if big else 60).sample(16 if big else 4, seed=2)
    with torch.no_grad():
        out = model(torch.as_tensor(batch.inputs, dtype=next(model.parameters()).dtype), noise=False)
    states, symbols = out.states.double().numpy(), out.outputs.argmax(-1).numpy()
    collapse = compute_noise_free_collapse(model, states.reshape(-1, states.shape[-1])[:: 3 if big else 2],
                                           n_steps=1000 if big else 100, seed=2)
    return {"collapsed": bool(collapse["collapsed"]), "final_spread": collapse["final_spread"],
            "n_fixed_points": collapse["n_fixed_points"], "n_stable": collapse["n_stable"],
            "stability": collapse["fixed_points"].stability.astype(str).tolist(),
            "period": collapse["period"],
            "symbol_change_rate": float((np.diff(symbols, axis=1) != 0).mean())}


def checkpoint(model: LeakyRNN, task: HMMEmulation, iteration: int) -> dict:
    """Scores and noise-free fixed points of ``model`` after ``iteration`` training iterations."""
    metrics, ood_metrics = score(model, task)
    return {"iteration": iteration, "emission_error": metrics["emission_error"],
            "dwell_error": metrics["dwell_error"], "dwell_error_long": ood_metrics["dwell_error"],
            **noise_off(model, task)}


def mechanism_record(mech: object, w_out: np.ndarray) -> dict:
    """The orbit, speed and kick measurements of a mechanism dataset (``w_out``: readout weight per unit)."""
    readout_units = set(np.argsort(-w_out)[: mech.sizes["kick"]].tolist())
    kick = mech.kick_unit.values.tolist()
    return {"speed_ratio_at_transitions": mech.attrs["speed_ratio"],
            "explained_variance_pc12": mech.attrs["explained_variance"],
            "n_emission_changes_on_orbit": mech.attrs["n_emission_changes"],
            "mean_abs_winding": float(np.abs(mech.winding.values).mean()),
            "n_transitions": mech.attrs["n_transitions"], "kick_units": kick,
            "kick_scores": mech.kick_score.values[kick].round(3).tolist(),
            "kick_leads": mech.lead.values.tolist(),
            "kick_units_among_top_readout_units": len(readout_units & set(kick)),
            "median_kick_score_all_units": float(np.median(mech.kick_score.values))}


def run_one(topology: str, n_states: int) -> tuple[dict, object]:
    """Train, score and analyse the network of one HMM: its record and its mechanism dataset (or None)."""
    task = HMMEmulation(n_states=n_states, topology=topology, stay_prob=settings["stay_prob"],
                        n_steps=settings["n_steps"], n_noise=settings["n_noise"])
    model = LeakyRNN(task.n_inputs, settings["n_units"], task.n_outputs, alpha=settings["alpha"],
                     gain=settings["gain"], seed=settings["seed"])
    every = settings["n_iterations"] // settings["n_checkpoints"] if settings["n_checkpoints"] else 0
    checkpoints = []

    def track(iteration: int, model: LeakyRNN) -> dict:
        if every and (iteration + 1) % every == 0:
            point = checkpoint(model, task, iteration + 1)
            checkpoints.append(point)
            print(f"{n_states}-state {topology} after {point['iteration']} iterations: emission error "
                  f"{point['emission_error']:.3f}, dwell error {point['dwell_error']:.2f} / "
                  f"{point['dwell_error_long']:.2f} (long); noise off: {point['n_stable']} stable of "
                  f"{point['n_fixed_points']} fixed points; symbol changes per step "
                  f"{point['symbol_change_rate']:.3f}", flush=True)
        return {}

    start = time.process_time()
    fit = train_distribution(model, task, n_iterations=settings["n_iterations"],
                             batch_size=settings["batch_size"], lr=settings["lr"],
                             epsilon=settings["epsilon"], n_sinkhorn_iter=20, seed=settings["seed"],
                             eval_every=0, callback=track if every else None, progress=False)
    cpu_seconds = time.process_time() - start
    metrics, ood_metrics = score(fit.model, task)
    mech = analyse(fit.model, task)
    w_out = np.abs(fit.model.params().w_out.detach().numpy()).sum(0)
    record = {
        "hmm": f"{n_states}-state {topology}", "loss_first10": float(np.mean(fit.history["loss"][:10])),
        "loss_last10": float(np.mean(fit.history["loss"][-10:])),
        "metrics": metrics, "ood_metrics": ood_metrics, **noise_off(fit.model, task),
        **({} if mech is None else mechanism_record(mech, w_out)),
        "checkpoints": checkpoints, "train_cpu_seconds": cpu_seconds,
        "settings": {"scale": scale, "n_units": model.n_units, "n_noise": task.n_noise,
                     "n_steps": task.n_steps,
                     "alpha": settings["alpha"], "gain": settings["gain"],
                     "n_iterations": fit.config["n_iterations"], "batch_size": fit.config["batch_size"],
                     "epsilon": settings["epsilon"], "lr": settings["lr"], "seed": settings["seed"]},
    }
    return record, mech


records, mechanisms = [], []
for topology, n_states in hmms:
    record, mech = run_one(topology, n_states)
    records.append(record)
    mechanisms.append(mech)
    orbit = ("no steady change of the most probable symbol to analyse" if mech is None else
             f"speed at transitions {record['speed_ratio_at_transitions']:.2f} x median; "
             f"{record['n_emission_changes_on_orbit']} changes on the orbit, winding "
             f"{record['mean_abs_winding']:.1f}; best kick score {max(record['kick_scores']):.2f} vs median "
             f"{record['median_kick_score_all_units']:.2f}")
    print(f"{record['hmm']}: emission error {record['metrics']['emission_error']:.3f}, dwell error "
          f"{record['metrics']['dwell_error']:.2f} / {record['ood_metrics']['dwell_error']:.2f} (long); "
          f"noise off: {record['n_stable']} stable of {record['n_fixed_points']} fixed points (period "
          f"{record['period']}); {orbit}")

# %% [markdown]
# ## Emissions and speed along the orbit
#
# Per HMM, over the phase of the state in the top-two PC plane: the mean emission probability of each
# symbol (top) and the mean speed `‖F(h, 0) − h‖` of the input-free map (bottom). A closed orbit that
# changes the emissions shows the most probable symbol switching with the phase; fast transitions show
# as peaks of speed where it switches.

# %%
fig, axes = plt.subplots(2, len(hmms), layout="constrained", figsize=(3.2 * len(hmms) + 1.0, 4.6),
                         sharex=True, squeeze=False)
for column, record, mech in zip(axes.T, records, mechanisms):
    column[0].set(title=record["hmm"])
    if mech is None:  # no orbit analysis: the most probable symbol never changed between steady stretches
        continue
    phase = mech.phase.values / (2 * np.pi)
    for symbol in range(mech.sizes["symbol"]):
        column[0].plot(phase, mech.emission.values[:, symbol], label=f"symbol {symbol}")
    column[0].set(ylabel="emission probability")
    column[1].plot(phase, mech.speed.values, color="k")
    column[1].set(xlabel="phase (turns)", ylabel="speed")
axes[0, 0].legend(fontsize="small")
plt.show()
