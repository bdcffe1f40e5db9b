"""A network trained on surrogate behaviour with swap errors vs a task-optimal one (Radmard, Bays & Lengyel,
"Setting up for failure", arXiv:2512.04808).

Usage: python examples/swap_errors.py [--tiny] [--out-dir runs/example_swap_errors]

Surrogate reports of a two-item continuous-report task are drawn from the swap model of Bays et al. (2009)
with a 20 % swap rate (kappa 8, 70 % target, 10 % guesses). One network is trained on them with the
diffusion objective (its response-period dynamics denoise a ring-coded report); another, task-optimal, is
trained by plain BPTT to report the cued item. The swap model is fitted to the data and to each network's
own reports on held-out trials, and the cued and the uncued items are decoded from each network's states
at every step. Writes summary.json (the three fits, the decodability over time), the fits as .nc files
and swap_errors.png (response-error histograms of data and networks, decodability over the trial).
Uses only the public API.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from neurodyn.analysis import compute_decodability_over_time  # noqa: E402
from neurodyn.models import LeakyRNN  # noqa: E402
from neurodyn.plotting import plot_response_errors  # noqa: E402
from neurodyn.tasks import ContinuousReport, fit_mixture_model, sample_mixture_responses  # noqa: E402
from neurodyn.training import sample_diffusion, train, train_diffusion  # noqa: E402

#: the behaviour to reproduce (swap model of Bays et al. 2009)
SWAPS = {"kappa": 8.0, "p_target": 0.7, "p_swap": 0.2, "p_guess": 0.1}
PARAMS = ("kappa", "p_target", "p_swap", "p_guess")


def settings(tiny: bool) -> dict:
    """Task, network and training sizes (``tiny``: seconds, for the tests)."""
    task = {"n_items": 2, "n_ring": 8, "output_ring": 8, "kappa": 2.0, "fixation_ms": 40.0,
            "stimulus_ms": 60.0, "delay_min_ms": 100.0, "delay_max_ms": 100.0, "cue_ms": 60.0,
            "response_ms": 200.0, "grace_ms": 0.0, "input_noise": 0.0, "dt": 20.0}
    if tiny:
        return {"task": task, "n_units": 8, "alpha": 0.5, "diffusion_iterations": 3, "plain_iterations": 3,
                "batch_size": 8, "lr": 3e-3, "n_trials": 40}
    return {"task": task, "n_units": 64, "alpha": 0.5, "diffusion_iterations": 4000, "plain_iterations": 600,
            "batch_size": 64, "lr": 3e-3, "n_trials": 2000}


def items_over_time(states: np.ndarray, targets: np.ndarray, non_targets: np.ndarray, n_folds: int) -> dict:
    """Mean R² of (cos, sin) of the cued and of the uncued item decoded from the states at each step."""
    angles = np.stack([targets, non_targets[:, 0]], 1)
    variables = np.concatenate([np.cos(angles), np.sin(angles)], 1)  # cos cued, cos uncued, sin ..
    ds = compute_decodability_over_time(states, variables, n_folds=n_folds, alpha=1.0, seed=0)
    r2 = ds.r2.transpose("time", "variable").values
    return {"cued": r2[:, [0, 2]].mean(1).tolist(), "uncued": r2[:, [1, 3]].mean(1).tolist()}


def main(tiny: bool = False, out_dir: str = "runs/example_swap_errors") -> dict:
    cfg = settings(tiny)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    task = ContinuousReport(**cfg["task"])
    ring = task.output_ring
    n_folds = 4 if tiny else 5

    # surrogate behaviour on held-out trials, and its swap-model fit
    data_batch = task.sample(cfg["n_trials"], seed=7)
    targets, non_targets = task.items(data_batch)
    data = sample_mixture_responses(SWAPS, targets, non_targets, seed=8)
    fits = {"data": fit_mixture_model(data, targets, non_targets)}
    responses = {"data": (data, targets, non_targets)}

    # the network fitted to the behaviour by the diffusion objective
    model = LeakyRNN(task.n_inputs + ring, cfg["n_units"], ring, alpha=cfg["alpha"], seed=0)
    fitted = train_diffusion(model, task, behaviour=SWAPS, n_iterations=cfg["diffusion_iterations"],
                             batch_size=cfg["batch_size"], lr=cfg["lr"], eval_every=0, progress=not tiny,
                             seed=0)
    reports, states, batch = sample_diffusion(fitted.model, task, cfg["n_trials"], seed=9)
    t_net, nt_net = task.items(batch)
    fits["diffusion"] = fit_mixture_model(reports, t_net, nt_net)
    responses["diffusion"] = (reports, t_net, nt_net)
    decoded = {"diffusion": items_over_time(states, t_net, nt_net, n_folds)}

    # the task-optimal network: plain BPTT on the cued item's ring code
    optimal = train(LeakyRNN(task.n_inputs, cfg["n_units"], ring, alpha=cfg["alpha"], seed=0), task,
                    n_iterations=cfg["plain_iterations"], batch_size=cfg["batch_size"], lr=cfg["lr"],
                    eval_every=0, progress=not tiny, seed=0)
    with torch.no_grad():
        run = optimal.model(torch.as_tensor(batch.inputs), noise=False)
    fits["task_optimal"] = fit_mixture_model(task.reports(run.outputs.numpy(), batch), t_net, nt_net)
    responses["task_optimal"] = (task.reports(run.outputs.numpy(), batch), t_net, nt_net)
    decoded["task_optimal"] = items_over_time(run.states.numpy(), t_net, nt_net, n_folds)

    for name, fit in fits.items():
        fit.save(out / f"fit_{name}.nc")
    periods = {k: v[0].tolist() for k, v in batch.periods.items()}
    summary = {"behaviour": SWAPS, "settings": cfg, "periods_steps": periods,
               "fits": {k: {p: float(getattr(f, p)) for p in PARAMS} for k, f in fits.items()},
               "decodability_r2": decoded}
    figure(fits, responses, decoded, periods, out / "swap_errors.png")
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    for name, fit in summary["fits"].items():
        print(f"{name:>13}: " + ", ".join(f"{p} {v:.3f}" for p, v in fit.items()))
    return summary


def figure(fits, responses, decoded, periods, path) -> None:
    """Response-error histograms (data, diffusion network, task-optimal network) and decodability."""
    fig, axes = plt.subplots(1, 4, figsize=(17, 3.4))
    titles = {"data": "surrogate data", "diffusion": "network (diffusion)",
              "task_optimal": "task-optimal network"}
    for ax, (name, (r, t, nt)) in zip(axes, responses.items()):
        plot_response_errors(fits[name], r, t, nt, ax=ax, label=titles[name])
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
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="seconds-long run (as in the tests)")
    parser.add_argument("--out-dir", default="runs/example_swap_errors")
    args = parser.parse_args()
    main(tiny=args.tiny, out_dir=args.out_dir)
