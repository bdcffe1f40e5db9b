"""Analyses of trained or fitted networks.

Sub-packages by domain: :mod:`~neurodyn.analysis.fixed_points` (fixed points, slow points and
k-cycles of any model), :mod:`~neurodyn.analysis.plrnn` (exact analyses of piecewise-linear RNNs),
:mod:`~neurodyn.analysis.lyapunov` (Lyapunov spectra), :mod:`~neurodyn.analysis.similarity`
(representational and dynamical similarity), :mod:`~neurodyn.analysis.reconstruction` (scores of
models fitted to recordings), and :mod:`~neurodyn.analysis.degeneracy` (solution degeneracy).
Every public name is re-exported here.
"""

from neurodyn.analysis.degeneracy import DegeneracyResult, compare_to_references, compute_solution_degeneracy
from neurodyn.analysis.fixed_points import (
    FixedPointResult,
    compute_topology_classes,
    find_fixed_points,
    fixed_point_graph,
    load_fixed_points,
)
from neurodyn.analysis.jacobians import jacobians
from neurodyn.analysis.lyapunov import LyapunovResult, lyapunov_spectrum
from neurodyn.analysis.plrnn import (
    BasinResult,
    CycleResult,
    HomoclinicResult,
    ManifoldResult,
    compute_basins,
    compute_boundary_agreement,
    find_attracting_cycles,
    find_cycles,
    find_homoclinic_points,
    find_manifolds,
)
from neurodyn.analysis.reconstruction import (
    LinearBaseline,
    ReconstructionResult,
    evaluate_reconstruction,
    fit_linear_baseline,
    power_spectrum_distance,
    prediction_error,
    state_space_divergence,
    state_space_divergence_max,
)
from neurodyn.analysis.similarity import (
    LinearPredictivity,
    PermutationMetric,
    PredictivityResult,
    ProcrustesMetric,
    canonical_correlations,
    cca_similarity,
    cka,
    compare_rdms,
    dsa_distance,
    embed_distances,
    fit_havok,
    linear_predictivity,
    match_recurrent_units,
    operator_distance,
    pairwise_distances,
    permutation_distance,
    procrustes_distance,
    pwcca,
    rbf_bandwidth,
    rdm,
    soft_matching_distance,
    svcca,
    weight_distance,
)

__all__ = [
    "jacobians",
    # fixed points, Lyapunov spectra, exact PLRNN analyses
    "FixedPointResult", "compute_topology_classes", "find_fixed_points", "fixed_point_graph",
    "load_fixed_points", "LyapunovResult", "lyapunov_spectrum",
    "BasinResult", "CycleResult", "HomoclinicResult", "ManifoldResult", "compute_basins",
    "compute_boundary_agreement",
    "find_attracting_cycles", "find_cycles", "find_homoclinic_points", "find_manifolds",
    # reconstruction of recordings
    "LinearBaseline", "ReconstructionResult", "evaluate_reconstruction", "fit_linear_baseline",
    "power_spectrum_distance", "prediction_error", "state_space_divergence", "state_space_divergence_max",
    # similarity and degeneracy
    "LinearPredictivity", "PermutationMetric", "PredictivityResult", "ProcrustesMetric",
    "canonical_correlations", "cca_similarity", "cka", "compare_rdms", "dsa_distance", "embed_distances",
    "fit_havok", "linear_predictivity", "match_recurrent_units", "operator_distance", "pairwise_distances",
    "permutation_distance", "procrustes_distance", "pwcca", "rbf_bandwidth", "rdm",
    "soft_matching_distance", "svcca", "weight_distance",
    "DegeneracyResult", "compare_to_references", "compute_solution_degeneracy",
]
