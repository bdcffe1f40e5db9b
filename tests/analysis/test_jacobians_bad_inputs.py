"""``jacobians`` refuses, in one line, a map whose Jacobians are not finite and a callable that does
not return (batch, state) tensors."""

from __future__ import annotations

import pytest
import torch

from neurodyn.analysis import jacobians
from neurodyn.models import LeakyRNN


def _nan_model():
    model = LeakyRNN(1, 4, 1, seed=0)
    model.w_rec.data.fill_(float("nan"))
    return model


def test_nan_model_parameters_raise_naming_diverged_training():
    with pytest.raises(ValueError, match=r"model parameters contain NaN or Inf \(training likely diverged"):
        jacobians(_nan_model(), torch.zeros(2, 4))
    with pytest.raises(ValueError, match="model parameters contain NaN"):
        jacobians(_nan_model().params(), torch.zeros(2, 4))


def test_callable_returning_nan_raises_naming_f():
    with pytest.raises(ValueError, match="Jacobians contain NaN or Inf at finite states: F returns NaN"):
        jacobians(lambda h, u: h * float("nan"), torch.zeros(2, 4))


@pytest.mark.parametrize("F, got", [(lambda h, u: h[:, :2], r"got shape \(2, 2\)"),
                                    (lambda h, u: h.numpy(), "got ndarray")], ids=["shape", "type"])
def test_callable_of_the_wrong_shape_or_type_is_refused(F, got):
    with pytest.raises(ValueError, match=r"F must return a tensor of shape \(batch, state_size\) = \(2, 4\).*"
                                         + got):
        jacobians(F, torch.zeros(2, 4))


def test_finite_maps_are_unchanged():
    model = LeakyRNN(1, 4, 1, seed=0)
    assert torch.isfinite(jacobians(model, torch.zeros(2, 4))).all()
    assert jacobians(lambda h, u: 0.5 * h ** 2, torch.ones(3, 2)).shape == (3, 2, 2)
