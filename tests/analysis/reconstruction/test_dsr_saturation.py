"""Saturation of the binned state-space divergence: its range, with oracles.

``D_stsp(x, x) = 0``; a generated series that misses every cell the data visit scores the value
``state_space_divergence_max`` gives, whatever it does elsewhere, and nothing scores more. The
leading-order form ``log(n_gen / s) - H`` is checked against an entropy from ``np.histogramdd``.
"""

import numpy as np
import pytest

from neurodyn.analysis.reconstruction import (
    evaluate_reconstruction,
    fit_linear_baseline,
    state_space_divergence,
    state_space_divergence_max,
)
from neurodyn.models import PLRNN


def _data(seed, n_dim, n=1500):
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 60, n)
    ring = np.stack([np.cos(t + k) for k in range(n_dim)], axis=1)  # a closed orbit: its mean is off it
    return ring + 0.05 * rng.standard_normal((n, n_dim))


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("n_dim,n_bins", [(1, 30), (2, 20), (3, 10)])
def test_self_is_zero_and_collapsed_runs_hit_the_maximum(seed, n_dim, n_bins):
    x = _data(seed, n_dim)
    d_max = state_space_divergence_max(x, 800, n_bins=n_bins)
    assert state_space_divergence(x, x, n_bins=n_bins) == pytest.approx(0.0, abs=1e-12)
    # collapses: far outside the box on either side, and (n_dim > 1) to the mean, inside the box in
    # the orbit's hole
    runs = [np.full((800, n_dim), 40.0), np.full((800, n_dim), -40.0)]
    if n_dim > 1:
        runs.append(np.repeat(x.mean(0, keepdims=True), 800, axis=0))
    for y in runs:
        assert state_space_divergence(x, y, n_bins=n_bins) == pytest.approx(d_max, rel=1e-12)


def test_maximum_bounds_every_series():
    x = _data(2, 2)
    d_max = state_space_divergence_max(x, 500, n_bins=15)
    rng = np.random.default_rng(3)
    scores = [state_space_divergence(x, s * rng.standard_normal((500, 2)) + o, n_bins=15)
              for s in (0.01, 0.3, 1.0, 5.0) for o in (0.0, 0.5, 3.0)]
    assert max(scores) <= d_max + 1e-9
    assert min(scores) < d_max - 1.0  # series that overlap the data score well below it


def test_maximum_is_log_n_over_s_minus_the_occupation_entropy():
    x, n_bins, s = _data(4, 2), 20, 1e-5
    sd = x.std(0)
    lo, hi = x.min(0) - 0.1 * sd, x.max(0) + 0.1 * sd
    edges = [np.linspace(lo[i], hi[i], n_bins + 1) for i in range(2)]
    counts, _ = np.histogramdd(x, bins=edges)
    p = counts[counts > 0] / len(x)
    entropy = -np.sum(p * np.log(p))
    d_max = state_space_divergence_max(x, 1000, n_bins=n_bins, smoothing=s)
    assert d_max == pytest.approx(np.log(1000 / s) - entropy, abs=5e-3)


def test_linear_and_mean_baselines_that_collapse_score_the_same():
    # points on a ring in random order: the VAR(1) fit decays to the mean, in the ring's hole, so
    # both baselines miss every cell of the data (as the ECG baselines did)
    rng = np.random.default_rng(5)
    t = rng.uniform(0, 2 * np.pi, 1200)
    x = np.c_[np.cos(t), np.sin(t)] + 0.05 * rng.standard_normal((1200, 2))
    assert np.max(np.abs(np.linalg.eigvals(fit_linear_baseline(x[:800]).A))) < 0.2
    model = PLRNN.from_arrays(A=[0.0, 0.0], W=np.zeros((2, 2)), h=np.zeros(2))
    res = evaluate_reconstruction(model, x[:800], x[800:], observation="identity", n_transient=200,
                                  pe_steps=1, n_bins=10)
    d_max = res.settings["d_stsp_max"]
    assert res.d_stsp[1] == pytest.approx(d_max) and res.d_stsp[2] == pytest.approx(d_max)
    assert "saturates at" in res.summary()


@pytest.mark.parametrize("bad", [{"n_gen": 1}, {"n_gen": 10, "smoothing": 0.0}, {"n_gen": 10, "n_bins": 0}])
def test_maximum_bad_inputs(bad):
    with pytest.raises(ValueError, match="n_gen|smoothing|n_bins"):
        state_space_divergence_max(np.random.default_rng(0).normal(size=(50, 2)), **bad)
