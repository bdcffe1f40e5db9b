"""Maximum-entropy loadings on three ground-truth low-rank networks: bistable, limit cycle, ring.

Usage: python examples/low_rank_maxent.py [--tiny] [--out-dir runs/example_low_rank_maxent]
                                          [--cases bistable,cycle,ring] [--n-units N] [--n-epochs E]
                                          [--plain-epochs P]

For each ground-truth network (tanh, alpha = 0.2), the maximum-entropy loading distribution that keeps
its latent dynamics is fitted (neurodyn.analysis.fit_maxent_loadings), networks are sampled from it, and
their dynamics are compared with the ground truth:

* bistable (rank 1, heavy-tailed m ~ Student t with 6 degrees of freedom, n = 2.2 m + 0.5 noise): the
  stable fixed points found by find_fixed_points (count and latent position kappa*), and the excess
  kurtosis of m (6 / (6 - 4) = 3 in the population);
* limit cycle (rank 2, overlap [[2, -1], [1, 2]]): the period of the latent oscillation, in time steps;
* ring attractor (rank 2, overlap 2 I): the radius of the fixed points found and its spread.

A plain LowRankRNN is also fitted to each ground truth's trajectories by generalized teacher forcing
(neurodyn.training.fit_teacher_forcing, identity observation: one unit per ground-truth neuron), brought
to the ground truth's gauge (its m regressed on the truth's, unit by unit), and its loadings compared
with the ground truth's by neurodyn.analysis.compute_loading_structure: correlations between loading
components the ground truth does not have (family-wise permutation threshold at level 0.05), skew and
excess kurtosis; a sample of the max-ent law gets the same comparison.

Writes results.json under --out-dir and prints a table. Uses only the public API. ``--tiny`` is 200
units, 30 flow epochs, 3 sampled networks per case and 40 plain-fit epochs; the default is 500 units,
100 epochs, 5 and 100.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch

from neurodyn.analysis import compute_loading_structure, find_fixed_points, fit_maxent_loadings, latent_map
from neurodyn.models import LowRankRNN
from neurodyn.training import fit_teacher_forcing

ALPHA = 0.2


def ground_truth(case: str, n_units: int, seed: int = 0) -> LowRankRNN:
    """The ground-truth network of ``case`` with ``n_units`` neurons (float64)."""
    rng = np.random.default_rng(seed)
    if case == "bistable":
        m = rng.standard_t(6, (n_units, 1)) / np.sqrt(6 / 4)  # unit variance, excess kurtosis 3
        n = 2.2 * m + 0.5 * rng.standard_normal((n_units, 1))
    else:
        m = rng.standard_normal((n_units, 2))
        overlap = np.array([[2.0, -1.0], [1.0, 2.0]]) if case == "cycle" else 2.0 * np.eye(2)
        n = m @ overlap.T
    rows = np.c_[m, n, np.zeros(n_units)]
    return LowRankRNN.from_loadings(rows, rank=m.shape[1], alpha=ALPHA).double()


def latent_orbit(model: LowRankRNN, n_steps: int, kappa0) -> np.ndarray:
    """Latent trajectory (time, rank) of the exact latent map from ``kappa0``."""
    kappa, path = torch.as_tensor(kappa0, dtype=torch.float64)[None], []
    for _ in range(n_steps):
        kappa = latent_map(model, kappa)
        path.append(kappa[0])
    return torch.stack(path).numpy()


def period(model: LowRankRNN) -> float:
    """Mean period (steps) of the latent oscillation from upward zero crossings of kappa_0."""
    k = latent_orbit(model, 1500, [0.5, 0.0])[500:, 0]
    up = np.flatnonzero((k[:-1] < 0) & (k[1:] >= 0))
    return float(np.mean(np.diff(up))) if up.size > 2 else float("nan")


def fixed_point_summary(model: LowRankRNN, case: str) -> dict:
    """Fixed points of the full network, summarised in latent coordinates kappa = n^T h / N."""
    res = find_fixed_points(model, n_inits=64, noise_scale=0.0, seed=0, initial_states=_inits(model))
    fp = res.fixed_points()
    stable = fp.stability == "stable"
    rows = model.loadings().double().numpy()
    kappa = fp.states @ rows[:, model.rank:2 * model.rank] / model.n_units
    radius = np.linalg.norm(kappa, axis=1)
    if case == "bistable":
        return {"n_stable": int(stable.sum()), "kappa_star": float(np.abs(kappa[stable, 0]).mean())}
    keep = radius > 0.3  # the ring, not the unstable origin
    return {"n_found": int(keep.sum()), "radius": float(radius[keep].mean()),
            "radius_cv": float(radius[keep].std() / radius[keep].mean())}


def _inits(model: LowRankRNN) -> np.ndarray:
    """Initial states on the network's own manifold: h = tanh(m . kappa), kappa on a circle/segment."""
    rows = model.loadings().double().numpy()
    m = rows[:, :model.rank]
    angles = np.linspace(0, 2 * np.pi, 64, endpoint=False)
    kappa = 1.5 * (np.c_[np.cos(angles), np.sin(angles)] if model.rank == 2 else np.cos(angles)[:, None])
    return np.tanh(kappa @ m.T)


