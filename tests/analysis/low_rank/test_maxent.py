"""Maximum-entropy loadings: more entropy than the plain fit at equal dynamics error; failures reported."""

import math

import numpy as np
import pytest
import torch

from neurodyn.analysis.low_rank import fit_maxent_loadings, latent_map
from neurodyn.analysis.low_rank._maxent import dynamics_error, latent_points
from neurodyn.analysis.low_rank._structure import _standard_moment
from neurodyn.models import LowRankRNN
from neurodyn.training import fit_flow_matching

SMALL = {"n_epochs": 30, "hidden": 32, "n_steps": 12}


def _plain(n_units=300, seed=0):
    """A 'plain fit' with spurious structure: n = 2 m + 0.8 (m^2 - 1). The even part is invisible to
    the odd tanh dynamics (it averages out), yet it ties n to m deterministically."""
    g = torch.Generator().manual_seed(seed)
    m = torch.randn(n_units, 1, generator=g, dtype=torch.float64)
    rows = torch.cat([m, 2.0 * m + 0.8 * (m ** 2 - 1), torch.zeros(n_units, 1, dtype=torch.float64)], 1)
    return LowRankRNN.from_loadings(rows, rank=1, alpha=0.5).double()


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:the flow did not converge")
def test_maxent_has_more_entropy_than_the_plain_fit_at_equal_dynamics_error():
    plain = _plain()
    points = latent_points(plain, seed=0)
    reference = latent_map(plain, points)
    # the plain fit's empirical loading distribution, smoothed by the same flow class: (m, n) jointly
    rows = plain.loadings().double()
    plain_flow = fit_flow_matching(rows[:, :2], seed=0, **SMALL)
    errors = []
    for k in range(16):
        draw = plain_flow.sample(300, seed=k)
        net = LowRankRNN.from_loadings(torch.cat([draw, torch.zeros(300, 1, dtype=torch.float64)], 1),
                                       rank=1, alpha=0.5).double()
        errors.append(dynamics_error(net, reference, points) ** 2)
    e_plain, h_plain = math.sqrt(np.mean(errors)), plain_flow.entropy(1000, seed=1)
    fit = fit_maxent_loadings(plain, tolerance=e_plain, points=points, n_check=16, seed=0, **SMALL)
    assert fit.status == "completed"
    fresh = [dynamics_error(fit.sample_network(seed=100 + k), reference, points) ** 2 for k in range(16)]
    assert math.sqrt(np.mean(fresh)) <= 1.3 * e_plain  # equal error, up to Monte Carlo (16 networks)
    assert fit.entropy >= h_plain + 0.5
    # and above the Gaussian bound on any (m, n) law with the plain fit's residual covariance
    m, n = rows[:, 0].numpy(), rows[:, 1].numpy()
    res = n - np.polyval(np.polyfit(m, n, 1), m)
    assert fit.entropy >= fit.flow.entropy(1000, seed=1) + 0.5 * math.log(2 * math.pi * math.e * res.var())


@pytest.mark.filterwarnings("ignore:the flow did not converge")
def test_sampled_networks_are_low_rank_and_reproducible():
    fit = fit_maxent_loadings(_plain(60), tolerance=0.5, seed=0, n_check=4, n_epochs=2, hidden=8,
                              n_steps=4)
    a, b = fit.sample_network(seed=3), fit.sample_network(seed=3)
    assert isinstance(a, LowRankRNN) and a.n_units == 60 and torch.equal(a.connectivity(), b.connectivity())
    assert not torch.equal(a.connectivity(), fit.sample_network(seed=4).connectivity())
    assert fit.sample_network(20, seed=0).n_units == 20
    assert torch.all(a.loadings()[:, 2] == 0)  # the constant bias column is kept


@pytest.mark.filterwarnings("ignore:the flow did not converge")
def test_a_tolerance_below_the_flow_error_is_reported():
    with pytest.warns(RuntimeWarning, match="tolerance .* is below the error"):
        fit = fit_maxent_loadings(_plain(60), tolerance=1e-9, seed=0, n_check=4, n_epochs=2, hidden=8,
                                  n_steps=4)
    assert fit.status in ("tolerance_too_tight", "not_converged") and np.all(fit.residual_scale == 0)


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="points must have shape"):
        fit_maxent_loadings(_plain(60), points=np.zeros((5, 2)))
    with pytest.raises(ValueError, match="tolerance must be > 0"):
        fit_maxent_loadings(_plain(60), tolerance=0.0)
    with pytest.raises(ValueError, match="random_gain"):
        fit_maxent_loadings(LowRankRNN(0, 20, 0, rank=1, random_gain=1.0))
    with pytest.raises(ValueError, match="at least 2 \\* dim \\+ 2"):
        fit_maxent_loadings(LowRankRNN(0, 3, 0, rank=1))


@pytest.mark.slow
def test_heavy_tailed_loadings_are_recovered():
    """Rank-1 bistable truth, m ~ Student t (5 dof, unit variance), n = 2.2 m + 0.5 noise, N = 300:
    the law's m keeps the training sample's excess kurtosis within 30 % (seeds 0-2 at 600 flow
    epochs: 0.92 / 1.14, 3.56 / 3.82, 1.85 / 2.26, at most 19 % off), far above a Gaussian's 0."""
    n_units, rng = 300, np.random.default_rng(0)
    m = rng.standard_t(5, (n_units, 1)) / math.sqrt(5 / 3)
    rows = np.c_[m, 2.2 * m + 0.5 * rng.standard_normal((n_units, 1)), np.zeros(n_units)]
    truth = LowRankRNN.from_loadings(rows, rank=1, alpha=0.2).double()
    fit = fit_maxent_loadings(truth, n_check=4, n_epochs=600, seed=0)
    assert fit.status == "completed"
    target = float(_standard_moment(m, 4)[0]) - 3.0
    kurtosis = float(_standard_moment(fit.sample_loadings(20000, seed=7)[:, :1].numpy(), 4)[0]) - 3.0
    assert target > 1.0 and abs(kurtosis - target) <= 0.3 * target
