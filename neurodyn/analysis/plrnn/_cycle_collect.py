"""Accept, verify, canonicalise and de-duplicate candidate cycles of one search."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from neurodyn.analysis.plrnn import _cycle_algebra as alg
from neurodyn.models.piecewise import PLSystem


@dataclass(frozen=True)
class Tolerances:
    """Numerical settings of a cycle search (stored in the result's attrs)."""

    max_condition: float = 1e12
    tol_residual: float = 1e-8
    region_tol: float = 1e-9
    dedup_rtol: float = 1e-6
    dedup_atol: float = 1e-9
    marginal_tol: float = 1e-6

    def __post_init__(self) -> None:
        for name in ("tol_residual", "region_tol", "dedup_rtol", "dedup_atol", "marginal_tol"):
            value = getattr(self, name)
            if not (np.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be finite and >= 0, got {value}")
        if not (np.isfinite(self.max_condition) and self.max_condition > 1):
            raise ValueError(f"max_condition must be finite and > 1, got {self.max_condition}")


@dataclass(frozen=True)
class Cycle:
    """One verified cycle, started at its canonical point."""

    points: np.ndarray  # (k, latent)
    codes: np.ndarray  # (k, hyperplane)
    eigenvalues: np.ndarray  # (latent,) of the monodromy matrix
    q: float
    margins: np.ndarray  # (k,) distance to the nearest hyperplane
    iterations: int  # region-sequence updates before the sequence was self-consistent


@dataclass
class Collector:
    """The cycles found so far, by order; :meth:`offer` tells what happened to a candidate."""

    system: PLSystem
    affine: alg.AffineMaps
    tol: Tolerances
    cycles: dict[int, list[Cycle]] = field(default_factory=dict)
    _stacked: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict, repr=False)

    def consistent(self, points: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """Whether each candidate lies in the closure of its regions (within ``region_tol``).

        ``points`` (..., k, latent), ``codes`` (..., k, hyperplane) → bool (...).
        """
        if codes.shape[-1] == 0:
            return np.all(np.isfinite(points), axis=(-1, -2))
        margins = self.affine.margins(points, codes).min(axis=-1)
        scale = 1.0 + np.abs(points).max(axis=-1)
        with np.errstate(invalid="ignore"):
            ok = margins >= -self.tol.region_tol * scale
        return np.all(ok & np.isfinite(points).all(axis=-1), axis=-1)

    def offer(self, points: np.ndarray, codes: np.ndarray, monodromy: np.ndarray,
              iterations: int = 0) -> str:
        """Verify and store a candidate k-cycle ``points`` (k, latent) of region ``codes``.

        Returns one of "new", "duplicate", "inconsistent" (leaves its regions),
        "lower_order" (really a cycle of a divisor order), "diverged".
        """
        if not np.all(np.isfinite(points)):
            return "diverged"
        if not self.consistent(points, codes):
            return "inconsistent"
        k = points.shape[0]
        if alg.minimal_period(points, self.tol.dedup_atol, self.tol.dedup_rtol) < k:
            return "lower_order"
        known = self.cycles.setdefault(k, [])
        if self._is_known(points):
            return "duplicate"
        r = alg.canonical_rotation(codes, points)
        points, codes = np.roll(points, -r, axis=0), np.roll(codes, -r, axis=0)
        if codes.shape[-1]:
            margins = np.abs(self.affine.margins(points, codes)).min(axis=-1)
        else:
            margins = np.full(k, np.inf)
        q = alg.residual_q(self.system, points[0], k)
        known.append(Cycle(points, codes, alg.sorted_eigenvalues(monodromy), q, margins, iterations))
        self._stacked.pop(k, None)
        return "new"

    def _is_known(self, points: np.ndarray) -> bool:
        """Whether some stored cycle of this order matches ``points`` (k, latent) up to a cyclic
        shift, within ``dedup_atol + dedup_rtol * max(1, max|stored|)`` (vectorised over cycles)."""
        k = points.shape[0]
        if not self.cycles.get(k):
            return False
        if k not in self._stacked:
            pts = np.stack([c.points for c in self.cycles[k]])  # (cycle, k, latent)
            scale = self.tol.dedup_atol + self.tol.dedup_rtol * np.maximum(
                1.0, np.abs(pts).max(axis=(1, 2)))
            self._stacked[k] = (pts, scale)
        pts, scale = self._stacked[k]
        rolls = np.stack([np.roll(points, -r, axis=0) for r in range(k)])  # (shift, k, latent)
        dist = np.abs(rolls[None] - pts[:, None]).max(axis=(2, 3))  # (cycle, shift)
        return bool(np.any(dist.min(axis=1) <= scale))

    def sorted_cycles(self) -> list[Cycle]:
        """All cycles, by order, then by region-code sequence, then by coordinates."""
        out = []
        for k in sorted(self.cycles):
            out += sorted(self.cycles[k], key=lambda c: (c.codes.astype(np.uint8).tobytes(),
                                                         tuple(c.points.ravel())))
        return out