def excess_kurtosis(x: np.ndarray) -> float:
    x = x - x.mean()
    return float((x ** 4).mean() / (x ** 2).mean() ** 2 - 3.0)


def plain_fit(truth: LowRankRNN, *, n_epochs: int, seed: int = 0) -> tuple[LowRankRNN, float]:
    """A plain LowRankRNN fitted by teacher forcing to 16 trajectories (60 steps) of ``truth`` from
    states on its manifold, brought to the truth's gauge; returns the model (float64) and final loss."""
    rank, rows = truth.rank, truth.loadings().double().numpy()
    kappa0 = np.random.default_rng(seed + 1).uniform(-2, 2, (16, rank))
    with torch.no_grad():
        states = truth(None, torch.as_tensor(np.tanh(kappa0 @ rows[:, :rank].T)), n_steps=60).states
    model = LowRankRNN(0, truth.n_units, truth.n_units, rank=rank, alpha=ALPHA, seed=seed)
    fit = fit_teacher_forcing(model, states.float(), observation="identity", alpha=0.2, n_epochs=n_epochs,
                              batches_per_epoch=10, batch_size=16, seq_len=30, lr=5e-2, lr_end=5e-3,
                              progress=False, seed=seed)
    fit.raise_if_diverged()
    fitted = fit.model.loadings().detach().double().numpy()
    q, *_ = np.linalg.lstsq(fitted[:, :rank], rows[:, :rank], rcond=None)  # the gauge: m -> m Q
    aligned = np.c_[fitted[:, :rank] @ q, fitted[:, rank:2 * rank] @ np.linalg.inv(q).T, fitted[:, 2 * rank:]]
    return LowRankRNN.from_loadings(torch.as_tensor(aligned), rank=rank, alpha=ALPHA).double(), float(
        fit.history["loss"][-1])


def latent_error(model: LowRankRNN, truth: LowRankRNN, seed: int = 0) -> float:
    """Relative rms difference of one latent-map step from 256 states uniform in +-2 (truth's gauge)."""
    kappa = torch.as_tensor(np.random.default_rng(seed).uniform(-2, 2, (256, truth.rank)))
    ref = latent_map(truth, kappa) - kappa
    return float((latent_map(model, kappa) - kappa - ref).pow(2).mean().sqrt() / ref.pow(2).mean().sqrt())


def structure_summary(ds) -> dict:
    """Spurious pairs and moments from a compute_loading_structure dataset."""
    names = [str(v) for v in ds.loading.values]
    pairs = {f"{a}-{b}": round(float(ds.corr.sel(loading=a, loading_=b)), 3)
             for i, a in enumerate(names) for b in names[i + 1:]
             if bool(ds.spurious.sel(loading=a, loading_=b))}
    kurtosis_truth = np.round(ds.excess_kurtosis_reference.values, 3).tolist()
    return {"spurious_pairs": pairs,
            "threshold": round(float(ds.corr_threshold), 3),
            "skew": dict(zip(names, np.round(ds.skew.values, 3).tolist())),
            "excess_kurtosis": dict(zip(names, np.round(ds.excess_kurtosis.values, 3).tolist())),
            "excess_kurtosis_truth": dict(zip(names, kurtosis_truth))}


