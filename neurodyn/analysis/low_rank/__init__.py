"""Low-rank RNNs: which statistics of the per-neuron loadings the latent dynamics identify.

:func:`latent_map` is the exact latent map of a :class:`~neurodyn.models.LowRankRNN` at finite N,
:func:`compute_low_rank_statistics` the identifiable loading statistics (and the unconstrained
part), :func:`compute_loading_structure` the loading correlations a reference does not have,
:func:`mean_field_latent_map` the large-N map those statistics alone predict, and
:func:`fit_maxent_loadings` the maximum-entropy loading distribution that keeps the dynamics, with
:func:`latent_points` (where it compares dynamics) and :func:`dynamics_error` (how) to measure any
other network the same way.
"""

from neurodyn.analysis.low_rank._latent import latent_map, mean_field_latent_map
from neurodyn.analysis.low_rank._maxent import (
    MaxEntLoadings,
    dynamics_error,
    fit_maxent_loadings,
    latent_points,
)
from neurodyn.analysis.low_rank._statistics import compute_low_rank_statistics
from neurodyn.analysis.low_rank._structure import compute_loading_structure

__all__ = ["MaxEntLoadings", "compute_loading_structure", "compute_low_rank_statistics",
           "dynamics_error", "fit_maxent_loadings", "latent_map", "latent_points",
           "mean_field_latent_map"]
