"""Masked losses: closed-form values, masked steps that never count (NaN or -1 labels), shapes checked."""

import math

import pytest
import torch

from neurodyn.training import masked_cross_entropy, masked_mse
from neurodyn.training.losses import masked_soft_cross_entropy


def test_identical_prediction_and_target_cost_nothing():
    x = torch.randn(2, 3, 2, generator=torch.Generator().manual_seed(0))
    assert masked_mse(x, x, torch.ones(2, 3, 1)).item() == 0.0
    assert masked_cross_entropy(torch.tensor([[[50.0, 0.0, 0.0]]]), torch.zeros(1, 1, 1),
                                torch.ones(1, 1, 1)).item() == pytest.approx(0.0, abs=1e-12)


def test_nan_target_at_a_masked_step_does_not_count():
    # 0 * NaN is NaN: one NaN target behind the mask made the whole loss (and training) NaN
    outputs = torch.ones(1, 3, 1, requires_grad=True)
    targets = torch.tensor([0.0, float("nan"), 0.0]).reshape(1, 3, 1)
    mask = torch.tensor([1.0, 0.0, 1.0]).reshape(1, 3, 1)
    loss = masked_mse(outputs, targets, mask)
    loss.backward()
    assert loss.item() == 1.0
    assert outputs.grad.tolist() == [[[1.0], [0.0], [1.0]]]  # d/do of mean (o - 0)^2 over 2 steps


def test_any_label_at_a_masked_step_does_not_count():
    logits = torch.zeros(1, 2, 4)
    targets = torch.tensor([[[-1.0], [2.0]]])  # -1 marks "no label" at the masked first step
    loss = masked_cross_entropy(logits, targets, torch.tensor([[[0.0], [1.0]]]))
    assert loss.item() == pytest.approx(math.log(4))


@pytest.mark.parametrize("targets, mask", [
    (torch.zeros(2, 3, 3), torch.ones(2, 3, 1)),  # a torch broadcasting error before
    (torch.zeros(2, 3, 2), torch.ones(2, 4, 1)),
])
def test_mse_refuses_mismatched_shapes(targets, mask):
    with pytest.raises(ValueError, match=r"masked_mse: outputs \(2, 3, 2\) must be \(trial, time, output\)"):
        masked_mse(torch.zeros(2, 3, 2), targets, mask)


def test_cross_entropy_refuses_one_hot_targets_and_names_the_soft_loss():
    # a "shape '[1, 2]' is invalid for input of size 6" torch error before
    one_hot = torch.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    with pytest.raises(ValueError, match="masked_cross_entropy: .*loss='soft_cross_entropy'"):
        masked_cross_entropy(torch.zeros(1, 2, 3), one_hot, torch.ones(1, 2, 1))
    assert masked_soft_cross_entropy(torch.zeros(1, 2, 3), one_hot, torch.ones(1, 2, 1)).item() == \
        pytest.approx(math.log(3))
    with pytest.raises(ValueError, match="masked_soft_cross_entropy: "):
        masked_soft_cross_entropy(torch.zeros(1, 2, 3), torch.zeros(1, 2), torch.ones(1, 2, 1))
