"""The mechanism of a noise-driven network that emulates an HMM (Torre, Viscione, Pompe, Grewe & Mante
2025, "Mechanistic interpretability of RNNs emulating hidden Markov models", NeurIPS, arXiv:2510.25674).

The paper's account, checked here piece by piece on any trained model: without noise the activity
collapses to a single stable fixed point (:func:`compute_noise_free_collapse`); driven by noise it
travels a closed orbit (:func:`compute_orbit`) through slow regions (:func:`compute_speeds`) joined by
fast transitions, along which the emission probabilities change; a few "kick neurons" move before the
transitions (:func:`compute_transition_triggered_average`). :func:`compute_hmm_mechanism` runs them all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from neurodyn._checks import check_finite, check_setting, float64_copy
from neurodyn._seed import SeedLike, numpy_rng, resolve_seed
from neurodyn._version import __version__
from neurodyn.analysis._hmm_dynamics import (
    compute_orbit,
    compute_transition_triggered_average,
    phase_bins,
)
from neurodyn.analysis.fixed_points import find_fixed_points
from neurodyn.analysis.fixed_points._search import speed
from neurodyn.models._base import RecurrentModel, check_model, eval_mode

if TYPE_CHECKING:  # pragma: no cover
    import xarray as xr

__all__ = ["compute_hmm_mechanism", "compute_noise_free_collapse", "compute_orbit", "compute_speeds",
           "compute_transition_triggered_average"]


def _zero_input_map(model: RecurrentModel):
    """``h -> F(h, 0)`` of a float64, no-grad copy of ``model`` (the noise-free, input-free map)."""
    import copy

    shell = copy.deepcopy(model).double().eval().requires_grad_(False)

    def G(h: torch.Tensor) -> torch.Tensor:
        u = torch.zeros(h.shape[0], shell.n_inputs, dtype=h.dtype) if shell.n_inputs else None
        return shell.step(h, u)

    return G, shell


def compute_speeds(model: RecurrentModel, states: np.ndarray) -> np.ndarray:
    """Speed ``‖F(h, 0) − h‖`` of the noise-free, input-free map at each state (per time step).

    Parameters
    ----------
    model : RecurrentModel
    states : ndarray, shape (..., unit)
        E.g. noisy trajectories (trial, time, unit).

    Returns
    -------
    ndarray, shape (...,), float64
        ``sqrt(2 q)`` with ``q`` the speed that :func:`~neurodyn.analysis.find_fixed_points`
        minimises; small values mark slow regions.

    Raises
    ------
    TypeError
        If ``model`` is not a ``RecurrentModel``.
    ValueError
        If the last axis of ``states`` is not the model's state size, or ``states`` holds NaN/Inf.

    Examples
    --------
    >>> import numpy as np, torch
    >>> from neurodyn.models import LeakyRNN
    >>> from neurodyn.analysis import compute_speeds
    >>> model = LeakyRNN(1, 2, 1, alpha=0.5, seed=0)
    >>> with torch.no_grad():
    ...     _ = model.w_rec.zero_()
    >>> compute_speeds(model, np.array([[0.0, 0.0], [2.0, 0.0]])).tolist()  # |F(h) - h| = alpha |h|
    [0.0, 1.0]
    """
    check_model(model)
    x = float64_copy(states, "states")
    if x.ndim < 1 or x.shape[-1] != model.state_size:
        raise ValueError(f"states must end in the model's {model.state_size} units, got shape {x.shape}")
    check_finite(x, "states", "drop or repair the trials that diverged")
    G, _ = _zero_input_map(model)
    with torch.no_grad():
        q = speed(G, torch.as_tensor(x.reshape(-1, x.shape[-1])))
    return np.sqrt(2.0 * q.numpy()).reshape(x.shape[:-1])


def compute_noise_free_collapse(
    model: RecurrentModel, initial_states: np.ndarray, *, n_steps: int = 1000, tol: float = 1e-3,
    n_inits: int = 64, max_period: int = 16, seed: SeedLike = 0,
) -> dict[str, Any]:
    """Where the network goes with its noise inputs off: run ``F(h, 0)`` from many states.

    Parameters
    ----------
    model : RecurrentModel
    initial_states : ndarray, shape (n, unit)
        Where the runs start, e.g. states visited along noisy trajectories.
    n_steps : int
        Steps of each noise-free run.
    tol : float
        The runs have collapsed onto one point when every final state lies within ``tol`` of
        their mean (Euclidean).
    n_inits : int
        Fixed-point searches started from the final and the initial states (half each).
    max_period : int
        Longest period looked for after the runs: the smallest ``k <= max_period`` with every
        final state back within ``tol`` of itself after ``k`` more steps.
    seed : int, Generator or None
        Seed of the fixed-point search's sampling.

    Returns
    -------
    dict
        ``final_spread`` (largest distance of a final state to their mean), ``final_speed``
        (largest ``‖F(h, 0) − h‖`` over the final states; both ``inf`` when some run diverged,
        whose final state is then NaN/Inf, and the search starts from the bounded ones),
        ``collapsed`` (``final_spread < tol``), ``period`` (1: the runs stopped at fixed points;
        ``k``: on period-``k`` cycles; 0: none up to ``max_period``, e.g. chaos or a slow drift),
        ``fixed_points`` (the :class:`~neurodyn.analysis.FixedPointResult` of the search),
        ``n_fixed_points`` and ``n_stable``, and ``final_states`` (n, unit).

    Raises
    ------
    TypeError
        If ``model`` is not a ``RecurrentModel``.
    ValueError
        For ``n_steps``, ``n_inits`` or ``max_period`` not an integer >= 1, ``tol`` not a finite
        number > 0, no initial state, states of the wrong width or with NaN/Inf.

    Examples
    --------
    A contracting linear network collapses onto its one stable point, the origin:

    >>> import numpy as np, torch
    >>> from neurodyn.models import LeakyRNN
    >>> from neurodyn.analysis import compute_noise_free_collapse
    >>> model = LeakyRNN(2, 3, 1, activation="linear", gain=0.5, seed=0)
    >>> out = compute_noise_free_collapse(model, np.random.default_rng(0).normal(size=(20, 3)), n_steps=200)
    >>> out["collapsed"], out["period"], out["n_fixed_points"], out["n_stable"]
    (True, 1, 1, 1)
    """
    check_model(model)
    check_setting("n_steps", n_steps, 1, integer=True, hint=" (steps of each noise-free run)")
    check_setting("tol", tol, 0.0, strict=True, hint=" (distance at which states count as one)")
    check_setting("max_period", max_period, 1, integer=True, hint=" (longest period looked for; default 16)")
    x0 = float64_copy(initial_states, "initial_states")
    if x0.ndim != 2 or x0.shape[1] != model.state_size or len(x0) == 0:
        raise ValueError(f"initial_states must be (n, {model.state_size}) with n >= 1, got {x0.shape}")
    check_finite(x0, "initial_states", "drop or repair the states that diverged")
    check_setting("n_inits", n_inits, 1, integer=True, hint="; the fixed-point searches started (default 64)")
    G, _ = _zero_input_map(model)
    h = torch.as_tensor(x0)
    with torch.no_grad():
        for _ in range(int(n_steps)):
            h = G(h)
        final, later = h.numpy(), []
        for _ in range(int(max_period)):
            h = G(h)
            later.append(h.numpy())
    bounded = np.all(np.isfinite(final), axis=1)  # runs that diverged have no final state to compare
    with np.errstate(invalid="ignore", over="ignore"):
        returns = [k + 1 for k in range(int(max_period))
                   if bounded.all() and np.linalg.norm(later[k] - final, axis=1).max() < tol]
        spread = float(np.linalg.norm(final - final.mean(0), axis=1).max()) if bounded.all() else np.inf
    speeds = compute_speeds(model, final[bounded]) if bounded.all() else np.array([np.inf])
    half = max(1, int(n_inits) // 2)
    rng = numpy_rng(seed, 3)
    ends = final[bounded]
    pool = np.concatenate([ends[rng.permutation(len(ends))[:half]], x0[rng.permutation(len(x0))[:half]]])
    fps = find_fixed_points(model, initial_states=pool, n_inits=len(pool), seed=seed).fixed_points()
    return {"final_spread": spread, "final_speed": float(speeds.max()), "collapsed": bool(spread < tol),
            "period": returns[0] if returns else 0,
            "fixed_points": fps, "n_fixed_points": fps.n_points,
            "n_stable": int(np.sum(fps.stability == "stable")), "final_states": final}


@torch.no_grad()
def compute_hmm_mechanism(
    model: RecurrentModel, task: Any, *, n_trials: int = 64, n_steps: int | None = None,
    n_bins: int = 24, window: int = 5, n_kick: int = 5, n_quiet_steps: int = 1000, seed: SeedLike = 0,
) -> xr.Dataset:
    """Every mechanism analysis of Torre et al. (2025) on a noise-driven model, in one dataset.

    Rolls the model out on ``n_trials`` noise inputs of ``task`` (``n_steps`` long; the task's own
    length by default), then: speeds of the input-free map along the trajectories; the orbit
    (:func:`compute_orbit`) with the readout's softmax as emission probabilities; transitions of the
    most probable symbol and the kick neurons (:func:`compute_transition_triggered_average`); and
    the noise-free collapse from the visited states (:func:`compute_noise_free_collapse`).

    Parameters
    ----------
    model : RecurrentModel
        ``n_inputs == task.n_inputs`` noise channels, symbol logits as outputs.
    task : HMMEmulation
    n_trials, n_steps : int
        Noisy trajectories analysed (trial, time).
    n_bins, window, n_kick : int
        As in :func:`compute_orbit` and :func:`compute_transition_triggered_average`.
    n_quiet_steps : int
        Steps of the noise-free runs.
    seed : int, Generator or None
        Seed of the noise inputs and of the fixed-point search.

    Returns
    -------
    xarray.Dataset
        The variables of :func:`compute_orbit` and :func:`compute_transition_triggered_average`,
        plus ``slow_fraction`` (phase; share of steps slower than the median speed) and the
        noise-free fixed points ``fixed_point_state`` (fixed_point, unit) with their
        ``fixed_point_stability``. Attrs: ``collapsed`` (1 or 0), ``period``, ``final_spread``,
        ``final_speed``, ``n_fixed_points``, ``n_stable``, ``speed_ratio`` (mean speed at transitions
        over the median speed), ``explained_variance``, ``n_emission_changes``, ``n_transitions``,
        ``seed``, ``neurodyn_version``.

    Raises
    ------
    ValueError
        If the model and the task disagree in sizes, ``n_trials`` or ``n_quiet_steps`` is not an integer
        >= 1 or ``n_steps`` not an integer >= 2, the other settings are refused as in
        :func:`compute_orbit`, :func:`compute_transition_triggered_average` or
        :func:`compute_noise_free_collapse`, or no transition is found.

    Examples
    --------
    >>> from neurodyn.models import LeakyRNN
    >>> from neurodyn.tasks import HMMEmulation
    >>> from neurodyn.analysis import compute_hmm_mechanism
    >>> task = HMMEmulation(n_states=2, n_steps=60, n_noise=4)
    >>> model = LeakyRNN(4, 6, 3, gain=0.5, seed=0)
    >>> ds = compute_hmm_mechanism(model, task, n_trials=16, window=2, n_kick=2, n_quiet_steps=200)
    >>> ds.attrs["collapsed"], ds.attrs["n_stable"], sorted(ds.tta.dims)  # collapsed: 1 (yes) or 0
    (1, 1, ['lag', 'unit'])
    """
    import xarray as xr

    from neurodyn.training.train import check_sizes

    check_sizes(model, task)
    check_setting("n_trials", n_trials, 1, integer=True, hint=" (noisy trajectories analysed)")
    if n_steps is not None:
        check_setting("n_steps", n_steps, 2, integer=True, hint=" (steps per trajectory; None: the task's)")
    check_setting("n_quiet_steps", n_quiet_steps, 1, integer=True, hint=" (steps of the noise-free runs)")
    seed = resolve_seed(seed)
    run_task = task if n_steps is None else task.replace(n_steps=int(n_steps))
    batch = run_task.sample(int(n_trials), seed=seed)
    with eval_mode(model):
        out = model(torch.as_tensor(batch.inputs, dtype=next(model.parameters()).dtype), noise=False)
    states, logits = out.states.double().numpy(), out.outputs.double()
    probs = torch.softmax(logits, -1).numpy()
    speeds = compute_speeds(model, states)
    orbit = compute_orbit(states, n_bins=n_bins, emissions=probs, speeds=speeds)
    tta = compute_transition_triggered_average(states, probs.argmax(-1), window=window, n_kick=n_kick,
                                               speeds=speeds)
    collapse = compute_noise_free_collapse(model, states.reshape(-1, states.shape[-1])[:: max(1, window)],
                                           n_steps=n_quiet_steps, seed=seed)
    fps = collapse["fixed_points"]
    slow = speeds < np.median(speeds)
    ds = xr.merge([orbit, tta], combine_attrs="drop")
    bins = phase_bins(orbit, states)
    with np.errstate(invalid="ignore"):
        ds["slow_fraction"] = ("phase", np.bincount(bins, weights=slow.ravel(), minlength=n_bins)
                               / np.bincount(bins, minlength=n_bins))
    ds["fixed_point_state"] = (("fixed_point", "unit"), fps.states)
    ds["fixed_point_stability"] = ("fixed_point", fps.stability.astype(str))
    ds.attrs.update(orbit.attrs, **tta.attrs, collapsed=int(collapse["collapsed"]),
                    final_spread=collapse["final_spread"], final_speed=collapse["final_speed"],
                    period=collapse["period"],
                    n_fixed_points=collapse["n_fixed_points"], n_stable=collapse["n_stable"],
                    speed_ratio=float(tta.speed_tta.sel(lag=[-1, 0]).mean() / np.median(speeds)),
                    n_trials=int(n_trials), n_steps=int(run_task.n_steps), seed=seed,
                    neurodyn_version=__version__)
    return ds
