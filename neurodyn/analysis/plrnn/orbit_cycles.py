"""Exact cycles of the attractors that orbits settle on, for long periods SCYFI cannot reach.

The region-iteration search of :func:`~neurodyn.analysis.find_cycles` tries region sequences of
every order up to ``max_order``; an attracting cycle of order 40 is out of its reach. Here the
sequence is read off the dynamics instead: orbits are run past a transient, the first return of
each orbit to its own start (within ``closure_rtol``) gives the period ``k`` and the sequence of
linear regions it visits, and that sequence's cycle equation ``(I − J_k…J_1) z = c`` is solved
exactly, as in SCYFI (Eisenmann, Monfared, Göring & Durstewitz, NeurIPS 2023), and verified like
every cycle of ``find_cycles`` (the orbit points lie in their regions, ``F^k(z) = z``, the
monodromy eigenvalues give the stability). What the orbits settle on is found, nothing else:
saddles and repellers are missed, and chaotic or quasi-periodic attractors close no cycle.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from neurodyn._budget import MAX_MEMORY, check_memory
from neurodyn._checks import check_finite, check_setting
from neurodyn._seed import SeedLike, numpy_rng, resolve_seed
from neurodyn.analysis.plrnn import _cycle_algebra as alg
from neurodyn.analysis.plrnn._cycle_collect import Collector, Tolerances
from neurodyn.analysis.plrnn._cycle_search import OrderStats
from neurodyn.analysis.plrnn.cycle_result import CycleResult
from neurodyn.analysis.plrnn.cycles import _assemble, search_attrs
from neurodyn.models.piecewise import PLSystem, pl_system

__all__ = ["find_attracting_cycles"]

OUTCOMES = ("closed", "not_closed", "diverged", "inconsistent", "ill_conditioned")
#: ``Collector.offer`` status → orbit outcome; "lower_order" cannot be a genuine first return, so it
#: is a degenerate solve like a singular one
_OFFER_OUTCOME = {"new": "closed", "duplicate": "closed", "inconsistent": "inconsistent",
                  "lower_order": "ill_conditioned", "diverged": "diverged"}
DIVERGED_SCALE = 1e8  # an orbit beyond this many times the system's scale has diverged


def _given_states(system: PLSystem, initial_states: Any) -> np.ndarray:
    n = system.n_latent
    z = np.asarray(initial_states.detach().cpu() if hasattr(initial_states, "detach") else initial_states,
                   dtype=np.float64)
    z = z[None] if z.ndim == 1 else z
    if z.ndim != 2 or z.shape[1] != n or z.shape[0] == 0:
        raise ValueError(f"initial_states must have shape (state,) or (batch, state) with state={n} and "
                         f"batch >= 1, got {np.shape(initial_states)}")
    check_finite(z, "initial_states", "pass finite states")
    return z


def _check_orbit_memory(n_orbits: int, max_order: int, system: PLSystem, max_memory: float,
                        given: bool) -> None:
    """One-line ``ValueError`` with the estimate, before anything is drawn or iterated, when the orbits
    held at once, (orbit, max_order + 1, latent) float64 plus a step's temporaries, exceed
    ``max_memory`` or the memory available."""
    n = system.n_latent
    nbytes = 8.0 * n_orbits * ((max_order + 4.0) * n + 2.0 * system.n_hyperplanes)
    detail = f"{n_orbits} orbits x {max_order + 1} steps x {n} dims, float64"
    fix = ("pass fewer initial_states" if given else "lower n_inits") + " or max_order"
    if nbytes > max_memory:
        raise ValueError(f"find_attracting_cycles needs about {nbytes / 2**30:.3g} GiB ({detail}) but "
                         f"max_memory is {max_memory / 2**30:.3g} GiB; {fix}, or raise max_memory")
    check_memory("find_attracting_cycles", nbytes, detail, fix)


def _first_return(orbit: np.ndarray, rtol: float) -> int:
    """Smallest ``j >= 1`` with ``|orbit[j] − orbit[0]|_∞ <= rtol (1 + |orbit[0]|_∞)``, else 0."""
    tol = rtol * (1.0 + np.abs(orbit[0]).max())
    hit = np.flatnonzero(np.abs(orbit[1:] - orbit[0]).max(axis=1) <= tol)
    return int(hit[0]) + 1 if hit.size else 0


def find_attracting_cycles(
    model: Any,
    initial_states: Any = None,
    *,
    n_inits: int = 64,
    n_transient: int = 5000,
    max_order: int = 200,
    u: Any = None,
    seed: SeedLike = 0,
    closure_rtol: float = 1e-6,
    max_condition: float = 1e12,
    tol_residual: float = 1e-8,
    region_tol: float = 1e-9,
    dedup_rtol: float = 1e-6,
    marginal_tol: float = 1e-6,
    max_memory: float = MAX_MEMORY,
) -> CycleResult:
    """Exact fixed points and k-cycles that orbits of a PLRNN-family map converge to.

    Each initial state is iterated ``n_transient`` steps; if its orbit then returns to its start
    within ``max_order`` steps (period ``k``, tolerance ``closure_rtol``), the cycle of the region
    sequence it visited is solved exactly and verified (see the module docstring). The result has
    the layout of :func:`~neurodyn.analysis.find_cycles` (``attrs["method"] == "orbits"``); a
    stable k-cycle has ``stability == "stable"``, all monodromy ``|λ| < 1``.

    Parameters
    ----------
    model : PLRNN, ShallowPLRNN, ALRNN or PLSystem
    initial_states : array, shape (batch, state) or (state,), optional
        Starts of the orbits (e.g. latent states inferred from data); default ``n_inits`` draws of
        ``N(0, s² I)`` with ``s`` set by the distances of the region boundaries from the origin.
    n_inits : int
        Number of random starts when ``initial_states`` is not given.
    n_transient : int
        Time steps iterated before looking for a return; it must be long enough for the orbit to
        come within ``closure_rtol`` of the cycle (contraction ``max|λ|^(n_transient / k)``).
    max_order : int
        Longest period looked for (time steps).
    u : array, shape (input,), optional
        Constant external input (default zero).
    seed : int, Generator or None
        Seed of the random starts.
    closure_rtol : float
        An orbit has returned when ``|z_{t+k} − z_t|_∞ <= closure_rtol (1 + |z_t|_∞)``.
    max_condition, tol_residual, region_tol, dedup_rtol, marginal_tol : float
        As in :func:`~neurodyn.analysis.find_cycles`.
    max_memory : float
        Bytes the orbits may hold at once: ``8 x orbits x (max_order + 1) x latent`` (plus a few
        states per orbit) must fit in it (default 1 GiB) and in the memory available.

    Returns
    -------
    CycleResult
        ``attrs`` also hold the number of orbits per outcome: ``n_closed`` (a verified cycle),
        ``n_not_closed`` (no return within ``max_order``: chaotic, quasi-periodic, a longer period or
        slow convergence), ``n_diverged`` (Inf/NaN or beyond ``1e8`` times the map's scale plus the
        largest start), ``n_inconsistent`` (the solved sequence left its regions, e.g. an orbit still
        converging) and ``n_ill_conditioned`` (``I − J_k…J_1`` singular or ill-conditioned: a
        non-isolated cycle, e.g. a rotation). ``search`` rows
        are per order 1..``max_order``; ``n_solves`` counts the orbits that closed at that order.
        ``attrs["orbits_per_cycle"]`` lists, per ``cycle_id``, how many orbits settled on that cycle
        (the share of the starts in its basin of attraction).

    Raises
    ------
    TypeError
        If ``model`` is not a piecewise-linear model or ``PLSystem``.
    ValueError
        For non-positive ``n_inits``/``max_order``, negative ``n_transient``, non-finite or wrong-shaped
        ``initial_states``, a ``closure_rtol`` outside (0, 1) or bad tolerances; and, before any
        start is drawn or iterated, when the orbits need more than ``max_memory`` or the memory
        available (the message gives the estimate and says to lower ``n_inits`` or ``max_order``).

    Examples
    --------
    Orbits of a bistable map settle on its two stable fixed points, which are then solved exactly:

    >>> import numpy as np
    >>> from neurodyn.analysis import find_attracting_cycles
    >>> from neurodyn.models import ShallowPLRNN
    >>> normals = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])
    >>> mixing = np.array([[-1.5, 1.5, 0.5], [0.0, 0.0, 0.0]])
    >>> model = ShallowPLRNN.from_arrays([2.0, 0.5], mixing, normals, [0.0, 0.5], [-1.0, -1.0, 0.0])
    >>> cycles = find_attracting_cycles(model, n_inits=8, n_transient=200, seed=0)
    >>> cycles.states.tolist(), cycles.stability.tolist()
    ([[-2.0, 1.0], [4.0, 1.0]], ['stable', 'stable'])
    >>> cycles.attrs["method"]
    'orbits'
    """
    for name, value in (("n_inits", n_inits), ("max_order", max_order), ("n_transient", n_transient)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    if n_inits < 1 or max_order < 1 or n_transient < 0:
        raise ValueError(f"need n_inits >= 1, max_order >= 1 and n_transient >= 0, got {n_inits}, "
                         f"{max_order}, {n_transient}")
    check_setting("max_memory", max_memory, 0, strict=True, hint=" (bytes)")
    if not 0.0 < closure_rtol < 1.0:
        raise ValueError(f"closure_rtol must be in (0, 1), got {closure_rtol}")
    if isinstance(model, PLSystem) and u is not None:
        raise ValueError("u is folded into a PLSystem's bias already; pass the model instead")
    system = model if isinstance(model, PLSystem) else pl_system(model, u=u)
    tol = Tolerances(max_condition=max_condition, tol_residual=tol_residual, region_tol=region_tol,
                     dedup_rtol=dedup_rtol, marginal_tol=marginal_tol)
    seed_int = resolve_seed(seed)
    start = time.perf_counter()
    given = None if initial_states is None else _given_states(system, initial_states)
    _check_orbit_memory(int(n_inits) if given is None else len(given), int(max_order), system,
                        float(max_memory), given is not None)
    if given is None:
        z = numpy_rng(seed_int).normal(size=(int(n_inits), system.n_latent)) * alg.system_scale(system)
    else:
        z = given
    bound = DIVERGED_SCALE * (alg.system_scale(system) + float(np.abs(z).max()))
    orbits = np.empty((len(z), int(max_order) + 1, system.n_latent))  # (batch, max_order + 1, latent)
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(int(n_transient)):
            z = system.step(z)
        orbits[:, 0] = z
        for t in range(int(max_order)):
            z = system.step(z)
            orbits[:, t + 1] = z
    col = Collector(system, alg.AffineMaps(system), tol)
    stats = [OrderStats() for _ in range(int(max_order))]
    counts = dict.fromkeys(OUTCOMES, 0)
    landed: list[np.ndarray] = []  # a point of each closed orbit's cycle
    for path in orbits:
        with np.errstate(invalid="ignore"):
            escaped = not np.all(np.abs(path) <= bound)  # NaN and Inf included
        if escaped:
            counts["diverged"] += 1
            continue
        k = _first_return(path, closure_rtol)
        if k == 0:
            counts["not_closed"] += 1
            continue
        codes = system.region_code(path[:k])
        J, c = col.affine(codes)
        points, P, _ = alg.solve_one(J, c, tol.max_condition)
        stats[k - 1].n_solves += 1
        stats[k - 1].n_regions_visited += len({row.tobytes() for row in codes})
        if points is None:
            stats[k - 1].n_ill_conditioned += 1
            counts["ill_conditioned"] += 1
            continue
        outcome = _OFFER_OUTCOME[col.offer(points, codes, P, 0)]
        counts[outcome] += 1
        if outcome == "closed":
            landed.append(points[0])
    attrs = {
        "method": "orbits", "max_order": int(max_order), "seed": seed_int, "n_inits": int(len(orbits)),
        "n_transient": int(n_transient), "closure_rtol": closure_rtol,
        **search_attrs(system, tol, model, u, start),
    }
    attrs.update({f"n_{name}": int(v) for name, v in counts.items()})
    attrs["orbits_per_cycle"] = _orbits_per_cycle(col, landed)
    return _assemble(col, stats, attrs)


def _orbits_per_cycle(col: Collector, landed: list[np.ndarray]) -> list[int]:
    """How many closed orbits settled on each cycle, in ``cycle_id`` order (``_assemble`` numbers
    the collector's sorted cycles): the share of the starts in each cycle's basin of attraction."""
    cycles = col.sorted_cycles()
    out = [0] * len(cycles)
    for z in landed:
        dist = [np.abs(c.points - z).max(axis=1).min() for c in cycles]
        out[int(np.argmin(dist))] += 1
    return out
