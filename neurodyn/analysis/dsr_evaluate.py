"""Scoring a fitted model against held-out data and two baselines (linear least squares, the mean).

:func:`evaluate_reconstruction` generates a free trajectory from the first held-out point, drops a
transient and computes ``D_stsp``, ``D_H`` and ``PE(n)`` (see :mod:`neurodyn.analysis.dsr_metrics`)
for the fitted model, for a linear VAR(1) model ``x' = A x + c`` fitted by least squares on the
training data, and for the training mean (a constant prediction).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from neurodyn._seed import SeedLike, resolve_seed
from neurodyn.analysis.dsr_metrics import (
    power_spectrum_distance,
    prediction_error,
    state_space_divergence,
)


@dataclass(frozen=True)
class ReconstructionResult:
    """Reconstruction measures per model (rows ``model``: ``"fitted"``, ``"linear"``, ``"mean"``).

    Attributes
    ----------
    models : tuple of str
    d_stsp, d_h, pe : ndarray, shape (model,)
        State-space divergence (nats), Hellinger spectrum distance, ``PE(pe_steps)``.
    status : tuple of str
        ``"ok"`` or ``"diverged"`` (the free trajectory left the finite numbers) per model.
    max_lyapunov : float
        Largest Lyapunov exponent of the fitted model (nats per step), NaN if not computed.
    generated : ndarray, shape (time, channel)
        The fitted model's free trajectory after the transient (what was scored).
    settings : dict
        ``n_transient``, ``pe_steps``, ``method``, ``n_bins``, ``smoothing``, ``seed``.
    """

    models: tuple[str, ...]
    d_stsp: np.ndarray
    d_h: np.ndarray
    pe: np.ndarray
    status: tuple[str, ...]
    max_lyapunov: float
    generated: np.ndarray
    settings: dict[str, Any]

    def summary(self) -> str:
        pe = f"PE({self.settings['pe_steps']})"
        lines = [f"{'model':<8} {'D_stsp':>10} {'D_H':>8} {pe:>10}  status"]
        for i, m in enumerate(self.models):
            lines.append(
                f"{m:<8} {self.d_stsp[i]:>10.4f} {self.d_h[i]:>8.4f} {self.pe[i]:>10.4f}  {self.status[i]}")
        if np.isfinite(self.max_lyapunov):
            lines.append(f"max Lyapunov exponent of the fitted model: {self.max_lyapunov:.4f} per step")
        return "\n".join(lines)

    def to_xarray(self):
        import xarray as xr

        ds = xr.Dataset(
            {"d_stsp": (("model",), self.d_stsp), "d_h": (("model",), self.d_h), "pe": (("model",), self.pe),
             "status": (("model",), list(self.status)),
             "generated": (("time", "channel"), self.generated)},
            coords={"model": list(self.models)},
        )
        ds.attrs.update({k: ("" if v is None else v) for k, v in self.settings.items()})
        ds.attrs["max_lyapunov"] = self.max_lyapunov
        return ds


def fit_linear_baseline(x_train: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares VAR(1) ``x[t+1] = A x[t] + c``; ``x_train`` (time, channel) → (A, c)."""
    X = np.c_[x_train[:-1], np.ones(len(x_train) - 1)]
    coef, *_ = np.linalg.lstsq(X, x_train[1:], rcond=None)
    return coef[:-1].T, coef[-1]


def _linear_run(A: np.ndarray, c: np.ndarray, x0: np.ndarray, n: int) -> np.ndarray:
    out, x = np.empty((n, len(x0))), x0
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(n):
            x = A @ x + c
            out[t] = x
    return out


def _scores(x_test, x_gen, pred_err, method, n_bins, bin_range, smoothing, seed):
    d = state_space_divergence(x_test, x_gen, method=method, n_bins=n_bins, bin_range=bin_range, seed=seed)
    return d, power_spectrum_distance(x_test, x_gen, smoothing=smoothing), pred_err


