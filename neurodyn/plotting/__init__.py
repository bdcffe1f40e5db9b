"""Figures from result objects (matplotlib is imported inside each function)."""

from neurodyn.plotting.fixed_points import plot_eigenvalues, plot_fixed_points
from neurodyn.plotting.phase_portrait import plot_phase_portrait
from neurodyn.plotting.similarity import plot_distance_matrix, plot_embedding, plot_solution_degeneracy

__all__ = [
    "plot_distance_matrix", "plot_eigenvalues", "plot_embedding", "plot_fixed_points", "plot_phase_portrait",
    "plot_solution_degeneracy",
]
