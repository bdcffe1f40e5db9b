"""The result of :func:`~neurodyn.analysis.find_manifolds`: affine manifold pieces and their saddles.

netCDF layout (format ``neurodyn.manifolds``; dims): ``piece``, ``unit``, ``dim`` (piece coordinates,
padded to the largest piece dimension), ``facet``, ``vertex``, ``sample``, ``hyperplane``, ``saddle``,
``cycle_point``, ``eigenvalue``. Padding is NaN (floats) or -1 (integers); ``n_dim``, ``n_facets``,
``n_vertices`` and ``period`` give the true sizes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from neurodyn._result import Result, decode_attrs, encode_attrs
from neurodyn.analysis.plrnn._polytope import Polytope

__all__ = ["ManifoldPiece", "ManifoldResult", "Saddle"]

PIECE_STATUS = ("ok", "inconsistent")


@dataclass(frozen=True)
class ManifoldPiece:
    """One convex piece ``{base + basis @ s : A @ s <= b}`` of a stable or unstable manifold.

    Attributes
    ----------
    kind : {"stable", "unstable"}
    saddle : int
        Index into :attr:`ManifoldResult.saddles`.
    region : ndarray of bool, shape (hyperplane,)
        The linear region holding the piece (the map is affine on it).
    base : ndarray, shape (latent,)
    basis : ndarray, shape (latent, dim)
        Orthonormal columns spanning the piece.
    A, b : ndarray, shapes (facet, dim), (facet,)
        Non-redundant facets of the piece in its own coordinates ``s``.
    vertices : ndarray, shape (vertex, dim)
    samples : ndarray, shape (sample, latent)
        Points on the piece (state coordinates).
    depth : int
        Map applications (forward for unstable, backward for stable) from the local seed.
    parent : int
        Index of the piece it was mapped from (-1 for seeds).
    residual : float
        Stable pieces: largest distance of ``F(sample)`` from the parent piece (self-consistency of
        the region-wise inverse); 0 for unstable pieces (exact forward images).

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.plrnn._examples import lozi_manifolds
    >>> manifolds = lozi_manifolds(max_depth=2)
    >>> piece = manifolds.select("unstable", saddle=1)[0]
    >>> piece.kind, piece.dim, piece.basis.shape, piece.samples.shape  # a segment in the plane
    ('unstable', 1, (2, 1), (8, 2))
    >>> bool(np.allclose(piece.points(np.zeros(1)), piece.base))
    True
    """

    kind: str
    saddle: int
    region: np.ndarray
    base: np.ndarray
    basis: np.ndarray
    A: np.ndarray
    b: np.ndarray
    vertices: np.ndarray
    samples: np.ndarray
    depth: int
    parent: int
    residual: float = 0.0

    @property
    def dim(self) -> int:
        return int(self.basis.shape[1])

    @property
    def polytope(self) -> Polytope:
        return Polytope(self.A, self.b, self.vertices, np.nan)

    def points(self, s: np.ndarray) -> np.ndarray:
        """State coordinates of piece coordinates ``s`` (..., dim) → (..., latent)."""
        return self.base + np.asarray(s) @ self.basis.T

    def distance(self, x: np.ndarray) -> np.ndarray:
        """Distance of points (..., latent) to the piece (exact for dim 1; for dim >= 2 exact when
        the projection falls inside, else an upper bound via the nearest vertex)."""
        x = np.asarray(x, dtype=np.float64)
        s = (x - self.base) @ self.basis
        if self.dim == 1:
            s = np.clip(s, self.vertices.min(), self.vertices.max())
            return np.linalg.norm(x - self.points(s), axis=-1)
        off = np.linalg.norm(x - self.points(s), axis=-1)
        norms = np.linalg.norm(self.A, axis=1)
        inside = np.all((s @ self.A.T - self.b) / norms <= 1e-12, axis=-1)
        vx = self.points(self.vertices)
        nearest = np.min(np.linalg.norm(x[..., None, :] - vx, axis=-1), axis=-1)
        return np.where(inside, off, nearest)


@dataclass(frozen=True)
class Saddle:
    """A fixed point or cycle whose manifolds were (or could not be) built.

    points (period, latent), regions (period, hyperplane), eigenvalues (latent,) of the monodromy
    matrix sorted by decreasing modulus, n_unstable, and status: "ok", "not_saddle" (no stable or no
    unstable direction), "not_hyperbolic", "on_boundary" (a cycle point on a switching hyperplane),
    "outside_box".

    Examples
    --------
    >>> from neurodyn.analysis.plrnn._examples import lozi_manifolds
    >>> saddle = lozi_manifolds(max_depth=1).saddles[1]
    >>> saddle.points.shape, saddle.n_unstable, saddle.status  # (period, latent)
    ((1, 2), 1, 'ok')
    >>> bool(abs(saddle.eigenvalues[0]) > 1 > abs(saddle.eigenvalues[1]))
    True
    """

    points: np.ndarray
    regions: np.ndarray
    eigenvalues: np.ndarray
    n_unstable: int
    status: str


@dataclass(frozen=True)
class ManifoldResult(Result):
    """Piecewise-affine stable/unstable manifolds of the saddles of a PL map.

    ``truncated[(saddle, kind)]`` is True when the piece cap stopped that manifold early;
    ``warnings`` lists non-invertible regions, failed self-consistency checks and skipped saddles.
    :attr:`status` is per piece (``"ok"`` or ``"inconsistent"``: a stable piece whose samples map
    farther than ``consistency_tol`` from its parent), :attr:`saddle_status` per saddle.

    Examples
    --------
    >>> from neurodyn.analysis.plrnn._examples import lozi_manifolds
    >>> manifolds = lozi_manifolds(kind="unstable", max_depth=2)
    >>> manifolds.n_pieces == len(manifolds.pieces) == len(manifolds.status)
    True
    >>> {p.kind for p in manifolds.pieces}, set(manifolds.status)
    ({'unstable'}, {'ok'})
    >>> manifolds.to_xarray().attrs["format"]
    'neurodyn.manifolds'
    """

    pieces: tuple[ManifoldPiece, ...]
    saddles: tuple[Saddle, ...]
    box: tuple[np.ndarray, np.ndarray]
    truncated: dict[tuple[int, str], bool] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    attrs: dict[str, Any] = field(default_factory=dict)

    FORMAT: ClassVar[str] = "neurodyn.manifolds"
    FORMAT_VERSION: ClassVar[int] = 1
    REQUIRED: ClassVar[tuple[str, ...]] = (
        "kind", "piece_saddle", "depth", "parent", "n_dim", "n_facets", "n_vertices", "residual",
        "region_code", "base", "basis", "facet_normal", "facet_offset", "vertices", "samples",
        "saddle_state", "saddle_region_code", "period", "saddle_status", "n_unstable", "eigenvalue_real",
        "eigenvalue_imag", "truncated_stable", "truncated_unstable", "box_low", "box_high")

    @property
    def n_pieces(self) -> int:
        return len(self.pieces)

    @property
    def status(self) -> np.ndarray:
        """Per piece, shape (piece,): ``"ok"`` or ``"inconsistent"`` (residual above ``consistency_tol``)."""
        tol = self.attrs.get("consistency_tol", np.inf)
        return np.array(["inconsistent" if p.residual > tol else "ok" for p in self.pieces], dtype=object)

    @property
    def saddle_status(self) -> np.ndarray:
        """Per saddle, shape (saddle,): ``"ok"``, ``"not_saddle"``, ``"not_hyperbolic"``,
        ``"on_boundary"`` or ``"outside_box"``."""
        return np.array([s.status for s in self.saddles], dtype=object)

    def select(self, kind: str | None = None, saddle: int | None = None) -> list[ManifoldPiece]:
        """Pieces of one kind and/or one saddle."""
        return [p for p in self.pieces if (kind is None or p.kind == kind)
                and (saddle is None or p.saddle == saddle)]

    def distance(self, x: np.ndarray, kind: str | None = None, saddle: int | None = None
                 ) -> np.ndarray:
        """Distance of points (..., latent) to the union of the selected pieces."""
        x = np.asarray(x, dtype=np.float64)
        out = np.full(x.shape[:-1], np.inf)
        for p in self.select(kind, saddle):
            out = np.minimum(out, p.distance(x))
        return out

    def to_xarray(self):
        """The result as an :class:`xarray.Dataset` (see the module docstring for the names)."""
        import xarray as xr

        P, n = len(self.pieces), len(self.box[0])
        H = self.saddles[0].regions.shape[1] if self.saddles else 0
        kmax = max((p.dim for p in self.pieces), default=0)
        fmax = max((len(p.b) for p in self.pieces), default=0)
        vmax = max((len(p.vertices) for p in self.pieces), default=0)
        smax = max((len(p.samples) for p in self.pieces), default=0)
        basis = np.full((P, n, kmax), np.nan)
        A = np.full((P, fmax, kmax), np.nan)
        b = np.full((P, fmax), np.nan)
        verts = np.full((P, vmax, kmax), np.nan)
        samples = np.full((P, smax, n), np.nan)
        for i, p in enumerate(self.pieces):
            basis[i, :, :p.dim] = p.basis
            A[i, :len(p.b), :p.dim] = p.A
            b[i, :len(p.b)] = p.b
            verts[i, :len(p.vertices), :p.dim] = p.vertices
            samples[i, :len(p.samples)] = p.samples
        S = len(self.saddles)
        pmax = max((len(s.points) for s in self.saddles), default=0)
        spts = np.full((S, pmax, n), np.nan)
        sreg = np.full((S, pmax, H), -1, dtype=np.int8)
        for i, s in enumerate(self.saddles):
            spts[i, :len(s.points)] = s.points
            sreg[i, :len(s.points)] = s.regions
        eig = np.array([s.eigenvalues for s in self.saddles]).reshape(S, n)
        ints = lambda f: np.array([f(p) for p in self.pieces], dtype=np.int64)  # noqa: E731
        data = {
            "kind": (("piece",), np.array([p.kind for p in self.pieces], dtype=object)),
            "piece_saddle": (("piece",), ints(lambda p: p.saddle)),
            "depth": (("piece",), ints(lambda p: p.depth)),
            "parent": (("piece",), ints(lambda p: p.parent)),
            "n_dim": (("piece",), ints(lambda p: p.dim)),
            "n_facets": (("piece",), ints(lambda p: len(p.b))),
            "n_vertices": (("piece",), ints(lambda p: len(p.vertices))),
            "residual": (("piece",), np.array([p.residual for p in self.pieces], dtype=float)),
            "region_code": (("piece", "hyperplane"),
                            np.array([p.region for p in self.pieces], dtype=np.int8).reshape(P, H)),
            "base": (("piece", "unit"), np.array([p.base for p in self.pieces]).reshape(P, n)),
            "basis": (("piece", "unit", "dim"), basis),
            "facet_normal": (("piece", "facet", "dim"), A),
            "facet_offset": (("piece", "facet"), b),
            "vertices": (("piece", "vertex", "dim"), verts),
            "samples": (("piece", "sample", "unit"), samples),
            "saddle_state": (("saddle", "cycle_point", "unit"), spts),
            "saddle_region_code": (("saddle", "cycle_point", "hyperplane"), sreg),
            "period": (("saddle",), np.array([len(s.points) for s in self.saddles], dtype=np.int64)),
            "saddle_status": (("saddle",), np.array([s.status for s in self.saddles], dtype=object)),
            "n_unstable": (("saddle",), np.array([s.n_unstable for s in self.saddles], dtype=np.int64)),
            "eigenvalue_real": (("saddle", "eigenvalue"), eig.real),
            "eigenvalue_imag": (("saddle", "eigenvalue"), eig.imag),
            "truncated_stable": (("saddle",), np.array(
                [int(self.truncated.get((i, "stable"), False)) for i in range(S)], dtype=np.int8)),
            "truncated_unstable": (("saddle",), np.array(
                [int(self.truncated.get((i, "unstable"), False)) for i in range(S)], dtype=np.int8)),
            "box_low": (("unit",), self.box[0]),
            "box_high": (("unit",), self.box[1]),
        }
        data["status"] = (("piece",), self.status)
        attrs = {**self.format_attrs(), "warnings": "\n".join(self.warnings), **encode_attrs(self.attrs)}
        return xr.Dataset(data, attrs=attrs)

    @classmethod
    def from_xarray(cls, ds) -> ManifoldResult:
        """Rebuild from :meth:`to_xarray`'s dataset.

        Raises
        ------
        ValueError
            If ``ds`` is not a manifold dataset.
        """
        if ds.attrs.get("format") != cls.FORMAT:
            raise ValueError(f"not a manifold dataset (format attribute {ds.attrs.get('format')!r})")
        v = {k: ds[k].values for k in ds.data_vars}
        pieces = []
        for i in range(ds.sizes["piece"]):
            k, f, nv = int(v["n_dim"][i]), int(v["n_facets"][i]), int(v["n_vertices"][i])
            smp = v["samples"][i]
            pieces.append(ManifoldPiece(
                str(v["kind"][i]), int(v["piece_saddle"][i]), v["region_code"][i].astype(bool),
                v["base"][i], v["basis"][i, :, :k], v["facet_normal"][i, :f, :k],
                v["facet_offset"][i, :f], v["vertices"][i, :nv, :k],
                smp[~np.isnan(smp).any(axis=1)], int(v["depth"][i]), int(v["parent"][i]),
                float(v["residual"][i])))
        saddles = []
        for i in range(ds.sizes.get("saddle", 0)):
            per = int(v["period"][i])
            saddles.append(Saddle(v["saddle_state"][i, :per], v["saddle_region_code"][i, :per] > 0,
                                  v["eigenvalue_real"][i] + 1j * v["eigenvalue_imag"][i],
                                  int(v["n_unstable"][i]), str(v["saddle_status"][i])))
        truncated = {}
        for i in range(len(saddles)):
            truncated[(i, "stable")] = bool(v["truncated_stable"][i])
            truncated[(i, "unstable")] = bool(v["truncated_unstable"][i])
        warn = ds.attrs.get("warnings", "")
        attrs = decode_attrs(ds.attrs, skip=("warnings",))
        return cls(tuple(pieces), tuple(saddles), (v["box_low"], v["box_high"]), truncated,
                   tuple(w for w in str(warn).split("\n") if w), attrs)
