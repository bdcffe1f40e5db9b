"""Phase-binned orbits and transition-triggered averages of noisy trajectories (Torre et al. 2025).

Pure array statistics behind :func:`neurodyn.analysis.compute_hmm_mechanism`: no model is needed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from neurodyn._budget import check_memory
from neurodyn._checks import check_finite, check_setting, float64_copy

if TYPE_CHECKING:  # pragma: no cover
    import xarray as xr


def _check_trials(x: np.ndarray, what: str) -> None:
    """One-line ``ValueError`` for (trial, time, ...) states without a trial or a step, or with NaN/Inf."""
    if x.shape[0] < 1 or x.shape[1] < 1:
        raise ValueError(f"{what} needs at least 1 trial of at least 1 step; states has shape {x.shape}")
    check_finite(x, "states", "drop or repair the trials that diverged")


def _per_step(values: Any, x: np.ndarray, name: str, trailing: str = "") -> np.ndarray:
    """``values`` as a finite float64 array of shape (trial, time[, trailing]) like ``states`` ``x``."""
    v = float64_copy(values, name)
    ok = v.shape[:2] == x.shape[:2] and v.ndim == (3 if trailing else 2) and (not trailing or v.shape[2] > 0)
    if not ok:
        last = f", {trailing}" if trailing else ""
        raise ValueError(f"{name} must have shape (trial, time{last}) = ({x.shape[0]}, {x.shape[1]}{last}) "
                         f"like states, got {v.shape}")
    check_finite(v, name, "drop or repair the trials that diverged")
    return v


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
        For fewer than 2 units, ``n_bins`` not an integer >= 2, ``emissions`` or ``speeds`` not
        shaped like ``states`` (above), no trial or step, states that do not vary, NaN/Inf in
        ``states``, ``emissions`` or ``speeds``, or more bins than the memory available can hold
        (estimated before allocating).

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

    x = float64_copy(states, "states")
    check_setting("n_bins", n_bins, 2, integer=True, hint=" (phase bins; default 24)")
    n_bins = int(n_bins)
    if x.ndim != 3 or x.shape[-1] < 2:
        raise ValueError(f"states must be (trial, time, unit) with >= 2 units, got {x.shape}")
    _check_trials(x, "compute_orbit")
    if x.shape[0] * x.shape[1] < 2 or not np.any(x.std(axis=(0, 1)) > 0):
        raise ValueError(f"states of shape {x.shape} do not vary, so they span no principal plane; give "
                         "trajectories of more than one distinct state")
    speeds = None if speeds is None else _per_step(speeds, x, "speeds")
    emissions = None if emissions is None else _per_step(emissions, x, "emissions", "symbol")
    n_symbols = 0 if emissions is None else int(emissions.shape[-1])
    check_memory("compute_orbit", 8.0 * int(n_bins) * (2 * (x.shape[-1] + n_symbols) + 8),
                 f"n_bins={int(n_bins)} phase bins of {x.shape[-1]} units", "lower n_bins (default 24)")
    flat = x.reshape(-1, x.shape[-1])
    centred = flat - flat.mean(0)
    _, sv, vt = np.linalg.svd(centred, full_matrices=False)
    phase, b = _phase_and_bin(centred, vt[:2], int(n_bins))
    edges = np.linspace(-np.pi, np.pi, int(n_bins) + 1)
    count = np.bincount(b, minlength=n_bins).astype(np.float64)
    with np.errstate(invalid="ignore"):
        def per_bin(v: np.ndarray) -> np.ndarray:
            return np.stack([np.bincount(b, weights=v[:, k], minlength=n_bins) for k in range(v.shape[1])],
                            -1) / count[:, None]

        data = {"orbit": (("phase", "unit"), per_bin(flat)), "occupancy": ("phase", count / count.sum())}
        if speeds is not None:
            data["speed"] = ("phase", per_bin(speeds.reshape(-1, 1))[:, 0])
    unwrapped = np.unwrap(phase.reshape(x.shape[:2]), axis=1)
    data["winding"] = ("trial", (unwrapped[:, -1] - unwrapped[:, 0]) / (2 * np.pi))
    data["components"] = (("pc", "unit"), vt[:2])
    n_changes = 0
    if emissions is not None:
        e = emissions
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
        Number of kick neurons reported (>= 1; all units when there are fewer).
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
        For mismatched shapes (also ``speeds`` not (trial, time)), ``window`` not an integer >= 2,
        ``n_kick`` not an integer >= 1, no trial, NaN/Inf in ``states`` or ``speeds``, a window longer than
        the trials allow (``2 * window`` steps) or when no transition is found (lower ``window`` or
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

    x = float64_copy(states, "states")
    y = np.asarray(symbols)
    check_setting("window", window, 2, integer=True, hint=" (steady steps on each side)")
    check_setting("n_kick", n_kick, 1, integer=True, hint=" (kick neurons reported)")
    if x.ndim != 3 or y.shape != x.shape[:2]:
        raise ValueError(f"states must be (trial, time, unit) and symbols (trial, time) alike; got "
                         f"{x.shape}, {y.shape}")
    w = int(window)
    _check_trials(x, "compute_transition_triggered_average")
    speeds = None if speeds is None else _per_step(speeds, x, "speeds")
    if 2 * w > x.shape[1]:
        raise ValueError(f"window longer than the trials: window={w} needs 2 * window = {2 * w} steps but "
                         f"the trials have {x.shape[1]}; lower window to at most {x.shape[1] // 2}")
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
        data["speed_tta"] = ("lag", speeds[trial[:, None], time[:, None] + lags].mean(0))
    return xr.Dataset(data, coords={"lag": lags}, attrs={"n_transitions": int(trial.size), "window": w})


def _phase_and_bin(centred: np.ndarray, components: np.ndarray, n_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """Phase ``atan2(pc2, pc1)`` of centred states (sample, unit) and its bin (of ``n_bins`` on [-pi, pi))."""
    pcs = centred @ components.T
    phase = np.arctan2(pcs[:, 1], pcs[:, 0])
    edges = np.linspace(-np.pi, np.pi, n_bins + 1)
    return phase, np.clip(np.digitize(phase, edges) - 1, 0, n_bins - 1)


def phase_bins(orbit: xr.Dataset, states: np.ndarray) -> np.ndarray:
    """The phase bin of every state (trial * time,), with the orbit's principal components."""
    flat = states.reshape(-1, states.shape[-1])
    return _phase_and_bin(flat - flat.mean(0), orbit.components.values, orbit.sizes["phase"])[1]
