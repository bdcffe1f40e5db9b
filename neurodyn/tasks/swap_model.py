"""The mixture (swap) model of continuous-report responses, and surrogate behaviour drawn from it.

Bays, Catalao & Husain (2009, J. Vis. 9(10):7): a report ``θ̂`` of a target ``θ`` held with
non-targets ``φ_1 .. φ_m`` is drawn from

    p(θ̂) = p_target vM(θ̂; θ, κ) + p_swap (1/m) Σ_j vM(θ̂; φ_j, κ) + p_guess / (2 π)

(von Mises noise around the target, "swap errors" around a non-target, uniform guesses). It is
fitted by maximum likelihood with the expectation-maximisation algorithm of the paper (``κ`` from
the weighted resultant length through Fisher's (1993) approximation of ``A1⁻¹``), started from a
grid of starting points, keeping the best. Only NumPy is needed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from neurodyn._checks import check_setting
from neurodyn._lazy import numpy as np
from neurodyn._result import Result
from neurodyn._seed import SeedLike, numpy_rng

__all__ = ["MixtureFit", "fit_mixture_model", "sample_mixture_responses"]

_TWO_PI = 2 * math.pi
#: starting points (kappa, p_target, p_swap) of the EM runs; p_guess is the rest
_STARTS = ((1.0, 0.5, 0.3), (10.0, 0.8, 0.1), (100.0, 0.4, 0.4), (5.0, 0.3, 0.05))


@dataclass(frozen=True)
class MixtureFit(Result):
    """A fitted swap model (file format ``neurodyn.mixture_fit``).

    Attributes
    ----------
    kappa : float
        Von Mises concentration of the target and swap components (1/rad², dimensionless).
    p_target, p_swap, p_guess : float
        Mixture weights, summing to 1.
    log_likelihood : float
        Of the ``n_trials`` responses, in nats.
    n_trials, n_iterations : int
        Responses fitted; EM iterations of the best start.
    converged : bool
        False if EM used up ``max_iter``; ``status`` says the same as ``"converged"`` or
        ``"not_converged"``.

    ``save(path)`` writes it as netCDF-4 and :func:`neurodyn.io.load` reads it back.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import neurodyn.io
    >>> from neurodyn.tasks.swap_model import MixtureFit
    >>> fit = MixtureFit(kappa=8.0, p_target=0.7, p_swap=0.2, p_guess=0.1, log_likelihood=-10.0, n_trials=20,
    ...                  n_iterations=12, converged=True)
    >>> ds = fit.to_xarray()
    >>> float(ds["p_swap"]), ds.attrs["model"]
    (0.2, 'Bays, Catalao & Husain 2009 (J. Vis. 9(10):7)')
    >>> path = fit.save(pathlib.Path(tempfile.mkdtemp()) / "fit.nc")
    >>> neurodyn.io.load(path) == fit, fit.status
    (True, 'converged')
    """

    kappa: float
    p_target: float
    p_swap: float
    p_guess: float
    log_likelihood: float
    n_trials: int
    n_iterations: int
    converged: bool

    FORMAT: ClassVar[str] = "neurodyn.mixture_fit"
    FORMAT_VERSION: ClassVar[int] = 1
    REQUIRED: ClassVar[tuple[str, ...]] = ("kappa", "p_target", "p_swap", "p_guess", "log_likelihood")

    @property
    def status(self) -> str:
        """``"converged"`` or ``"not_converged"`` (EM used up ``max_iter``)."""
        return "converged" if self.converged else "not_converged"

    def to_xarray(self):
        """The fit as an ``xarray.Dataset`` of scalar variables (counts and convergence as attributes)."""
        import xarray as xr

        return xr.Dataset({k: float(getattr(self, k)) for k in self.REQUIRED},
                          attrs={**self.format_attrs(), "n_trials": self.n_trials,
                                 "n_iterations": self.n_iterations, "converged": int(self.converged),
                                 "status": self.status,
                                 "model": "Bays, Catalao & Husain 2009 (J. Vis. 9(10):7)"})

    @classmethod
    def from_xarray(cls, ds) -> MixtureFit:
        """Rebuild from :meth:`to_xarray`'s dataset (or a file written from one)."""
        values = {k: float(ds[k].values) for k in cls.REQUIRED}
        return cls(**values, n_trials=int(ds.attrs["n_trials"]), n_iterations=int(ds.attrs["n_iterations"]),
                   converged=bool(ds.attrs["converged"]))


