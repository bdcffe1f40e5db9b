"""Basins of attraction by batched forward simulation, and basin boundaries from stable manifolds.

Every state is iterated until it comes within ``tol`` of a point of a known attractor (a stable
fixed point or cycle), leaves the ball of radius ``diverge_radius`` ("diverged"), or the step budget
ends ("undecided"). The boundaries between basins are formed by the stable manifolds of saddles of
codimension 1 (Eisenmann et al., "Detecting invariant manifolds in ReLU-based RNNs", ICLR 2026);
:func:`basin_boundary` returns those pieces.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from neurodyn._budget import check_memory
from neurodyn._checks import check_finite, check_setting
from neurodyn._result import Result, decode_attrs, encode_attrs

__all__ = ["DIVERGED", "UNDECIDED", "BasinResult", "basin_boundary", "compute_basins"]

DIVERGED = -1
UNDECIDED = -2
BASIN_STATUS = ("attracted", "diverged", "undecided")


@dataclass(frozen=True)
class BasinResult(Result):
    """Basin label of each initial state (format ``neurodyn.basins``).

    Attributes
    ----------
    states : ndarray, shape (state, latent)
        Initial states (grid points in C order when a grid was given).
    labels : ndarray of int64, shape (state,)
        Index into ``attractors``, or ``DIVERGED`` (-1), or ``UNDECIDED`` (-2).
    steps : ndarray of int64, shape (state,)
        Time steps until the label was decided (``max_steps`` when undecided).
    attractors : tuple of ndarray, each (period, latent)
    grid_axes : tuple of ndarray or None
        The grid coordinates per latent dimension when built from ``grid``.
    attrs : dict
        ``max_steps``, ``tol``, ``diverge_radius`` and the backend that ran.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis import compute_basins
    >>> from neurodyn.models import PLRNN
    >>> model = PLRNN.from_arrays(A=[0.5], W=[[0.0]], h=[1.0])  # one stable point, z* = 2
    >>> basins = compute_basins(model, [np.array([2.0])], grid=([(-3.0, 3.0)], 7), max_steps=100)
    >>> basins.states.shape, basins.labels_grid().shape, basins.fractions  # every start reaches it
    ((7, 1), (7,), {0: 1.0})
    >>> dict(basins.to_xarray().sizes)["batch"]
    7
    """

    states: np.ndarray
    labels: np.ndarray
    steps: np.ndarray
    attractors: tuple[np.ndarray, ...]
    grid_axes: tuple[np.ndarray, ...] | None = None
    attrs: dict[str, Any] = field(default_factory=dict)

    FORMAT: ClassVar[str] = "neurodyn.basins"
    FORMAT_VERSION: ClassVar[int] = 1
    REQUIRED: ClassVar[tuple[str, ...]] = ("state", "label", "steps", "attractor_state", "period")

    @property
    def status(self) -> np.ndarray:
        """Per state, shape (state,): ``"attracted"`` (reached an attractor), ``"diverged"`` or
        ``"undecided"`` (the step budget ended first)."""
        return np.where(self.labels >= 0, "attracted",
                        np.where(self.labels == DIVERGED, "diverged", "undecided")).astype(object)

    @property
    def fractions(self) -> dict[int, float]:
        """Share of states per label (attractor index, -1 diverged, -2 undecided)."""
        vals, counts = np.unique(self.labels, return_counts=True)
        return {int(v): float(c) / len(self.labels) for v, c in zip(vals, counts)}

    def labels_grid(self) -> np.ndarray:
        """Labels reshaped onto the grid, shape (n_0, n_1, ...)."""
        if self.grid_axes is None:
            raise ValueError("these basins were computed on given states, not on a grid")
        return self.labels.reshape(tuple(len(a) for a in self.grid_axes))

    def to_xarray(self):
        """Dims ``batch`` (initial states), ``unit``, ``attractor``, ``cycle_point``, ``grid_<i>``."""
        import xarray as xr

        P = max((len(a) for a in self.attractors), default=0)
        n = self.states.shape[1]
        att = np.full((len(self.attractors), P, n), np.nan)
        for i, a in enumerate(self.attractors):
            att[i, :len(a)] = a
        data = {
            "state": (("batch", "unit"), self.states),
            "label": (("batch",), self.labels),
            "steps": (("batch",), self.steps),
            "attractor_state": (("attractor", "cycle_point", "unit"), att),
            "period": (("attractor",), np.array([len(a) for a in self.attractors], dtype=np.int64)),
            "status": (("batch",), self.status),
        }
        if self.grid_axes is not None:
            for i, ax in enumerate(self.grid_axes):
                data[f"grid_axis_{i}"] = ((f"grid_{i}",), ax)
        attrs = {**self.format_attrs(), "diverged_label": DIVERGED, "undecided_label": UNDECIDED,
                 "grid": int(self.grid_axes is not None), **encode_attrs(self.attrs)}
        return xr.Dataset(data, attrs=attrs)

    @classmethod
    def from_xarray(cls, ds) -> BasinResult:
        """Rebuild from :meth:`to_xarray`'s dataset (or a file written from one)."""
        att = ds["attractor_state"].values
        attractors = tuple(att[i, :p] for i, p in enumerate(ds["period"].values.astype(int)))
        axes = None
        if ds.attrs.get("grid", 0):
            axes = tuple(ds[f"grid_axis_{i}"].values for i in range(ds.sizes["unit"]))
        attrs = decode_attrs(ds.attrs, skip=("diverged_label", "undecided_label", "grid"))
        return cls(ds["state"].values, ds["label"].values.astype(np.int64),
                   ds["steps"].values.astype(np.int64), attractors, axes, attrs)


