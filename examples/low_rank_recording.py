"""Maximum-entropy loadings of a low-rank RNN fitted to macaque M1 spike counts.

Usage: python examples/low_rank_recording.py [--tiny] [--data-dir ../shared/data] [--rank 2]
                                             [--out-dir runs/example_low_rank_recording]

Data: ``reaching_m1_s1_spykesml/m1_stevenson_2011.mat`` from the shared recordings (171 units, 50 ms
bins, centre-out reaching; Stevenson et al. 2011, J Neurophysiol 106:764, via KordingLab/spykesML, MIT).
The folder is found from ``--data-dir``, ``NEURODYN_DATA`` or the first ``shared/data`` above the
working directory; without it the script stops with a message.

Steps, public API only:

1. bin and smooth: the most active units, counts summed into 100 ms bins, square root, Gaussian
   smoothing (sd 1.5 bins), z-scored with the training part's statistics and scaled by 1/4 so the
   rates sit inside tanh's range; the last 20 % of the time is held out;
2. fit a rank-R tanh ``LowRankRNN`` (one unit per recorded unit, identity observation, alpha = 0.2)
   by generalized teacher forcing (``fit_teacher_forcing``);
3. the identifiable statistics of its loadings (``compute_low_rank_statistics``) and the
   maximum-entropy loading law that keeps its latent dynamics (``fit_maxent_loadings``);
4. networks sampled from the law against the fitted one: stable points of the latent map
   (``find_fixed_points`` on ``latent_map``) and k-step prediction of the held-out latent trajectory
   ``kappa = n^T x / N`` (R^2); as controls, the same network with ``n`` shuffled across units
   (breaks the identified ``E[n | m, b]``, keeps every marginal) and persistence (``kappa[t+k] = kappa[t]``);
5. a figure (``low_rank_recording.png``) and ``results.json`` under ``--out-dir``.

``--tiny``: 30 units, 1500 bins, 2 x 3 training batches, 20 flow epochs, 8 check networks, 2 samples.
The default: every unit with spikes in both parts (up to 171), 60 x 20 batches of 32 windows of 30
bins, 100 flow epochs, 32 check networks, 5 samples.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import numpy as np
import torch

from neurodyn.analysis import find_fixed_points
from neurodyn.analysis.low_rank import compute_low_rank_statistics, fit_maxent_loadings, latent_map
from neurodyn.io import TimeSeries, load_timeseries
from neurodyn.models import LowRankRNN
from neurodyn.training import fit_teacher_forcing

FILE = Path("reaching_m1_s1_spykesml") / "m1_stevenson_2011.mat"
ALPHA = 0.2  # dt / tau with 100 ms bins and tau = 500 ms
HORIZONS = (1, 5, 10)  # prediction horizons, in 100 ms bins

TINY = dict(n_units=30, n_bins=1500, n_epochs=2, batches_per_epoch=3, batch_size=8, flow_epochs=20,
            n_samples=2, n_check=8)
FULL = dict(n_units=171, n_bins=None, n_epochs=60, batches_per_epoch=20, batch_size=32, flow_epochs=100,
            n_samples=5, n_check=32)


def find_data(data_dir: str | None) -> Path:
    """The shared recordings folder: ``data_dir``, ``NEURODYN_DATA`` or ``shared/data`` upwards."""
    if data_dir or os.environ.get("NEURODYN_DATA"):
        return Path(data_dir or os.environ["NEURODYN_DATA"])
    here = Path.cwd()
    return next((d / "shared" / "data" for d in (here, *here.parents) if (d / "shared" / "data").is_dir()),
                Path("shared/data"))


def preprocess(data_dir: Path, *, n_units: int, n_bins: int | None) -> tuple[TimeSeries, TimeSeries]:
    """Bin (100 ms), take square roots, smooth (Gaussian, sd 1.5 bins), z-score on the training part
    and scale by 1/4; returns (train, test) series of the ``n_units`` most active units."""
    raw = load_timeseries(data_dir / FILE, key="spikes", transpose=True, dt=0.05, drop_constant=True)
    counts = raw.values if n_bins is None else raw.values[: 2 * n_bins]
    t = counts.shape[0] // 2
    binned = counts[: 2 * t].reshape(t, 2, counts.shape[1]).sum(1).astype(np.float64)
    lags = np.arange(-5, 6)
    kernel = np.exp(-0.5 * (lags / 1.5) ** 2)
    smooth = np.stack([np.convolve(np.sqrt(c), kernel / kernel.sum(), mode="same") for c in binned.T], 1)
    split = int(0.8 * t)
    active = (smooth[:split].std(0) > 0) & (smooth[split:].std(0) > 0)  # spikes in both parts
    top = np.sort(np.flatnonzero(active)[np.argsort(binned[:, active].mean(0))[::-1][:n_units]])
    smooth = smooth[:, top]
    mean, std = smooth[:split].mean(0), smooth[:split].std(0)
    x = (smooth - mean) / std / 4.0
    names = [raw.channel_names[i] for i in top]
    source = str(data_dir / FILE)
    return (TimeSeries.from_arrays(x[:split], dt=0.1, channel_names=names, source=source),
            TimeSeries.from_arrays(x[split:], dt=0.1, channel_names=names, source=source))


def latent_r2(model: LowRankRNN, kappa: torch.Tensor, k: int) -> float:
    """R^2 of predicting ``kappa[t + k]`` by ``k`` steps of the model's latent map from ``kappa[t]``."""
    pred = kappa[:-k]
    for _ in range(k):
        pred = latent_map(model, pred)
    target = kappa[k:]
    return float(1 - (pred - target).pow(2).sum() / (target - target.mean(0)).pow(2).sum())


