"""Exact analyses of piecewise-linear RNNs (PLRNN, shallow PLRNN, ALRNN)."""

from neurodyn.analysis.plrnn.basins import (
    DIVERGED,
    UNDECIDED,
    BasinResult,
    basin_boundary,
    compute_basins,
)
from neurodyn.analysis.plrnn.boundary_check import compute_boundary_agreement
from neurodyn.analysis.plrnn.cycle_result import CycleResult
from neurodyn.analysis.plrnn.cycles import find_cycles
from neurodyn.analysis.plrnn.homoclinic import HomoclinicResult, find_homoclinic_points
from neurodyn.analysis.plrnn.manifold_result import ManifoldPiece, ManifoldResult, Saddle
from neurodyn.analysis.plrnn.manifolds import find_manifolds
from neurodyn.analysis.plrnn.orbit_cycles import find_attracting_cycles
from neurodyn.analysis.plrnn.regions import enumerate_regions

__all__ = ["CycleResult", "enumerate_regions", "find_attracting_cycles", "find_cycles"]
__all__ += [
    "DIVERGED", "UNDECIDED", "BasinResult", "HomoclinicResult", "ManifoldPiece", "ManifoldResult",
    "Saddle", "basin_boundary", "compute_basins", "compute_boundary_agreement", "find_homoclinic_points",
    "find_manifolds",
]