def run_case(case: str, *, n_units: int, n_epochs: int, n_samples: int, plain_epochs: int,
             seed: int = 0) -> dict:
    truth = ground_truth(case, n_units, seed)
    fit = fit_maxent_loadings(truth, seed=seed, n_epochs=n_epochs)
    nets = [fit.sample_network(seed=100 + k) for k in range(n_samples)]
    out = {"case": case, "n_units": n_units, "status": fit.status, "tolerance": fit.tolerance,
           "dynamics_error": fit.dynamics_error, "residual_scale": fit.residual_scale.tolist()}
    if plain_epochs:
        plain, loss = plain_fit(truth, n_epochs=plain_epochs, seed=seed)
        out["plain"] = {"epochs": plain_epochs, "final_loss": loss,
                        "latent_error": latent_error(plain, truth),
                        **structure_summary(compute_loading_structure(plain, truth, seed=seed))}
        out["maxent_sample"] = {"latent_error": latent_error(nets[0], truth),
                                **structure_summary(compute_loading_structure(nets[0], truth, seed=seed))}
    if case == "cycle":
        out["truth"] = {"period": period(truth)}
        out["samples"] = [{"period": period(net)} for net in nets]
    else:
        out["truth"] = fixed_point_summary(truth, case)
        out["samples"] = [fixed_point_summary(net, case) for net in nets]
    if case == "bistable":
        out["truth"]["kurtosis_m"] = excess_kurtosis(truth.loadings()[:, 0].numpy())
        big = fit.sample_loadings(20000, seed=7)[:, 0].numpy()
        out["samples_kurtosis_m"] = excess_kurtosis(big)
    return out


def main(*, tiny: bool = False, out_dir: str = "runs/example_low_rank_maxent",
         cases: tuple[str, ...] = ("bistable", "cycle", "ring"), n_units: int | None = None,
         n_epochs: int | None = None, plain_epochs: int | None = None) -> list[dict]:
    size = (dict(n_units=200, n_epochs=30, n_samples=3, plain_epochs=40) if tiny
            else dict(n_units=500, n_epochs=100, n_samples=5, plain_epochs=100))
    size.update({k: v for k, v in (("n_units", n_units), ("n_epochs", n_epochs),
                                   ("plain_epochs", plain_epochs)) if v is not None})
    results = [run_case(case, **size) for case in cases]
    path = Path(out_dir)
    path.mkdir(parents=True, exist_ok=True)
    (path / "results.json").write_text(json.dumps(results, indent=1))
    for r in results:
        keys = list(r["truth"])
        shown = {k: (r["truth"][k], [round(s[k], 3) for s in r["samples"]])
                 for k in keys if k in r["samples"][0]}
        print(r["case"], r["status"], f"error {r['dynamics_error']:.3f} (tol {r['tolerance']:.3f})",
              f"s = {r['residual_scale']}", shown,
              {"kurtosis m": (round(r["truth"]["kurtosis_m"], 2), round(r["samples_kurtosis_m"], 2))}
              if r["case"] == "bistable" else "")
        for part in ("plain", "maxent_sample"):
            if part in r:
                print(f"  {part}: latent error {r[part]['latent_error']:.3f}, spurious pairs "
                      f"{r[part]['spurious_pairs']} (threshold {r[part]['threshold']}), excess kurtosis "
                      f"{r[part]['excess_kurtosis']} (truth {r[part]['excess_kurtosis_truth']})")
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="200 units, 30 flow epochs (a smoke run)")
    parser.add_argument("--out-dir", default="runs/example_low_rank_maxent")
    parser.add_argument("--cases", default="bistable,cycle,ring", help="comma-separated cases to run")
    parser.add_argument("--n-units", type=int, default=None, help="override the network size")
    parser.add_argument("--n-epochs", type=int, default=None, help="override the flow's training epochs")
    parser.add_argument("--plain-epochs", type=int, default=None,
                        help="epochs of the plain teacher-forcing fit (0: skip it)")
    args = parser.parse_args()
    main(tiny=args.tiny, out_dir=args.out_dir, cases=tuple(args.cases.split(",")), n_units=args.n_units,
         n_epochs=args.n_epochs, plain_epochs=args.plain_epochs)
