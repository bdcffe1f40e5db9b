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

from neurodyn._seed import SeedLike, numpy_rng, resolve_seed
from neurodyn._version import __version__
from neurodyn.analysis.fixed_points import find_fixed_points
from neurodyn.analysis.fixed_points._search import speed
from neurodyn.models._base import RecurrentModel

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
    ValueError
        If the last axis of ``states`` is not the model's state size.

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
    x = np.asarray(states, dtype=np.float64)
    if x.ndim < 1 or x.shape[-1] != model.state_size:
        raise ValueError(f"states must end in the model's {model.state_size} units, got shape {x.shape}")
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
        (largest ``‖F(h, 0) − h‖`` over the final states), ``collapsed`` (``final_spread <
        tol``), ``period`` (1: the runs stopped at fixed points; ``k``: on period-``k`` cycles;
        0: none up to ``max_period``, e.g. chaos or a slow drift), ``fixed_points`` (the
        :class:`~neurodyn.analysis.FixedPointResult` of the search), ``n_fixed_points`` and
        ``n_stable``, and ``final_states`` (n, unit).

    Raises
    ------
    ValueError
        For ``n_steps < 1`` or states of the wrong width.

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
    if int(n_steps) < 1:
        raise ValueError(f"n_steps must be >= 1, got {n_steps}")
    x0 = np.asarray(initial_states, dtype=np.float64)
    if x0.ndim != 2 or x0.shape[1] != model.state_size:
        raise ValueError(f"initial_states must be (n, {model.state_size}), got {x0.shape}")
    G, _ = _zero_input_map(model)
    h = torch.as_tensor(x0)
    with torch.no_grad():
        for _ in range(int(n_steps)):
            h = G(h)
        final, later = h.numpy(), []
        for _ in range(int(max_period)):
            h = G(h)
            later.append(h.numpy())
    returns = [k + 1 for k in range(int(max_period))
               if np.linalg.norm(later[k] - final, axis=1).max() < tol]
    spread = float(np.linalg.norm(final - final.mean(0), axis=1).max())
    speeds = compute_speeds(model, final)
    half = max(1, int(n_inits) // 2)
    rng = numpy_rng(seed, 3)
    pool = np.concatenate([final[rng.permutation(len(final))[:half]], x0[rng.permutation(len(x0))[:half]]])
    fps = find_fixed_points(model, initial_states=pool, n_inits=len(pool), seed=seed).fixed_points()
    return {"final_spread": spread, "final_speed": float(speeds.max()), "collapsed": bool(spread < tol),
            "period": returns[0] if returns else 0,
            "fixed_points": fps, "n_fixed_points": fps.n_points,
            "n_stable": int(np.sum(fps.stability == "stable")), "final_states": final}


def compute_orbit(
    states: np.ndarray, *, n_bins: int = 24, emissions: np.ndarray | None = None,
    speeds: np.ndarray | None = None,
) -> xr.Dataset:
    """The orbit of noisy trajectories in their top-two principal-component plane, binned by phase.

    The phase of a state is ``atan2(pc2, pc1)`` around the mean of all states. Per phase bin: the
    mean state (the orbit), the occupancy, the mean speed and the mean emission probabilities; the
    bins where the most probable symbol changes from the previous bin (circularly) are where the
    emissions change along the orbit.

    Parameters
    ----------
    states : ndarray, shape (trial, time, unit)
    n_bins : int
        Phase bins over ``[-pi, pi)``.
    emissions : ndarray, shape (trial, time, symbol), optional
        Emission probabilities (e.g. the softmax of the readout).
    speeds : ndarray, shape (trial, time), optional
        E.g. from :func:`compute_speeds`.

    Returns
    -------
    xarray.Dataset
        Dims ``phase`` (bin centres, radians), ``unit``, ``symbol``, ``trial``, ``pc``. Variables
        ``orbit`` (phase, unit), ``occupancy`` (phase), ``speed`` (phase), ``emission`` (phase,
        symbol), ``mode`` (phase; -1 where unvisited), ``change`` (phase, bool), ``winding``
        (trial: net phase advance / 2 pi), ``components`` (pc, unit). Attrs
        ``explained_variance`` (of the two PCs), ``n_emission_changes``.

    Raises
    ------
    ValueError
        For fewer than 2 units or ``n_bins < 2``, or mismatched shapes.

    Examples
    --------
    A noisy circle with symbol 0 on its upper half and 1 on its lower half changes symbol twice:

    >>> import numpy as np
    >>> from neurodyn.analysis import compute_orbit
    >>> t = np.linspace(0, 4 * np.pi, 200, endpoint=False)
    >>> states = np.stack([np.cos(t), np.sin(t), 0 * t], -1)[None]  # one trial, two turns
    >>> emissions = np.stack([np.sin(t) > 0, np.sin(t) <= 0], -1)[None].astype(float)
    >>> orbit = compute_orbit(states, n_bins=8, emissions=emissions)
    >>> orbit.attrs["n_emission_changes"], float(abs(orbit.winding[0]).round(2))
    (2, 1.99)
    """
    import xarray as xr

    x = np.asarray(states, dtype=np.float64)
    if x.ndim != 3 or x.shape[-1] < 2 or int(n_bins) < 2:
        raise ValueError(f"states must be (trial, time, unit) with >= 2 units and n_bins >= 2; "
                         f"got {x.shape}, {n_bins}")
    flat = x.reshape(-1, x.shape[-1])
    centred = flat - flat.mean(0)
    _, sv, vt = np.linalg.svd(centred, full_matrices=False)
    pcs = centred @ vt[:2].T
    phase = np.arctan2(pcs[:, 1], pcs[:, 0])
    edges = np.linspace(-np.pi, np.pi, int(n_bins) + 1)
    b = np.clip(np.digitize(phase, edges) - 1, 0, int(n_bins) - 1)
    count = np.bincount(b, minlength=n_bins).astype(np.float64)
    with np.errstate(invalid="ignore"):
        def per_bin(v: np.ndarray) -> np.ndarray:
            return np.stack([np.bincount(b, weights=v[:, k], minlength=n_bins) for k in range(v.shape[1])],
                            -1) / count[:, None]

        data = {"orbit": (("phase", "unit"), per_bin(flat)), "occupancy": ("phase", count / count.sum())}
        if speeds is not None:
            data["speed"] = ("phase", per_bin(np.asarray(speeds, np.float64).reshape(-1, 1))[:, 0])
    unwrapped = np.unwrap(phase.reshape(x.shape[:2]), axis=1)
    data["winding"] = ("trial", (unwrapped[:, -1] - unwrapped[:, 0]) / (2 * np.pi))
    data["components"] = (("pc", "unit"), vt[:2])
    n_changes = 0
    if emissions is not None:
        e = np.asarray(emissions, np.float64)
        if e.shape[:2] != x.shape[:2]:
            raise ValueError(f"emissions must be (trial, time, symbol) like states, got {e.shape}")
        with np.errstate(invalid="ignore"):
            mean_e = per_bin(e.reshape(-1, e.shape[-1]))
        mode = np.where(count > 0, np.nan_to_num(mean_e, nan=-1.0).argmax(-1), -1)
        seen = np.flatnonzero(mode >= 0)
        change = np.zeros(int(n_bins), dtype=bool)
        change[seen] = mode[seen] != mode[np.roll(seen, 1)]  # previous visited bin, circularly
        n_changes = int(change.sum())
        data.update(emission=(("phase", "symbol"), mean_e), mode=("phase", mode), change=("phase", change))
    attrs = {"explained_variance": float((sv[:2] ** 2).sum() / (sv**2).sum()),
             "n_emission_changes": n_changes}
    coords = {"phase": (edges[:-1] + edges[1:]) / 2, "pc": [1, 2]}
    return xr.Dataset(data, coords=coords, attrs=attrs)


def _transitions(symbols: np.ndarray, window: int) -> tuple[np.ndarray, np.ndarray]:
    """(trial, time) of steps where the symbol changes after ``window`` steps of one symbol and is
    followed by ``window`` steps of the new one."""
    y = np.asarray(symbols)
    n_t = y.shape[1]
    trial, time = [], []
    for t in range(window, n_t - window + 1):
        before, after = y[:, t - window:t], y[:, t:t + window]
        ok = (before == before[:, :1]).all(1) & (after == after[:, :1]).all(1) & (before[:, 0] != after[:, 0])
        trial.append(np.flatnonzero(ok))
        time.append(np.full(int(ok.sum()), t))
    return np.concatenate(trial).astype(np.int64), np.concatenate(time).astype(np.int64)


def compute_transition_triggered_average(
    states: np.ndarray, symbols: np.ndarray, *, window: int = 5, n_kick: int = 5,
    speeds: np.ndarray | None = None,
) -> xr.Dataset:
    """Unit activity around symbol transitions, and the units that move first ("kick neurons").

    A transition is a step ``t`` where ``symbols`` changes after ``window`` steps of one symbol and
    before ``window`` steps of the new one (flicker is ignored). Each unit is z-scored over all
    steps; its transition-triggered average (TTA) is taken over lags ``-window .. window - 1``
    (lag 0 is the first step of the new symbol). A unit's kick score is the largest
    ``|TTA(lag) − TTA(−window)|`` over the lags before the transition (``-window+1 .. -1``): how far
    it moves, in its own standard deviations, before the symbol changes. The ``n_kick`` units with
    the largest scores are the kick neurons.

    Parameters
    ----------
    states : ndarray, shape (trial, time, unit)
    symbols : ndarray of int, shape (trial, time)
        E.g. the most probable symbol of the readout along noisy trajectories.
    window : int
        Steps on each side (>= 2).
    n_kick : int
        Number of kick neurons reported.
    speeds : ndarray, shape (trial, time), optional
        Adds the speed's TTA (``speed_tta``, lag).

    Returns
    -------
    xarray.Dataset
        Dims ``lag``, ``unit``, ``kick``. Variables ``tta`` (lag, unit), ``kick_score`` (unit),
        ``kick_unit`` (kick; unit indices, best first), ``lead`` (kick; the earliest pre-transition lag
        at which the unit has moved half its kick score). Attrs ``n_transitions``, ``window``.

    Raises
    ------
    ValueError
        For mismatched shapes, ``window < 2`` or when no transition is found (lower ``window`` or
        give longer trajectories).

    Examples
    --------
    Unit 2 jumps two steps before every switch of the symbol; the others are noise:

    >>> import numpy as np
    >>> from neurodyn.analysis import compute_transition_triggered_average
    >>> rng = np.random.default_rng(0)
    >>> symbols = np.repeat([[0, 1] * 10], 10, axis=1)  # switches every 10 steps
    >>> states = rng.normal(size=(1, 200, 4))
    >>> states[0, 8::10, 2] += 5.0
    >>> states[0, 9::10, 2] += 5.0
    >>> tta = compute_transition_triggered_average(states, symbols, window=5, n_kick=1)
    >>> tta.attrs["n_transitions"], tta.kick_unit.values.tolist(), tta.lead.values.tolist()
    (19, [2], [-2])
    """
    import xarray as xr

    x = np.asarray(states, np.float64)
    y = np.asarray(symbols)
    if x.ndim != 3 or y.shape != x.shape[:2] or int(window) < 2:
        raise ValueError(f"states must be (trial, time, unit), symbols (trial, time) alike and window >= 2; "
                         f"got {x.shape}, {y.shape}, {window}")
    w = int(window)
    trial, time = _transitions(y, w)
    if trial.size == 0:
        raise ValueError(f"no symbol transition with {w} steady steps on each side; lower window or give "
                         "longer trajectories")
    z = (x - x.mean((0, 1))) / (x.std((0, 1)) + 1e-12)
    lags = np.arange(-w, w)
    tta = z[trial[:, None], time[:, None] + lags].mean(0)  # (lag, unit)
    pre = tta[1:w] - tta[0]
    score = np.abs(pre).max(0)
    kick = np.argsort(-score, kind="stable")[: int(n_kick)]
    lead = np.array([lags[1:w][np.argmax(np.abs(pre[:, u]) >= score[u] / 2)] for u in kick])
    data = {"tta": (("lag", "unit"), tta), "kick_score": ("unit", score), "kick_unit": ("kick", kick),
            "lead": ("kick", lead)}
    if speeds is not None:
        s = np.asarray(speeds, np.float64)
        data["speed_tta"] = ("lag", s[trial[:, None], time[:, None] + lags].mean(0))
    return xr.Dataset(data, coords={"lag": lags}, attrs={"n_transitions": int(trial.size), "window": w})


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
        If the model and the task disagree in sizes, or no transition is found.

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
    if model.n_inputs != task.n_inputs or model.n_outputs != task.n_outputs:
        raise ValueError(f"model has {model.n_inputs} inputs / {model.n_outputs} outputs but the task needs "
                         f"{task.n_inputs} / {task.n_outputs}")
    import xarray as xr

    seed = resolve_seed(seed)
    run_task = task if n_steps is None else task.replace(n_steps=int(n_steps))
    batch = run_task.sample(int(n_trials), seed=seed)
    was_training = model.training
    model.eval()
    out = model(torch.as_tensor(batch.inputs, dtype=next(model.parameters()).dtype), noise=False)
    model.train(was_training)
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
    bins = _phase_bins(orbit, states)
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


def _phase_bins(orbit: xr.Dataset, states: np.ndarray) -> np.ndarray:
    """The phase bin of every state (trial * time,), with the orbit's principal components."""
    flat = states.reshape(-1, states.shape[-1])
    pcs = (flat - flat.mean(0)) @ orbit.components.values.T
    edges = np.linspace(-np.pi, np.pi, orbit.sizes["phase"] + 1)
    return np.clip(np.digitize(np.arctan2(pcs[:, 1], pcs[:, 0]), edges) - 1, 0, orbit.sizes["phase"] - 1)
