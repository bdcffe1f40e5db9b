"""Exact fixed points and k-cycles of piecewise-linear RNNs (SCYFI, Eisenmann et al., NeurIPS 2023)."""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from neurodyn._seed import SeedLike, numpy_rng, resolve_seed
from neurodyn._version import __version__
from neurodyn.analysis.plrnn import _cycle_algebra as alg
from neurodyn.analysis.plrnn._cycle_collect import Collector, Tolerances
from neurodyn.analysis.plrnn._cycle_search import (
    MAX_TRANSITION_LPS,
    Exhaustive,
    check_heuristic_cost,
    exhaustive_affordable,
    search_heuristic,
)
from neurodyn.analysis.plrnn.cycle_result import CycleResult
from neurodyn.models.piecewise import PLSystem, pl_system

__all__ = ["find_cycles"]


def find_cycles(
    model: Any,
    *,
    max_order: int = 1,
    n_restarts: int = 100,
    max_iter: int = 50,
    seed: SeedLike = 0,
    time_budget: float | None = None,
    exhaustive: bool = False,
    u: Any = None,
    max_condition: float = 1e12,
    tol_residual: float = 1e-8,
    region_tol: float = 1e-9,
    dedup_rtol: float = 1e-6,
    marginal_tol: float = 1e-6,
    max_regions: int = 1_000_000,
    max_sequences: int = 2_000_000,
) -> CycleResult:
    """Find the fixed points and k-cycles (k = 1..``max_order``) of a PLRNN-family map exactly.

    Inside a linear region the map is affine, ``F(z) = J_D z + c_D``; a k-cycle through regions
    ``D_1..D_k`` therefore solves ``(I − J_k…J_1) z_1 = c_k + J_k c_{k−1} + … + J_k…J_2 c_1`` and is
    genuine when every orbit point lies in (the closure of) its region. The default search (method
    "exact") iterates region sequences until they are self-consistent from seeded restarts, as in
    SCYFI (Eisenmann, Monfared, Göring & Durstewitz, "Bifurcations and loss jumps in RNN training",
    NeurIPS 2023). With ``exhaustive=True`` every non-empty region (all ``2**P`` codes, or the cells of
    the hyperplane arrangement found by linear programmes for a low-rank shallow PLRNN) and every
    primitive region sequence of length ``k`` (pruned by the one-step transition graph) is solved,
    which proves the list complete (for isolated cycles); it is meant for small systems and orders.

    Changes to the reference algorithm: float64 products; ``cond(I − J_k…J_1)`` is checked and
    ill-conditioned sequences are counted and skipped; duplicates are merged with a relative
    tolerance over all cyclic shifts (no rounding); each cycle starts at its lexicographically
    smallest region-code sequence; k-cycles that are cycles of a divisor order are dropped; each
    point reports its distance to the nearest region boundary; a time budget bounds the search.

    Parameters
    ----------
    model : PLRNN, ShallowPLRNN, ALRNN or PLSystem
        The map (any dtype; the search runs in float64 on CPU).
    max_order : int
        Largest cycle order searched; orders are searched in increasing order.
    n_restarts : int
        Heuristic: restarts in a row without a new cycle before an order's search stops (the count
        restarts whenever a new cycle is found; at most ``50 * n_restarts`` restarts per order).
    max_iter : int
        Heuristic: region-sequence updates per restart.
    seed : int, Generator or None
        Seed of the restarts (same seed ⇒ same result, unless ``time_budget`` cuts the search).
    time_budget : float, optional
        Wall-clock limit in seconds for the whole search, checked between restarts, chunks and
        orders (the call returns about then, however large ``max_order``); orders not finished are
        reported with ``search["complete"] == False`` (exhaustive) and a smaller ``n_solves``, orders
        not started with ``n_solves == 0`` (and ``complete`` False); ``summary()`` lists them in one
        line.
    exhaustive : bool
        Enumerate all regions / region sequences instead of the heuristic.
    u : array, shape (input,), optional
        Constant external input (default zero).
    max_condition : float
        Sequences with ``cond(I − J_k…J_1)`` above this are skipped (non-isolated or near-singular).
    tol_residual : float
        A point is ``converged`` when ``sqrt(2 q) <= tol_residual * (1 + ||z||)``.
    region_tol : float
        Allowed distance outside the region closure, relative to ``1 + max|z|``.
    dedup_rtol : float
        Two cycles are one when some cyclic shift matches within ``1e-9 + dedup_rtol * max(1, |z|)``.
    marginal_tol : float
        Eigenvalues with ``| |λ| − 1 | <= marginal_tol`` are marginal.
    max_regions, max_sequences : int
        Exhaustive mode: refuse to enumerate more regions / sequences than this.

    Returns
    -------
    CycleResult
        One row per cycle point (dims ``fixed_point``, ``unit``, ``eigenvalue``).

    Raises
    ------
    TypeError
        If ``model`` is not a piecewise-linear model or ``PLSystem``, or ``max_order``,
        ``n_restarts`` or ``max_iter`` is not an integer.
    ValueError
        For non-positive ``max_order``/``n_restarts``/``max_iter``, negative or non-finite
        tolerances, ``max_condition <= 1``, a wrong ``u``, or (exhaustive) too many regions or
        sequences (an order with more than ``max_sequences`` region sequences is refused before
        any order is searched, naming the highest order that fits). Without ``time_budget``, the
        region iteration is refused up front when it needs more than ``MAX_RESTART_STEPS`` (2·10⁶)
        restart steps, ``n_restarts × k`` for each order ``k = 1..max_order`` (about 1 ms each, so
        half an hour; ``max_order`` above 199 at the default ``n_restarts``).

    Examples
    --------
    The Lozi map ``x' = 1 + y - 1.7|x|, y' = 0.5 x`` as a PLRNN (``|x| = 2 relu(x) - x``): the
    exhaustive search proves that it has two fixed points and one 2-cycle, all saddles.

    >>> import numpy as np
    >>> from neurodyn.analysis import find_cycles
    >>> from neurodyn.models import PLRNN
    >>> lozi = PLRNN.from_arrays([[1.7, 1.0], [0.5, 0.0]], [[-3.4, 0.0], [0.0, 0.0]], [1.0, 0.0])
    >>> cycles = find_cycles(lozi, max_order=2, exhaustive=True)
    >>> cycles.order.tolist(), cycles.stability.tolist(), cycles.n_cycles
    ([1, 1, 2, 2], ['saddle', 'saddle', 'saddle', 'saddle'], 3)
    >>> np.round(cycles.states[1], 6).tolist()  # x = 1 / 2.2, y = x / 2
    [0.454545, 0.227273]
    >>> print(cycles.summary())
    order  stable  saddle  unstable  marginal  complete
        1       0       2         0         0       yes
        2       0       1         0         0       yes
    (method exhaustive; 'complete' = proven by enumeration)
    """
    for name, value in (("max_order", max_order), ("n_restarts", n_restarts), ("max_iter", max_iter)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
        if value < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")
    if time_budget is not None and not time_budget > 0:
        raise ValueError(f"time_budget must be positive seconds, got {time_budget}")
    if time_budget is None and not exhaustive:
        check_heuristic_cost(int(max_order), int(n_restarts))
    system = model if isinstance(model, PLSystem) else pl_system(model, u=u)
    if isinstance(model, PLSystem) and u is not None:
        raise ValueError("u is folded into a PLSystem's bias already; pass the model instead")
    tol = Tolerances(max_condition=max_condition, tol_residual=tol_residual, region_tol=region_tol,
                     dedup_rtol=dedup_rtol, marginal_tol=marginal_tol)
    seed_int = resolve_seed(seed)
    rng = numpy_rng(seed_int)
    start = time.perf_counter()
    deadline = math.inf if time_budget is None else start + float(time_budget)
    col = Collector(system, alg.AffineMaps(system), tol)
    enumerator = (Exhaustive(col, max_regions=max_regions, max_sequences=max_sequences)
                  if exhaustive else None)
    if enumerator is not None:
        n_regions = enumerator.codes.shape[0]
        orders = range(1, int(max_order) + 1) if n_regions**2 > MAX_TRANSITION_LPS else ()
        too_high = next((k for k in orders if not exhaustive_affordable(n_regions, k)), None)
        if too_high is not None:
            raise ValueError(
                f"exhaustive search over {n_regions} regions is not affordable for order {too_high}; "
                f"lower max_order to {too_high - 1} or use the heuristic (exhaustive=False)"
            )
        enumerator.check_orders(int(max_order))
    stats: list = []
    pool: dict[bytes, np.ndarray] = {}
    for k in range(1, int(max_order) + 1):
        if time.perf_counter() > deadline:
            break  # the orders left are reported unsearched (no solves, not complete)
        if enumerator is not None:
            stats.append(enumerator.search(k, deadline=deadline))
        else:
            stats.append(search_heuristic(col, k, rng=rng, n_restarts=int(n_restarts),
                                          max_iter=int(max_iter), deadline=deadline, pool=pool))
    attrs = {
        "method": "exhaustive" if exhaustive else "exact", "max_order": int(max_order),
        "seed": seed_int, "n_restarts": int(n_restarts), "max_iter": int(max_iter),
        "time_budget": float("inf") if time_budget is None else float(time_budget),
        **search_attrs(system, tol, model, u, start),
    }
    return _assemble(col, stats, attrs, n_orders=int(max_order))


def search_attrs(system: PLSystem, tol: Tolerances, model: Any, u: Any, start: float) -> dict[str, Any]:
    """The attrs every exact cycle search records: tolerances, system size, input, model, version,
    wall time since ``start`` (``time.perf_counter`` seconds)."""
    return {
        "max_condition": tol.max_condition, "tol_residual": tol.tol_residual, "region_tol": tol.region_tol,
        "dedup_rtol": tol.dedup_rtol, "dedup_atol": tol.dedup_atol, "marginal_tol": tol.marginal_tol,
        "tol_q": 0.5 * tol.tol_residual**2, "n_hyperplanes": system.n_hyperplanes,
        "input": "none" if u is None else np.asarray(u, dtype=np.float64).ravel(),
        "model": type(model).__name__, "neurodyn_version": __version__,
        "wall_time": time.perf_counter() - start,
    }


def _assemble(col: Collector, stats: list, attrs: dict[str, Any], n_orders: int | None = None) -> CycleResult:
    """Flatten the collected cycles into one row per point; the ``search`` counts of orders past
    ``stats`` (up to ``n_orders``, the orders a time budget left unsearched) are zeros, not complete."""
    n, H = col.system.n_latent, col.system.n_hyperplanes
    rows: dict[str, list] = {k: [] for k in ("states", "q", "eig", "stab", "nu", "conv", "order",
                                             "cid", "step", "margin", "code", "mode", "iter")}
    for cid, cyc in enumerate(col.sorted_cycles()):
        k = cyc.points.shape[0]
        label, n_unstable = alg.classify(cyc.eigenvalues, col.tol.marginal_tol)
        J, _ = col.affine(cyc.codes)
        for i in range(k):
            rows["mode"].append(_leading_mode(J, i))
            z = cyc.points[i]
            q = alg.residual_q(col.system, z, k)
            rows["states"].append(z)
            rows["q"].append(q)
            rows["eig"].append(cyc.eigenvalues)
            rows["stab"].append(label)
            rows["nu"].append(n_unstable)
            rows["conv"].append(math.sqrt(2 * q) <= col.tol.tol_residual * (1 + np.linalg.norm(z)))
            rows["order"].append(k)
            rows["cid"].append(cid)
            rows["step"].append(i)
            rows["margin"].append(cyc.margins[i])
            rows["code"].append(cyc.codes[i])
            rows["iter"].append(cyc.iterations)
    def arr(key: str, dtype: Any, shape: tuple[int, ...]) -> np.ndarray:
        return np.array(rows[key], dtype=dtype).reshape(shape)

    m = len(rows["states"])
    n_left = 0 if n_orders is None else n_orders - len(stats)
    search = {name: np.concatenate([np.array([getattr(s, name) for s in stats], dtype=dtype),
                                    np.zeros(n_left, dtype=dtype)])
              for name, dtype in (("n_regions_visited", np.int64), ("n_solves", np.int64),
                                  ("n_ill_conditioned", np.int64), ("complete", bool),
                                  ("wall_time", np.float64))}
    return CycleResult(
        states=arr("states", np.float64, (m, n)), q=arr("q", np.float64, (m,)),
        eigenvalues=arr("eig", np.complex128, (m, n)), stability=np.array(rows["stab"], dtype=object),
        n_unstable=arr("nu", np.int64, (m,)), converged=arr("conv", bool, (m,)),
        order=arr("order", np.int64, (m,)), cycle_id=arr("cid", np.int64, (m,)),
        cycle_step=arr("step", np.int64, (m,)), region_margin=arr("margin", np.float64, (m,)),
        region_code=arr("code", bool, (m, H)), search=search, attrs=attrs,
        leading_mode=arr("mode", np.float64, (m, n)), iterations=arr("iter", np.int64, (m,)),
    )


def _leading_mode(J: np.ndarray, start: int) -> np.ndarray:
    """Real part of the unit eigenvector of the largest-modulus eigenvalue of the monodromy
    ``J[start-1] ... J[start+1] J[start]`` (region Jacobians ``J`` (k, n, n) along the cycle)."""
    k, n = J.shape[0], J.shape[-1]
    P = np.eye(n)
    for i in range(k):
        P = J[(start + i) % k] @ P
    if n == 0:
        return np.zeros(0)
    values, vectors = np.linalg.eig(P)
    v = vectors[:, int(np.argmax(np.abs(values)))].real
    norm = np.linalg.norm(v)
    return v / norm if norm > 0 else v
