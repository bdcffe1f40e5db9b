"""Figures from result objects (matplotlib is imported inside each function)."""

from neurodyn.plotting._style import condition_title, label_panels
from neurodyn.plotting.behaviour import plot_response_errors
from neurodyn.plotting.fixed_point_figure import plot_fixed_point_figure
from neurodyn.plotting.fixed_points import plot_eigenvalues, plot_fixed_points
from neurodyn.plotting.phase_portrait import plot_phase_portrait
from neurodyn.plotting.reconstruction import plot_reconstruction
from neurodyn.plotting.similarity import (
    plot_distance_matrix,
    plot_embedding,
    plot_solution_degeneracy,
)
from neurodyn.plotting.tasks import plot_outputs, plot_psychometric

__all__ = [
    "condition_title", "label_panels", "plot_distance_matrix", "plot_eigenvalues", "plot_embedding",
    "plot_fixed_point_figure", "plot_fixed_points", "plot_outputs", "plot_phase_portrait",
    "plot_psychometric", "plot_reconstruction", "plot_response_errors", "plot_solution_degeneracy",
]
