# %% [markdown]
# # Reconstruction scores over seeds, with confidence intervals: ECG and Lorenz-63
#
# Fits a clipped shallow PLRNN by generalized teacher forcing (Hess, Monfared, Brenner & Durstewitz,
# ICML 2023) with `N_SEEDS` seeds per data set, scores every fit on held-out data against the linear
# (VAR(1)) and mean baselines (`evaluate_reconstruction`) and reports the mean and a 95 % Student-t
# confidence interval over seeds of D_stsp, D_H and PE(n), plus the binned D_stsp's saturation value
# (`state_space_divergence_max`: what any run scores that misses every cell the data visit) and the
# fitted models' largest Lyapunov exponent.
#
# * **ECG** (PPG-DaLiA, Reiss et al. 2019, as prepared for the GTF benchmark): the paper's model
#   (M = 5 latent units, H = 250 hidden units, affine observation, constant α = 0.3) on the example's
#   preprocessing (15 Hz low-pass, PECUZAL delay embedding 0, 10, 20, 55, 68, every 16th sample kept);
#   training is shorter than the paper's.
# * **Lorenz-63** simulated here with `scipy.integrate.solve_ivp` (σ = 10, ρ = 28, β = 8/3, sampling
#   0.01, every 5th point kept: Δt = 0.05), z-scored; clipped shPLRNN M = 3, H = 100, identity
#   observation, adaptive α from 1 (the GTF reference defaults). Its largest Lyapunov exponent per
#   unit time, λ₁ / Δt, is compared with the true system's 0.906 (Sprott 2003).
#
# `NEURODYN_TINY=1` runs seconds-long fits; `NEURODYN_SEEDS` sets the number of seeds (default 5),
# `NEURODYN_EPOCHS` the training length (default 30 epochs), `NEURODYN_ONLY` one data set ("ECG" or
# "Lorenz-63"); results go to `NEURODYN_OUT` (default `runs/dsr_seeds`): `dsr_seeds.nc` (dims `data`, `seed`,
# `model`) and `dsr_seeds.md` (the table). Each finished fit is stored in `fits/` and reused on a rerun.

# %%
import json
import os
from pathlib import Path

import numpy as np
import scipy.stats
import xarray as xr
from scipy.integrate import solve_ivp

from neurodyn.analysis.reconstruction import evaluate_reconstruction
from neurodyn.io import TimeSeries, apply_preprocessing
from neurodyn.models import ShallowPLRNN
from neurodyn.training import fit_teacher_forcing

TINY = os.environ.get("NEURODYN_TINY", "0") not in ("0", "")
N_SEEDS = int(os.environ.get("NEURODYN_SEEDS", "5"))
EPOCHS = 2 if TINY else int(os.environ.get("NEURODYN_EPOCHS", "30"))
BATCHES, BATCH = (3, 8) if TINY else (20, 64)


def find_upwards(name: str) -> Path | None:
    here = Path.cwd()
    return next((d / name for d in (here, *here.parents) if (d / name).exists()), None)


DATA = Path(os.environ.get("NEURODYN_DATA") or find_upwards("shared/data") or "shared/data")
REPO = find_upwards("pyproject.toml")
OUT = Path(os.environ.get("NEURODYN_OUT") or (REPO.parent if REPO else Path.cwd()) / "runs" / "dsr_seeds")
(OUT / "fits").mkdir(parents=True, exist_ok=True)


def lorenz63(n_points: int, *, dt: float = 0.01, seed: int = 0) -> np.ndarray:
    """(time, 3) Lorenz-63 trajectory sampled every ``dt`` after a transient of 20 time units."""
    def rhs(_, u):
        x, y, z = u
        return [10.0 * (y - x), x * (28.0 - z) - y, x * y - 8.0 / 3.0 * z]

    u0 = np.random.default_rng(seed).normal(size=3) + [1.0, 1.0, 20.0]
    t = 20.0 + dt * np.arange(n_points)
    sol = solve_ivp(rhs, (0.0, t[-1]), u0, t_eval=t, rtol=1e-10, atol=1e-10, method="DOP853")
    return sol.y.T


# %% [markdown]
# ## The data sets and fit settings

# %%
lags = [0, 10, 20, 55, 68]
ecg_raw = [TimeSeries.from_arrays(np.load(DATA / "ecg_pecuzal5d" / f"ECG_pecuzal_5d_{part}.npy")[:n, :1],
                                  dt=1 / 700) for part, n in (("train", 4000 if TINY else None),
                                                              ("test", 3000 if TINY else None))]
ecg_train = ecg_raw[0].lowpass(15.0).delay_embed(lags).downsample(16).standardize()
ecg_test = apply_preprocessing(ecg_raw[1], ecg_train.preprocessing)
n_lorenz = 3000 if TINY else 75_000
lorenz = TimeSeries.from_arrays(lorenz63(n_lorenz)[::5], dt=0.05)
lorenz_train, lorenz_test = lorenz.standardize().split(2 / 3)