def _attractor_list(attractors: Any, n: int) -> list[np.ndarray]:
    if hasattr(attractors, "cycle_id") and hasattr(attractors, "stability"):
        out = []
        keys = sorted({(int(o), int(c)) for o, c, s in zip(attractors.order, attractors.cycle_id,
                                                            attractors.stability) if s == "stable"})
        for o, c in keys:
            rows = np.flatnonzero((attractors.order == o) & (attractors.cycle_id == c))
            out.append(attractors.states[rows[np.argsort(attractors.cycle_step[rows])]])
        return out
    out = []
    for i, a in enumerate(attractors):
        a = np.atleast_2d(np.asarray(a, dtype=np.float64))
        if a.ndim != 2 or a.shape[1] != n or not np.all(np.isfinite(a)):
            raise ValueError(f"attractor {i} must be a finite array (period, {n}) or ({n},), "
                             f"got shape {np.shape(a)}")
        out.append(a)
    return out


def _grid(grid: Any, n: int) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    try:
        bounds, counts = grid
        bounds = np.asarray(bounds, dtype=np.float64).reshape(-1, 2)
        counts = np.asarray(counts, dtype=object)
    except (TypeError, ValueError):
        raise ValueError("grid must be (bounds, n) with bounds [(low, high)] per latent "
                         "dimension and n an int or one int per dimension") from None
    if len(bounds) != n:
        raise ValueError(f"grid bounds need one (low, high) per latent dimension ({n}), "
                         f"got {len(bounds)}")
    if counts.ndim > 1 or counts.size not in (1, n):
        raise ValueError(f"grid n must be an int or one int per latent dimension ({n}), got shape "
                         f"{counts.shape}")
    for c in counts.ravel():
        check_setting("grid n (points per dimension)", c, 1, integer=True)
    counts = np.broadcast_to(counts.astype(np.int64), (n,))
    if not np.all(bounds[:, 1] >= bounds[:, 0]):
        raise ValueError("grid needs low <= high per dimension")
    n_points = float(np.prod(counts.astype(np.float64)))
    # the grid states, their mesh coordinates, labels and steps
    check_memory("compute_basins", 8.0 * n_points * (2 * n + 2),
                 f"a grid of {n_points:.3g} states of {n} dims", "lower the points per dimension (grid n)")
    axes = tuple(np.linspace(lo, hi, int(c)) for (lo, hi), c in zip(bounds, counts))
    mesh = np.meshgrid(*axes, indexing="ij")
    return np.stack([m.ravel() for m in mesh], axis=1), axes


