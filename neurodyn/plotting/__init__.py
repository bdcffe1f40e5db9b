"""Figures from result objects (matplotlib is imported inside each function)."""

from neurodyn.plotting.fixed_points import plot_eigenvalues, plot_fixed_points  # noqa: F401
from neurodyn.plotting.phase_portrait import plot_phase_portrait  # noqa: F401
from neurodyn.plotting.similarity import (  # noqa: F401
    plot_distance_matrix,
    plot_embedding,
    plot_solution_degeneracy,
)
