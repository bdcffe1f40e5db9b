"""Scoring a fitted model against held-out data and two baselines (linear least squares, the mean).

:func:`evaluate_reconstruction` generates a free trajectory from the first held-out point, drops a
transient and computes ``D_stsp``, ``D_H`` and ``PE(n)`` (see :mod:`~neurodyn.analysis.reconstruction`)
for the fitted model, for a linear model ``x' = A x + C u' + c`` (VAR(1); ARX when the data have
external inputs ``u``) fitted by least squares on the training data, and for the training mean (a
constant prediction).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from neurodyn._budget import check_memory
from neurodyn._checks import check_finite, float64_copy
from neurodyn._result import Result, decode_attrs, encode_attrs
from neurodyn._seed import SeedLike, resolve_seed
from neurodyn.analysis.reconstruction._baselines import LinearBaseline, fit_linear_baseline  # noqa: F401
from neurodyn.analysis.reconstruction._inputs import check_count, check_inputs
from neurodyn.analysis.reconstruction._metrics import (
    collapsed_channels,
    power_spectrum_distance,
    prediction_error,
    state_space_divergence,
    state_space_divergence_max,
)

__all__ = ["ReconstructionResult", "evaluate_reconstruction"]

MIN_SCORED = 10  # fewest time points a free run is scored on


@dataclass(frozen=True)
class ReconstructionResult(Result):
    """Reconstruction measures per model (rows ``model``: ``"fitted"``, ``"linear"``, ``"mean"``).

    Format ``neurodyn.reconstruction``: dims ``model``, ``time``, ``channel``.

    Attributes
    ----------
    models : tuple of str
    d_stsp, d_h, pe : ndarray, shape (model,)
        State-space divergence (nats), Hellinger spectrum distance, ``PE(pe_steps)``.
    status : tuple of str
        ``"ok"``, ``"diverged"`` (the free trajectory left the finite numbers) or ``"collapsed"``
        (some channel of it is constant up to rounding, e.g. the ``"mean"`` baseline or a run that
        settled on a fixed point: its D_H is the fixed value 1) per model.
    max_lyapunov : float
        Largest Lyapunov exponent of the fitted model (nats per step), NaN if not computed.
    generated : ndarray, shape (time, channel)
        The fitted model's free trajectory after the transient: observations, or for the Poisson
        model the expected rates (D_stsp and D_H score Poisson counts drawn from them unless
        ``sample_counts=False``); :attr:`generated_kind` says which.
    settings : dict
        ``n_transient``, ``pe_steps``, ``method``, ``n_bins``, ``smoothing``, ``seed``; binned
        ``D_stsp`` also ``d_stsp_max``, the value every run that misses the data's cells scores
        (:func:`~neurodyn.analysis.reconstruction.state_space_divergence_max`).

    Examples
    --------
    >>> from neurodyn.analysis.reconstruction._examples import rotation_result
    >>> result, _ = rotation_result()  # a rotation scored on its own circle
    >>> result.models, result.status
    (('fitted', 'linear', 'mean'), ('ok', 'ok', 'collapsed'))
    >>> result.generated.shape, dict(result.to_xarray().sizes)
    ((200, 2), {'model': 3, 'time': 200, 'channel': 2})
    >>> print(result.summary().splitlines()[0])
    model        D_stsp      D_H      PE(1)  status
    """

    models: tuple[str, ...]
    d_stsp: np.ndarray
    d_h: np.ndarray
    pe: np.ndarray
    status: tuple[str, ...]
    max_lyapunov: float
    generated: np.ndarray
    settings: dict[str, Any]

    FORMAT: ClassVar[str] = "neurodyn.reconstruction"
    FORMAT_VERSION: ClassVar[int] = 1
    REQUIRED: ClassVar[tuple[str, ...]] = ("d_stsp", "d_h", "pe", "status", "generated", "model")

    @property
    def generated_kind(self) -> str:
        """What :attr:`generated` holds: ``"rate"`` (Poisson observation: expected counts per bin, not
        the scored counts) or ``"observation"`` (the observed quantity itself, also for older files)."""
        return "rate" if self.settings.get("observation") == "poisson" else "observation"

    def summary(self) -> str:
        pe = f"PE({self.settings['pe_steps']})"
        lines = [f"{'model':<8} {'D_stsp':>10} {'D_H':>8} {pe:>10}  status"]
        for i, m in enumerate(self.models):
            lines.append(
                f"{m:<8} {self.d_stsp[i]:>10.4f} {self.d_h[i]:>8.4f} {self.pe[i]:>10.4f}  {self.status[i]}")
        d_max = self.settings.get("d_stsp_max")
        if d_max is not None:
            lines.append(f"D_stsp saturates at {d_max:.4f} (any run that misses every cell the data visit)")
        if np.isfinite(self.max_lyapunov):
            lines.append(f"max Lyapunov exponent of the fitted model: {self.max_lyapunov:.4f} per step")
        return "\n".join(lines)

    def to_xarray(self):
        """The measures on dim ``model``, the free trajectory on ``(time, channel)``, settings as attrs."""
        import xarray as xr

        return xr.Dataset(
            {"d_stsp": (("model",), self.d_stsp), "d_h": (("model",), self.d_h), "pe": (("model",), self.pe),
             "status": (("model",), np.array(self.status, dtype=object)),
             "generated": (("time", "channel"), self.generated)},
            coords={"model": np.array(self.models, dtype=object)},
            attrs={**self.format_attrs(), **encode_attrs(self.settings), "max_lyapunov": self.max_lyapunov},
        )

    @classmethod
    def from_xarray(cls, ds) -> ReconstructionResult:
        """Rebuild from :meth:`to_xarray`'s dataset (or a file written by ``neurodyn evaluate --out``)."""
        return cls(tuple(str(m) for m in ds["model"].values), ds["d_stsp"].values, ds["d_h"].values,
                   ds["pe"].values, tuple(str(s) for s in ds["status"].values),
                   float(ds.attrs.get("max_lyapunov", np.nan)), ds["generated"].values,
                   decode_attrs(ds.attrs, skip=("max_lyapunov",)))


