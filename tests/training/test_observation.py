"""Observation models: the Poisson likelihood against scipy, and bad settings refused."""

import math

import numpy as np
import pytest
import torch
from scipy import stats

from neurodyn.training import observation as obs


def test_poisson_loss_is_the_mean_negative_log_likelihood_without_log_factorial():
    rate = torch.tensor([[0.5, 2.0, 3.0]], dtype=torch.float64)
    x = torch.tensor([[0.0, 1.0, 4.0]], dtype=torch.float64)
    nll = -stats.poisson.logpmf(x.numpy(), rate.numpy()) - np.array([math.lgamma(v + 1) for v in x[0]])
    assert obs.observation_loss(rate, x, "poisson").item() == pytest.approx(nll.mean(), abs=1e-5)
    assert obs.observation_loss(rate, rate, "affine").item() == 0.0


def test_unknown_observation_is_refused_by_the_loss():
    # "gaussian" silently fell back to the MSE
    with pytest.raises(ValueError, match="unknown observation model 'gaussian'"):
        obs.observation_loss(torch.zeros(2, 3), torch.zeros(2, 3), "gaussian")


@pytest.mark.parametrize("value", [np.inf, -np.inf, np.nan])
def test_counts_must_be_finite(value):
    # inf equals its own rounding, so it passed as an integer count
    with pytest.raises(ValueError, match="Poisson counts contains NaN or Inf"):
        obs.check_counts(np.array([1.0, value]))


@pytest.mark.parametrize("ridge", [-1.0, float("nan"), float("inf")])
def test_bad_ridge_is_refused(ridge):
    # a negative or NaN ridge fell through to the plain pseudo-inverse without a word
    with pytest.raises(ValueError, match="ridge must be a finite number >= 0"):
        obs.readout_pinv(torch.eye(2), ridge=ridge)
    with pytest.raises(ValueError, match="ridge must be a finite number >= 0"):
        obs.invert(torch.eye(2), torch.zeros(2), torch.ones(1, 2), ridge=ridge)