SETUPS = {
    "ECG": dict(train=ecg_train.values, test=ecg_test.values, latent=5, hidden=8 if TINY else 250,
                observation="affine", fit=dict(alpha=0.3), pe_steps=20, dt=16 / 700),
    "Lorenz-63": dict(train=lorenz_train.values, test=lorenz_test.values, latent=3, hidden=8 if TINY else 100,
                      observation="identity", fit=dict(alpha=1.0, adaptive_alpha=True), pe_steps=10, dt=0.05),
}
if os.environ.get("NEURODYN_ONLY"):  # one data set, e.g. to run the two in separate processes
    SETUPS = {k: v for k, v in SETUPS.items() if k == os.environ["NEURODYN_ONLY"]}
for name, s in SETUPS.items():
    print(f"{name}: train {s['train'].shape}, test {s['test'].shape} (time, channel), step {s['dt']:.4f} s")


# %% [markdown]
# ## Fit and score every seed
# The free run starts at the first held-out point; `n_transient` steps are dropped before scoring.

# %%
def run_one(name: str, seed: int) -> dict:
    path = OUT / "fits" / f"{name}_{seed}_{'tiny' if TINY else EPOCHS}.json"
    if path.exists():
        return json.loads(path.read_text())
    s = SETUPS[name]
    model = ShallowPLRNN(0, s["latent"], s["train"].shape[1], n_hidden=s["hidden"], clipped=True, seed=seed)
    fit = fit_teacher_forcing(model, s["train"], observation=s["observation"], n_epochs=EPOCHS,
                              batches_per_epoch=BATCHES, batch_size=BATCH, seq_len=60, lr=1e-2, lr_end=1e-4,
                              progress=False, seed=seed, **s["fit"])
    res = evaluate_reconstruction(fit.model, s["train"], s["test"], observation=s["observation"],
                                  n_transient=200 if TINY else 1000, pe_steps=s["pe_steps"], smoothing=2.0,
                                  n_bins=20, lyapunov=True, seed=seed)
    row = {"d_stsp": res.d_stsp.tolist(), "d_h": res.d_h.tolist(), "pe": res.pe.tolist(),
           "status": list(res.status), "fit_status": fit.status, "max_lyapunov": res.max_lyapunov,
           "d_stsp_max": res.settings["d_stsp_max"]}
    path.write_text(json.dumps(row))
    return row


rows = {(name, seed): run_one(name, seed) for seed in range(N_SEEDS) for name in SETUPS}
models = ["fitted", "linear", "mean"]
names = list(SETUPS)
ds = xr.Dataset(
    {m: (("data", "seed", "model"), np.array([[rows[n, k][m] for k in range(N_SEEDS)] for n in names]))
     for m in ("d_stsp", "d_h", "pe")}
    | {"max_lyapunov": (("data", "seed"), np.array([[rows[n, k]["max_lyapunov"] for k in range(N_SEEDS)]
                                                    for n in names])),
       "d_stsp_max": (("data", "seed"), np.array([[rows[n, k]["d_stsp_max"] for k in range(N_SEEDS)]
                                                  for n in names]))},
    coords={"data": names, "seed": np.arange(N_SEEDS), "model": models,
            "dt": ("data", [SETUPS[n]["dt"] for n in names])},
    attrs={"n_epochs": EPOCHS, "batches_per_epoch": BATCHES, "batch_size": BATCH, "tiny": int(TINY)},
)
ds.to_netcdf(OUT / "dsr_seeds.nc")


# %% [markdown]
# ## Mean and 95 % confidence interval over seeds

# %%
def ci(x: np.ndarray) -> str:
    """``mean ± half-width`` of the 95 % Student-t interval of the mean over seeds."""
    x = np.asarray(x, dtype=float)
    half = scipy.stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x)) if len(x) > 1 else np.nan
    return f"{x.mean():.3f} ± {half:.3f}"


lines = ["| data | model | D_stsp | D_H | PE(n) |", "|---|---|---|---|---|"]
for n in names:
    for m in models:
        cell = ds.sel(data=n, model=m)
        lines.append(f"| {n} | {m} | {ci(cell.d_stsp)} | {ci(cell.d_h)} | {ci(cell.pe)} |")
table = "\n".join(lines)
print(table)
for n in names:
    lam = ds.max_lyapunov.sel(data=n).values
    print(f"{n}: D_stsp saturation value {float(ds.d_stsp_max.sel(data=n).mean()):.3f}; largest Lyapunov "
          f"exponent per step {ci(lam)}, per second {ci(lam / SETUPS[n]['dt'])}; per seed "
          + ", ".join(f"{v:.4f}" for v in lam))
(OUT / "dsr_seeds.md").write_text(table + "\n")
