"""Analyses of trained or fitted networks."""

# Representational similarity (re-exported from neurodyn.analysis.similarity).
# Solution degeneracy across networks trained on one task (Huang et al. 2025).
from neurodyn.analysis.degeneracy import (  # noqa: F401
    DegeneracyResult,
    compare_to_references,
    compute_solution_degeneracy,
)

# Dynamical systems reconstruction measures (Koppe et al. 2019; Mikhaeil et al. 2022; Hess et al. 2023).
from neurodyn.analysis.dsr_metrics import (  # noqa: F401
    power_spectrum_distance,
    prediction_error,
    state_space_divergence,
)

# Fixed points, slow points and period-k cycles (Sussillo & Barak 2013).
from neurodyn.analysis.fixed_points import (  # noqa: F401
    FixedPointResult,
    find_fixed_points,
    load_fixed_points,
)

# Lyapunov spectra of any model by the QR method (Benettin et al. 1980).
from neurodyn.analysis.lyapunov import LyapunovResult, lyapunov_spectrum  # noqa: F401

# Exact fixed points and k-cycles of piecewise-linear RNNs (SCYFI, Eisenmann et al. 2023).
# Stable/unstable manifolds, basins and homoclinic points of PL models (Eisenmann et al. 2026).
from neurodyn.analysis.plrnn import (  # noqa: F401  # noqa: F401
    BasinResult,
    CycleResult,
    HomoclinicResult,
    ManifoldResult,
    compute_basins,
    find_attracting_cycles,
    find_cycles,
    find_homoclinic_points,
    find_manifolds,
)

# Dynamical similarity (Ostrow et al. 2023) and distance matrices over many networks.
from neurodyn.analysis.similarity import (  # noqa: F401  # noqa: F401
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