def evaluate_reconstruction(
    model,
    x_train: Any,
    x_test: Any,
    *,
    observation: str = "affine",
    n_transient: int = 1000,
    pe_steps: int = 20,
    method: str = "auto",
    n_bins: int = 30,
    bin_range: Any = None,
    smoothing: float = 20.0,
    baselines: bool = True,
    lyapunov: bool = False,
    seed: SeedLike = 0,
) -> ReconstructionResult:
    """Score a fitted model's free dynamics on held-out data, with baselines.

    Parameters
    ----------
    model : RecurrentModel
        The fitted model (its readout is the observation model).
    x_train, x_test : array, shape (time, channel)
        Training data (for the baselines) and held-out data, preprocessed alike.
    observation : {"identity", "affine", "poisson"}
    n_transient : int
        Generated steps discarded before scoring (time steps).
    pe_steps : int
        Horizon of ``PE(n)``.
    method : {"auto", "binned", "gmm"}
        ``D_stsp`` estimator; ``"auto"`` bins up to 5 channels and uses the GMM above (as Hess et
        al. 2023).
    n_bins, bin_range, smoothing
        Passed to :func:`state_space_divergence` and :func:`power_spectrum_distance`.
    baselines : bool
        Also score the linear least-squares model and the training mean.
    lyapunov : bool
        Compute the fitted model's largest Lyapunov exponent (:func:`neurodyn.analysis.lyapunov_spectrum`).
    seed : int, Generator or None
        Seed of the GMM estimate and the Lyapunov tangent frame.

    Raises
    ------
    ValueError
        On shape mismatches or too short held-out data for ``pe_steps``.
    """
    from neurodyn.training.generate import generate

    seed_int = resolve_seed(seed)
    xtr, xte = np.asarray(x_train, dtype=np.float64), np.asarray(x_test, dtype=np.float64)
    if xtr.ndim != 2 or xte.ndim != 2 or xtr.shape[1] != xte.shape[1]:
        raise ValueError(f"x_train and x_test must be (time, channel) alike, got {xtr.shape}, {xte.shape}")
    method = ("binned" if xte.shape[1] <= 5 else "gmm") if method == "auto" else method
    n = len(xte)
    gen = generate(model, xte[0], n_transient + n, observation=observation).observations[n_transient:]
    rows = {"fitted": (gen, prediction_error(model, xte, pe_steps, observation=observation))}
    if baselines:
        A, c = fit_linear_baseline(xtr)
        lin = _linear_run(A, c, xte[0], n_transient + n)[n_transient:]
        pe_lin = float(np.mean((_linear_pred(A, c, xte, pe_steps) - xte[pe_steps:]) ** 2))
        mean = np.repeat(xtr.mean(0, keepdims=True), n, axis=0)
        rows["linear"] = (lin, pe_lin)
        rows["mean"] = (mean, float(np.mean((xtr.mean(0) - xte[pe_steps:]) ** 2)))
    d_s, d_h, pe, status = [], [], [], []
    for x_gen, pe_v in rows.values():
        ok = bool(np.all(np.isfinite(x_gen)))
        s = _scores(xte, x_gen, pe_v, method, n_bins, bin_range, smoothing, seed_int)
        d_s.append(s[0])
        d_h.append(s[1])
        pe.append(s[2])
        status.append("ok" if ok else "diverged")
    lam = float("nan")
    if lyapunov:
        from neurodyn.analysis.lyapunov import lyapunov_spectrum

        h0 = _latent_start(model, xte[0], observation)
        lam = float(lyapunov_spectrum(model, h0=h0, n_steps=5000, n_transient=n_transient, n_exponents=1,
                                      seed=seed_int).max_exponent[0])
    settings = {"n_transient": n_transient, "pe_steps": pe_steps, "method": method, "n_bins": n_bins,
                "smoothing": smoothing, "seed": seed_int, "observation": observation}
    return ReconstructionResult(tuple(rows), np.array(d_s), np.array(d_h), np.array(pe), tuple(status),
                                lam, gen, settings)


def _linear_pred(A: np.ndarray, c: np.ndarray, x: np.ndarray, n: int) -> np.ndarray:
    z = x[:-n]
    for _ in range(n):
        z = z @ A.T + c
    return z


def _latent_start(model, x0: np.ndarray, observation: str) -> np.ndarray:
    import torch

    from neurodyn.training import observation as obs

    with torch.no_grad():
        B, b = obs.affine_readout(model)
        start = obs.forcing_targets(x0[None, None], observation, smoothing=0.0)[0, 0]
        return obs.invert(B, b, torch.as_tensor(start, dtype=B.dtype)).double().numpy()
