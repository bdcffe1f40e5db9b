"""Regularisers: closed-form values and their specifications checked."""

import pytest
import torch

from neurodyn.models import LeakyRNN
from neurodyn.training import RatePenalty, WeightPenalty, l1_rate, l2_weight
from neurodyn.training.regularizers import make_regularizers


def test_values_match_their_closed_forms():
    params = LeakyRNN(1, 4, 1, seed=0).params()
    matrices = [params.w_in, params.w_rec, params.w_out]
    expected = sum(w.pow(2).mean() for w in matrices)
    assert torch.isclose(l2_weight(0.5)(params, torch.zeros(1, 1, 4)), 0.5 * expected)
    states = torch.tensor([[[1.0, -3.0]]])
    assert l1_rate(2.0)(None, states).item() == 4.0  # 2 * mean(1, 3)
    assert RatePenalty(1.0, p=2)(None, states).item() == 5.0  # mean(1, 9)


def test_one_weight_name_as_a_string_is_one_name():
    # "w_rec" was taken letter by letter: "params have no tensor ['w', '_', 'r', 'e', 'c']"
    params = LeakyRNN(1, 4, 1, seed=0).params()
    penalty = WeightPenalty(1.0, weights="w_rec")
    assert penalty.weights == ("w_rec",)
    assert torch.isclose(penalty(params, torch.zeros(1, 1, 4)), params.w_rec.pow(2).mean())
    assert l2_weight(1.0, weights="w_rec") == penalty


@pytest.mark.parametrize("strength", ["a", None, [1.0]])
def test_non_number_strength_is_refused_in_one_line(strength):
    with pytest.raises(ValueError, match=r"^l2_rate strength must be finite and >= 0, got "):
        make_regularizers({"l2_rate": strength})
