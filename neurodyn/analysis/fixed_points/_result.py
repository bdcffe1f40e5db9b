"""Fixed points and cycle points, one row per point: the table every point search returns.

:class:`PointResult` holds the fields, file variables and methods that :class:`FixedPointResult`
(any model, :func:`~neurodyn.analysis.find_fixed_points`) and
:class:`~neurodyn.analysis.plrnn.CycleResult` (exact PLRNN search) share; each adds its own fields.
netCDF layout: dims ``fixed_point``, ``unit``, ``eigenvalue``; variables ``state``, ``q``,
``eigenvalue_real``, ``eigenvalue_imag``, ``stability``, ``n_unstable``, ``converged``, ``order``,
``cycle_id``, ``cycle_step``, ``iterations``, ``status``; the settings as attributes.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from neurodyn._result import Result, check_format, decode_attrs, encode_attrs, read_result

__all__ = ["FixedPointResult", "PointResult", "load_fixed_points"]

FP = ("fixed_point",)
#: per-point fields other than states and eigenvalues: (name, dtype) of the variable of that name
_COLUMNS = (("q", np.float64), ("stability", object), ("n_unstable", np.int64), ("converged", bool),
            ("order", np.int64), ("cycle_id", np.int64), ("cycle_step", np.int64),
            ("iterations", np.int64), ("status", object))
FIXED_POINT_STATUS = ("converged", "slow_point", "not_converged")
#: attributes of each file variable (``long_name``, ``description``, ``units`` where meaningful); files
#: written without them load alike (the reader takes the values only)
VARIABLE_ATTRS: dict[str, dict[str, str]] = {
    "state": {"long_name": "state h of the point", "units": "state units (those of the model's state)"},
    "q": {"long_name": "residual q", "description": "½‖F^k(h) − h‖² at the point, k = order",
          "units": "state units squared"},
    "eigenvalue_real": {"long_name": "real part of the eigenvalues",
                        "description": "of the Jacobian (monodromy matrix for a period-k cycle) at the "
                                       "point, sorted by decreasing modulus",
                        "units": "1 (dimensionless multiplier per time step; per k steps for a cycle)"},
    "eigenvalue_imag": {"long_name": "imaginary part of the eigenvalues",
                        "description": "of the Jacobian (monodromy matrix for a period-k cycle) at the "
                                       "point, sorted by decreasing modulus",
                        "units": "1 (dimensionless multiplier per time step; per k steps for a cycle)"},
    "stability": {"long_name": "stability", "description": "stable, saddle, unstable or marginal"},
    "n_unstable": {"long_name": "unstable dimensions",
                   "description": "eigenvalues with modulus above 1 + marginal_tol", "units": "count"},
    "converged": {"long_name": "converged", "description": "q < tol_q"},
    "order": {"long_name": "period k", "description": "1 for a fixed point, k for a point of a period-k "
                                                      "cycle", "units": "time steps"},
    "cycle_id": {"long_name": "cycle id", "description": "rows of one cycle share it"},
    "cycle_step": {"long_name": "step along the cycle", "description": "0..k-1 along the orbit",
                   "units": "time steps"},
    "iterations": {"long_name": "optimiser iterations", "description": "-1 for a search without an "
                                                                       "optimiser", "units": "count"},
    "status": {"long_name": "status", "description": "how the search for the point ended"},
    "point_input": {"long_name": "constant input u*", "description": "the input the point was found under",
                    "units": "input units (those of the model's input)"},
}


@dataclass(frozen=True, kw_only=True)
class PointResult(Result):
    """Fixed points and period-k cycle points of a map, one row per point (the shared fields).

    A period-k cycle occupies k rows that share ``cycle_id`` and have ``cycle_step`` 0..k-1 along
    the orbit; its eigenvalues and stability are those of the monodromy matrix (the product of the
    k Jacobians along the cycle, started at that row's point).

    Attributes
    ----------
    states : ndarray, shape (fixed_point, unit), float64
    q : ndarray, shape (fixed_point,)
        ``½‖F^k(h) − h‖²`` at the point (``k`` = order).
    eigenvalues : ndarray, shape (fixed_point, eigenvalue), complex128
        Sorted by decreasing modulus.
    stability : ndarray of str, shape (fixed_point,)
        ``"stable"``, ``"saddle"``, ``"unstable"`` or ``"marginal"``.
    n_unstable : ndarray of int64, shape (fixed_point,)
        Eigenvalues with modulus above ``1 + marginal_tol``.
    converged : ndarray of bool, shape (fixed_point,)
    order, cycle_id, cycle_step, iterations : ndarray of int64, shape (fixed_point,)
    status : ndarray of str, shape (fixed_point,)
        Per point, see the subclass (derived from the other fields when not given).
    attrs : dict
        Search settings (input, tolerances, seed, method, package version, counts).
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
    status: np.ndarray | None = None
    attrs: dict[str, Any] = field(default_factory=dict)
    leading_mode: np.ndarray | None = None

    REQUIRED: ClassVar[tuple[str, ...]] = (
        "state", "q", "eigenvalue_real", "eigenvalue_imag", "stability", "n_unstable", "converged",
        "order", "cycle_id", "cycle_step")

    def __post_init__(self) -> None:
        if self.status is None:
            object.__setattr__(self, "status", self.default_status().astype(object))

    def default_status(self) -> np.ndarray:
        """Status from the other fields (files written before ``status`` was stored)."""
        return np.where(self.converged, "converged", "not_converged")

    @property
    def n_points(self) -> int:
        return int(self.states.shape[0])

    def select(self, rows: Any):
        """Some rows, as the same type: a boolean mask of length ``n_points`` or integer row indices
        (in bounds, negative counting from the end as in NumPy; repeats and order kept).

        Rows are selected one by one: a period-k cycle keeps only the rows selected (its other
        points are not added), each row with its own ``cycle_id`` and ``cycle_step``.

        Raises
        ------
        ValueError
            If ``rows`` is a boolean mask of another length, an index is out of bounds, or it is
            neither booleans nor integers.
        """
        index = _row_index(rows, self.n_points)
        rows = {f.name: getattr(self, f.name)[index] for f in dataclasses.fields(self)
                if isinstance(getattr(self, f.name), np.ndarray)}
        return dataclasses.replace(self, attrs=dict(self.attrs), **rows)

    def fixed_points(self, *, converged_only: bool = True):
        """Only the order-1 points (optionally only the converged ones), as the same type."""
        keep = self.order == 1
        return self.select(keep & self.converged if converged_only else keep)

    def cycles(self, order: int) -> list[np.ndarray]:
        """The cycles of one order, each an array (order, unit) along the orbit."""
        rows = self.order == order
        return [self.states[rows & (self.cycle_id == c)] for c in np.unique(self.cycle_id[rows])]

    def __str__(self) -> str:
        return self.summary()

    def _repr_brief(self) -> str:
        """``9 points: 2 stable, 7 saddle, 0 not converged; 16 units; input (0, 0)``: counts by stability
        of the converged points, then the rest, the state size and the input (the repr stays one line)."""
        good = np.asarray(self.converged, dtype=bool)
        stability = np.asarray(self.stability, dtype=str)
        counts = [f"{int(np.sum(good & (stability == s)))} {s}" for s in ("stable", "saddle", "unstable",
                                                                        "marginal")
                  if np.any(good & (stability == s))]
        counts.append(f"{int(np.sum(~good))} not converged")
        n_units = int(np.shape(self.states)[1]) if np.ndim(self.states) == 2 else 0
        orders = np.asarray(self.order)
        cycles = f", {int(np.sum((orders > 1) & (np.asarray(self.cycle_step) == 0)))} cycles" if np.any(
            orders > 1) else ""
        u = self.attrs.get("input")
        values = [] if u is None or isinstance(u, str) else np.atleast_1d(np.asarray(u, dtype=float)).ravel()
        where = "no input" if len(values) == 0 else "input (" + ", ".join(f"{v + 0.0:.3g}" for v in
                                                                          values[:6]) + (
            ", ..." if len(values) > 6 else "") + ")"
        n = self.n_points
        return (f"{n} point{'' if n == 1 else 's'}{cycles}: {', '.join(counts)}; {n_units} unit"
                f"{'' if n_units == 1 else 's'}; {where}")

    def summary(self) -> str:  # pragma: no cover - every subclass implements it
        raise NotImplementedError

    # -- file format --------------------------------------------------------------------------
    def variables(self) -> dict[str, tuple]:
        """The per-point variables of the file, ``{name: (dims, values)}`` (subclasses add theirs)."""
        data: dict[str, tuple] = {
            "state": (("fixed_point", "unit"), np.asarray(self.states, dtype=np.float64)),
            "eigenvalue_real": (("fixed_point", "eigenvalue"), np.asarray(self.eigenvalues.real, np.float64)),
            "eigenvalue_imag": (("fixed_point", "eigenvalue"), np.asarray(self.eigenvalues.imag, np.float64)),
        }
        data.update({name: (FP, _as(getattr(self, name), dtype)) for name, dtype in _COLUMNS})
        return data

    def to_xarray(self):
        """The result as an :class:`xarray.Dataset` (see the module docstring for the names); each
        variable carries ``long_name``, ``description`` and ``units`` attributes where meaningful
        (``q``: ``½‖F^k(h) − h‖²`` in state units squared; eigenvalues: dimensionless, per time step).

        Examples
        --------
        >>> import numpy as np
        >>> from neurodyn.analysis import find_fixed_points
        >>> from neurodyn.analysis.fixed_points._examples import bistable_unit
        >>> ds = find_fixed_points(bistable_unit(), initial_states=[[-1.0], [1.0]], seed=0).to_xarray()
        >>> ds["q"].attrs["units"], ds["eigenvalue_real"].attrs["units"].split()[0]
        ('state units squared', '1')
        """
        import xarray as xr

        ds = xr.Dataset(self.variables(), attrs={**self.format_attrs(), **encode_attrs(self.attrs)})
        for name, attrs in VARIABLE_ATTRS.items():
            if name in ds.variables:
                ds[name].attrs.update(attrs)
        return ds

    @classmethod
    def fields_from(cls, ds) -> dict[str, Any]:
        """Constructor arguments of the shared fields read from a dataset (``iterations`` -1 and
        ``status`` derived when the file lacks them)."""
        if "format" in ds.attrs:  # the loader's checks: a format this type reads, not a newer version
            check_format(ds, cls)
        if "unit" in ds.sizes and "eigenvalue" in ds.sizes and ds.sizes["eigenvalue"] != ds.sizes["unit"]:
            raise ValueError(f"{ds.sizes['eigenvalue']} eigenvalues per point for {ds.sizes['unit']} units; "
                             "every point has one eigenvalue per unit: the file is damaged or was edited")
        n = ds.sizes.get("fixed_point", 0)
        out: dict[str, Any] = {
            "states": ds["state"].values.astype(np.float64),
            "eigenvalues": ds["eigenvalue_real"].values + 1j * ds["eigenvalue_imag"].values,
            "attrs": decode_attrs(ds.attrs),
        }
        _check_columns(ds)
        out.update({name: _as(ds[name].values, dtype) for name, dtype in _COLUMNS if name in ds})
        out.setdefault("iterations", np.full(n, -1, dtype=np.int64))  # searches without an optimiser
        _check_points(out)
        return out

    @classmethod
    def from_xarray(cls, ds):
        """Rebuild a result from :meth:`to_xarray`'s dataset (or a file written from one).

        Raises
        ------
        ValueError
            If a required variable is missing, the format or version is not one this type reads,
            or the ``eigenvalue`` and ``unit`` dims differ in size.
        """
        missing = [name for name in cls.REQUIRED if name not in ds]
        if missing:
            raise ValueError(f"not a {cls.FORMAT} dataset: missing variables {missing}")
        return cls(**cls.fields_from(ds))


@dataclass(frozen=True, kw_only=True)
class FixedPointResult(PointResult):
    """Fixed points (and period-k cycle points) found by :func:`~neurodyn.analysis.find_fixed_points`.

    The fields of :class:`PointResult`; rows are sorted by order, then converged first, then by q
    (a q at round-off counts as 0, ties in the order of the states).
    ``converged`` is ``q < tol_q``; ``status`` is ``"converged"``, ``"slow_point"`` (stopped above
    ``tol_q`` because q no longer decreased: a local minimum of q, Sussillo & Barak 2013) or
    ``"not_converged"`` (ran out of iterations).

    Attributes
    ----------
    jacobians : ndarray, shape (fixed_point, unit, unit), optional
        The (monodromy) Jacobians; not stored in the netCDF file.
    inputs : ndarray, shape (fixed_point, input), optional
        The constant input ``u*`` each point was found under (the same row for every point unless
        the search was given one input per initial state); None for a model without inputs.
        Stored in the file as ``point_input``.
    input_jacobians : ndarray, shape (fixed_point, unit, input), optional
        ``∂F/∂u`` at the point (``∂F^k/∂u`` from that point for a period-k cycle), e.g. to read
        which input directions move a fixed point; not stored in the netCDF file.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis import find_fixed_points
    >>> from neurodyn.analysis.fixed_points._examples import bistable_unit
    >>> model = bistable_unit()  # h -> tanh(2 h)
    >>> result = find_fixed_points(model, initial_states=np.linspace(-2.0, 2.0, 16)[:, None], seed=0)
    >>> result.states.shape, result.status.tolist()  # (fixed_point, unit), one row per distinct point
    ((3, 1), ['converged', 'converged', 'converged'])
    >>> print(result.summary())  # q at round-off: the polish stops there (0 or ~1e-35 here)
    kind                          count       max q
    fixed points (converged)          3    ...
      stable                          2    0.00e+00
      saddle                          0           -
      unstable                        1    ...
      marginal                        0           -
    slow points (not converged)       0           -
    (converged: q < tol_q = 1.0e-12; method newton)
    >>> result.to_xarray().attrs["format"]
    'neurodyn.fixed_points'
    """

    jacobians: np.ndarray | None = None
    inputs: np.ndarray | None = None
    input_jacobians: np.ndarray | None = None

    FORMAT: ClassVar[str] = "neurodyn.fixed_points"
    FORMAT_VERSION: ClassVar[int] = 1
    #: the exact PLRNN cycle search writes the same names (read as fixed points, its own fields dropped)
    READS: ClassVar[tuple[str, ...]] = ("neurodyn.fixed_points", "neurodyn.cycles")

    def variables(self) -> dict[str, tuple]:
        """The shared variables, and ``point_input`` (fixed_point, input) where the inputs are known."""
        data = super().variables()
        if self.inputs is not None:
            data["point_input"] = (("fixed_point", "input"), np.asarray(self.inputs, dtype=np.float64))
        return data

    @classmethod
    def from_xarray(cls, ds):
        """Rebuild a result from :meth:`to_xarray`'s dataset (or a file written from one).

        Raises
        ------
        ValueError
            If a required variable is missing, ``point_input`` has other dims, the dataset's
            ``format`` is not one this type reads (``READS``) or its ``format_version`` is newer
            than this neurodyn reads, or the ``eigenvalue`` and ``unit`` dims differ in size.
        """
        missing = [name for name in cls.REQUIRED if name not in ds]
        if missing:
            raise ValueError(f"not a {cls.FORMAT} dataset: missing variables {missing}")
        fields = cls.fields_from(ds)
        if "point_input" in ds:
            if tuple(ds["point_input"].dims) != ("fixed_point", "input"):
                raise ValueError(f"'point_input' has dims {tuple(ds['point_input'].dims)}, not "
                                 "('fixed_point', 'input')")
            fields["inputs"] = ds["point_input"].values.astype(np.float64)
        return cls(**fields)

    def default_status(self) -> np.ndarray:
        """Files without ``status``: stopped before ``max_iters`` above ``tol_q`` is a slow point."""
        max_iters = self.attrs.get("max_iters")
        out_of_iterations = self.iterations >= max_iters if isinstance(max_iters, int) else True
        return np.where(self.converged, "converged",
                        np.where(out_of_iterations, "not_converged", "slow_point"))

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
        out_of_iterations = (self.status == "not_converged") & (self.order == 1)
        if out_of_iterations.any():
            row("  out of iterations", out_of_iterations)
        tol = self.attrs.get("tol_q", float("nan"))
        lines.append(f"(converged: q < tol_q = {tol:.1e}; method {self.attrs.get('method', '?')})")
        return "\n".join(lines)


def _row_index(rows: Any, n: int) -> np.ndarray:
    """``rows`` as a boolean mask (n,) or integer indices into n rows; a one-line ``ValueError`` else."""
    index = np.asarray(rows)
    if index.dtype == bool:
        if index.shape != (n,):
            raise ValueError(f"a boolean mask must have shape ({n},) (one entry per point), got "
                             f"{index.shape}; or pass integer row indices")
        return index
    if index.size == 0 and index.ndim == 1:
        return index.astype(np.int64)  # an empty list selects nothing
    if index.dtype.kind not in "iu" or index.ndim != 1:
        raise ValueError(f"select takes a boolean mask of shape ({n},) or a 1-d array of integer row "
                         f"indices, got {index.dtype} values of shape {index.shape}")
    bad = (index < -n) | (index >= n)
    if bad.any():
        raise ValueError(f"row index {int(index[bad][0])} is out of bounds for {n} points "
                         f"(valid: {-n}..{n - 1})")
    return index.astype(np.int64)


def _check_columns(ds) -> None:
    """Raise ``ValueError`` for variables on other dims, or text stored as numbers and vice versa."""
    expected = {"state": ("fixed_point", "unit"), "eigenvalue_real": ("fixed_point", "eigenvalue"),
                "eigenvalue_imag": ("fixed_point", "eigenvalue"), **{name: FP for name, _ in _COLUMNS}}
    for name, dims in expected.items():
        if name in ds and tuple(ds[name].dims) != dims:
            raise ValueError(f"{name!r} has dims {tuple(ds[name].dims)}, not {dims}")
    for name, dtype in _COLUMNS:
        if name not in ds or ds[name].size == 0:  # an empty variable's type is not preserved
            continue
        kind = ds[name].dtype.kind
        if dtype is object and kind not in "USO":
            raise ValueError(f"{name!r} holds {ds[name].dtype} values, not text labels")
        if dtype is not object and kind not in "biuf":
            raise ValueError(f"{name!r} holds {ds[name].dtype} values, not numbers")


def _check_points(fields: dict[str, Any]) -> None:
    """Raise ``ValueError`` where the per-point fields contradict each other (damaged or edited files)."""
    from neurodyn.analysis.fixed_points._stability import STABILITY_LABELS

    states, q, converged = fields["states"], fields.get("q"), fields.get("converged")
    if states.size and not np.isfinite(states).any():
        raise ValueError("every state is NaN or Inf")
    if converged is not None and q is not None:
        bad = converged & ~(np.isfinite(states).all(axis=1) & np.isfinite(q))
        if bad.any():
            raise ValueError(f"{int(bad.sum())} point(s) marked converged have NaN/Inf states or q")
    labels = fields.get("stability")
    if labels is not None:
        unknown = sorted({str(v) for v in labels} - set(STABILITY_LABELS))
        if unknown:
            raise ValueError(f"unknown stability label(s) {', '.join(map(repr, unknown[:3]))}; expected "
                             f"{', '.join(STABILITY_LABELS)}")


def _as(values: Any, dtype: Any) -> np.ndarray:
    """``values`` as ``dtype``; ``object`` means Python strings."""
    values = np.asarray(values)
    return values.astype(str).astype(object) if dtype is object else values.astype(dtype)


class DeprecatedStates(np.ndarray):
    """``(fixed_point, unit)`` states of the order-1 points that is also the ``fixed_points`` method.

    What ``CycleResult.fixed_points`` returns: calling it is :meth:`PointResult.fixed_points`;
    using it as an array (its use before it became a method) still works and warns.
    """

    def __new__(cls, states: np.ndarray, method: Any) -> DeprecatedStates:
        obj = np.asarray(states).view(cls)
        obj._method = method
        return obj

    def __array_finalize__(self, obj: Any) -> None:
        self._method = getattr(obj, "_method", None)

    def __call__(self, *args: Any, **kwargs: Any):
        return self._method(*args, **kwargs)

    @staticmethod
    def _plain(values: Any) -> Any:
        warnings.warn("CycleResult.fixed_points is a method now, as in FixedPointResult: "
                      "use result.fixed_points().states for the array", DeprecationWarning, stacklevel=3)
        if isinstance(values, (tuple, list)):
            return type(values)(v.view(np.ndarray) if isinstance(v, DeprecatedStates) else v for v in values)
        return values

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return getattr(ufunc, method)(*self._plain(inputs), **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return func(*self._plain(args), **kwargs)

    def __getitem__(self, key):
        return self._plain([self])[0][key]

    def __iter__(self):
        return iter(self._plain([self])[0])

    def __len__(self) -> int:
        return len(self._plain([self])[0])


def load_fixed_points(path) -> FixedPointResult:
    """Read a fixed-point netCDF file written by :meth:`FixedPointResult.save`.

    Goes through the checks of :func:`neurodyn.io.load` (format, version, variables); a file of the
    exact PLRNN cycle search is read as a :class:`FixedPointResult` of its shared fields.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    neurodyn.io.ResultFileError
        If the file is not a fixed-point or cycle file, or is damaged (see :func:`neurodyn.io.load`).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import numpy as np
    >>> from neurodyn.analysis import find_fixed_points, load_fixed_points
    >>> from neurodyn.models import PLRNN
    >>> model = PLRNN.from_arrays(A=[0.5], W=[[0.0]], h=[1.0])  # z* = 2
    >>> result = find_fixed_points(model, initial_states=np.zeros((2, 1)), seed=0)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = result.save(Path(tmp) / "fp.nc")
    ...     loaded = load_fixed_points(path)
    >>> np.round(loaded.states, 6).tolist(), loaded.stability.tolist()
    ([[2.0]], ['stable'])
    """
    return read_result(path, expect=FixedPointResult)
