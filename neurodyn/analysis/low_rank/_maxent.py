"""Maximum-entropy loading distributions of low-rank RNNs that keep the latent dynamics."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import torch

from neurodyn._checks import check_finite, check_setting
from neurodyn._result import TorchResult
from neurodyn._seed import SeedLike, numpy_rng, resolve_seed
from neurodyn.analysis.low_rank._latent import latent_map, low_rank_rows

__all__ = ["MaxEntLoadings", "dynamics_error", "fit_maxent_loadings", "latent_points"]

#: relative ridge that keeps poorly constrained coefficients of E[n | x] at their regression values
RIDGE = 1e-3


def latent_points(model: Any, *, n_inits: int = 64, n_steps: int = 50, n_points: int = 256,
                  seed: SeedLike = 0) -> torch.Tensor:
    """Latent states where :func:`fit_maxent_loadings` matches the dynamics.

    Trajectories of the exact latent map (:func:`latent_map`) from ``n_inits`` states drawn uniformly in
    ±2 standard deviations of ``n`` per rank, run for ``n_steps`` time steps, then ``n_points`` of all the
    visited states drawn without replacement.

    Parameters
    ----------
    model : LowRankRNN
        The network (rank ``R``).
    n_inits, n_steps, n_points : int
        Starts, time steps per trajectory, and states kept (at most ``n_inits * (n_steps + 1)``).
    seed : int, numpy.random.Generator or None
        Seed of the starts and of the subsample; the same seed gives the same points.

    Returns
    -------
    torch.Tensor
        ``(point, rank)``, float64 on the CPU.

    Raises
    ------
    TypeError
        For a model that is not a ``LowRankRNN``.
    ValueError
        For ``random_gain != 0``, NaN/Inf in the loadings, ``n_inits`` or ``n_points`` not an integer
        >= 1, or ``n_steps`` not an integer >= 0.

    Examples
    --------
    >>> from neurodyn.analysis.low_rank import latent_points
    >>> from neurodyn.models import LowRankRNN
    >>> model = LowRankRNN(n_inputs=0, n_units=100, n_outputs=0, rank=2, alpha=0.5, seed=0)
    >>> tuple(latent_points(model, n_inits=8, n_steps=10, n_points=32, seed=0).shape)
    (32, 2)
    """
    rows = low_rank_rows(model)
    check_setting("n_inits", n_inits, 1, integer=True, hint=" (trajectory starts)")
    check_setting("n_steps", n_steps, 0, integer=True, hint=" (time steps per trajectory)")
    check_setting("n_points", n_points, 1, integer=True, hint=" (latent states kept)")
    n_inits, n_steps, n_points = int(n_inits), int(n_steps), int(n_points)
    sd = rows[:, model.rank:2 * model.rank].std(0)
    rng = numpy_rng(seed, 1)
    kappa = torch.as_tensor(rng.uniform(-2, 2, (n_inits, model.rank))) * sd
    path = [kappa]
    for _ in range(n_steps):
        kappa = latent_map(model, kappa)
        path.append(kappa)
    path = torch.cat(path)
    return path[torch.as_tensor(rng.choice(path.shape[0], min(n_points, path.shape[0]), replace=False))]


def dynamics_error(model: Any, reference: torch.Tensor, points: torch.Tensor) -> float:
    """Relative rms error of a network's latent dynamics against a reference, the measure
    :func:`fit_maxent_loadings` holds to its tolerance.

    With ``G`` the latent map (:func:`latent_map`) and leak ``alpha``, the recurrent term is
    ``F(k) = (G(k) - (1 - alpha) k) / alpha``; the error is ``rms(F - F_ref) / rms(F_ref)`` over
    ``points``, where ``F_ref`` comes from ``reference = G_ref(points)`` (the leak term is left out, so
    a slow leak does not hide a wrong recurrence).

    Parameters
    ----------
    model : LowRankRNN
        The network to score (rank ``R``).
    reference : torch.Tensor
        ``(point, rank)``: the reference latent map at ``points``, one time step.
    points : torch.Tensor
        ``(point, rank)``: latent states, e.g. from :func:`latent_points`.

    Returns
    -------
    float
        0 when the recurrent terms agree; dimensionless.

    Raises
    ------
    TypeError
        For a model that is not a ``LowRankRNN``.
    ValueError
        For ``random_gain != 0``, NaN/Inf in the loadings, ``reference`` and ``points`` not both of
        shape (point, rank), or NaN/Inf in either.

    Examples
    --------
    >>> from neurodyn.analysis import latent_map
    >>> from neurodyn.analysis.low_rank import dynamics_error, latent_points
    >>> from neurodyn.models import LowRankRNN
    >>> model = LowRankRNN(n_inputs=0, n_units=100, n_outputs=0, rank=1, alpha=0.5, seed=0)
    >>> points = latent_points(model, n_inits=8, n_steps=10, n_points=32, seed=0)
    >>> dynamics_error(model, latent_map(model, points), points)  # a network against itself
    0.0
    """
    low_rank_rows(model)
    reference = torch.as_tensor(reference, dtype=torch.float64)
    points = torch.as_tensor(points, dtype=torch.float64)
    if points.ndim != 2 or points.shape[1] != model.rank or reference.shape != points.shape:
        raise ValueError(f"reference and points must both have shape (point, rank={model.rank}), got "
                         f"{tuple(reference.shape)} and {tuple(points.shape)}")
    check_finite(reference, "reference", "give the reference latent map at finite points")
    check_finite(points, "points", "give finite latent states")
    a = model.alpha
    f_ref = (reference - (1 - a) * points) / a
    f = (latent_map(model, points) - (1 - a) * points) / a
    return float((f - f_ref).pow(2).mean().sqrt() / f_ref.pow(2).mean().sqrt().clamp_min(1e-12))


@dataclass(frozen=True, eq=False)
class MaxEntLoadings(TorchResult):
    """A maximum-entropy distribution over per-neuron loadings that keeps a network's latent dynamics.

    Made by :func:`fit_maxent_loadings`. The drive loadings ``x = (m, I, b)`` (columns that vary)
    follow the flow ``flow``; constant columns keep their value ``constants``; ``n`` given ``x`` is
    Gaussian with mean ``[x, 1] @ coef`` and covariance ``residual_scale**2 * I`` (rank). ``entropy``
    is the differential entropy per neuron in nats (flow part by Monte Carlo + the Gaussian part),
    ``dynamics_error`` the relative rms error of the recurrent term of the latent map, over
    ``n_check`` sampled networks,
    ``tolerance`` the target, ``status`` ``"completed"``, ``"tolerance_too_tight"`` (no residual
    spread fits; ``residual_scale = 0``) or the flow's failure status. :meth:`save` writes a
    ``.pt`` file (format ``neurodyn.maxent_loadings``, the flow's weights included) that
    :meth:`load` and :func:`neurodyn.io.load` read back with ``torch.load(weights_only=True)``;
    the loaded law samples the same networks for the same seed.

    Examples
    --------
    >>> from neurodyn.models import LowRankRNN
    >>> model = LowRankRNN(n_inputs=0, n_units=100, n_outputs=0, rank=1, alpha=0.5, seed=0)
    >>> fit = fit_maxent_loadings(model, n_epochs=5, hidden=8, n_steps=4, n_check=4, seed=0)
    >>> net = fit.sample_network(seed=1)  # a LowRankRNN with fresh loadings
    >>> type(net).__name__, net.n_units, net.rank, fit.residual_scale.shape
    ('LowRankRNN', 100, 1, (1,))
    >>> dict(fit.to_xarray().sizes)
    {'drive_term': 3, 'rank': 1}
    >>> import tempfile, pathlib, torch
    >>> back = MaxEntLoadings.load(fit.save(pathlib.Path(tempfile.mkdtemp()) / "maxent.pt"))
    >>> bool(torch.equal(back.sample_loadings(seed=1), fit.sample_loadings(seed=1)))
    True
    """

    FORMAT: ClassVar[str] = "neurodyn.maxent_loadings"
    FORMAT_VERSION: ClassVar[int] = 1

    flow: Any
    rank: int
    n_units: int
    drive_columns: tuple[int, ...]
    constants: dict[int, float]
    coef: np.ndarray
    residual_scale: np.ndarray
    tolerance: float
    dynamics_error: float
    entropy: float
    status: str
    seed: int
    model_kwargs: dict[str, Any] = field(repr=False)

    def to_xarray(self) -> Any:
        """The fitted law as a Dataset: ``coef`` (drive_term, rank), ``residual_scale`` (rank), and
        ``tolerance``, ``dynamics_error``, ``entropy``, ``status``, ``seed``, ``n_units`` as attributes."""
        import xarray as xr

        from neurodyn.models.low_rank import loading_names

        n_inputs = len(self.drive_columns) - self.rank - 1
        names = loading_names(self.rank, n_inputs)
        terms = [names[c] for c in self.drive_columns] + ["1"]
        return xr.Dataset(
            {"coef": (("drive_term", "rank"), self.coef), "residual_scale": (("rank",), self.residual_scale)},
            coords={"drive_term": terms, "rank": np.arange(self.rank)},
            attrs={"tolerance": self.tolerance, "dynamics_error": self.dynamics_error,
                   "entropy": self.entropy, "status": self.status, "seed": self.seed,
                   "n_units": self.n_units},
        )

    def to_dict(self) -> dict[str, Any]:
        """The law as a plain versioned dict (the flow's included) for ``torch.save``."""
        return {"format": self.FORMAT, "version": self.FORMAT_VERSION, "flow": self.flow.to_dict(),
                "rank": self.rank, "n_units": self.n_units, "drive_columns": list(self.drive_columns),
                "constants": [[int(k), float(v)] for k, v in self.constants.items()],
                "coef": torch.as_tensor(self.coef), "residual_scale": torch.as_tensor(self.residual_scale),
                "tolerance": self.tolerance, "dynamics_error": self.dynamics_error, "entropy": self.entropy,
                "status": self.status, "seed": self.seed, "model_kwargs": dict(self.model_kwargs)}

    @classmethod
    def from_dict(cls, obj: dict[str, Any]) -> MaxEntLoadings:
        """Rebuild the law from :meth:`to_dict`; raises ``KeyError``/``ValueError`` for a damaged dict."""
        from neurodyn.training.flow_matching import LoadingFlow

        return cls(LoadingFlow.from_dict(obj["flow"]), int(obj["rank"]), int(obj["n_units"]),
                   tuple(int(c) for c in obj["drive_columns"]),
                   {int(k): float(v) for k, v in obj["constants"]},
                   torch.as_tensor(obj["coef"]).numpy(), torch.as_tensor(obj["residual_scale"]).numpy(),
                   float(obj["tolerance"]), float(obj["dynamics_error"]), float(obj["entropy"]),
                   str(obj["status"]), int(obj["seed"]), dict(obj["model_kwargs"]))


    def sample_loadings(self, n_units: int | None = None, *, seed: SeedLike = 0) -> torch.Tensor:
        """Loading rows (unit, loading) as :meth:`LowRankRNN.loadings`; same seed ⇒ same rows."""
        n_units = self.n_units if n_units is None else int(n_units)
        if n_units < self.rank:
            raise ValueError(f"n_units must be >= rank = {self.rank}, got {n_units}")
        seed = resolve_seed(seed)
        x = self.flow.sample(n_units, seed=seed).numpy()
        drive = list(self.drive_columns)
        rows = np.zeros((n_units, len(drive) + self.rank))
        varying = [c for c in drive if c not in self.constants]
        rows[:, varying] = x
        for c, value in self.constants.items():
            rows[:, c] = value
        design = np.c_[rows[:, drive], np.ones(n_units)]
        noise = numpy_rng(seed, 2).standard_normal((n_units, self.rank))
        rows[:, self.rank:2 * self.rank] = design @ self.coef + noise * self.residual_scale
        return torch.as_tensor(rows)

    def sample_network(self, n_units: int | None = None, *, seed: SeedLike = 0) -> Any:
        """A :class:`~neurodyn.models.LowRankRNN` with sampled loadings (float64), ready for any analysis."""
        from neurodyn.models import LowRankRNN

        rows = self.sample_loadings(n_units, seed=seed)
        return LowRankRNN.from_loadings(rows, rank=self.rank, **self.model_kwargs).double()


def fit_maxent_loadings(
    model: Any, *, tolerance: float | None = None, points: Any = None, n_check: int = 32,
    seed: SeedLike = 0, **flow_options: Any,
) -> MaxEntLoadings:
    """Fit the maximum-entropy loading distribution that reproduces a low-rank network's latent dynamics.

    Inference of connectivity by maximum entropy under dynamical constraints, in the spirit of
    the low-rank identifiability analysis (see :func:`compute_low_rank_statistics`): the drive
    loadings ``x = (m, I, b)`` enter the latent map through their whole distribution, which a
    continuous normalising flow learns (:func:`~neurodyn.training.fit_flow_matching`; Lipman et
    al. 2023); ``n`` enters only through ``E[n | x]``, estimated by linear regression on ``[x, 1]``.
    Among distributions of ``n | x`` with that mean and a given residual variance the Gaussian
    has the most entropy, and its entropy grows with the variance, so the residual scale is made
    as large as the dynamics allow: a sampled network's expected squared latent-velocity error is
    ``e_x^2 + s^2 <phi^2> / (N D)`` (``e_x``: the error with ``s = 0``, measured on sampled
    networks; ``<phi^2>`` the mean squared rate at the points; ``D`` the mean square of the
    reference recurrent term ``F = E[n phi]`` per component), and ``s`` solves it equal to
    ``tolerance^2``, the same on every rank (the entropy-maximising split of a budget shared
    equally).

    Parameters
    ----------
    model : LowRankRNN
        The network (fitted or given) whose dynamics are to be kept; ``random_gain = 0``.
    tolerance : float, optional
        Allowed relative rms error of the recurrent term ``F`` of the latent map
        (``rms(F - F_ref) / rms(F_ref)`` over the points); default ``sqrt(e_x^2 + e_boot^2)``:
        the spread may add the error of networks made by resampling the model's own neurons with
        replacement (the plain fit's empirical loading distribution at the same N).
    points : array, shape (point, rank), optional
        Latent states where the dynamics are compared; default 256 states on latent trajectories
        from 64 random starts (zero input).
    n_check : int
        Networks sampled to measure errors (``e_x``, the default tolerance and the final check).
    seed : int, numpy/torch Generator or None
    **flow_options
        Passed to :func:`~neurodyn.training.fit_flow_matching` (``n_epochs``, ``lr``, ...).

    Returns
    -------
    MaxEntLoadings

    Raises
    ------
    TypeError, ValueError
        For a model that is not a purely low-rank ``LowRankRNN``, NaN loadings, too few neurons
        for the flow, points of the wrong shape or with NaN/Inf, or ``n_check`` not an integer >= 1.

    Examples
    --------
    >>> import torch
    >>> from neurodyn.models import LowRankRNN
    >>> g = torch.Generator().manual_seed(0)
    >>> m = torch.randn(400, 1, generator=g)
    >>> rows = torch.cat([m, 2.0 * m, torch.zeros(400, 1)], dim=1)  # n fully determined by m
    >>> fit = fit_maxent_loadings(LowRankRNN.from_loadings(rows, rank=1), tolerance=0.3, n_check=4,
    ...                           n_epochs=20, hidden=16, seed=0)
    >>> round(float(fit.coef[0, 0]), 2), bool(fit.residual_scale[0] > 0.1)
    (2.0, True)
    """
    rows = low_rank_rows(model)
    if tolerance is not None and not float(tolerance) > 0:
        raise ValueError(f"tolerance must be > 0, got {tolerance}")
    check_setting("n_check", n_check, 1, integer=True, hint=" (networks sampled to measure errors)")
    n_check = int(n_check)
    tol = math.nan if tolerance is None else float(tolerance)
    seed = resolve_seed(seed)
    rank, n_units = model.rank, model.n_units
    if points is None:
        points = latent_points(model, seed=seed)
    points = torch.as_tensor(points, dtype=torch.float64)
    if points.ndim != 2 or points.shape[1] != rank:
        raise ValueError(f"points must have shape (point, rank={rank}), got {tuple(points.shape)}")
    check_finite(points, "points", "give finite latent states or leave points=None")
    reference = latent_map(model, points)
    kwargs = {"alpha": model.alpha, "activation": model.activation}
    width = rows.shape[1]
    drive = [c for c in range(width) if not rank <= c < 2 * rank]
    x = rows[:, drive].numpy()
    const_mask = x.std(0) <= 1e-12 * (1 + np.abs(x.mean(0)))
    constants = {drive[j]: float(x[0, j]) for j in np.flatnonzero(const_mask)}
    coef = _match_conditional_mean(model, rows, points, reference)
    from neurodyn.training.flow_matching import fit_flow_matching

    names = [model.loading_names()[c] for c in drive if c not in constants]
    flow = fit_flow_matching(x[:, ~const_mask], names=names, seed=seed, **flow_options)

    check_seeds = numpy_rng(seed, 5).integers(0, 2**62, n_check)

    def make(scale: np.ndarray, status: str = "completed", err: float = math.nan, ent: float = math.nan):
        return MaxEntLoadings(flow, rank, n_units, tuple(drive), constants, coef, scale, float(tol), err,
                              ent, status, seed, kwargs)

    def mean_error(fit: MaxEntLoadings) -> float:
        return float(np.mean([dynamics_error(fit.sample_network(seed=int(k)), reference, points) ** 2
                              for k in check_seeds])) ** 0.5

    if flow.status != "completed":
        return make(np.zeros(rank), flow.status)
    e_x = mean_error(make(np.zeros(rank)))
    if tolerance is None:  # the spread may add the error of resampling the model's own neurons
        rng = numpy_rng(seed, 3)
        from neurodyn.models import LowRankRNN

        boot = [LowRankRNN.from_loadings(rows[rng.integers(0, n_units, n_units)], rank=rank,
                                         **kwargs).double() for _ in range(n_check)]
        tol = math.sqrt(e_x ** 2 + float(np.mean([dynamics_error(b, reference, points) ** 2 for b in boot])))
    phi2 = _mean_rate_power(model, rows, points)
    d2 = float(((reference - (1 - model.alpha) * points) / model.alpha).pow(2).mean())
    budget = tol ** 2 - e_x ** 2
    status = "completed"
    if budget <= 0:
        status = "tolerance_too_tight"
        warnings.warn(f"tolerance {tol:.3g} is below the error {e_x:.3g} of networks with no residual "
                      "spread of n; the residual scale is set to 0 (raise the tolerance or train the flow "
                      "longer)", RuntimeWarning, stacklevel=2)
    s = math.sqrt(max(budget, 0.0) * n_units * d2 / phi2)
    if s > 0:  # calibrate the slope of e^2 in s^2 on the sampled networks themselves
        slope = (mean_error(make(np.full(rank, s))) ** 2 - e_x ** 2) / s ** 2
        s = math.sqrt(budget / slope) if slope > 0 else s
    err = mean_error(make(np.full(rank, s)))
    h_flow = flow.entropy(1000, seed=numpy_rng(seed, 4))
    h_gauss = rank * 0.5 * math.log(2 * math.pi * math.e * s * s) if s > 0 else -math.inf
    return make(np.full(rank, s), status, err, h_flow + h_gauss)


def _mean_rate_power(model: Any, rows: torch.Tensor, points: torch.Tensor) -> float:
    """``<phi(m . kappa + b)^2>`` over neurons and points: the per-neuron rate power at the points."""
    from neurodyn.models._base import activation_fn

    rank = model.rank
    x = torch.cat([rows[:, :rank], rows[:, 2 * rank:]], dim=1)
    n_points = points.shape[0]
    v = torch.cat([points, points.new_zeros(n_points, model.n_inputs), points.new_ones(n_points, 1)], 1)
    return float(activation_fn(model.activation)(v @ x.T).pow(2).mean())


def _match_conditional_mean(model: Any, rows: torch.Tensor, points: torch.Tensor,
                            reference: torch.Tensor) -> np.ndarray:
    """Coefficients ``C`` (drive + 1, rank) of ``E[n | x] = [x, 1] C`` that reproduce the model's
    recurrent term ``F(k) = 1/N sum_i n_i phi(x_i . v)`` at the points, by least squares pulled
    (ridge ``RIDGE``, relative) towards the linear regression of ``n`` on ``[x, 1]``."""
    from neurodyn.models._base import activation_fn

    rank, n_units, n_points = model.rank, model.n_units, points.shape[0]
    x = torch.cat([rows[:, :rank], rows[:, 2 * rank:]], dim=1)
    v = torch.cat([points, points.new_zeros(n_points, model.n_inputs), points.new_ones(n_points, 1)], 1)
    rates = activation_fn(model.activation)(v @ x.T)  # (point, unit)
    design = rates @ torch.cat([x, x.new_ones(n_units, 1)], 1) / n_units  # (point, drive + 1)
    f_ref = (reference - (1 - model.alpha) * points) / model.alpha
    features = torch.cat([x, x.new_ones(n_units, 1)], 1).numpy()
    regression, *_ = np.linalg.lstsq(features, rows[:, rank:2 * rank].numpy(), rcond=None)
    # directions the points do not constrain stay at the plain regression of n on [x, 1] (ridge)
    a = design.numpy()
    gram = a.T @ a
    ridge = RIDGE * np.trace(gram) / gram.shape[0] + 1e-300
    return np.linalg.solve(gram + ridge * np.eye(gram.shape[0]), a.T @ f_ref.numpy() + ridge * regression)