def _block_stepper(model: Any, u: Any, backend: str):
    """``(block, n_latent, backend_name)``; ``block(z, k)`` maps (m, latent) to the next k states
    (m, k, latent) in float64."""
    system = None
    if all(hasattr(model, a) for a in ("normals", "affine_map", "step")):
        system = model
    else:
        from neurodyn.models.piecewise import is_piecewise_linear, pl_system

        if is_piecewise_linear(model) and backend in ("auto", "numpy"):
            system = pl_system(model, u)
    if system is not None:
        if backend not in ("auto", "numpy"):
            raise ValueError(f"a PLSystem runs only on backend 'numpy', not {backend!r}")

        def block(z: np.ndarray, k: int) -> np.ndarray:
            out = np.empty((len(z), k, z.shape[1]))
            for i in range(k):
                z = system.step(z)
                out[:, i] = z
            return out

        return block, system.normals.shape[1], "numpy"
    if backend == "numpy":
        raise ValueError("backend='numpy' needs a PLRNN/ShallowPLRNN/ALRNN or a PLSystem")
    import copy

    import torch

    from neurodyn.kernels import rollout

    m = copy.deepcopy(model).to(torch.float64).eval()
    ut = None if u is None else torch.as_tensor(np.asarray(u, dtype=np.float64))
    used = []

    def block(z: np.ndarray, k: int) -> np.ndarray:
        h0 = torch.as_tensor(z)
        inp = None if ut is None else ut.expand(len(z), -1)
        res = rollout(m, h0=h0, inputs=inp, n_steps=k, backend="auto" if backend == "auto" else backend)
        used.append(res.backend)
        return res.states.numpy()

    return block, int(model.state_size), used


def compute_basins(
    model: Any,
    attractors: Any,
    *,
    states: Any = None,
    grid: Any = None,
    max_steps: int = 1000,
    tol: float = 1e-6,
    diverge_radius: float = 1e6,
    u: Any = None,
    batch_size: int = 16384,
    backend: str = "auto",
) -> BasinResult:
    """Label initial states by the attractor their forward orbit reaches.

    Parameters
    ----------
    model : RecurrentModel or PLSystem
        Any neurodyn model (stepped in float64 torch) or a piecewise-affine system (NumPy).
    attractors : CycleResult or sequence of arrays
        A :class:`~neurodyn.analysis.plrnn.CycleResult` (its "stable" cycles are used) or arrays
        (period, latent) / (latent,).
    states : array, shape (state, latent), optional
        Initial states; exclusive with ``grid``.
    grid : (bounds, n), optional
        Regular grid: ``bounds`` one (low, high) per latent dimension, ``n`` points per dimension.
    max_steps : int
        Step budget per state (time steps).
    tol : float
        Distance to an attractor point that counts as arrival.
    diverge_radius : float
        States whose norm exceeds this (or becomes NaN/Inf) are labelled ``DIVERGED``.
    u : array, shape (input,), optional
        Constant input.
    batch_size : int
        States simulated together.
    backend : {"auto", "numpy", "torch", "numba", "triton"}
        PL models and PLSystems run in float64 NumPy (``"auto"`` or ``"numpy"``); other models run
        through :func:`neurodyn.kernels.rollout` in float64 with this backend (``"auto"`` picks
        Numba on the CPU when installed). The backend used is in ``attrs["backend"]``.

    Returns
    -------
    BasinResult

    Raises
    ------
    ValueError
        Without exactly one of ``states``/``grid``, on bad shapes, NaN/Inf, no attractors, a
        non-positive ``tol`` or ``diverge_radius``, a ``max_steps``, ``batch_size`` or grid ``n`` that
        is not an integer >= 1, or a grid too large for the memory available (the message gives the
        estimate).

    Examples
    --------
    ``x' = f(x) + relu(y)/2, y' = (y + 1)/2`` with ``f`` of slope 2 for ``|x| < 1`` and 1/2 outside has
    the stable points (-2, 1) and (4, 1), separated by the saddle at x = -1/2:

    >>> import numpy as np
    >>> from neurodyn.analysis import compute_basins, find_cycles
    >>> from neurodyn.models import ShallowPLRNN
    >>> normals = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])
    >>> mixing = np.array([[-1.5, 1.5, 0.5], [0.0, 0.0, 0.0]])
    >>> model = ShallowPLRNN.from_arrays([2.0, 0.5], mixing, normals, [0.0, 0.5], [-1.0, -1.0, 0.0])
    >>> cycles = find_cycles(model, max_order=1, exhaustive=True)
    >>> basins = compute_basins(model, cycles, states=[[-3.0, 1.0], [0.0, 1.0], [-1.0, 1.0]], max_steps=300)
    >>> [basins.attractors[k].tolist() for k in basins.labels]  # the attractor each start reaches
    [[[-2.0, 1.0]], [[4.0, 1.0]], [[-2.0, 1.0]]]
    >>> basins.status.tolist()
    ['attracted', 'attracted', 'attracted']
    """
    if not (math.isfinite(tol) and tol > 0 and math.isfinite(diverge_radius) and diverge_radius > 0):
        raise ValueError(f"tol and diverge_radius must be finite and > 0, got {tol}, {diverge_radius}")
    check_setting("max_steps", max_steps, 1, integer=True, hint=" (time steps per state)")
    check_setting("batch_size", batch_size, 1, integer=True, hint=" (states simulated together)")
    max_steps, batch_size = int(max_steps), int(batch_size)
    block, n, used = _block_stepper(model, u, backend)
    if (states is None) == (grid is None):
        raise ValueError("give exactly one of states=(state, latent) array or grid=(bounds, n)")
    axes = None
    if grid is not None:
        x0, axes = _grid(grid, n)
    else:
        x0 = np.asarray(states, dtype=np.float64)
        if x0.ndim != 2 or x0.shape[1] != n:
            raise ValueError(f"states must have shape (state, {n}), got {x0.shape}")
        check_finite(x0, "states")
    atts = _attractor_list(attractors, n)
    if not atts:
        raise ValueError("no attractors given (a CycleResult without stable cycles?)")
    pts = np.concatenate(atts)
    owner = np.concatenate([np.full(len(a), i) for i, a in enumerate(atts)])
    labels = np.full(len(x0), UNDECIDED, dtype=np.int64)
    steps = np.full(len(x0), max_steps, dtype=np.int64)
    for start in range(0, len(x0), batch_size):
        sl = slice(start, start + batch_size)
        labels[sl], steps[sl] = _simulate(block, x0[sl], pts, owner, max_steps, tol, diverge_radius)
    name = used if isinstance(used, str) else (used[0] if used else "none")
    attrs = {"max_steps": max_steps, "tol": tol, "diverge_radius": diverge_radius, "backend": name}
    return BasinResult(x0, labels, steps, tuple(atts), axes, attrs)


