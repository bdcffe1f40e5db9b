"""``compute_stability`` and ``find_fixed_points``: one-line errors for NaN weights, a map returning
NaN, malformed settings, ragged initial states and non-numeric inputs."""

from __future__ import annotations

import warnings

import pytest
import torch

from neurodyn.analysis import compute_stability, find_fixed_points
from neurodyn.analysis.fixed_points import _find
from neurodyn.models import LeakyRNN


def _nan_model():
    model = LeakyRNN(1, 4, 1, seed=0)
    model.w_rec.data.fill_(float("nan"))
    return model


def test_compute_stability_of_nan_weights_raises_not_linalg_error():
    with pytest.raises(ValueError, match="model parameters contain NaN or Inf"):
        compute_stability(_nan_model(), torch.zeros(2, 4))
    with pytest.raises(ValueError, match="F returns NaN"):
        compute_stability(lambda h, u: h * float("nan"), torch.zeros(2, 4))


def test_compute_stability_refuses_a_callable_of_the_wrong_shape():
    with pytest.raises(ValueError, match=r"F must return a tensor of shape .* got shape \(2, 2\)"):
        compute_stability(lambda h, u: h[:, :2], torch.zeros(2, 4))


@pytest.mark.parametrize("kwargs, match", [
    (dict(max_memory=float("nan")), "max_memory must be a finite number > 0, got nan"),
    (dict(max_memory=-5), "max_memory must be a finite number > 0, got -5"),
    (dict(max_memory=0), "max_memory must be a finite number > 0, got 0"),
    (dict(marginal_tol=float("inf")), "marginal_tol must be a finite number >= 0, got inf"),
    (dict(marginal_tol="0.1"), "marginal_tol must be a finite number >= 0, got '0.1'"),
])
def test_compute_stability_checks_its_settings(kwargs, match):
    with pytest.raises(ValueError, match=match):
        compute_stability(LeakyRNN(1, 4, 1, seed=0), torch.zeros(2, 4), **kwargs)


def test_find_fixed_points_names_the_nan_parameter():
    with pytest.raises(ValueError, match="model parameter w_rec contains NaN or Inf; training likely "
                                         "diverged"):
        find_fixed_points(_nan_model(), n_inits=8)


def test_find_fixed_points_of_a_callable_returning_nan_raises():
    with pytest.raises(ValueError, match=r"the map F\(h, u\*\) gives NaN or Inf at all 8 initial states"):
        find_fixed_points(lambda h, u: h * float("nan"), state_size=4, n_inits=8)
    with pytest.raises(ValueError, match="at all 2 initial states \\(from initial_states\\)"):
        find_fixed_points(lambda h, u: h * float("nan"), state_size=1, initial_states=[[0.5], [1.0]])


def test_find_fixed_points_warns_when_every_candidate_ends_non_finite(monkeypatch):
    class Found:  # what a search returns when every candidate ran off to NaN
        def __init__(self, x0):
            n = x0.shape[0]
            self.states = torch.full_like(x0, float("nan"))
            self.q = torch.full((n,), float("nan"), dtype=x0.dtype)
            self.converged = torch.zeros(n, dtype=torch.bool)
            self.stalled = torch.zeros(n, dtype=torch.bool)
            self.iterations = torch.zeros(n, dtype=torch.int64)

    monkeypatch.setitem(_find.METHODS, "gradient", lambda G, x0, settings, progress=False: Found(x0))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = find_fixed_points(lambda h, u: 0.5 * h, state_size=1, initial_states=[[0.5], [1.0]],
                                   method="gradient")
    assert len(result.states) == 0
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert any("all 2 candidates of period 1 ended at NaN or Inf and were dropped" in m for m in messages)


def test_find_fixed_points_refuses_ragged_initial_states_and_string_inputs():
    model = LeakyRNN(1, 4, 1, seed=0)
    with pytest.raises(ValueError, match=r"initial_states must be a rectangular array \(n, 4\).*different "
                                         "lengths"):
        find_fixed_points(model, initial_states=[[0, 1, 2, 3], [1, 2]])
    with pytest.raises(ValueError, match="inputs must be numbers: .* got 'a'"):
        find_fixed_points(model, inputs="a")
