"""The result of a fixed-point search and its netCDF file format."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

FORMAT_NAME = "neurodyn.fixed_points"
FORMAT_VERSION = 1
_ARRAYS = ("q", "n_unstable", "converged", "order", "cycle_id", "cycle_step", "iterations")


@dataclass(frozen=True)
class FixedPointResult:
    """Fixed points (and period-k cycle points) of a map, one row per point.

    Rows are sorted by order, then by q. A period-k cycle occupies k rows that share
    ``cycle_id`` and have ``cycle_step`` 0..k-1 along the orbit; its eigenvalues and stability
    are those of the monodromy matrix (the product of the k Jacobians along the cycle).

    Attributes
    ----------
    states : ndarray, shape (fixed_point, unit), float64
    q : ndarray, shape (fixed_point,)
        ``½‖F^k(h) − h‖²`` at the point (``k`` = order).
    eigenvalues : ndarray, shape (fixed_point, eigenvalue), complex128
        Sorted by decreasing modulus.
    stability : ndarray of str, shape (fixed_point,)
        ``"stable"``, ``"saddle"``, ``"unstable"`` or ``"marginal"`` (see ``classify``).
    n_unstable : ndarray of int64, shape (fixed_point,)
        Number of eigenvalues with modulus above ``1 + marginal_tol``.
    converged : ndarray of bool, shape (fixed_point,)
        ``q < tol_q``; False rows are slow points (local minima of q above ``tol_q``) or
        candidates that ran out of iterations.
    order, cycle_id, cycle_step, iterations : ndarray of int64, shape (fixed_point,)
    attrs : dict
        Search settings (input, tolerances, seed, method, package version, counts).
    jacobians : ndarray, shape (fixed_point, unit, unit), optional
        The (monodromy) Jacobians; not stored in the netCDF file.
    leading_mode : ndarray, shape (fixed_point, unit), optional
        Unit eigenvector (real part) of the largest-modulus eigenvalue; not stored in the file.
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
    iterations: np.ndarray
    attrs: dict[str, Any] = field(default_factory=dict)
    jacobians: np.ndarray | None = None
    leading_mode: np.ndarray | None = None

    @property
    def n_points(self) -> int:
        return int(self.states.shape[0])

    def select(self, mask: np.ndarray) -> FixedPointResult:
        """The rows where boolean ``mask`` (fixed_point,) is True."""
        mask = np.asarray(mask, dtype=bool)
        extra = {
            name: None if getattr(self, name) is None else getattr(self, name)[mask]
            for name in ("jacobians", "leading_mode")
        }
        return FixedPointResult(
            states=self.states[mask], eigenvalues=self.eigenvalues[mask],
            stability=self.stability[mask], attrs=dict(self.attrs),
            **{name: getattr(self, name)[mask] for name in _ARRAYS}, **extra,
        )

    def fixed_points(self, *, converged_only: bool = True) -> FixedPointResult:
        """Only the order-1 points (optionally only the converged ones)."""
        keep = self.order == 1
        return self.select(keep & self.converged if converged_only else keep)

    def summary(self) -> str:
        """A printable table: counts by stability, saddles by unstable dimension, residual q."""
        lines = [f"{'kind':<28}{'count':>7}{'max q':>12}"]

        def row(name: str, mask: np.ndarray) -> None:
            qmax = f"{self.q[mask].max():.2e}" if mask.any() else "-"
            lines.append(f"{name:<28}{int(mask.sum()):>7}{qmax:>12}")

        good = self.converged & (self.order == 1)
        row("fixed points (converged)", good)
        for label in ("stable", "saddle", "unstable", "marginal"):
            row(f"  {label}", good & (self.stability == label))
            if label == "saddle":
                for k in np.unique(self.n_unstable[good & (self.stability == "saddle")]):
                    row(f"    {k} unstable dim(s)", good & (self.stability == "saddle")
                        & (self.n_unstable == k))
        for k in np.unique(self.order[self.order > 1]):
            first = (self.order == k) & (self.cycle_step == 0) & self.converged
            row(f"period-{k} cycles", first)
            for label in ("stable", "saddle", "unstable", "marginal"):
                if (first & (self.stability == label)).any():
                    row(f"  {label} cycles", first & (self.stability == label))
        row("slow points (not converged)", ~self.converged & (self.order == 1))
        tol = self.attrs.get("tol_q", float("nan"))
        lines.append(f"(converged: q < tol_q = {tol:.1e}; method {self.attrs.get('method', '?')})")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    # -- file format --------------------------------------------------------------------------
    def to_xarray(self):
        """The result as an :class:`xarray.Dataset` (the documented netCDF format).

        Dims ``fixed_point``, ``unit``, ``eigenvalue``; variables ``state``, ``q``,
        ``eigenvalue_real``, ``eigenvalue_imag``, ``stability``, ``n_unstable``, ``converged``,
        ``order``, ``cycle_id``, ``cycle_step``, ``iterations``; attrs hold the settings.
        """
        import xarray as xr

        return xr.Dataset(point_variables(self), attrs=format_attrs(self.attrs))

    @classmethod
    def from_xarray(cls, ds) -> FixedPointResult:
        """Rebuild a result from :meth:`to_xarray`'s dataset (or a file written from one).

        Files without ``iterations`` (the exact PLRNN cycle search writes the same names
        otherwise) get -1 there; extra variables are ignored.

        Raises
        ------
        ValueError
            If a required variable is missing.
        """
        required = ("state", "q", "eigenvalue_real", "eigenvalue_imag", "stability", *_ARRAYS)
        missing = [name for name in required if name not in ds and name != "iterations"]
        if missing:
            raise ValueError(f"not a fixed-point dataset: missing variables {missing}")
        if "iterations" not in ds:  # searches without an optimiser (exact PLRNN cycles)
            ds = ds.assign(iterations=("fixed_point", np.full(ds.sizes["fixed_point"], -1)))
        attrs = {k: _from_attr(v) for k, v in ds.attrs.items() if k not in ("format", "format_version")}
        return cls(
            states=ds["state"].values.astype(np.float64),
            eigenvalues=ds["eigenvalue_real"].values + 1j * ds["eigenvalue_imag"].values,
            stability=ds["stability"].values.astype(str).astype(object),
            converged=ds["converged"].values.astype(bool),
            attrs=attrs,
            **{name: ds[name].values.astype(np.float64 if name == "q" else np.int64)
               for name in _ARRAYS if name != "converged"},
        )

    def save(self, path) -> None:
        """Write the netCDF file (engine h5netcdf)."""
        self.to_xarray().to_netcdf(path, engine="h5netcdf")