def _events(z, pts, tol, radius):
    """Arrival (nearest attractor point within ``tol``) and divergence flags for states (..., n)."""
    d = np.linalg.norm(z[..., None, :] - pts, axis=-1)
    bad = ~np.all(np.isfinite(z), axis=-1) | (np.linalg.norm(z, axis=-1) > radius)
    near = (d.min(axis=-1) <= tol) & ~bad
    return near, bad, np.argmin(np.where(np.isfinite(d), d, np.inf), axis=-1)


def _simulate(block, z, pts, owner, max_steps, tol, radius, chunk=32):
    labels = np.full(len(z), UNDECIDED, dtype=np.int64)
    steps = np.full(len(z), max_steps, dtype=np.int64)
    with np.errstate(over="ignore", invalid="ignore"):
        near, bad, which = _events(z, pts, tol, radius)
        labels[near] = owner[which[near]]
        labels[bad] = DIVERGED
        steps[near | bad] = 0
        active = np.flatnonzero(~(near | bad))
        z = z.copy()
        t = 0
        while active.size and t < max_steps:
            k = min(chunk, max_steps - t)
            traj = block(z[active], k)  # (m, k, n)
            near, bad, which = _events(traj, pts, tol, radius)
            event = near | bad
            hit = event.any(axis=1)
            first = np.argmax(event, axis=1)
            rows = np.flatnonzero(hit)
            f = first[rows]
            labels[active[rows]] = np.where(bad[rows, f], DIVERGED, owner[which[rows, f]])
            steps[active[rows]] = t + 1 + f
            z[active] = np.where(np.isfinite(traj[:, -1]), traj[:, -1], 0.0)
            active = active[~hit]
            t += k
    return labels, steps


def basin_boundary(manifolds: Any) -> list:
    """The stable-manifold pieces of codimension 1, which separate basins of attraction.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis import find_cycles, find_manifolds
    >>> from neurodyn.analysis.plrnn import basin_boundary
    >>> from neurodyn.models import ShallowPLRNN
    >>> normals = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])
    >>> mixing = np.array([[-1.5, 1.5, 0.5], [0.0, 0.0, 0.0]])
    >>> model = ShallowPLRNN.from_arrays([2.0, 0.5], mixing, normals, [0.0, 0.5], [-1.0, -1.0, 0.0])
    >>> cycles = find_cycles(model, max_order=1, exhaustive=True)
    >>> boundary = basin_boundary(find_manifolds(model, cycles, kind="stable", box=(-4.0, 5.0)))
    >>> pts = np.concatenate([p.samples for p in boundary])
    >>> near = (pts[:, 1] > 0) & (np.abs(pts[:, 0]) < 1)  # near the saddle: x = -1/2 - (y - 1)/3
    >>> all(p.dim == 1 for p in boundary), bool(np.allclose(pts[near, 0], -0.5 - (pts[near, 1] - 1) / 3))
    (True, True)
    """
    n = len(manifolds.box[0])
    return [p for p in manifolds.select("stable") if p.dim == n - 1]
