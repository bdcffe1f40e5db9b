"""Masked losses."""

from __future__ import annotations

import torch

__all__ = ["LOSSES", "masked_cross_entropy", "masked_mse", "masked_soft_cross_entropy"]


def masked_mse(outputs: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean squared error over entries where ``mask`` is non-zero.

    outputs, targets : (trial, time, output); mask broadcastable to them.

    Examples
    --------
    >>> import torch
    >>> from neurodyn.training import masked_mse
    >>> outputs, targets = torch.ones(1, 4, 1), torch.zeros(1, 4, 1)
    >>> mask = torch.tensor([1.0, 1.0, 0.0, 0.0]).reshape(1, 4, 1)
    >>> masked_mse(outputs, targets, mask).item()  # masked steps do not count
    1.0
    >>> masked_mse(outputs, targets, torch.zeros(1, 4, 1)).item()  # nothing unmasked: zero, not NaN
    0.0
    """
    mask = mask.expand_as(outputs)
    return ((outputs - targets) ** 2 * mask).sum() / mask.sum().clamp_min(1.0)


def masked_cross_entropy(
    logits: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor
) -> torch.Tensor:
    """Cross-entropy of ``logits`` (trial, time, class) against class indices.

    ``targets`` holds class indices as (trial, time) or (trial, time, 1); ``mask`` likewise.

    Examples
    --------
    >>> import math
    >>> import torch
    >>> from neurodyn.training import masked_cross_entropy
    >>> logits = torch.zeros(2, 3, 4)  # (trial, time, class): uniform over 4 classes
    >>> loss = masked_cross_entropy(logits, torch.ones(2, 3, 1), torch.ones(2, 3, 1))
    >>> round(loss.item(), 6) == round(math.log(4), 6)
    True
    """
    idx = targets.reshape(targets.shape[0], targets.shape[1]).long()
    m = mask.reshape(mask.shape[0], mask.shape[1], -1)[..., 0]
    ce = torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), idx.reshape(-1), reduction="none"
    ).reshape(idx.shape)
    return (ce * m).sum() / m.sum().clamp_min(1.0)


def masked_soft_cross_entropy(
    logits: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor
) -> torch.Tensor:
    """Cross-entropy of ``logits`` (trial, time, class) against soft targets (probabilities).

    ``targets`` (trial, time, class) rows sum to 1 (e.g. place-cell codes, Sorscher et al. 2019);
    ``mask`` is (trial, time, 1) or (trial, time, class) (its first channel is used).

    Examples
    --------
    >>> import math
    >>> import torch
    >>> from neurodyn.training.losses import masked_soft_cross_entropy
    >>> logits = torch.zeros(1, 2, 4)
    >>> targets = torch.full((1, 2, 4), 0.25)  # soft targets, rows sum to 1
    >>> loss = masked_soft_cross_entropy(logits, targets, torch.ones(1, 2, 1))
    >>> round(loss.item(), 6) == round(math.log(4), 6)
    True
    """
    m = mask.reshape(mask.shape[0], mask.shape[1], -1)[..., 0]
    ce = -(targets * torch.log_softmax(logits, dim=-1)).sum(-1)
    return (ce * m).sum() / m.sum().clamp_min(1.0)


LOSSES = {
    "mse": masked_mse, "cross_entropy": masked_cross_entropy,
    "soft_cross_entropy": masked_soft_cross_entropy,
}
