# %% [markdown]
# # Which loadings a low-rank network needs
#
# Ground-truth low-rank tanh networks (α = 0.2) of three kinds: bistable (rank 1, heavy-tailed `m`,
# Student t with 6 degrees of freedom and unit variance, `n = 2.2 m + 0.5 noise`, no bias), a limit
# cycle (rank 2, overlap [[2, −1], [1, 2]]) and a ring attractor (rank 2, overlap 2 I). For each, the
# maximum-entropy law of per-neuron loadings that keeps its latent dynamics is fitted
# (`fit_maxent_loadings`), networks are sampled from it and their dynamics set beside the truth's: the
# stable fixed points (count and latent position κ*) of the bistable network, the period of the cycle,
# the radius of the ring. A plain `LowRankRNN` is also fitted to each truth's trajectories by teacher
# forcing (one unit per neuron, brought to the truth's gauge by regressing its `m` on the truth's), and
# `compute_loading_structure` flags the correlations between loading components that the ground truth
# does not have, in the plain fit and in a sampled network.
#
# The page runs small when the site is built: the bistable case only, 100 neurons, 20 plain-fit epochs,
# 40 flow epochs, 3 sampled networks. Set `NEURODYN_FULL=1` for all three cases at 500 neurons, 100 and
# 100 epochs, 5 sampled networks; `NEURODYN_CASES` (comma-separated), `NEURODYN_N_UNITS`,
# `NEURODYN_N_EPOCHS` (the flow's), `NEURODYN_PLAIN_EPOCHS` (0: no plain fit) and `NEURODYN_N_SAMPLES`
# change those. `NEURODYN_SEEDS` (comma-separated fit seeds, e.g. `0,1,2`; off by default) adds the
# comparison at equal dynamics error for each case and fit seed. `python examples/low_rank_maxent.py
# [--tiny] [--cases C] [--n-units N] [--n-epochs E] [--plain-epochs P] [--seeds S] [--out-dir DIR]` runs
# this page from the command line and writes `results.json` (and `equal_error.json`) and the figure into
# `DIR`. See the guide page "Low-rank inference" for the method and the three-case tables.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
import torch

from neurodyn.analysis import compute_loading_structure, find_fixed_points, fit_maxent_loadings, latent_map
from neurodyn.analysis.low_rank import dynamics_error, latent_points
from neurodyn.models import LowRankRNN
from neurodyn.training import fit_flow_matching, fit_teacher_forcing

full = os.environ.get("NEURODYN_FULL") == "1"
cases = os.environ.get("NEURODYN_CASES") or ("bistable,cycle,ring" if full else "bistable")
defaults = (500, 100, 5, 100) if full else (100, 40, 3, 20)
size = {key: int(os.environ.get(f"NEURODYN_{key.upper()}") or default)
        for key, default in zip(("n_units", "n_epochs", "n_samples", "plain_epochs"), defaults)}
fit_seeds = [int(k) for k in (os.environ.get("NEURODYN_SEEDS") or "").split(",") if k.strip()]
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


# %% [markdown]
# ## The measures
#
# The period of the cycle comes from the exact latent map (`find_cycles` is for piecewise-linear
# networks); fixed points from `find_fixed_points` on the full network, 64 starts on its manifold, in
# latent coordinates κ = nᵀh / N.

# %%
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


def manifold_starts(model: LowRankRNN) -> np.ndarray:
    """Initial states (64, units) on the network's own manifold: h = tanh(m . kappa), kappa on a circle
    (rank 2) or a segment (rank 1)."""
    m = model.loadings().double().numpy()[:, :model.rank]
    angles = np.linspace(0, 2 * np.pi, 64, endpoint=False)
    kappa = 1.5 * (np.c_[np.cos(angles), np.sin(angles)] if model.rank == 2 else np.cos(angles)[:, None])
    return np.tanh(kappa @ m.T)


