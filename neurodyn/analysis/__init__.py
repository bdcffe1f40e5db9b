"""Analyses of trained or fitted networks.

Sub-packages by domain: :mod:`~neurodyn.analysis.fixed_points` (fixed points, slow points and
k-cycles of any model), :mod:`~neurodyn.analysis.plrnn` (exact analyses of piecewise-linear RNNs),
:mod:`~neurodyn.analysis.lyapunov` (Lyapunov spectra), :mod:`~neurodyn.analysis.similarity`
(representational and dynamical similarity), :mod:`~neurodyn.analysis.reconstruction` (scores of
models fitted to recordings), :mod:`~neurodyn.analysis.degeneracy` (solution degeneracy),
:mod:`~neurodyn.analysis.decoding` (decodability of task variables),
:mod:`~neurodyn.analysis.hmm_mechanism` (how a noise-driven network emulates an HMM) and
:mod:`~neurodyn.analysis.low_rank` (identifiable statistics of low-rank networks).
Every public name is re-exported here.
"""

from neurodyn.analysis.decoding import compute_decodability, compute_decodability_over_time
from neurodyn.analysis.degeneracy import (
    DegeneracyFeatures,
    DegeneracyResult,
    compare_to_references,
    compute_solution_degeneracy,
    degeneracy_features,
)
from neurodyn.analysis.fixed_points import (
    FixedPointResult,
    compute_stability,
    compute_topology_classes,
    find_fixed_points,
    fixed_point_graph,
    load_fixed_points,
)
from neurodyn.analysis.hmm_mechanism import (
    compute_hmm_mechanism,
    compute_noise_free_collapse,
    compute_orbit,
    compute_speeds,
    compute_transition_triggered_average,
)
from neurodyn.analysis.jacobians import jacobians
from neurodyn.analysis.low_rank import (
    MaxEntLoadings,
    compute_loading_structure,
    compute_low_rank_statistics,
    fit_maxent_loadings,
    latent_map,
    mean_field_latent_map,
)
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
    PreparedActivity,
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
    prepare_activity,
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
    "FixedPointResult", "compute_stability", "compute_topology_classes", "find_fixed_points",
    "fixed_point_graph", "load_fixed_points", "LyapunovResult", "lyapunov_spectrum",
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
    "soft_matching_distance", "svcca", "weight_distance", "PreparedActivity", "prepare_activity",
    "DegeneracyFeatures", "DegeneracyResult", "compare_to_references", "compute_solution_degeneracy",
    "degeneracy_features", "compute_decodability", "compute_decodability_over_time",
    # mechanism of HMM emulation (Torre et al. 2025)
    "compute_hmm_mechanism", "compute_noise_free_collapse", "compute_orbit", "compute_speeds",
    "compute_transition_triggered_average",
    # low-rank RNNs: identifiable loading statistics
    "MaxEntLoadings", "compute_loading_structure", "compute_low_rank_statistics", "fit_maxent_loadings",
    "latent_map", "mean_field_latent_map",
]