def _scores(x_test, x_gen, pred_err, method, n_bins, bin_range, smoothing, seed):
    d = state_space_divergence(x_test, x_gen, method=method, n_bins=n_bins, bin_range=bin_range, seed=seed)
    with warnings.catch_warnings():  # a collapsed run is reported in the row's status instead
        warnings.filterwarnings("ignore", "power_spectrum_distance: .* constant up to rounding", UserWarning)
        d_h = power_spectrum_distance(x_test, x_gen, smoothing=smoothing)
    return d, d_h, pred_err


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
    inputs_train: Any = None,
    inputs_test: Any = None,
    sample_counts: bool = True,
    seed: SeedLike = 0,
) -> ReconstructionResult:
    """Score a fitted model's free dynamics on held-out data, with baselines.

    Without external inputs the model runs freely for ``n_transient + time`` steps from the
    latent state inferred from ``x_test[0]``; the last ``time`` steps are scored against ``x_test``.
    With inputs there is no input for a transient before the held-out data, so the free run is
    driven by ``inputs_test`` from ``x_test[0]`` and the first ``n_transient`` held-out steps are
    dropped from both series (as input-driven fMRI models are scored, Kramer et al. 2022, ICML).

    Parameters
    ----------
    model : RecurrentModel
        The fitted model (its readout is the observation model).
    x_train, x_test : array, shape (time, channel)
        Training data (for the baselines) and held-out data, preprocessed alike.
    observation : {"identity", "affine", "poisson"}
    n_transient : int
        Time steps discarded before scoring: generated steps, or held-out steps with inputs.
    pe_steps : int
        Horizon of ``PE(n)``.
    method : {"auto", "binned", "gmm"}
        ``D_stsp`` estimator; ``"auto"`` bins up to 5 channels and uses the GMM above (as Hess et
        al. 2023).
    n_bins, bin_range, smoothing
        Passed to :func:`state_space_divergence` and :func:`power_spectrum_distance`.
    baselines : bool
        Also score the linear least-squares model (ARX with inputs) and the training mean.
    lyapunov : bool
        Compute the fitted model's largest Lyapunov exponent (:func:`neurodyn.analysis.lyapunov_spectrum`);
        with inputs along the held-out input sequence (a short, finite-time estimate).
    inputs_train, inputs_test : array, shape (time, input), optional
        External inputs aligned with ``x_train`` / ``x_test`` (``u[t+1]`` drives the step to
        ``x[t+1]``). ``inputs_test`` is required for a model with inputs, ``inputs_train`` too
        when ``baselines``.
    sample_counts : bool
        Poisson observation only: score Poisson counts drawn from the generated rates (and from the
        training mean rates and the clipped linear run for the baselines) against the recorded
        counts, so that D_stsp and D_H compare count distributions with count distributions. PE(n)
        always uses the expected counts. ``False`` scores the rates themselves.
    seed : int, Generator or None
        Seed of the GMM estimate, the Lyapunov tangent frame and the Poisson draws.

    Raises
    ------
    TypeError
        If ``model`` is not a ``RecurrentModel``.
    ValueError
        On shape mismatches (also ``x_test`` channels other than the model's outputs), NaN/Inf in
        ``x_test`` or the inputs, inputs missing for a model that takes them (or
        given to one that does not), an unknown ``observation``, ``n_transient`` / ``pe_steps`` not
        integers (>= 0 / >= 1), held-out data too short for ``pe_steps`` / ``n_transient``, a free run
        longer than the memory available can hold (estimated before running), or settings that
        :func:`state_space_divergence` or :func:`power_spectrum_distance` refuse.

    Examples
    --------
    The exact model of a rotation predicts perfectly and reproduces the spectrum; the mean does not:

    >>> from neurodyn.analysis.reconstruction import evaluate_reconstruction
    >>> from neurodyn.analysis.reconstruction._examples import rotation
    >>> model, x = rotation()  # z' = R z by 0.2 rad per step, x (time, channel) its circle
    >>> result = evaluate_reconstruction(model, x[:200], x[200:], observation="identity", n_transient=50,
    ...                                  pe_steps=1, n_bins=10)
    >>> round(float(result.pe[0]), 6), bool(result.d_h[0] < 0.05), bool(result.pe[2] > 0.5)
    (0.0, True, True)
    """
    from neurodyn.models._base import check_model
    from neurodyn.training.generate import generate
    from neurodyn.training.observation import check_observation

    check_model(model, example="PLRNN(...) or a fitted result's .model")
    check_observation(observation)
    seed_int = resolve_seed(seed)
    xtr, xte = float64_copy(x_train, "x_train"), float64_copy(x_test, "x_test")
    if xtr.ndim != 2 or xte.ndim != 2 or xtr.shape[1] != xte.shape[1]:
        raise ValueError(f"x_train and x_test must be (time, channel) alike, got {xtr.shape}, {xte.shape}")
    if xte.shape[1] != model.n_outputs:
        raise ValueError(f"x_test has {xte.shape[1]} channels but the model has {model.n_outputs} outputs")
    check_finite(xte, "x_test", "clean the held-out data first")
    utr, ute = _check_inputs(model, xtr, xte, inputs_train, inputs_test, baselines)
    method = ("binned" if xte.shape[1] <= 5 else "gmm") if method == "auto" else method
    n = len(xte)
    n_transient = check_count("n_transient", n_transient, 0, hint=" (time steps)")
    pe_steps = check_count("pe_steps", pe_steps, 1, hint=" (prediction horizon in time steps)")
    if n < MIN_SCORED + (0 if ute is None else 1):
        raise ValueError(f"x_test has {n} time points; at least {MIN_SCORED} are needed to score a free run, "
                         f"give more held-out data")
    if pe_steps > n - 1:
        raise ValueError(f"pe_steps = {pe_steps} leaves no prediction in the {n} held-out time points; lower "
                         f"pe_steps to at most {n - 1}")
    n_run = n_transient + n if ute is None else n - 1
    check_memory("evaluate_reconstruction", 8.0 * n_run * (3 * model.state_size + 4 * xte.shape[1]),
                 f"a free run of {n_run} steps", "lower n_transient")
    if ute is None:
        gen = generate(model, xte[0], n_transient + n, observation=observation).observations[n_transient:]
        x_ref = xte
    else:
        if n - 1 - n_transient < MIN_SCORED:
            raise ValueError(f"with inputs the transient is taken from the {n} held-out steps; n_transient = "
                             f"{n_transient} leaves {n - 1 - n_transient} to score (at least {MIN_SCORED}): "
                             f"lower n_transient to at most {n - 1 - MIN_SCORED}")
        gen = generate(model, xte[0], n - 1, observation=observation, inputs=ute[1:]).observations
        gen, x_ref = gen[n_transient:], xte[1 + n_transient:]
    rows = {"fitted": (gen, prediction_error(model, xte, pe_steps, observation=observation, inputs=ute))}
    if baselines:
        lin = fit_linear_baseline(xtr, utr)
        if ute is None:
            run = lin.run(xte[0], n_transient + n)[n_transient:]
        else:
            run = lin.run(xte[0], n - 1, ute[1:])[n_transient:]
        with np.errstate(over="ignore", invalid="ignore"):
            pe_lin = float(np.mean((lin.predict(xte, pe_steps, ute) - xte[pe_steps:]) ** 2))
        rows["linear"] = (run, pe_lin)
        rows["mean"] = (np.repeat(xtr.mean(0, keepdims=True), len(x_ref), axis=0),
                        float(np.mean((xtr.mean(0) - xte[pe_steps:]) ** 2)))
    if observation == "poisson" and sample_counts:
        rows = _poisson_counts(rows, seed_int)
    d_s, d_h, pe, status = [], [], [], []
    for x_gen, pe_v in rows.values():
        ok = bool(np.all(np.isfinite(x_gen)))
        s = _scores(x_ref, x_gen, pe_v, method, n_bins, bin_range, smoothing, seed_int)
        d_s.append(s[0])
        d_h.append(s[1])
        pe.append(s[2])
        status.append("diverged" if not ok else "collapsed" if collapsed_channels(x_ref, x_gen).any()
                      else "ok")
    lam = _max_lyapunov(model, xte, ute, observation, n_transient, seed_int) if lyapunov else float("nan")
    settings = {"n_transient": n_transient, "pe_steps": pe_steps, "method": method, "n_bins": n_bins,
                "smoothing": smoothing, "seed": seed_int, "observation": observation,
                "n_inputs": 0 if ute is None else int(ute.shape[1]),
                "sample_counts": int(observation == "poisson" and sample_counts)}
    if method == "binned":
        settings["d_stsp_max"] = state_space_divergence_max(x_ref, len(gen), n_bins=n_bins,
                                                            bin_range=bin_range)
    return ReconstructionResult(tuple(rows), np.array(d_s), np.array(d_h), np.array(pe), tuple(status),
                                lam, gen, settings)


