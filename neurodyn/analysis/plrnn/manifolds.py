"""Stable and unstable manifolds of saddle fixed points and cycles of piecewise-linear RNNs.

Semi-analytic construction after Eisenmann, Brändle, Monfared & Durstewitz, "Detecting invariant
manifolds in ReLU-based RNNs" (ICLR 2026), on the region-wise affine structure used for exact cycle
search (Eisenmann et al., NeurIPS 2023): inside a linear region the map is affine, so manifold pieces
are convex pieces of affine subspaces that can be mapped exactly. Unstable manifolds grow forward
(images, cut at switching hyperplanes); stable manifolds grow backward through the region-wise
inverse maps, each new piece checked by mapping its samples forward onto its parent.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Mapping
from typing import Any

import numpy as np

from neurodyn._seed import SeedLike, numpy_rng, resolve_seed
from neurodyn.analysis.plrnn import _manifold_maps as mm
from neurodyn.analysis.plrnn._manifold_seed import describe_saddle, make_seed, saddles_from
from neurodyn.analysis.plrnn._polytope import sample
from neurodyn.analysis.plrnn.manifold_result import ManifoldPiece, ManifoldResult, Saddle

__all__ = ["find_manifolds"]


def _as_system(model: Any, u: Any):
    if all(hasattr(model, a) for a in ("normals", "offsets", "affine_map", "step")):
        if u is not None:
            raise ValueError("u applies to models only; a PLSystem already has its input in its bias")
        return model
    from neurodyn.models.piecewise import pl_system

    return pl_system(model, u)


def _shown(value: Any) -> str:
    """A short one-line description of a user value for an error message."""
    text = f"an array of shape {value.shape}" if isinstance(value, np.ndarray) else repr(value)
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."


def _box(box: Any, n: int, points: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    if box is None:
        scale = max([np.max(np.abs(p)) for p in points] + [0.0])
        half = 10.0 + 2.0 * scale
        return np.full(n, -half), np.full(n, half)
    bad = (f"box must be a positive half-width or (low, high) with one value per latent dimension ({n}) "
           f"or one for all, finite and low < high; got {_shown(box)}")
    try:
        shape = np.shape(box)
    except ValueError:  # ragged, e.g. (low scalar, high per dimension)
        shape = None
    if shape == (n, 2):
        bad += "; for one (low, high) row per dimension pass box=(rows[:, 0], rows[:, 1])"
    if shape == () and not isinstance(box, (str, bytes, bool, np.bool_)):
        try:
            half = float(box)
        except (TypeError, ValueError):
            raise ValueError(bad) from None
        if not (math.isfinite(half) and half > 0):
            raise ValueError(bad)
        return np.full(n, -half), np.full(n, half)
    try:
        lo, hi = (np.asarray(x, dtype=np.float64) for x in box)
    except (TypeError, ValueError):
        raise ValueError(bad) from None
    if lo.ndim > 1 or hi.ndim > 1 or lo.size not in (1, n) or hi.size not in (1, n):
        raise ValueError(bad)
    lo, hi = (np.broadcast_to(x.reshape(-1), (n,)).copy() for x in (lo, hi))
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)) and np.all(hi > lo)):
        raise ValueError(bad)
    return lo, hi


def _per_kind(value: Any, name: str) -> dict[str, Any]:
    """A cap given once for both kinds, or as ``{"unstable": ..., "stable": ...}``, per kind."""
    if not isinstance(value, Mapping):
        return {"unstable": value, "stable": value}
    if set(value) != {"unstable", "stable"}:
        raise ValueError(f"{name} as a mapping needs exactly the keys 'unstable' and 'stable', got "
                         f"{sorted(map(str, value))}; or pass one value for both kinds")
    return {"unstable": value["unstable"], "stable": value["stable"]}


def _check_caps(depth: dict, pieces: dict, seconds: dict) -> None:
    for k in ("unstable", "stable"):
        if depth[k] < 0 or pieces[k] < 1:
            raise ValueError(f"need max_depth >= 0 and max_pieces >= 1 ({k} manifolds: max_depth="
                             f"{depth[k]}, max_pieces={pieces[k]})")
        if seconds[k] is not None and not seconds[k] > 0:
            raise ValueError(f"max_seconds must be positive or None, got {seconds[k]} ({k} manifolds)")


def _candidate_regions(system: Any, max_regions: int, rng, box, warnings: list) -> np.ndarray:
    from neurodyn.analysis.plrnn.regions import enumerate_regions

    H = system.n_hyperplanes
    if H <= 20 and 2**H <= max_regions:
        try:
            return enumerate_regions(system, max_regions=max_regions)
        except ValueError:
            pass
    pts = rng.uniform(box[0], box[1], size=(200_000, system.n_latent))
    warnings.append(f"{H} hyperplanes: too many regions to enumerate (max_regions={max_regions}); "
                    "stable manifolds use only the regions hit by 200000 random states in the box "
                    "and may miss preimage branches")
    return np.unique(system.region_code(pts), axis=0)


def _consistency(system: Any, child: mm.Geom, parent: mm.Geom, samples: np.ndarray) -> float:
    """Largest distance of F(samples of a preimage piece) from its parent piece."""
    y = system.step(samples)
    s = (y - parent.base) @ parent.basis
    off = np.linalg.norm(y - parent.base - s @ parent.basis.T, axis=1)
    norms = np.linalg.norm(parent.poly.A, axis=1)
    out = np.maximum((s @ parent.poly.A.T - parent.poly.b) / norms, 0.0).max(axis=1)
    return float(np.max(off + out)) if len(y) else 0.0


def _grow(system, saddle_idx: int, saddle: Saddle, kind: str, box, opts, rng, maps, warnings):
    """Pieces of one manifold of one saddle; returns (pieces, truncated)."""
    seed = make_seed(system, saddle, kind, box, opts["tol"])
    if seed is None:
        warnings.append(f"saddle {saddle_idx}: the monodromy matrix is singular on the stable "
                        "subspace; its stable manifold is not built")
        return [], False
    if seed.cube is None:
        return [], False
    p = len(saddle.points)
    geoms: list[mm.Geom] = []
    pieces: list[ManifoldPiece] = []

    def add(code, g, depth, parent, residual=0.0):
        smp = g.base + sample(g.poly, opts["n_samples"], rng) @ g.basis.T
        pieces.append(ManifoldPiece(kind, saddle_idx, np.asarray(code, dtype=bool), g.base, g.basis,
                                    g.poly.A, g.poly.b, g.poly.vertices, smp, depth, parent,
                                    residual))
        geoms.append(g)
        return len(pieces) - 1

    z0 = saddle.points[0]
    root = add(saddle.regions[0], mm.Geom(z0, seed.basis, seed.cube), 0, -1)
    queue = deque([(root, True)])  # (piece index, on the local chain of the seed)
    for cell in seed.shell:
        queue.append((add(saddle.regions[0], mm.Geom(z0, seed.basis, cell), p, root), False))
    collapsed = 0
    noninvertible: dict[bytes, np.ndarray] = {}
    start = time.process_time()

    def capped() -> bool:
        return len(pieces) >= opts["max_pieces"] or (
            opts["max_seconds"] is not None and time.process_time() - start > opts["max_seconds"])

    while queue:
        i, local = queue.popleft()
        depth = pieces[i].depth
        if depth >= opts["max_depth"] or (local and depth >= p - 1 and kind == "unstable"):
            continue
        if capped():
            return pieces, True
        g = geoms[i]
        if kind == "unstable":
            children, col = mm.image(system, g, pieces[i].region, box, opts["tol"])
            collapsed += col
        else:
            chain = saddle.regions[(-depth - 1) % p] if local else None
            children = mm.preimages(system, g, maps, box, opts["tol"],
                                    exclude=chain if local and depth == p - 1 else None)
            if np.any(maps.singular):
                for code in mm.singular_reach(system, g, maps, box):
                    noninvertible[code.tobytes()] = code
        for code, cg in children:
            res = 0.0
            if kind == "stable":
                smp = cg.base + sample(cg.poly, 4, rng) @ cg.basis.T
                res = _consistency(system, cg, g, smp)
            j = add(code, cg, depth + 1, i, res)
            child_local = local and kind == "stable" and np.array_equal(code, chain)
            child_local |= local and kind == "unstable"
            queue.append((j, bool(child_local)))
            if capped():
                return pieces, True
    if collapsed:
        warnings.append(f"saddle {saddle_idx}: {collapsed} unstable pieces were folded onto a lower "
                        "dimension by a singular region map and dropped")
    for code in noninvertible.values():
        warnings.append(f"saddle {saddle_idx}: the map is not invertible in region "
                        f"{code.astype(int).tolist()}, which maps onto part of the stable manifold; "
                        "preimages through it are missing")
    bad = [q.residual for q in pieces if q.residual > opts["consistency_tol"]]
    if bad:
        warnings.append(f"saddle {saddle_idx}: {len(bad)} stable pieces fail the self-consistency "
                        f"check (largest residual {max(bad):.2e})")
    return pieces, False


def find_manifolds(
    model: Any,
    cycles: Any,
    *,
    kind: str = "both",
    max_depth: int | Mapping[str, int] = 20,
    box: Any = None,
    max_pieces: int | Mapping[str, int] = 2000,
    max_seconds: float | None | Mapping[str, float | None] = None,
    n_samples: int = 8,
    u: Any = None,
    max_regions: int = 4096,
    tol: float = 1e-10,
    marginal_tol: float = 1e-6,
    region_tol: float = 1e-9,
    consistency_tol: float = 1e-7,
    nonsaddles: bool = False,
    seed: SeedLike = 0,
) -> ManifoldResult:
    """Stable and/or unstable manifolds of the saddle fixed points and cycles of a PL map.

    Parameters
    ----------
    model : PLRNN, ShallowPLRNN, ALRNN or PLSystem
        The piecewise-linear map (parameters used in float64).
    cycles : CycleResult or sequence of arrays
        From :func:`neurodyn.analysis.find_cycles`, or exact cycles as arrays (period, latent) /
        fixed points (latent,). Only hyperbolic saddles get manifolds; the others are listed with
        their status.
    kind : {"both", "stable", "unstable"}
    max_depth : int or mapping
        Largest number of map applications (forward for unstable, backward for stable) from the
        local seed of a saddle. ``max_depth``, ``max_pieces`` and ``max_seconds`` each take one
        value for both kinds or a mapping ``{"unstable": ..., "stable": ...}`` with one per kind
        (e.g. a deep unstable manifold, which carries the attractor, and a shallow stable one).
    box : float or (low, high), optional
        Bounding box in state coordinates; pieces are clipped to it. A positive half-width (the cube
        ``[-box, box]`` in every dimension), or ``(low, high)`` with ``low`` and ``high`` each one
        number for all dimensions or one per latent dimension (shape (latent,)), ``low < high``. A table
        of one (low, high) row per dimension is refused unless it is the (2, 2) of a 2-d map, which
        reads as ``(low, high)``; pass ``(rows[:, 0], rows[:, 1])``. Default: a cube of half-width
        ``10 + 2 max|z|`` over the cycle points.
    max_pieces : int or mapping
        Cap on the pieces of one manifold of one saddle (``truncated`` records a hit).
    max_seconds : float, mapping or None, optional
        Cap on the CPU time (``time.process_time``) spent growing one manifold of one saddle; when
        it is passed, the pieces found so far are kept and ``truncated`` records the hit. Pieces
        grow breadth-first, so a capped manifold is complete to some depth plus part of the next.
        ``attrs`` keeps the caps (a ``{"unstable": ..., "stable": ...}`` dict where they differ;
        there, -1 stands for no time cap).
    n_samples : int
        Sample points stored per piece.
    u : array, shape (input,), optional
        Constant input folded into the map (models only).
    max_regions : int
        Largest number of regions enumerated for the preimages of stable pieces; beyond it the
        regions hit by random states in the box are used (with a warning).
    tol : float
        Pieces whose inscribed radius (piece coordinates) is below this are dropped.
    marginal_tol, region_tol : float
        ``| |λ| - 1 | <= marginal_tol`` is non-hyperbolic; a cycle point closer than ``region_tol``
        to a switching hyperplane is skipped ("on_boundary").
    consistency_tol : float
        Stable pieces whose samples map farther than this from their parent piece are reported.
    nonsaddles : bool
        Also build the full-dimensional manifolds of hyperbolic attractors (their stable manifold
        is their basin of attraction) and repellers (their unstable manifold), with the same
        piece machinery (practical in low dimensions only).
    seed : int, Generator or None
        Seed of the sample points on pieces of dimension >= 2 (and of region sampling).

    Returns
    -------
    ManifoldResult
        Pieces (region, base, orthonormal basis, facets, vertices, samples, depth, parent), the
        saddles with their status, truncation flags and warnings; ``.to_xarray()`` for netCDF.

    Warns
    -----
    RuntimeWarning
        When the map is not invertible in a region that maps onto part of a stable manifold
        (preimages through it are missing), when stable pieces fail the self-consistency check, or
        when the regions were sampled rather than enumerated; the same text is in ``warnings``.

    Raises
    ------
    ValueError
        On an unknown ``kind``, bad caps, or cycles that are not cycles of the map; on a ``box`` that
        is not a finite positive half-width or ``(low, high)`` with one value for all or one per latent
        dimension and ``low < high`` (``box must be a positive half-width or (low, high) ...``).
    TypeError
        If ``model`` is not piecewise-linear.

    Examples
    --------
    >>> from neurodyn.analysis import find_cycles, find_manifolds
    >>> from neurodyn.analysis.plrnn._examples import lozi_map
    >>> lozi = lozi_map()
    >>> cycles = find_cycles(lozi, max_order=1, exhaustive=True)
    >>> manifolds = find_manifolds(lozi, cycles, box=3.0, max_depth=5)
    >>> manifolds.saddle_status.tolist(), sorted({p.kind for p in manifolds.pieces})
    (['ok', 'ok'], ['stable', 'unstable'])
    >>> piece = manifolds.select("stable", saddle=1)[0]  # the local piece through the saddle
    >>> piece.dim, round(float(piece.distance(manifolds.saddles[1].points[0])), 9)
    (1, 0.0)

    Separate caps per kind: a long unstable manifold and a short stable one.

    >>> caps = find_manifolds(lozi, cycles, box=3.0, max_depth={"unstable": 30, "stable": 2},
    ...                       max_pieces={"unstable": 25, "stable": 2000})
    >>> len(caps.select("unstable", saddle=1)), caps.truncated[(1, "unstable")]
    (25, True)
    >>> max(p.depth for p in caps.select("stable", saddle=1)), caps.truncated[(1, "stable")]
    (2, False)
    """
    if kind not in ("both", "stable", "unstable"):
        raise ValueError(f"kind must be 'both', 'stable' or 'unstable', got {kind!r}")
    depths, caps, seconds = (_per_kind(v, n) for v, n in ((max_depth, "max_depth"),
                                                           (max_pieces, "max_pieces"),
                                                           (max_seconds, "max_seconds")))
    _check_caps(depths, caps, seconds)
    if n_samples < 1:
        raise ValueError(f"need n_samples >= 1, got {n_samples}")
    seed_int = resolve_seed(seed)
    rng = numpy_rng(seed_int)
    system = _as_system(model, u)
    found = saddles_from(cycles, system)
    bx = _box(box, system.n_latent, [pts for pts, _ in found])
    saddles = [describe_saddle(system, pts, st, bx, marginal_tol=marginal_tol,
                               region_tol=region_tol, nonsaddles=nonsaddles) for pts, st in found]
    warnings: list[str] = []
    for i, s in enumerate(saddles):
        if s.status not in ("ok", "not_saddle"):
            warnings.append(f"saddle {i} skipped: {s.status}")
    kinds = ("unstable", "stable") if kind == "both" else (kind,)
    opts = {k: {"max_depth": depths[k], "max_pieces": caps[k], "max_seconds": seconds[k],
                "n_samples": n_samples, "tol": tol, "consistency_tol": consistency_tol} for k in kinds}
    maps = None
    if "stable" in kinds and any(s.status == "ok" for s in saddles):
        codes = _candidate_regions(system, max_regions, rng, bx, warnings)
        maps = mm.inverse_maps(system, codes)
    pieces, truncated = [], {}
    for i, s in enumerate(saddles):
        if s.status != "ok":
            continue
        n_s = int(np.sum(np.abs(s.eigenvalues) < 1 - marginal_tol))
        for k in kinds:
            if (k == "unstable" and s.n_unstable == 0) or (k == "stable" and n_s == 0):
                continue
            new, cut = _grow(system, i, s, k, bx, opts[k], rng, maps, warnings)
            offset = len(pieces)
            pieces.extend(q if q.parent < 0 else _shift(q, offset) for q in new)
            truncated[(i, k)] = cut
    serious = [w for w in warnings if "not invertible" in w or "self-consistency" in w
               or "too many regions" in w]
    if serious:
        import warnings as _warnings

        _warnings.warn("find_manifolds: " + "; ".join(serious), RuntimeWarning, stacklevel=2)
    attrs = {"kind": kind, "max_depth": _attr(depths, int), "max_pieces": _attr(caps, int),
             "seed": seed_int, "tol": tol, "consistency_tol": consistency_tol,
             "method": "piecewise-affine (Eisenmann et al. 2026)"}
    if any(v is not None for v in seconds.values()):
        attrs["max_seconds"] = _attr(seconds, lambda v: -1.0 if v is None else float(v))
    return ManifoldResult(tuple(pieces), tuple(saddles), bx, truncated, tuple(warnings), attrs)


def _attr(per_kind: dict[str, Any], cast) -> Any:
    """One value when both kinds share it, else ``{"unstable": ..., "stable": ...}``."""
    u, s = cast(per_kind["unstable"]), cast(per_kind["stable"])
    return u if u == s else {"unstable": u, "stable": s}


def _shift(piece: ManifoldPiece, offset: int) -> ManifoldPiece:
    from dataclasses import replace

    return replace(piece, parent=piece.parent + offset)
