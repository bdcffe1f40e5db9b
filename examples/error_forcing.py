"""Error forcing vs teacher forcing vs plain training on delayed XOR, across delays (Sağtekin et al. 2025).

Usage: python examples/error_forcing.py [--tiny] [--out-dir runs/example_error_forcing] [--workers N]

Two sweeps (neurodyn.sweep, resumable, on a local Dask cluster with --workers) train several seeds per
method and delay: BPTT, TF-BPTT and EF-BPTT (forcing none / teacher / error, learning by backpropagation
through time), and RFLO and EF-RFLO (random feedback local online learning, without and with error
forcing). Each network is then evaluated without forcing on a held-out batch. Writes summary.json (per
method and delay: the fraction of networks whose held-out accuracy reaches LEARNED, and the median
held-out MSE), error_forcing.png (both against the delay) and the sweeps' datasets under bptt/ and rflo/.
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

from neurodyn.sweep import run_sweep  # noqa: E402

#: a network has learned when its held-out accuracy reaches this
LEARNED = 0.95
#: (label, sweep, forcing) of each method
METHODS = (("BPTT", "bptt", "none"), ("TF-BPTT", "bptt", "teacher"), ("EF-BPTT", "bptt", "error"),
           ("RFLO", "rflo", "none"), ("EF-RFLO", "rflo", "error"))


def settings(tiny: bool) -> dict:
    """Task, model and training settings of the two sweeps (``tiny``: seconds, for the tests)."""
    if tiny:
        return {"delays": [20.0, 60.0], "seeds": 1, "n_units": 6,
                "training": {"n_iterations": 2, "batch_size": 4, "lr": 1e-2, "eval_every": 0},
                "analysis": {"n_trials": 8, "n_inits": 1, "max_iters": 5}}
    return {"delays": [40.0, 320.0], "seeds": 2, "n_units": 24,
            "training": {"n_iterations": 300, "batch_size": 32, "lr": 1e-2, "eval_every": 0},
            "analysis": {"n_trials": 256, "n_inits": 8, "max_iters": 200}}


def spec(rule: str, cfg: dict) -> dict:
    """The sweep of one learning rule: grid over the delay and the forcing."""
    forcings = ["none", "teacher", "error"] if rule == "bptt" else ["none", "error"]
    return {
        "task": {"name": "delayed_xor", "dt": 20.0, "pulse_ms": 40.0, "go_ms": 40.0, "wait_ms": 40.0,
                 "jitter_ms": 40.0, "response_ms": 60.0},
        "model": {"name": "LeakyRNN", "n_units": cfg["n_units"], "alpha": 0.2},
        "training": {**cfg["training"], "learning_rule": rule, "forcing_strength": 0.5},
        "analysis": {**cfg["analysis"], "graph": False, "dynamics_metric": "procrustes"},
        "grid": {"task.delay_ms": cfg["delays"], "training.forcing": forcings},
        "seeds": cfg["seeds"],
    }


def main(tiny: bool = False, out_dir: str = "runs/example_error_forcing", workers: int = 0) -> dict:
    out = Path(out_dir)
    cfg = settings(tiny)
    results = {rule: run_sweep(spec(rule, cfg), out / rule, workers=workers, progress=not tiny)
               for rule in ("bptt", "rflo")}
    summary: dict = {"delays_ms": cfg["delays"], "n_seeds": cfg["seeds"], "learned_accuracy": LEARNED,
                     "n_units": cfg["n_units"], "training": cfg["training"], "methods": {}}
    for label, rule, forcing in METHODS:
        ds = results[rule].dataset.sel(forcing=forcing)
        acc, mse = ds["id_accuracy"].values, ds["id_mse"].values  # (delay, seed)
        summary["methods"][label] = {"fraction_learned": (acc >= LEARNED).mean(axis=1).tolist(),
                                     "median_test_mse": np.nanmedian(mse, axis=1).tolist()}
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.5), constrained_layout=True)
    for label, _, _ in METHODS:
        m = summary["methods"][label]
        style = "--" if "RFLO" in label else "-"
        axes[0].plot(cfg["delays"], m["fraction_learned"], style, marker="o", label=label)
        axes[1].plot(cfg["delays"], m["median_test_mse"], style, marker="o", label=label)
    axes[0].set(xlabel="delay (ms)", ylabel=f"fraction learned (accuracy ≥ {LEARNED})", ylim=(-0.05, 1.05))
    axes[1].set(xlabel="delay (ms)", ylabel="median held-out MSE", yscale="log")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"delayed XOR, {cfg['n_units']} units, {cfg['seeds']} seeds per point")
    fig.savefig(out / "error_forcing.png", dpi=120)
    plt.close(fig)
    return summary


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="a few seconds, to check that it runs")
    parser.add_argument("--out-dir", default="runs/example_error_forcing")
    parser.add_argument("--workers", type=int, default=0,
                        help="workers of a local Dask cluster (default 0: one by one, in this process)")
    args = parser.parse_args()
    print(json.dumps(main(args.tiny, args.out_dir, args.workers)["methods"], indent=1))
