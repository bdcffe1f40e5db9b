"""The two searches behind ``find_cycles``: SCYFI-style region iteration and exhaustive enumeration."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from neurodyn.analysis.plrnn import _cycle_algebra as alg
from neurodyn.analysis.plrnn import regions as reg
from neurodyn.analysis.plrnn._cycle_collect import Collector


@dataclass
class OrderStats:
    """Counts of one order's search (see ``CycleResult.search``)."""

    n_regions_visited: int = 0
    n_solves: int = 0
    n_ill_conditioned: int = 0
    complete: bool = False
    wall_time: float = 0.0


class _Starts:
    """Initial region sequences, rotating through five strategies: random bits, the regions of
    random points (Gaussian at a log-uniform scale), the regions along a trajectory, the regions
    next to random vertices of the hyperplane arrangement (every bounded region touches one), and
    regions already met (``pool``, codes of actual points) or their neighbours across one
    hyperplane. For fixed points of small systems every region met is tried once."""

    def __init__(self, col: Collector, rng: np.random.Generator, pool: dict[bytes, np.ndarray],
                 pool_limit: int) -> None:
        s = col.system
        self.system, self.rng, self.pool, self.pool_limit = s, rng, pool, pool_limit
        self.scale = alg.system_scale(s)
        self.tried: set[bytes] = set()

    def untried(self) -> bool:
        """Whether a small pool still holds a region that has not started a fixed-point restart."""
        return len(self.pool) <= self.pool_limit and any(key not in self.tried for key in self.pool)

    def points(self, k: int, near_vertex: bool) -> np.ndarray:
        system, rng = self.system, self.rng
        H, n = system.n_hyperplanes, system.n_latent
        if not near_vertex or H == 0:
            return rng.normal(size=(k, n)) * self.scale * 10.0 ** rng.uniform(-2, 0, size=(k, 1))
        out = np.empty((k, n))
        for i in range(k):
            rows = rng.choice(H, size=min(n, H), replace=False)
            vertex = np.linalg.lstsq(system.normals[rows], -system.offsets[rows], rcond=None)[0]
            step = rng.normal(size=n)
            out[i] = vertex + 1e-6 * (1.0 + np.abs(vertex).max()) * step / np.linalg.norm(step)
        return out

    def from_pool(self, k: int) -> np.ndarray:
        rng, keys = self.rng, list(self.pool)
        if k == 1:
            untried = [key for key in keys if key not in self.tried]
            if untried and len(keys) <= self.pool_limit:
                self.tried.add(untried[0])
                return self.pool[untried[0]][None]
        if k > 1 and self.system.n_hyperplanes and rng.random() < 0.5:
            # a region and a neighbour across one hyperplane, in a random pattern: cycles of
            # low-dimensional maps often alternate between a few adjacent regions
            a = self.pool[keys[rng.integers(0, len(keys))]]
            b = a.copy()
            b[rng.integers(0, b.size)] ^= True
            return np.where(rng.random(k)[:, None] < 0.5, a, b)
        codes = np.stack([self.pool[keys[i]] for i in rng.integers(0, len(keys), size=k)])
        if codes.shape[1] and rng.random() < 0.5:
            codes[rng.integers(0, k), rng.integers(0, codes.shape[1])] ^= True
        return codes

    def __call__(self, k: int, restart: int) -> np.ndarray:
        system, rng, scale = self.system, self.rng, self.scale
        strategy = restart % 5
        if k == 1 and restart >= 5 and restart % 2 == 0 and self.untried():
            strategy = 4
        if strategy == 4 and self.pool:
            return self.from_pool(k)
        if strategy == 0:
            return rng.random((k, system.n_hyperplanes)) < 0.5
        if strategy == 2:
            z = rng.normal(scale=scale, size=system.n_latent)
            traj = alg.iterate(system, z, int(rng.integers(0, 40)) + k - 1)[-k:]
            if np.all(np.isfinite(traj)) and np.abs(traj).max() < 1e8 * scale:
                return self.remember(system.region_code(traj))
        return self.remember(system.region_code(self.points(k, near_vertex=strategy == 3)))

    def remember(self, codes: np.ndarray) -> np.ndarray:
        """Add the codes of actual points (non-empty regions) to the pool; returns ``codes``."""
        for row in codes:
            self.pool.setdefault(row.tobytes(), row.copy())
        return codes


