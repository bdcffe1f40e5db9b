"""Dynamical systems reconstruction: how well a model fitted to a recording reproduces its dynamics.

Measures (Koppe et al. 2019; Mikhaeil et al. 2022; Hess et al. 2023): the state-space divergence
``D_stsp``, the power-spectrum distance ``D_H`` and the ``n``-step prediction error, with linear
(ARX) and mean baselines, gathered by :func:`evaluate_reconstruction`; :func:`lorenz63` simulates the
classic benchmark system.
"""

from neurodyn.analysis.reconstruction._baselines import LinearBaseline, fit_linear_baseline
from neurodyn.analysis.reconstruction._evaluate import ReconstructionResult, evaluate_reconstruction
from neurodyn.analysis.reconstruction._metrics import (
    normalized_power_spectrum,
    power_spectrum_distance,
    prediction_error,
    state_space_divergence,
    state_space_divergence_max,
)
from neurodyn.analysis.reconstruction.systems import LORENZ63_MAX_LYAPUNOV, lorenz63, lorenz63_fixed_points

__all__ = [
    "LORENZ63_MAX_LYAPUNOV", "LinearBaseline", "ReconstructionResult", "evaluate_reconstruction",
    "fit_linear_baseline", "lorenz63", "lorenz63_fixed_points", "normalized_power_spectrum",
    "power_spectrum_distance", "prediction_error", "state_space_divergence", "state_space_divergence_max",
]
