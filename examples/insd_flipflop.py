"""Similarity deflation on the 2-bit flip-flop (Qian & Pehlevan 2025, iterative neural similarity deflation).

Usage: python examples/insd_flipflop.py [--tiny] [--out-dir runs/example_insd]

Network 0 is trained normally. Network 1 is trained with the task loss plus lambda times the ridge
predictivity of its hidden states from network 0's (and an activity-norm penalty against inflating
task-irrelevant variance). Network 2 is a second normally trained network for comparison. On held-out
trials, network 1 solves the task but is far less linearly predictable from network 0 than network 2
is; CKA and Procrustes are reported alongside. The fixed points of networks 0 and 1 are plotted.
Writes insd.png. Uses only the public API.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402

import neurodyn  # noqa: E402
from neurodyn.analysis import compare_to_references, find_fixed_points  # noqa: E402
from neurodyn.models import LeakyRNN  # noqa: E402
from neurodyn.plotting import plot_fixed_points  # noqa: E402
from neurodyn.tasks import FlipFlop  # noqa: E402
from neurodyn.training import train_deflated  # noqa: E402


def main(tiny: bool = False, out_dir: str = "runs/example_insd", lam: float = 1.0) -> dict:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    task = FlipFlop(n_bits=2, n_steps=30 if tiny else 64, p_pulse=0.1)
    n_units = 10 if tiny else 32
    kw = {"n_iterations": 150 if tiny else 1500, "batch_size": 32 if tiny else 64, "lr": 1e-2,
          "progress": False, "eval_every": 0}

    def net(seed: int) -> LeakyRNN:
        return LeakyRNN(task.n_inputs, n_units, task.n_outputs, alpha=0.5, seed=seed)

    net0 = neurodyn.train(net(0), task, seed=0, **kw).model
    deflated = train_deflated(net(1), task, reference_models=[net0], lam=lam, ridge=0.1,
                              activity_penalty=1e-2, seed=1, **kw).model
    standard = neurodyn.train(net(2), task, seed=2, **kw).model
    report = {name: compare_to_references(m, [net0], task, n_trials=64, seed=12345)
              for name, m in (("deflated", deflated), ("standard", standard))}
    print(json.dumps(report, indent=1))

    batch = task.sample(16, seed=3)
    fig = plt.figure(figsize=(11, 5), layout="constrained")
    for k, (title, model) in enumerate((("network 0 (standard)", net0), ("network 1 (deflated)", deflated))):
        fps = find_fixed_points(model, task=task, n_inits=128 if tiny else 512, seed=0)
        with torch.no_grad():
            states = model(torch.as_tensor(batch.inputs), noise=False).states.numpy()
        ax = plot_fixed_points(fps, trajectories=states, ax=fig.add_subplot(1, 2, k + 1, projection="3d"))
        n_stable = int(sum(s == "stable" for s in fps.to_xarray().stability.values))
        ax.set_title(f"{title}: {n_stable} stable points")
        report["deflated" if k else "network0"] = {**report.get("deflated" if k else "network0", {}),
                                                   "n_stable": n_stable}
    fig.savefig(out / "insd.png", dpi=110)
    plt.close(fig)
    return report


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="small sizes (for CI)")
    parser.add_argument("--out-dir", default="runs/example_insd")
    parser.add_argument("--lam", type=float, default=1.0, help="weight of the predictivity penalty")
    args = parser.parse_args()
    main(tiny=args.tiny, out_dir=args.out_dir, lam=args.lam)
