"""Exact analyses of piecewise-linear RNNs (PLRNN, shallow PLRNN, ALRNN)."""

from neurodyn.analysis.plrnn.cycle_result import CycleResult
from neurodyn.analysis.plrnn.cycles import find_cycles
from neurodyn.analysis.plrnn.regions import enumerate_regions

__all__ = ["CycleResult", "enumerate_regions", "find_cycles"]
