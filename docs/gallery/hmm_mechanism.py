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
# `NEURODYN_HMMS` chooses the HMMs (topology:states, comma-separated, e.g. `cyclic:3,linear:2`).
# `python examples/hmm_mechanism.py [--tiny] [--out FILE]` runs this page from the command line (full
# size unless `--tiny`) and writes one JSON record per HMM into `FILE`.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np

from neurodyn.analysis import compute_hmm_mechanism
from neurodyn.models import LeakyRNN
from neurodyn.tasks import HMMEmulation
from neurodyn.training.distribution import sample_emissions, train_distribution

full = os.environ.get("NEURODYN_FULL") == "1"
default_hmms = "linear:2,linear:3,cyclic:3,fully_connected:3" if full else "linear:2"
hmms = [(topology, int(n)) for topology, n in
        (item.split(":") for item in os.environ.get("NEURODYN_HMMS", default_hmms).split(","))]
settings = {"n_units": 16 if full else 8, "n_noise": 32 if full else 8, "n_steps": 12, "stay_prob": 0.9,
            "alpha": 1.0, "gain": 1.5, "n_iterations": 150 if full else 10, "batch_size": 64 if full else 16,
            "epsilon": 0.02, "lr": 1e-2}

# %% [markdown]
# ## Train, score and take apart one network per HMM
#
# Emissions are scored on 1,000 sequences (500 of the 4 × longer variant) at full size; the mechanism
# on 16 noisy trajectories of 200 steps, with noise-free runs of 1,000 steps. `kick units` are the five
# units that move most before a change of the most probable symbol; how many of them are among the five
# units with the largest readout weights tells whether the kicks come from the readout itself.

# %%
def run_one(topology: str, n_states: int) -> tuple[dict, object]:
    """Train, score and analyse the network of one HMM: its record and its mechanism dataset."""
    task = HMMEmulation(n_states=n_states, topology=topology, stay_prob=settings["stay_prob"],
                        n_steps=settings["n_steps"], n_noise=settings["n_noise"])
    model = LeakyRNN(task.n_inputs, settings["n_units"], task.n_outputs, alpha=settings["alpha"],
                     gain=settings["gain"], seed=0)
    fit = train_distribution(model, task, n_iterations=settings["n_iterations"],
                             batch_size=settings["batch_size"], lr=settings["lr"],
                             epsilon=settings["epsilon"], n_sinkhorn_iter=20, seed=0, eval_every=0,
                             progress=False)
    emitted, batch = sample_emissions(fit.model, task, 1000 if full else 64, seed=1)
    long_emitted, long_batch = sample_emissions(fit.model, task.ood(), 500 if full else 64, seed=1)
    mech = compute_hmm_mechanism(fit.model, task, n_trials=16 if full else 4, n_steps=200 if full else 60,
                                 window=3 if full else 2, n_quiet_steps=1000 if full else 100, seed=2)
    w_out = np.abs(fit.model.params().w_out.detach().numpy()).sum(0)
    readout_units = set(np.argsort(-w_out)[: mech.sizes["kick"]].tolist())
    kick = mech.kick_unit.values.tolist()
    record = {
        "hmm": f"{n_states}-state {topology}", "loss_first10": float(np.mean(fit.history["loss"][:10])),
        "loss_last10": float(np.mean(fit.history["loss"][-10:])),
        "metrics": task.evaluate(emitted, batch),
        "ood_metrics": task.ood().evaluate(long_emitted, long_batch),
        "collapsed": bool(mech.attrs["collapsed"]), "final_spread": mech.attrs["final_spread"],
        "n_fixed_points": mech.attrs["n_fixed_points"], "n_stable": mech.attrs["n_stable"],
        "stability": mech.fixed_point_stability.values.tolist(),
        "speed_ratio_at_transitions": mech.attrs["speed_ratio"],
        "explained_variance_pc12": mech.attrs["explained_variance"],
        "n_emission_changes_on_orbit": mech.attrs["n_emission_changes"],
        "mean_abs_winding": float(np.abs(mech.winding.values).mean()),
        "n_transitions": mech.attrs["n_transitions"], "kick_units": kick,
        "kick_scores": mech.kick_score.values[kick].round(3).tolist(),
        "kick_leads": mech.lead.values.tolist(), "period": mech.attrs["period"],
        "kick_units_among_top_readout_units": len(readout_units & set(kick)),
        "median_kick_score_all_units": float(np.median(mech.kick_score.values)),
        "settings": {"n_units": model.n_units, "n_noise": task.n_noise, "n_steps": task.n_steps,
                     "alpha": settings["alpha"], "gain": settings["gain"],
                     "n_iterations": fit.config["n_iterations"], "batch_size": fit.config["batch_size"],
                     "epsilon": settings["epsilon"], "lr": settings["lr"]},
    }
    return record, mech


records, mechanisms = [], []
for topology, n_states in hmms:
    record, mech = run_one(topology, n_states)
    records.append(record)
    mechanisms.append(mech)
    print(f"{record['hmm']}: emission error {record['metrics']['emission_error']:.3f}, dwell error "
          f"{record['metrics']['dwell_error']:.2f} / {record['ood_metrics']['dwell_error']:.2f} (long); "
          f"noise off: {record['n_stable']} stable of {record['n_fixed_points']} fixed points (period "
          f"{record['period']}); speed at transitions {record['speed_ratio_at_transitions']:.2f} x median; "
          f"{record['n_emission_changes_on_orbit']} changes on the orbit, winding "
          f"{record['mean_abs_winding']:.1f}; best kick score {max(record['kick_scores']):.2f} vs median "
          f"{record['median_kick_score_all_units']:.2f}")

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
    phase = mech.phase.values / (2 * np.pi)
    for symbol in range(mech.sizes["symbol"]):
        column[0].plot(phase, mech.emission.values[:, symbol], label=f"symbol {symbol}")
    column[0].set(title=record["hmm"], ylabel="emission probability")
    column[1].plot(phase, mech.speed.values, color="k")
    column[1].set(xlabel="phase (turns)", ylabel="speed")
axes[0, 0].legend(fontsize="small")
plt.show()