def fixed_point_summary(model: LowRankRNN, case: str) -> dict:
    """Fixed points of the full network, summarised in latent coordinates kappa = n^T h / N."""
    res = find_fixed_points(model, n_inits=64, noise_scale=0.0, seed=0, initial_states=manifold_starts(model))
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


def excess_kurtosis(x: np.ndarray) -> float:
    x = x - x.mean()
    return float((x ** 4).mean() / (x ** 2).mean() ** 2 - 3.0)


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


# %% [markdown]
# ## A plain fit to the truth's trajectories
#
# 16 trajectories of 60 steps from states on the truth's manifold, fitted by generalized teacher
# forcing from a random initialisation, then brought to the truth's gauge (`m → m Q`, `n → n Q⁻ᵀ`).

# %%
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


# %% [markdown]
# ## Each case: the max-ent law, its samples and the plain fit

# %%
def run_case(case: str, *, n_units: int, n_epochs: int, n_samples: int, plain_epochs: int,
             seed: int = 0) -> tuple[dict, dict]:
    """The case's results, and its networks (``truth``, ``sample``: the first sampled one, ``plain``)."""
    truth = ground_truth(case, n_units, seed)
    fit = fit_maxent_loadings(truth, seed=seed, n_epochs=n_epochs)
    nets = [fit.sample_network(seed=100 + k) for k in range(n_samples)]
    out = {"case": case, "n_units": n_units, "status": fit.status, "tolerance": fit.tolerance,
           "dynamics_error": fit.dynamics_error, "residual_scale": fit.residual_scale.tolist()}
    networks = {"truth": truth, "sample": nets[0]}
    if plain_epochs:
        networks["plain"], loss = plain_fit(truth, n_epochs=plain_epochs, seed=seed)
        out["plain"] = {"epochs": plain_epochs, "final_loss": loss,
                        "latent_error": latent_error(networks["plain"], truth),
                        **structure_summary(compute_loading_structure(networks["plain"], truth, seed=seed))}
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
    return out, networks


results, networks = [], {}
for case in cases.split(","):
    result, networks[case] = run_case(case, **size)
    results.append(result)
for r in results:
    shown = {k: (r["truth"][k], [round(s[k], 3) for s in r["samples"]])
             for k in r["truth"] if k in r["samples"][0]}
    print(r["case"], r["status"], f"error {r['dynamics_error']:.3f} (tol {r['tolerance']:.3f})",
          f"s = {r['residual_scale']}", shown,
          {"kurtosis m": (round(r["truth"]["kurtosis_m"], 2), round(r["samples_kurtosis_m"], 2))}
          if r["case"] == "bistable" else "")
    for part in ("plain", "maxent_sample"):
        if part in r:
            print(f"  {part}: latent error {r[part]['latent_error']:.3f}, spurious pairs "
                  f"{r[part]['spurious_pairs']} (threshold {r[part]['threshold']}), excess kurtosis "
                  f"{r[part]['excess_kurtosis']} (truth {r[part]['excess_kurtosis_truth']})")

# %% [markdown]
# ## At equal dynamics error, over fit seeds
#
# With `NEURODYN_SEEDS`, each case's ground truth (seed 0) gets, for each fit seed, a plain fit and a
# max-ent law whose tolerance is the plain fit's own error: both errors are `dynamics_error` (relative
# rms of the latent map's recurrent term) against the truth at the same `latent_points`. The entropy
# of the loadings (m, n) in nats per neuron comes from one estimator for both: a flow
# (`fit_flow_matching`, the page's flow epochs) fitted to the plain fit's rows and to the rows of a
# network sampled from the law, its Monte Carlo entropy. Beside them: the law's own entropy (flow on m
# plus the Gaussian part) and the Gaussian bound on any law with the law's m and the plain fit's
# residual covariance of n given m.

