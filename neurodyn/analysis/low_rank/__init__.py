"""Low-rank RNNs: which statistics of the per-neuron loadings the latent dynamics identify.

:func:`latent_map` is the exact latent map of a :class:`~neurodyn.models.LowRankRNN` at finite N,
:func:`compute_low_rank_statistics` the identifiable loading statistics (and the unconstrained
part), :func:`mean_field_latent_map` the large-N map those statistics alone predict.
"""

from neurodyn.analysis.low_rank._latent import latent_map, mean_field_latent_map
from neurodyn.analysis.low_rank._statistics import compute_low_rank_statistics

__all__ = ["compute_low_rank_statistics", "latent_map", "mean_field_latent_map"]
