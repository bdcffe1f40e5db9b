"""Representational similarity: shape metrics, CCA, CKA, RSA, predictivity and weight distances.

All measures take paired ``(sample, unit)`` NumPy arrays, torch tensors or ``xarray.DataArray`` (put in
that order by their dim names, see ``docs/similarity.md``), compute in float64 NumPy and
return a plain ``float`` whose conventions are fixed by keyword arguments (see ``docs/similarity.md``);
``rdm`` returns a matrix and ``linear_predictivity`` a frozen result object.
"""

from neurodyn.analysis.similarity._cca import canonical_correlations, cca_similarity, pwcca, svcca
from neurodyn.analysis.similarity._cka import cka, rbf_bandwidth
from neurodyn.analysis.similarity._compare_rdms import compare_rdms
from neurodyn.analysis.similarity._havok import HavokFit, delay_embed, fit_havok
from neurodyn.analysis.similarity._permutation import (
    PermutationMetric,
    permutation_distance,
    soft_matching_distance,
)
from neurodyn.analysis.similarity._predictivity import (
    LinearPredictivity,
    PredictivityResult,
    linear_predictivity,
)
from neurodyn.analysis.similarity._procrustes import ProcrustesMetric, partial_whitening, procrustes_distance
from neurodyn.analysis.similarity._rdm import rdm
from neurodyn.analysis.similarity._weights import match_recurrent_units, weight_distance
from neurodyn.analysis.similarity.dsa import dsa_distance, eigenvalue_wasserstein, operator_distance
from neurodyn.analysis.similarity.pairwise import (
    PreparedActivity,
    embed_distances,
    pairwise_distances,
    prepare_activity,
)

__all__ = [
    "LinearPredictivity",
    "PermutationMetric",
    "PredictivityResult",
    "ProcrustesMetric",
    "canonical_correlations",
    "cca_similarity",
    "cka",
    "compare_rdms",
    "linear_predictivity",
    "match_recurrent_units",
    "partial_whitening",
    "permutation_distance",
    "procrustes_distance",
    "pwcca",
    "rbf_bandwidth",
    "rdm",
    "soft_matching_distance",
    "svcca",
    "weight_distance",
    "HavokFit", "delay_embed", "dsa_distance", "eigenvalue_wasserstein", "embed_distances", "fit_havok",
    "operator_distance", "pairwise_distances", "PreparedActivity", "prepare_activity",
]
