"""The binned D_stsp warns when its cells cannot resolve the data; D_H flags a collapsed (constant) run."""

import warnings

import numpy as np
import pytest

from neurodyn.analysis.reconstruction import (
    evaluate_reconstruction,
    power_spectrum_distance,
    state_space_divergence,
    state_space_divergence_max,
)
from neurodyn.analysis.reconstruction._examples import rotation


def _far_apart():
    rng, rng2 = np.random.default_rng(0), np.random.default_rng(1)
    return rng.standard_normal((500, 10)), 0.01 * rng2.standard_normal((500, 10)) + 5


def test_binned_dstsp_warns_when_pseudo_counts_swamp_the_points():
    x, y = _far_apart()
    with pytest.warns(UserWarning, match="method='gmm'") as rec:
        d = state_space_divergence(x, y, n_bins=20)
    assert d < 0.01 and len(rec) == 1 and "\n" not in str(rec[0].message)
    with pytest.warns(UserWarning, match="method='gmm'"):
        state_space_divergence_max(x, 500, n_bins=20)


def test_binned_dstsp_is_quiet_when_the_cells_resolve_the_data():
    x = np.random.default_rng(0).standard_normal((2000, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert state_space_divergence(x, x + 3.0, n_bins=10) > 1.0
        state_space_divergence_max(x, 2000, n_bins=10)
        state_space_divergence(*_far_apart(), method="gmm", n_samples=50)


@pytest.mark.parametrize("noise", [0.0, 1e-16, 6e-9])  # 6e-9: float32 rounding of a fixed point
def test_dh_of_a_collapsed_run_is_the_fixed_value_with_a_warning(noise):
    t = np.arange(1000)
    x = np.sin(0.3 * t)[:, None]
    y = 0.3 + noise * np.random.default_rng(0).standard_normal((1000, 1))
    with pytest.warns(UserWarning, match="constant up to rounding"):
        assert power_spectrum_distance(x, y) == 1.0


def test_dh_of_a_small_but_real_oscillation_is_scored():
    t = np.arange(1000)
    x = np.sin(0.3 * t)[:, None]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert power_spectrum_distance(x, 1e-4 * np.sin(0.3 * t)[:, None] + 1.0) < 0.02


def test_evaluate_marks_constant_runs_collapsed():
    model, x = rotation()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = evaluate_reconstruction(model, x[:200], x[200:], observation="identity", n_transient=50,
                                         pe_steps=1, n_bins=10)
    assert result.status == ("ok", "ok", "collapsed") and result.d_h[2] == 1.0