def _angles(name: str, x: Any, shape: tuple[int, ...] | None = None) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    if shape is not None and a.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} holds NaN or Inf; drop those trials")
    if a.size and np.abs(a).max() > _TWO_PI + 1e-9:
        raise ValueError(f"{name} reach |{np.abs(a).max():.4g}| > 2 pi: they look like degrees; "
                         "pass radians (np.deg2rad)")
    return a


def _check(responses: Any, targets: Any, non_targets: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r = _angles("responses", responses)
    if r.ndim != 1 or r.size < 1:
        raise ValueError(f"responses must be a non-empty 1-D array (trial,), got shape {r.shape}")
    return r, _angles("targets", targets, r.shape), _non_targets(non_targets, r.size)


def _non_targets(non_targets: Any, n_trials: int) -> np.ndarray:
    nt = np.asarray(non_targets, dtype=np.float64)
    nt = nt[:, None] if nt.ndim == 1 else nt
    if nt.ndim != 2 or nt.shape[0] != n_trials:
        raise ValueError(f"non_targets must have shape ({n_trials},) or ({n_trials}, non_target), "
                         f"got {np.shape(non_targets)}")
    return _angles("non_targets", nt)


def _wrap(x: np.ndarray) -> np.ndarray:
    return (x + np.pi) % _TWO_PI - np.pi


def _log_i0(kappa: float) -> float:
    return float(np.log(np.i0(kappa))) if kappa < 500 else kappa - 0.5 * np.log(_TWO_PI * kappa)


def _von_mises(err: np.ndarray, kappa: float) -> np.ndarray:
    return np.exp(kappa * np.cos(err) - np.log(_TWO_PI) - _log_i0(kappa))


def _a1_inverse(r: float) -> float:
    """Fisher's (1993) approximation of the inverse of ``A1(κ) = I1(κ) / I0(κ)``."""
    if r < 0.53:
        return 2 * r + r ** 3 + 5 * r ** 5 / 6
    if r < 0.85:
        return -0.4 + 1.39 * r + 0.43 / (1 - r)
    # factored, so that r just below 1 cannot round the denominator to 0; capped at 1e6 (r -> 1)
    return min(1 / (r * (1 - r) * (3 - r)), 1e6) if r < 1 else 1e6


def _components(err, nt_err, kappa, pt, pn, pu):
    """Per-trial weighted densities of the target, each non-target and the guesses."""
    m = nt_err.shape[1]
    wn = (pn / m) * _von_mises(nt_err, kappa) if m else np.zeros_like(nt_err)
    return pt * _von_mises(err, kappa), wn, np.full_like(err, pu / _TWO_PI)


def _em(err: np.ndarray, nt_err: np.ndarray, start: tuple[float, float, float], max_iter: int, tol: float):
    kappa, pt, pn = start
    pu = 1.0 - pt - pn
    ll, ll_old, converged, it = -np.inf, -np.inf, False, 0
    while it < max_iter:
        it += 1
        wt, wn, wu = _components(err, nt_err, kappa, pt, pn, pu)
        total = wt + wn.sum(1) + wu
        ll = float(np.log(total).sum())
        if abs(ll - ll_old) < tol:
            converged = True
            break
        ll_old = ll
        wt, wn, wu = wt / total, wn / total[:, None], wu / total
        pt, pn, pu = float(wt.mean()), float(wn.sum(1).mean()), float(wu.mean())
        weight = wt.sum() + wn.sum()
        c = (wt * np.cos(err)).sum() + (wn * np.cos(nt_err)).sum()
        s = (wt * np.sin(err)).sum() + (wn * np.sin(nt_err)).sum()
        kappa = _a1_inverse(float(np.hypot(c, s) / weight)) if weight > 0 else 0.0
    return kappa, pt, pn, pu, ll, it, converged


def error_density(params: MixtureFit | Mapping[str, float], errors: np.ndarray,
                  offsets: np.ndarray) -> np.ndarray:
    """Density of the report error ``θ̂ - θ`` (radians) under a swap model, at ``errors`` (grid,).

    ``offsets`` (trial, non_target) are the non-targets relative to the target; the swap term is
    averaged over them, so the density integrates to 1 over a circle.
    """
    p = asdict(params) if isinstance(params, MixtureFit) else dict(params)
    e = np.asarray(errors, dtype=np.float64)
    density = p["p_target"] * _von_mises(e, p["kappa"]) + p["p_guess"] / _TWO_PI
    if offsets.size and p["p_swap"]:
        swaps = _von_mises(e[:, None] - offsets.reshape(-1)[None, :], p["kappa"]).mean(1)
        density = density + p["p_swap"] * swaps
    return density


def fit_mixture_model(responses: Any, targets: Any, non_targets: Any, *, max_iter: int = 1000,
                      tol: float = 1e-4) -> MixtureFit:
    """Fit the swap model of Bays et al. (2009) to continuous reports by maximum likelihood (EM).

    Parameters
    ----------
    responses, targets : array-like, shape (trial,)
        Reported and cued angles in radians (any range within ±2π; wrapped internally).
        At least one trial more than the model has free parameters: 4 trials with non-targets
        (``kappa``, ``p_target``, ``p_swap``), 3 without (``kappa``, ``p_target``); with fewer the
        maximum-likelihood fit is not identified (one trial drives ``kappa`` to 0 or to its cap).
    non_targets : array-like, shape (trial,) or (trial, non_target)
        The uncued items' angles in radians; zero columns fit the two-component model (no swaps).
    max_iter : int
        EM iterations per starting point, at least 1.
    tol : float
        Stop when the log-likelihood (nats) changes by less than this (finite, >= 0; 0 runs all
        ``max_iter`` iterations unless the log-likelihood stops changing exactly).

    Returns
    -------
    MixtureFit
        The best of the EM runs from four starting points (``converged`` False if it used up
        ``max_iter``).

    Raises
    ------
    ValueError
        On mismatched shapes, NaN/Inf, angles beyond ±2π (degrees passed for radians), fewer trials
        than the minimum above, ``max_iter < 1`` or a ``tol`` that is negative or not finite.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.tasks import fit_mixture_model, sample_mixture_responses
    >>> rng = np.random.default_rng(0)
    >>> targets, non_targets = rng.uniform(-np.pi, np.pi, 3000), rng.uniform(-np.pi, np.pi, 3000)
    >>> truth = {"kappa": 10.0, "p_target": 0.7, "p_swap": 0.2, "p_guess": 0.1}
    >>> responses = sample_mixture_responses(truth, targets, non_targets, seed=1)
    >>> fit = fit_mixture_model(responses, targets, non_targets)
    >>> round(fit.p_target, 2), round(fit.p_swap, 2), round(fit.p_guess, 2), fit.converged
    (0.71, 0.19, 0.1, True)
    >>> fit_mixture_model(np.degrees(responses), targets, non_targets)
    Traceback (most recent call last):
    ...
    ValueError: responses reach |...| > 2 pi: they look like degrees; pass radians (np.deg2rad)
    """
    check_setting("max_iter", max_iter, 1, integer=True, hint=" (EM iterations per starting point)")
    check_setting("tol", tol, 0, hint=" (the log-likelihood change, in nats, that stops EM)")
    r, t, nt = _check(responses, targets, non_targets)
    free = ("kappa", "p_target", "p_swap") if nt.shape[1] else ("kappa", "p_target")
    if r.size <= len(free):
        raise ValueError(f"fit_mixture_model needs at least {len(free) + 1} trials to fit its {len(free)} "
                         f"free parameters ({', '.join(free)}; fewer leave the fit unidentified), got "
                         f"{r.size}; pool more trials")
    err, nt_err = _wrap(r - t), _wrap(r[:, None] - nt)
    starts = _STARTS if nt.shape[1] else tuple((k, pt, 0.0) for k, pt, _ in _STARTS)
    best = max((_em(err, nt_err, s, max_iter, tol) for s in starts), key=lambda f: f[4])
    kappa, pt, pn, pu, ll, it, ok = best
    return MixtureFit(kappa=float(kappa), p_target=pt, p_swap=pn, p_guess=pu, log_likelihood=ll,
                      n_trials=int(r.size), n_iterations=int(it), converged=bool(ok))


def sample_mixture_responses(params: MixtureFit | Mapping[str, float], targets: Any, non_targets: Any, *,
                             seed: SeedLike = None) -> np.ndarray:
    """Surrogate reports drawn from a swap model (a :class:`MixtureFit`, e.g. of real behaviour, or a dict).

    Each trial reports, with probabilities ``p_target``, ``p_swap``, ``p_guess``, the target plus von
    Mises noise of concentration ``kappa``, a uniformly chosen non-target plus such noise, or a uniform
    guess.

    Parameters
    ----------
    params : MixtureFit or mapping with ``kappa``, ``p_target``, ``p_swap``, ``p_guess``
    targets : array-like, shape (trial,)
        Radians.
    non_targets : array-like, shape (trial,) or (trial, non_target)
        Radians; needed (at least one column) when ``p_swap > 0``.
    seed : int, numpy or torch Generator, or None
        Same seed ⇒ same reports.

    Returns
    -------
    ndarray, shape (trial,), float64
        Reports in radians, wrapped to ``[-π, π)``.

    Raises
    ------
    ValueError
        For a ``params`` mapping without all four keys, weights that are negative or do not sum to 1,
        ``kappa < 0``, swaps without non-targets, or bad angles (see :func:`fit_mixture_model`).

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.tasks import sample_mixture_responses
    >>> params = {"kappa": 50.0, "p_target": 1.0, "p_swap": 0.0, "p_guess": 0.0}
    >>> r = sample_mixture_responses(params, np.zeros(1000), np.full(1000, 2.0), seed=0)
    >>> r.shape, bool(np.abs(r).max() < 1.0)  # all reports near the target 0
    ((1000,), True)
    >>> bool(np.array_equal(r, sample_mixture_responses(params, np.zeros(1000), np.full(1000, 2.0), seed=0)))
    True
    """
    p = asdict(params) if isinstance(params, MixtureFit) else dict(params)
    missing = [k for k in ("kappa", "p_target", "p_swap", "p_guess") if k not in p]
    if missing:
        raise ValueError(f"params lacks {', '.join(missing)}; give kappa, p_target, p_swap and p_guess "
                         "(or a MixtureFit)")
    kappa, w = float(p["kappa"]), np.array([p["p_target"], p["p_swap"], p["p_guess"]], dtype=np.float64)
    if not (np.isfinite(w).all() and (w >= 0).all() and abs(w.sum() - 1) < 1e-6):
        raise ValueError(f"p_target, p_swap, p_guess must be >= 0 and sum to 1, got {w.tolist()}")
    if not (np.isfinite(kappa) and kappa >= 0):
        raise ValueError(f"kappa must be finite and >= 0, got {kappa}")
    t = _angles("targets", targets)
    if t.ndim != 1:
        raise ValueError(f"targets must be 1-D (trial,), got shape {t.shape}")
    nt = _non_targets(non_targets, t.size)
    if w[1] > 0 and nt.shape[1] == 0:
        raise ValueError("p_swap > 0 needs at least one non-target per trial")
    rng = numpy_rng(seed)
    n = t.size
    kind = rng.choice(3, size=n, p=w / w.sum())
    which = rng.integers(0, max(nt.shape[1], 1), size=n)
    centre = np.where(kind == 1, nt[np.arange(n), which] if nt.shape[1] else 0.0, t)
    noise = rng.vonmises(0.0, kappa, size=n) if kappa > 0 else rng.uniform(-np.pi, np.pi, size=n)
    guess = rng.uniform(-np.pi, np.pi, size=n)
    return _wrap(np.where(kind == 2, guess, centre + noise))
