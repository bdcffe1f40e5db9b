"""Train vanilla RNNs (alpha = 1) to emulate HMMs and take their mechanism apart (Torre et al. 2025).

Usage: python examples/hmm_mechanism.py [--tiny] [--out runs/hmm_mechanism/mechanism.json]

For each HMM (2- and 3-state linear chains, a 3-state cycle, a 3-state fully connected HMM) a
vanilla tanh RNN driven only by Gaussian noise inputs is trained with the Sinkhorn divergence,
then analysed with :func:`neurodyn.analysis.compute_hmm_mechanism`: the emission statistics,
where the network goes with its noise off (fixed points), the speed along noisy trajectories
(slow regions and fast transitions), the orbit in the top-two PC plane and where the emissions
change along it, and the kick neurons. Writes one JSON record per HMM. Uses only the public API.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from neurodyn.analysis import compute_hmm_mechanism
from neurodyn.models import LeakyRNN
from neurodyn.tasks import HMMEmulation
from neurodyn.training.distribution import sample_emissions, train_distribution

HMMS = (("linear", 2), ("linear", 3), ("cyclic", 3), ("fully_connected", 3))


def run_one(topology: str, n_states: int, *, tiny: bool) -> dict:
    task = HMMEmulation(n_states=n_states, topology=topology, stay_prob=0.9, n_steps=12,
                        n_noise=8 if tiny else 32)
    model = LeakyRNN(task.n_inputs, 8 if tiny else 16, task.n_outputs, alpha=1.0, gain=1.5, seed=0)
    fit = train_distribution(model, task, n_iterations=10 if tiny else 150, batch_size=16 if tiny else 64,
                             lr=1e-2, epsilon=0.02, n_sinkhorn_iter=20, seed=0, eval_every=0, progress=False)
    emitted, batch = sample_emissions(fit.model, task, 64 if tiny else 1000, seed=1)
    long_emitted, long_batch = sample_emissions(fit.model, task.ood(), 64 if tiny else 500, seed=1)
    mech = compute_hmm_mechanism(fit.model, task, n_trials=4 if tiny else 16, n_steps=60 if tiny else 200,
                                 window=2 if tiny else 3, n_quiet_steps=100 if tiny else 1000, seed=2)
    w_out = np.abs(fit.model.params().w_out.detach().numpy()).sum(0)
    readout_units = set(np.argsort(-w_out)[: mech.sizes["kick"]].tolist())
    kick = mech.kick_unit.values.tolist()
    return {
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
                     "alpha": 1.0, "gain": 1.5, "n_iterations": fit.config["n_iterations"],
                     "batch_size": fit.config["batch_size"], "epsilon": 0.02, "lr": 1e-2},
    }


def main(tiny: bool = False, out: str = "runs/hmm_mechanism/mechanism.json", hmms=HMMS) -> list[dict]:
    records = []
    for topology, n_states in hmms:
        rec = run_one(topology, n_states, tiny=tiny)
        print(json.dumps(rec), flush=True)
        records.append(rec)
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(records, indent=1))
    return records


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="a few seconds per HMM, for CI")
    parser.add_argument("--out", default="runs/hmm_mechanism/mechanism.json")
    args = parser.parse_args()
    main(tiny=args.tiny, out=args.out)
