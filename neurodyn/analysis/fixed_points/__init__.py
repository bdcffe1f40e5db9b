"""Fixed points, slow points and period-k cycles of any recurrent model (Sussillo & Barak 2013).

``find_fixed_points`` is the entry point; the search, the merging of candidates, the stability
analysis and the result type live in private modules re-exported here.
"""

from neurodyn.analysis.fixed_points._find import find_fixed_points
from neurodyn.analysis.fixed_points._graph import compute_topology_classes, fixed_point_graph
from neurodyn.analysis.fixed_points._local import compute_stability
from neurodyn.analysis.fixed_points._result import FixedPointResult, load_fixed_points

__all__ = ["FixedPointResult", "compute_stability", "compute_topology_classes", "find_fixed_points",
           "fixed_point_graph", "load_fixed_points"]