# %%
def loading_entropy(model: LowRankRNN, *, n_epochs: int, seed: int) -> float:
    """Entropy (nats per neuron) of a flow fitted to the network's loadings (m, n)."""
    rows = model.loadings().detach().double()[:, :2 * model.rank]
    return fit_flow_matching(rows, n_epochs=n_epochs, seed=seed).entropy(1000, seed=1)


def equal_error_row(case: str, *, n_units: int, n_epochs: int, plain_epochs: int, seed: int) -> dict:
    """Plain fit and max-ent law of the case's truth at the plain fit's dynamics error, fit seed ``seed``."""
    truth = ground_truth(case, n_units)
    plain, _ = plain_fit(truth, n_epochs=plain_epochs, seed=seed)
    points = latent_points(truth, seed=seed)
    reference = latent_map(truth, points)
    error = dynamics_error(plain, reference, points)
    fit = fit_maxent_loadings(truth, tolerance=error, points=points, seed=seed, n_epochs=n_epochs)
    rows, rank = plain.loadings().double().numpy(), truth.rank
    design = np.c_[rows[:, :rank], np.ones(n_units)]
    res = rows[:, rank:2 * rank] - design @ np.linalg.lstsq(design, rows[:, rank:2 * rank], rcond=None)[0]
    cov = np.atleast_2d(np.cov(res.T, bias=True))
    bound = fit.flow.entropy(1000, seed=1) + 0.5 * np.linalg.slogdet(2 * np.pi * np.e * cov)[1]
    return {"case": case, "seed": seed, "status": fit.status, "plain_error": error,
            "maxent_error": fit.dynamics_error, "residual_scale": float(fit.residual_scale[0]),
            "plain_entropy": loading_entropy(plain, n_epochs=n_epochs, seed=seed),
            "maxent_entropy": loading_entropy(fit.sample_network(seed=100), n_epochs=n_epochs, seed=seed),
            "law_entropy": fit.entropy, "plain_gaussian_bound": float(bound)}


equal_error = [equal_error_row(case, n_units=size["n_units"], n_epochs=size["n_epochs"],
                               plain_epochs=size["plain_epochs"], seed=s)
               for case in cases.split(",") for s in fit_seeds]
keys = ("plain_error", "maxent_error", "plain_entropy", "maxent_entropy", "law_entropy",
        "plain_gaussian_bound")
for case in dict.fromkeys(r["case"] for r in equal_error):
    values = {k: [r[k] for r in equal_error if r["case"] == case] for k in keys}
    print(case, [r["status"] for r in equal_error if r["case"] == case],
          {k: f"{np.mean(v):.3f} +- {np.std(v):.3f}" for k, v in values.items()})

# %% [markdown]
# ## The loadings of the first case
#
# The ground truth's rows, the plain fit's (in the truth's gauge) and a max-ent sample's: `n` against
# `m`, the bias against `m` and the distribution of `m` (first components).

# %%
first = networks[results[0]["case"]]
rank = first["truth"].rank
sets = {"ground truth": first["truth"], "plain fit": first.get("plain"), "max-ent sample": first["sample"]}
fig, axes = plt.subplots(1, 3, figsize=(11, 3.4), layout="constrained")
for (label, net), colour in zip(sets.items(), ("k", "tab:red", "tab:blue")):
    if net is None:
        continue
    r = net.loadings().detach().double().numpy()
    axes[0].scatter(r[:, 0], r[:, rank], s=6, alpha=0.6, color=colour, label=label)
    axes[1].scatter(r[:, 0], r[:, 2 * rank], s=6, alpha=0.6, color=colour)
    axes[2].hist(r[:, 0], bins=30, histtype="step", density=True, color=colour)
axes[0].set(xlabel="m", ylabel="n", title="n against m")
axes[1].set(xlabel="m", ylabel="b", title="bias against m")
axes[2].set(xlabel="m", ylabel="density", title="distribution of m")
axes[0].legend(fontsize=7)
plt.show()