def _poisson_counts(rows: dict, seed_int: int) -> dict:
    """Each model's scored series replaced by Poisson counts drawn from it (rates clipped at 0)."""
    from neurodyn._seed import numpy_rng

    rng = numpy_rng(seed_int, 3)
    out = {}
    for name, (rates, pe_v) in rows.items():
        if np.all(np.isfinite(rates)):
            rates = rng.poisson(np.clip(rates, 0.0, 1e9)).astype(np.float64)
        out[name] = (rates, pe_v)
    return out


def _check_inputs(model, xtr, xte, inputs_train, inputs_test, baselines):
    """Validated (inputs_train, inputs_test) float64 arrays or ``None``; see evaluate_reconstruction."""
    if int(getattr(model, "n_inputs", 0)) and inputs_test is not None and baselines and inputs_train is None:
        raise ValueError("the linear baseline needs the training inputs; pass inputs_train (time, input) "
                         "aligned with x_train, or baselines=False")
    utr, ute = check_inputs(model, (("inputs_train", inputs_train, xtr, "x_train"),
                                    ("inputs_test", inputs_test, xte, "x_test")), required=("inputs_test",))
    return utr, ute


def _max_lyapunov(model, xte, ute, observation, n_transient, seed_int) -> float:
    from neurodyn.analysis.lyapunov import lyapunov_spectrum

    h0 = _latent_start(model, xte[0], observation)
    if ute is None:
        res = lyapunov_spectrum(model, h0=h0, n_steps=5000, n_transient=n_transient, n_exponents=1,
                                seed=seed_int)
    else:
        k = min(n_transient, (len(xte) - 1) // 2)
        res = lyapunov_spectrum(model, h0=h0, n_steps=len(xte) - 1 - k, n_transient=k, inputs=ute[1:],
                                n_exponents=1, seed=seed_int)
    return float(res.max_exponent[0])


def _latent_start(model, x0: np.ndarray, observation: str) -> np.ndarray:
    import torch

    from neurodyn.training import observation as obs

    with torch.no_grad():
        B, b = obs.affine_readout(model)
        start = obs.forcing_targets(x0[None, None], observation, smoothing=0.0)[0, 0]
        return obs.invert(B, b, torch.as_tensor(start, dtype=B.dtype)).double().numpy()