def search_heuristic(col: Collector, k: int, *, rng: np.random.Generator, n_restarts: int,
                     max_iter: int, deadline: float, pool: dict[bytes, np.ndarray]) -> OrderStats:
    """Iterate region sequences until self-consistent (Eisenmann et al. 2023, SCYFI).

    A restart draws initial codes, solves the sequence's linear system, maps the solution with the
    true map and replaces the sequence by the regions actually visited, up to ``max_iter`` times
    (or until a sequence repeats). The search at this order stops after ``n_restarts`` restarts in a
    row find nothing new (a new cycle resets the count), after ``50 * n_restarts`` restarts, or at
    ``deadline`` (``time.perf_counter`` seconds). ``pool`` collects every region met (shared
    across orders) and seeds later restarts.
    """
    stats, t0 = OrderStats(), time.perf_counter()
    s = col.system
    starts = _Starts(col, rng, pool, pool_limit=10 * n_restarts)
    visited: set[bytes] = set()
    unproductive = restarts = 0

    while (unproductive < n_restarts or (k == 1 and starts.untried())) and restarts < 50 * n_restarts:
        if time.perf_counter() > deadline:
            break
        codes = starts(k, restarts)
        restarts += 1
        seen: set[bytes] = set()
        found = False
        for iteration in range(max_iter):
            if iteration and time.perf_counter() > deadline:
                break
            key = codes.tobytes()
            if key in seen:
                break
            seen.add(key)
            visited.update(row.tobytes() for row in codes)
            J, c = col.affine(codes)
            points, P, _ = alg.solve_one(J, c, col.tol.max_condition)
            stats.n_solves += 1
            if points is None:
                stats.n_ill_conditioned += 1
                break
            status = col.offer(points, codes, P, iteration)
            if status != "inconsistent":
                found = status == "new"
                break
            own = starts.remember(s.region_code(points))
            if restarts % 2 == 1:
                codes = own  # each point's own region: does not follow the (possibly repelling) flow
                continue
            traj = alg.iterate(s, points[0], k - 1)
            if not np.all(np.isfinite(traj)):
                break
            codes = starts.remember(s.region_code(traj))
        unproductive = 0 if found else unproductive + 1
    stats.n_regions_visited = len(visited)
    stats.wall_time = time.perf_counter() - t0
    return stats


#: each order k of the region iteration takes at least n_restarts restarts of at least one k-region
#: solve; about 1 ms per restart and region on a 1-unit PLRNN (max_order=40, n_restarts=100: 82,000
#: in 72 s). Without a time budget, a search with more than this many (about half an hour at that
#: rate; max_order above 199 at n_restarts=100) is refused up front
MAX_RESTART_STEPS = 2e6


def check_heuristic_cost(max_order: int, n_restarts: int) -> None:
    """One-line ``ValueError`` when a region iteration without a time budget needs more than
    :data:`MAX_RESTART_STEPS` restart steps (``n_restarts`` x ``k`` for each order ``k =
    1..max_order``, a lower bound); names the largest ``max_order`` that fits."""
    steps = n_restarts * max_order * (max_order + 1) / 2.0
    if steps > MAX_RESTART_STEPS:
        fits = int((math.sqrt(1.0 + 8.0 * MAX_RESTART_STEPS / n_restarts) - 1.0) / 2.0)
        raise ValueError(
            f"find_cycles: max_order={max_order} without a time_budget needs at least {steps:.2g} restart "
            f"steps (n_restarts={n_restarts} restarts x k regions for each order k = 1..{max_order}; about "
            f"{steps * 1e-3 / 3600:.2g} h at 1 ms a step), more than {MAX_RESTART_STEPS:.0e}; lower "
            f"max_order (to {fits} or less) or n_restarts, or pass time_budget (seconds)")


FULL_GRAPH_SEQUENCES = 2_000_000  # enumerate all R**k sequences up to this many
MAX_TRANSITION_LPS = 5_000  # else prune by the transition graph, up to this many LPs


def full_graph(n_regions: int, k: int) -> bool:
    """Whether all ``n_regions**k`` sequences of order ``k`` are few enough to enumerate without the
    transition graph (compared in logs: no overflow for any order)."""
    return k * math.log(max(n_regions, 1)) <= math.log(FULL_GRAPH_SEQUENCES)


def exhaustive_affordable(n_regions: int, k: int) -> bool:
    """Whether an exhaustive search of order ``k`` over ``n_regions`` regions will be attempted."""
    return full_graph(n_regions, k) or n_regions**2 <= MAX_TRANSITION_LPS


def _mobius(n: int) -> int:
    """The Möbius function μ(n)."""
    out, p = 1, 2
    while p * p <= n:
        if n % p == 0:
            n //= p
            if n % p == 0:
                return 0
            out = -out
        p += 1
    return -out if n > 1 else out


