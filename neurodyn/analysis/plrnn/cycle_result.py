"""The result of :func:`~neurodyn.analysis.find_cycles` and its netCDF layout.

The layout shares its names with the general fixed-point finder's file format: dims
``fixed_point``, ``unit``, ``eigenvalue``; per-point variables ``state``, ``q``,
``eigenvalue_real``, ``eigenvalue_imag``, ``stability``, ``n_unstable``, ``converged``, ``order``,
``cycle_id``, ``cycle_step``, ``iterations``; and, specific to exact PL searches, ``region_margin``,
``region_code (fixed_point, hyperplane)`` and per-order search counts on dim ``search_order``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from neurodyn.analysis.fixed_points._result import format_attrs, point_variables

_POINT_INT = ("n_unstable", "order", "cycle_id", "cycle_step", "iterations")
_SEARCH = ("n_regions_visited", "n_solves", "n_ill_conditioned", "complete", "wall_time")


@dataclass(frozen=True)
class CycleResult:
    """Fixed points and k-cycles of a piecewise-linear map, one row per point.

    Rows are sorted by order, then cycle by cycle (canonical start: the lexicographically
    smallest region-code sequence), each k-cycle taking k consecutive rows with ``cycle_step``
    0..k-1 along the orbit (``F(state[step]) = state[step + 1]``).

    Attributes
    ----------
    states : ndarray, shape (fixed_point, unit), float64
    q : ndarray, shape (fixed_point,)
        ``½‖F^k(z) − z‖²`` with the true map (``k`` = order).
    eigenvalues : ndarray, shape (fixed_point, eigenvalue), complex128
        Eigenvalues of the monodromy matrix (product of the k region Jacobians along the cycle,
        the same for every point of a cycle), sorted by decreasing modulus.
    stability : ndarray of str, shape (fixed_point,)
        "stable", "saddle", "unstable" or "marginal" (some ``| |λ| − 1 | <= marginal_tol``).
    n_unstable : ndarray of int64, shape (fixed_point,)
        Eigenvalues with ``|λ| > 1 + marginal_tol``.
    converged : ndarray of bool, shape (fixed_point,)
        ``sqrt(2 q) <= tol_residual * (1 + ||z||)`` (the point is a cycle of the true map).
    order, cycle_id, cycle_step : ndarray of int64, shape (fixed_point,)
    region_margin : ndarray, shape (fixed_point,)
        Euclidean distance of the point to the nearest region boundary hyperplane
        (0 means the point lies on a boundary, where the map is not differentiable).
    region_code : ndarray of bool, shape (fixed_point, hyperplane)
        The region whose affine map produced the point.
    iterations : ndarray of int64, shape (fixed_point,)
        Region-sequence updates of the restart that found the cycle (0: first sequence tried;
        always 0 for the exhaustive search).
    search : dict of ndarray, each shape (search_order,)
        Per searched order 1..max_order: ``n_regions_visited`` (distinct region codes evaluated),
        ``n_solves`` (linear systems solved), ``n_ill_conditioned`` (sequences skipped because
        ``cond(I − F_k) > max_condition``), ``complete`` (exhaustive enumeration finished),
        ``wall_time`` (s).
    attrs : dict
        method ("exact" or "exhaustive"), max_order, seed, tolerances, neurodyn version, ...
    leading_mode : ndarray, shape (fixed_point, unit), optional
        Unit eigenvector (real part) of the largest-modulus eigenvalue of the monodromy matrix
        started at that point; not stored in the netCDF file.
    """

    states: np.ndarray
    q: np.ndarray
    eigenvalues: np.ndarray
    stability: np.ndarray
    n_unstable: np.ndarray
    converged: np.ndarray
    order: np.ndarray
    cycle_id: np.ndarray
    cycle_step: np.ndarray
    region_margin: np.ndarray
    region_code: np.ndarray
    iterations: np.ndarray
    search: dict[str, np.ndarray] = field(default_factory=dict)
    attrs: dict[str, Any] = field(default_factory=dict)
    leading_mode: np.ndarray | None = None

    @property
    def n_points(self) -> int:
        return int(self.states.shape[0])

    @property
    def n_cycles(self) -> int:
        return int(np.unique(self.cycle_id).size)

    def cycles(self, order: int) -> list[np.ndarray]:
        """The cycles of one order, each an array (order, unit) along the orbit."""
        rows = self.order == order
        return [self.states[rows & (self.cycle_id == c)] for c in np.unique(self.cycle_id[rows])]

    @property
    def fixed_points(self) -> np.ndarray:
        """States of the order-1 points, (fixed_point, unit)."""
        return self.states[self.order == 1]

    def summary(self) -> str:
        """A printable table of the cycles found per order and stability."""
        lines = [f"{'order':>5} {'stable':>7} {'saddle':>7} {'unstable':>9} {'marginal':>9} {'complete':>9}"]
        orbits = self.attrs.get("method") == "orbits"
        for i, k in enumerate(range(1, int(self.attrs.get("max_order", 0)) + 1)):
            first = (self.order == k) & (self.cycle_step == 0)
            if orbits and not first.any():
                continue  # only the orders the orbits settled on
            counts = [int(np.sum(first & (self.stability == s)))
                      for s in ("stable", "saddle", "unstable", "marginal")]
            done = bool(self.search["complete"][i]) if "complete" in self.search else False
            lines.append(f"{k:>5} {counts[0]:>7} {counts[1]:>7} {counts[2]:>9} {counts[3]:>9} "
                         f"{'yes' if done else 'no':>9}")
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
        lines.append(f"(method {self.attrs.get('method', '?')}; 'complete' = proven by enumeration)")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def to_xarray(self):
        """The result as an :class:`xarray.Dataset` (see the module docstring for the names)."""
        import xarray as xr

        data = point_variables(self)
        data["region_margin"] = (("fixed_point",), np.asarray(self.region_margin, dtype=np.float64))
        data["region_code"] = (("fixed_point", "hyperplane"), np.asarray(self.region_code, dtype=np.int8))
        for name, values in self.search.items():
            data[name] = (("search_order",), np.asarray(values))
        coords = {"search_order": np.arange(1, len(next(iter(self.search.values()), [])) + 1)}
        attrs = format_attrs(self.attrs)
        return xr.Dataset(data, coords=coords, attrs=attrs)

    @classmethod
    def from_xarray(cls, ds) -> CycleResult:
        """Rebuild from :meth:`to_xarray`'s dataset (or a netCDF file read back).

        Raises
        ------
        ValueError
            If a required variable is missing.
        """
        required = ("state", "q", "eigenvalue_real", "eigenvalue_imag", "stability", "converged",
                    "region_margin", "region_code", *_POINT_INT)
        missing = [k for k in required if k not in ds]
        if missing:
            raise ValueError(f"not a cycle dataset: missing variables {missing}")
        search = {k: ds[k].values for k in _SEARCH if k in ds}
        if "complete" in search:
            search["complete"] = search["complete"].astype(bool)
        attrs = {k: (v.item() if isinstance(v, np.generic) else v) for k, v in ds.attrs.items()
                 if k not in ("format", "format_version")}
        return cls(
            states=ds["state"].values.astype(np.float64),
            q=ds["q"].values.astype(np.float64),
            eigenvalues=ds["eigenvalue_real"].values + 1j * ds["eigenvalue_imag"].values,
            stability=ds["stability"].values.astype(str).astype(object),
            converged=ds["converged"].values.astype(bool),
            region_margin=ds["region_margin"].values.astype(np.float64),
            region_code=ds["region_code"].values.astype(bool),
            search=search, attrs=attrs,
            **{k: ds[k].values.astype(np.int64) for k in _POINT_INT},
        )

    def save(self, path) -> None:
        """Write the netCDF file (engine h5netcdf)."""
        self.to_xarray().to_netcdf(path, engine="h5netcdf")