def persistence_r2(kappa: torch.Tensor, k: int) -> float:
    target = kappa[k:]
    return float(1 - (kappa[:-k] - target).pow(2).sum() / (target - target.mean(0)).pow(2).sum())


def stable_points(model: LowRankRNN, kappa: torch.Tensor) -> np.ndarray:
    """Stable fixed points (point, rank) of the latent map, from 64 starts spread over the data's range."""
    rng = np.random.default_rng(0)
    lo, hi = kappa.min(0).values.numpy(), kappa.max(0).values.numpy()
    starts = lo + (hi - lo) * rng.uniform(-0.5, 1.5, (64, model.rank))
    res = find_fixed_points(lambda h, u: latent_map(model, h), state_size=model.rank, initial_states=starts,
                            seed=0)
    fp = res.fixed_points()
    return np.asarray(fp.states[fp.stability == "stable"], dtype=np.float64).reshape(-1, model.rank)


def shuffled(model: LowRankRNN, seed: int = 0) -> LowRankRNN:
    """The network with ``n`` permuted across units: same marginals, no ``E[n | m, b]`` structure."""
    rows = model.loadings().double()
    perm = torch.as_tensor(np.random.default_rng(seed).permutation(rows.shape[0]))
    rows[:, model.rank:2 * model.rank] = rows[perm, model.rank:2 * model.rank]
    return LowRankRNN.from_loadings(rows, rank=model.rank, alpha=model.alpha).double()


def summarise(model: LowRankRNN, kappa: torch.Tensor) -> dict:
    pts = stable_points(model, kappa)
    return {"r2": {k: latent_r2(model, kappa, k) for k in HORIZONS}, "n_stable": int(len(pts)),
            "stable_points": pts.round(4).tolist()}


