"""Masked losses."""

from __future__ import annotations

import torch

__all__ = ["LOSSES", "masked_cross_entropy", "masked_mse", "masked_soft_cross_entropy"]


def masked_mse(outputs: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean squared error over entries where ``mask`` is non-zero.

    outputs, targets : (trial, time, output); mask broadcastable to them.
    """
    mask = mask.expand_as(outputs)
    return ((outputs - targets) ** 2 * mask).sum() / mask.sum().clamp_min(1.0)


def masked_cross_entropy(
    logits: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor
) -> torch.Tensor:
    """Cross-entropy of ``logits`` (trial, time, class) against class indices.

    ``targets`` holds class indices as (trial, time) or (trial, time, 1); ``mask`` likewise.
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
    """
    m = mask.reshape(mask.shape[0], mask.shape[1], -1)[..., 0]
    ce = -(targets * torch.log_softmax(logits, dim=-1)).sum(-1)
    return (ce * m).sum() / m.sum().clamp_min(1.0)


LOSSES = {
    "mse": masked_mse, "cross_entropy": masked_cross_entropy,
    "soft_cross_entropy": masked_soft_cross_entropy,
}
