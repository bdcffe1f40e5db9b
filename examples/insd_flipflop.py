"""Iterated similarity deflation on the 2-bit flip-flop (Qian & Pehlevan 2025, INSD).

Usage: python examples/insd_flipflop.py [--tiny] [--n-networks 3] [--out-dir runs/example_insd]

Network 0 is trained normally; network k >= 1 is trained with the task loss plus lambda times the ridge
predictivity of its hidden states from those of networks 0..k-1 (and an activity-norm penalty against
inflating task-irrelevant variance). Standard networks k >= 1 (other seeds, no deflation) are the control.
For every network, on held-out trials: predictivity, CKA and Procrustes distance from the earlier
networks of the chain, cross-validated decodability of the two bits from its states, the task error in
distribution and on the out-of-distribution variant (4 x longer trials, twice the pulse rate), and its
stable fixed points. The task-error cost of deflation is the deflated networks' MSE over the standard
ones'. The fixed points of networks 0 and 1 are plotted (insd.png); all numbers go to insd.json.
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

import neurodyn  # noqa: E402
from neurodyn.analysis import compare_to_references, compute_decodability, find_fixed_points  # noqa: E402
from neurodyn.models import LeakyRNN  # noqa: E402
from neurodyn.plotting import plot_fixed_points  # noqa: E402
from neurodyn.tasks import FlipFlop  # noqa: E402
from neurodyn.training import evaluate, train_deflation_sequence  # noqa: E402


def describe(model, references, task, *, n_inits: int) -> tuple[dict, object]:
    """Similarity to ``references`` (if any), decodability, task error in and out of distribution, and
    the fixed points (returned too, for the figure)."""
    row = (compare_to_references(model, references, task, n_trials=64, seed=12345) if references
           else {f"task_{k}": v for k, v in evaluate(model, task, n_trials=64, seed=12345).items()})
    row["decodability_r2"] = compute_decodability(model, task, n_trials=64, seed=12345).r2.values.tolist()
    row.update({f"ood_{k}": v for k, v in evaluate(model, task.ood(), n_trials=64, seed=12345).items()})
    fps = find_fixed_points(model, task=task, n_inits=n_inits, seed=0)
    row["n_stable"] = int(np.sum(fps.fixed_points().stability == "stable"))
    return row, fps


def main(tiny: bool = False, out_dir: str = "runs/example_insd", lam: float = 1.0,
         n_networks: int = 3) -> dict:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    task = FlipFlop(n_bits=2, n_steps=30 if tiny else 64, p_pulse=0.1)
    n_units, n_inits = (10, 128) if tiny else (32, 512)
    kw = {"n_iterations": 150 if tiny else 1500, "batch_size": 32 if tiny else 64, "lr": 1e-2,
          "progress": False, "eval_every": 0}

    def net(seed: int) -> LeakyRNN:
        return LeakyRNN(task.n_inputs, n_units, task.n_outputs, alpha=0.5, seed=seed)

    chain = [r.model for r in train_deflation_sequence(net, task, n_networks=n_networks, lam=lam, ridge=0.1,
                                                       activity_penalty=1e-2, seed=0, **kw)]
    standards = [neurodyn.train(net(100 + k), task, seed=100 + k, **kw).model for k in range(1, n_networks)]
    report, points = {}, {}
    report["network0"], points[0] = describe(chain[0], [], task, n_inits=n_inits)
    for k in range(1, n_networks):
        report[f"deflated{k}"], points[k] = describe(chain[k], chain[:k], task, n_inits=n_inits)
        report[f"standard{k}"], _ = describe(standards[k - 1], chain[:k], task, n_inits=n_inits)
    mse = {kind: float(np.mean([report[f"{kind}{k}"]["task_mse"] for k in range(1, n_networks)]))
           for kind in ("deflated", "standard")}
    report["cost"] = {"deflated_mse": mse["deflated"], "standard_mse": mse["standard"],
                      "mse_ratio": mse["deflated"] / mse["standard"]}
    report["deflated"], report["standard"] = report["deflated1"], report["standard1"]  # the first step
    report["settings"] = {"n_units": n_units, "n_steps": task.n_steps, "lam": lam, "n_networks": n_networks,
                          **{k: v for k, v in kw.items() if k != "progress"}}
    print(json.dumps(report, indent=1))
    (out / "insd.json").write_text(json.dumps(report, indent=1))

    batch = task.sample(16, seed=3)
    fig = plt.figure(figsize=(11, 5), layout="constrained")
    shown = (("network 0 (standard)", chain[0]), ("network 1 (deflated)", chain[1]))
    for k, (title, model) in enumerate(shown):
        fps = points[k]
        with torch.no_grad():
            states = model(torch.as_tensor(batch.inputs), noise=False).states.numpy()
        ax = plot_fixed_points(fps, trajectories=states, ax=fig.add_subplot(1, 2, k + 1, projection="3d"))
        ax.set_title(f"{title}: {report['deflated1' if k else 'network0']['n_stable']} stable points")
    fig.savefig(out / "insd.png", dpi=110)
    plt.close(fig)
    return report


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="small sizes (for CI)")
    parser.add_argument("--out-dir", default="runs/example_insd")
    parser.add_argument("--lam", type=float, default=1.0, help="weight of the predictivity penalty")
    parser.add_argument("--n-networks", type=int, default=3, help="networks in the deflation chain (>= 2)")
    args = parser.parse_args()
    main(tiny=args.tiny, out_dir=args.out_dir, lam=args.lam, n_networks=args.n_networks)