def load_fixed_points(path) -> FixedPointResult:
    """Read a fixed-point netCDF file written by :meth:`FixedPointResult.save`."""
    import xarray as xr

    with xr.open_dataset(path, engine="h5netcdf") as ds:
        return FixedPointResult.from_xarray(ds.load())


def point_variables(result: Any) -> dict[str, tuple]:
    """The format's per-point variables of a result with :class:`FixedPointResult`'s fields.

    Shared by every writer of the fixed-point file format (also the exact PLRNN cycle search).
    """
    fp, ev = ("fixed_point",), ("fixed_point", "eigenvalue")
    data: dict[str, tuple] = {
        "state": (("fixed_point", "unit"), np.asarray(result.states, dtype=np.float64)),
        "q": (fp, np.asarray(result.q, dtype=np.float64)),
        "eigenvalue_real": (ev, np.asarray(result.eigenvalues.real, dtype=np.float64)),
        "eigenvalue_imag": (ev, np.asarray(result.eigenvalues.imag, dtype=np.float64)),
        "stability": (fp, np.asarray(result.stability, dtype=str).astype(object)),
        "converged": (fp, np.asarray(result.converged, dtype=bool)),
    }
    for name in ("n_unstable", "order", "cycle_id", "cycle_step", "iterations"):
        data[name] = (fp, np.asarray(getattr(result, name), dtype=np.int64))
    return data


def format_attrs(attrs: dict[str, Any]) -> dict[str, Any]:
    """The format's name and version plus netCDF-safe copies of ``attrs``."""
    out: dict[str, Any] = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION}
    out.update({k: _attr_value(v) for k, v in attrs.items()})
    return out


def _attr_value(value: Any) -> Any:
    """netCDF-safe attribute values (None → "none", bools → ints, sequences → float arrays)."""
    if value is None:
        return "none"
    if isinstance(value, bool | np.bool_):
        return int(value)
    if isinstance(value, list | tuple | np.ndarray):
        return np.asarray(value, dtype=np.float64)
    if isinstance(value, float) and np.isinf(value):
        return "inf"
    return value


def _from_attr(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.astype(np.float64).tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value