def plot(path: Path, kappa: torch.Tensor, fitted: LowRankRNN, sample: LowRankRNN, results: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    k = 5
    fig, ax = plt.subplots(1, 3, figsize=(13, 3.8))
    t = np.arange(kappa.shape[0]) * 0.1
    show = slice(0, min(600, kappa.shape[0]))
    ax[0].plot(t[show], kappa[show, 0], color="k", lw=1, label="held-out data")
    for model, name, color in ((fitted, "fitted", "C0"), (sample, "max-ent sample", "C1")):
        pred = kappa[:-k]
        for _ in range(k):
            pred = latent_map(model, pred)
        ax[0].plot(t[k:][show], pred[show, 0], color=color, lw=1, label=f"{name}, {k}-step")
    ax[0].set(xlabel="time (s)", ylabel="kappa_0 = n_0 . x / N", title="held-out latent trajectory")
    ax[0].legend(fontsize=7)
    fr, sr = fitted.loadings().double(), sample.loadings().double()
    r = fitted.rank
    ax[1].scatter(fr[:, 0], fr[:, r], s=8, label="fitted network", color="C0")
    ax[1].scatter(sr[:, 0], sr[:, r], s=8, label="sampled network", color="C1", alpha=0.6)
    ax[1].set(xlabel="m_0", ylabel="n_0", title="per-unit loadings")
    ax[1].legend(fontsize=7)
    ax[2].plot(kappa[:, 0], kappa[:, -1], color="0.7", lw=0.5)
    fp = np.asarray(results["fitted"]["stable_points"]).reshape(-1, r)
    ax[2].scatter(fp[:, 0], fp[:, -1], s=80, marker="o", facecolor="none", edgecolor="C0", label="fitted",
                  zorder=3)
    for i, s in enumerate(results["samples"]):
        sp = np.asarray(s["stable_points"]).reshape(-1, r)
        ax[2].scatter(sp[:, 0], sp[:, -1], s=20, marker="x", color="C1", label="sampled" if i == 0 else None,
                      zorder=3)
    ax[2].set(xlabel="kappa_0", ylabel=f"kappa_{r - 1}", title="stable points of the latent map")
    ax[2].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(*, tiny: bool = False, data_dir: str | None = None, rank: int = 2,
         out_dir: str = "runs/example_low_rank_recording", seed: int = 0) -> dict:
    size = TINY if tiny else FULL
    torch.set_num_threads(1)  # every matrix here is small: more threads only contend
    folder = find_data(data_dir)
    if not (folder / FILE).is_file():
        raise SystemExit(f"recording not found at {folder / FILE}; pass --data-dir or set NEURODYN_DATA "
                         "to the shared data folder")
    train, test = preprocess(folder, n_units=size["n_units"], n_bins=size["n_bins"])
    n = train.n_channels
    model = LowRankRNN(0, n, n, rank=rank, alpha=ALPHA, seed=seed)
    fit = fit_teacher_forcing(model, train, observation="identity", alpha=0.2, n_epochs=size["n_epochs"],
                              batches_per_epoch=size["batches_per_epoch"], batch_size=size["batch_size"],
                              seq_len=30, lr=1e-2, lr_end=1e-4, progress=False, seed=seed)
    fit.raise_if_diverged()
    fitted = fit.model.double()
    stats = compute_low_rank_statistics(fitted)
    law = fit_maxent_loadings(fitted, seed=seed, n_epochs=size["flow_epochs"], n_check=size["n_check"])
    nets = [law.sample_network(seed=100 + s) for s in range(size["n_samples"])]
    n_vec = fitted.loadings().double()[:, rank:2 * rank]
    kappa = torch.as_tensor(test.values, dtype=torch.float64) @ n_vec / n  # (time, rank)
    results = {
        "scale": {"n_units": n, "n_bins_train": train.n_steps, "n_bins_test": test.n_steps, "rank": rank,
                  "bin_ms": 100, **{k: v for k, v in size.items() if k not in ("n_units", "n_bins")}},
        "fit": {"status": fit.status, "final_loss": float(fit.history["loss"][-1])},
        "unidentified_fraction_n": np.asarray(stats.unidentified_fraction).round(4).tolist(),
        "maxent": {"status": law.status, "tolerance": law.tolerance, "dynamics_error": law.dynamics_error,
                   "residual_scale": law.residual_scale.tolist(), "entropy": law.entropy,
                   "fitted_n_sd": n_vec.std(0).tolist()},
        "persistence_r2": {k: persistence_r2(kappa, k) for k in HORIZONS},
        "fitted": summarise(fitted, kappa),
        "shuffled_n": summarise(shuffled(fitted, seed), kappa),
        "samples": [summarise(net, kappa) for net in nets],
    }
    path = Path(out_dir)
    path.mkdir(parents=True, exist_ok=True)
    (path / "results.json").write_text(json.dumps(results, indent=1))
    law.save(path / "maxent.pt")
    plot(path / "low_rank_recording.png", kappa, fitted, nets[0], results)
    print(f"{n} units, rank {rank}: fit {fit.status}, max-ent {law.status} (error {law.dynamics_error:.3f}, "
          f"tolerance {law.tolerance:.3f}, s = {law.residual_scale.round(3)})")
    for name in ("fitted", "shuffled_n"):
        print(f"{name:>10}: R2 {results[name]['r2']}, {results[name]['n_stable']} stable points")
    for i, s in enumerate(results["samples"]):
        print(f"{'sample ' + str(i):>10}: R2 {s['r2']}, {s['n_stable']} stable points")
    print(f"persistence R2 {results['persistence_r2']}")
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="30 units, 1500 bins, a few batches (smoke run)")
    parser.add_argument("--data-dir", default=None, help="shared data folder (holds reaching_m1_s1_spykesml)")
    parser.add_argument("--rank", type=int, default=2)
    parser.add_argument("--out-dir", default="runs/example_low_rank_recording")
    args = parser.parse_args()
    main(tiny=args.tiny, data_dir=args.data_dir, rank=args.rank, out_dir=args.out_dir)