def primitive_cycle_count(traces: list[float], k: int) -> float:
    """Rotation classes of primitive closed walks of length ``k`` (what ``cyclic_sequences``
    returns), ``(1/k) Σ_{d | k} μ(d) tr(A^{k/d})`` from ``traces[j] = tr(A^j)``."""
    return sum(_mobius(d) * traces[k // d] for d in range(1, k + 1) if k % d == 0) / k


class Exhaustive:
    """Enumerates every region (sequence) once; holds the regions and transition graph."""

    def __init__(self, col: Collector, *, max_regions: int, max_sequences: int) -> None:
        self.col = col
        self.codes = reg.enumerate_regions(col.system, max_regions=max_regions)
        self.J, self.c = col.affine(self.codes)
        self.max_sequences = max_sequences
        self._adj: np.ndarray | None = None

    def adjacency(self, k: int) -> np.ndarray:
        """Full graph when enumerating everything is cheap, else the LP transition graph.

        Raises
        ------
        ValueError
            When neither is affordable (more than ``MAX_TRANSITION_LPS`` linear programmes).
        """
        R = self.codes.shape[0]
        if self._adj is None and not full_graph(R, k):
            if R * R > MAX_TRANSITION_LPS:
                raise ValueError(
                    f"exhaustive search of order {k} over {R} regions needs {R}**{k} sequences or "
                    f"{R * R} transition LPs; lower max_order or use the heuristic (exhaustive=False)"
                )
            self._adj = reg.transition_graph(self.col.system, self.codes, self.J, self.c)
        return self._adj if self._adj is not None else np.ones((R, R), dtype=bool)

    def check_orders(self, max_order: int) -> None:
        """One-line ``ValueError`` before any order is searched when some order up to ``max_order``
        has more than ``max_sequences`` region sequences, counted exactly from the graph the search
        will walk (the full graph, or the transition graph where that is used).

        Raises
        ------
        ValueError
            Naming the first such order and how to avoid it.
        """
        R = self.codes.shape[0]
        traces: dict[bool, list[float]] = {}
        powers: dict[bool, np.ndarray] = {}
        for k in range(2, int(max_order) + 1):
            full = full_graph(R, k)
            A = np.ones((R, R)) if full else self.adjacency(k).astype(np.float64)
            if full not in traces:
                traces[full], powers[full] = [float(R), float(np.trace(A))], A
                if not full and np.max(np.abs(np.linalg.eigvals(A)), initial=0.0) <= 1.0 + 1e-9:
                    return  # disjoint cycles only: at most R closed walks of any length
            t = traces[full]
            while len(t) <= k:
                with np.errstate(over="ignore", invalid="ignore"):
                    powers[full] = powers[full] @ A
                t.append(float(np.trace(powers[full])))
            count = primitive_cycle_count(t, k)
            if not count <= self.max_sequences:  # NaN/inf: overflowed, far too many
                raise ValueError(
                    f"too many region sequences for an exhaustive search of order {k}: about {count:.3g} "
                    f"(of up to {R}^{k}) over {R} regions, more than max_sequences={self.max_sequences}; "
                    f"lower max_order to {k - 1} or use the heuristic (exhaustive=False)")
            if R <= 1:
                return

    def search(self, k: int, *, deadline: float, chunk: int = 2048) -> OrderStats:
        """Solve every primitive region sequence of length ``k`` (one per rotation class)."""
        stats, t0 = OrderStats(), time.perf_counter()
        col = self.col
        if k == 1:
            seqs = np.arange(self.codes.shape[0])[:, None]
        else:
            seqs = reg.cyclic_sequences(self.adjacency(k), k, max_sequences=self.max_sequences)
        stats.n_regions_visited = int(np.unique(seqs).size)
        stats.complete = True
        for start in range(0, seqs.shape[0], chunk):
            if time.perf_counter() > deadline:
                stats.complete = False
                break
            batch = seqs[start:start + chunk]
            points, P, cond = alg.solve_sequences(self.J[batch], self.c[batch], col.tol.max_condition)
            stats.n_solves += batch.shape[0]
            ill = ~(np.isfinite(cond) & (cond <= col.tol.max_condition))
            stats.n_ill_conditioned += int(ill.sum())
            codes = self.codes[batch]
            ok = ~ill
            ok[ok] = col.consistent(points[ok], codes[ok])
            for i in np.flatnonzero(ok):
                col.offer(points[i], codes[i], P[i])
        stats.wall_time = time.perf_counter() - t0
        return stats
