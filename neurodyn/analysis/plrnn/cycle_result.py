"""The result of :func:`~neurodyn.analysis.find_cycles` and its netCDF layout.

The layout extends the fixed-point table (:class:`~neurodyn.analysis.fixed_points._result.PointResult`:
dims ``fixed_point``, ``unit``, ``eigenvalue``; per-point variables ``state``, ``q``,
``eigenvalue_real``, ``eigenvalue_imag``, ``stability``, ``n_unstable``, ``converged``, ``order``,
``cycle_id``, ``cycle_step``, ``iterations``, ``status``) with what is specific to exact PL searches:
``region_margin``, ``region_code (fixed_point, hyperplane)`` and per-order search counts on dim
``search_order``. Format ``neurodyn.cycles`` (files written before it say ``neurodyn.fixed_points``
and are read as cycles by their region variables).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import ClassVar

import numpy as np

from neurodyn.analysis.fixed_points._result import DeprecatedStates, PointResult

__all__ = ["CycleResult"]

_SEARCH = ("n_regions_visited", "n_solves", "n_ill_conditioned", "complete", "wall_time")
CYCLE_STATUS = ("converged", "on_boundary", "not_converged")


@dataclass(frozen=True, kw_only=True)
class CycleResult(PointResult):
    """Fixed points and k-cycles of a piecewise-linear map, one row per point.

    The fields of :class:`~neurodyn.analysis.fixed_points._result.PointResult`. Rows are sorted by
    order, then cycle by cycle (canonical start: the lexicographically smallest region-code
    sequence), each k-cycle taking k consecutive rows with ``cycle_step`` 0..k-1 along the orbit
    (``F(state[step]) = state[step + 1]``). ``q`` is ``½‖F^k(z) − z‖²`` with the true map;
    ``converged`` is ``sqrt(2 q) <= tol_residual * (1 + ||z||)`` (the point is a cycle of the true
    map); ``iterations`` counts the region-sequence updates of the restart that found the cycle (0:
    first sequence tried; always 0 for the exhaustive search). ``status`` is ``"converged"``,
    ``"on_boundary"`` (converged, but closer than ``region_tol`` to a switching hyperplane, where the
    map is not differentiable and the stability label is that of one side) or ``"not_converged"``.

    Attributes
    ----------
    region_margin : ndarray, shape (fixed_point,)
        Euclidean distance of the point to the nearest region boundary hyperplane.
    region_code : ndarray of bool, shape (fixed_point, hyperplane)
        The region whose affine map produced the point.
    search : dict of ndarray, each shape (search_order,)
        Per searched order 1..max_order: ``n_regions_visited`` (distinct region codes evaluated),
        ``n_solves`` (linear systems solved), ``n_ill_conditioned`` (sequences skipped because
        ``cond(I − F_k) > max_condition``), ``complete`` (exhaustive enumeration finished),
        ``wall_time`` (s).
    attrs : dict
        method ("exact", "exhaustive" or "orbits"), max_order, seed, tolerances, neurodyn version, ...

    Examples
    --------
    >>> from neurodyn.analysis import find_cycles
    >>> from neurodyn.analysis.plrnn._examples import lozi_map
    >>> cycles = find_cycles(lozi_map(), max_order=2, exhaustive=True)
    >>> cycles.states.shape, cycles.region_code.shape  # (fixed_point, latent), (fixed_point, hyperplane)
    ((4, 2), (4, 2))
    >>> cycles.cycle_step.tolist(), cycles.status.tolist()  # the 2-cycle takes two consecutive rows
    ([0, 0, 0, 1], ['converged', 'converged', 'converged', 'converged'])
    >>> len(cycles.fixed_points().states)  # the order-1 rows
    2
    >>> ds = cycles.to_xarray()
    >>> ds.attrs["format"], int(ds.sizes["fixed_point"])
    ('neurodyn.cycles', 4)
    """

    region_margin: np.ndarray
    region_code: np.ndarray
    search: dict[str, np.ndarray] = field(default_factory=dict)

    FORMAT: ClassVar[str] = "neurodyn.cycles"
    FORMAT_VERSION: ClassVar[int] = 1
    REQUIRED: ClassVar[tuple[str, ...]] = (
        *PointResult.REQUIRED, "iterations", "region_margin", "region_code")

    def default_status(self) -> np.ndarray:
        on_boundary = self.region_margin < self.attrs.get("region_tol", 1e-9)
        return np.where(self.converged, np.where(on_boundary, "on_boundary", "converged"), "not_converged")

    @property
    def n_cycles(self) -> int:
        return int(np.unique(self.cycle_id).size)

    @property
    def fixed_points(self) -> DeprecatedStates:
        """``fixed_points(*, converged_only=True)``: the order-1 points as a :class:`CycleResult`.

        Used without calling (its use before it became a method, as in ``FixedPointResult``) it is
        the states array (fixed_point, unit) of the order-1 points, with a ``DeprecationWarning``.
        """
        return DeprecatedStates(self.states[self.order == 1], partial(PointResult.fixed_points, self))

    def summary(self) -> str:
        """A printable table of the cycles found per order and stability."""
        lines = [f"{'order':>5} {'stable':>7} {'saddle':>7} {'unstable':>9} {'marginal':>9} {'complete':>9}"]
        orbits = self.attrs.get("method") == "orbits"
        max_order = int(self.attrs.get("max_order", 0))
        searched = max_order
        if not orbits and {"n_solves", "complete"} <= set(self.search) and len(self.search["n_solves"]):
            started = (np.asarray(self.search["n_solves"]) > 0) | np.asarray(self.search["complete"], bool)
            started[: int(self.order.max(initial=0))] = True
            searched = min(max_order, int(np.flatnonzero(started).max(initial=-1)) + 1)
        for i, k in enumerate(range(1, searched + 1)):
            first = (self.order == k) & (self.cycle_step == 0)
            if orbits and not first.any():
                continue  # only the orders the orbits settled on
            counts = [int(np.sum(first & (self.stability == s)))
                      for s in ("stable", "saddle", "unstable", "marginal")]
            done = bool(self.search["complete"][i]) if "complete" in self.search else False
            lines.append(f"{k:>5} {counts[0]:>7} {counts[1]:>7} {counts[2]:>9} {counts[3]:>9} "
                         f"{'yes' if done else 'no':>9}")
        if searched < max_order:
            left = f"order {max_order}" if searched + 1 == max_order else f"orders {searched + 1}-{max_order}"
            lines.append(f"{left}: not searched (the time budget ran out)")
        if orbits:
            n = {k: self.attrs.get(f"n_{k}", 0) for k in ("closed", "not_closed", "diverged", "inconsistent",
                                                          "ill_conditioned")}
            lines.append(f"orbits: {n['closed']} closed a cycle, {n['not_closed']} did not return within "
                         f"{self.attrs.get('max_order')} steps, {n['diverged']} diverged, "
                         f"{n['inconsistent'] + n['ill_conditioned']} gave no consistent cycle")
            per_cycle = self.attrs.get("orbits_per_cycle")
            if self.n_points and per_cycle is not None and len(per_cycle):
                lines.append("orbits per cycle (by cycle_id): " + ", ".join(str(int(v)) for v in per_cycle))
            if self.n_points == 0:
                lines.append("no cycle found: raise max_order (--max-order) above the period or n_transient "
                             "(--n-transient) for slow convergence; a chaotic attractor closes no cycle")
            elif n["not_closed"]:
                lines.append(_not_closed_advice(n["not_closed"], self.attrs))
        lines.append(f"(method {self.attrs.get('method', '?')}; 'complete' = proven by enumeration)")
        return "\n".join(lines)

    def variables(self) -> dict[str, tuple]:
        data = super().variables()
        data["region_margin"] = (("fixed_point",), np.asarray(self.region_margin, dtype=np.float64))
        data["region_code"] = (("fixed_point", "hyperplane"), np.asarray(self.region_code, dtype=np.int8))
        for name, values in self.search.items():
            data[name] = (("search_order",), np.asarray(values))
        return data

    def to_xarray(self):
        """The result as an :class:`xarray.Dataset` (see the module docstring for the names)."""
        ds = super().to_xarray()
        n_orders = len(next(iter(self.search.values()), []))
        return ds.assign_coords(search_order=np.arange(1, n_orders + 1))

    @classmethod
    def fields_from(cls, ds) -> dict:
        out = super().fields_from(ds)
        search = {k: ds[k].values for k in _SEARCH if k in ds}
        if "complete" in search:
            search["complete"] = search["complete"].astype(bool)
        out.update(region_margin=ds["region_margin"].values.astype(np.float64),
                   region_code=ds["region_code"].values.astype(bool), search=search)
        return out


def _not_closed_advice(n_open: int, attrs: dict) -> str:
    """What to try when some orbits did not return: longer transients, longer periods, or chaos."""
    steps, period = attrs.get("n_transient"), attrs.get("max_order")
    return (f"{n_open} orbits did not return: they may still be converging (raise n_transient, "
            f"--n-transient, now {steps}, e.g. to {2 * int(steps or 0) or 1000}), lie on a cycle longer than "
            f"{period} (raise max_order, --max-order), or on a chaotic attractor, which closes no cycle (a "
            "positive largest Lyapunov exponent, neurodyn.analysis.lyapunov_spectrum, says so)")
