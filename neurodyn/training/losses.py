"""Masked losses."""

from __future__ import annotations

import torch

__all__ = ["LOSSES", "masked_cross_entropy", "masked_mse", "masked_soft_cross_entropy"]


def _check_shapes(name: str, outputs: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor,
                  target_shape: tuple[int, ...], hint: str = "") -> None:
    """One-line ``ValueError`` unless ``targets`` has ``target_shape`` and ``mask`` is (trial, time, 1)
    or (trial, time, channel) for the (trial, time, channel) ``outputs`` (shapes only: works under vmap)."""
    lead = tuple(outputs.shape[:2])
    mask_ok = mask.ndim == 3 and tuple(mask.shape[:2]) == lead and mask.shape[-1] in (1, outputs.shape[-1])
    if outputs.ndim != 3 or tuple(targets.shape) not in target_shape or not mask_ok:
        raise ValueError(f"{name}: outputs {tuple(outputs.shape)} must be (trial, time, output) with targets "
                         f"{' or '.join(str(t) for t in target_shape)} and mask {lead + (1,)}, got targets "
                         f"{tuple(targets.shape)}, mask {tuple(mask.shape)}{hint}")


def masked_mse(outputs: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean squared error over entries where ``mask`` is non-zero.

    outputs, targets : (trial, time, output); mask (trial, time, 1) or (trial, time, output).
    Raises a one-line ``ValueError`` for other shapes.

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
    _check_shapes("masked_mse", outputs, targets, mask, (tuple(outputs.shape),))
    mask = mask.expand_as(outputs)
    diff = torch.where(mask != 0, outputs - targets, 0.0)  # a NaN target at a masked step does not count
    return (diff**2 * mask).sum() / mask.sum().clamp_min(1.0)


def masked_cross_entropy(
    logits: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor
) -> torch.Tensor:
    """Cross-entropy of ``logits`` (trial, time, class) against class indices.

    ``targets`` holds class indices as (trial, time) or (trial, time, 1); ``mask`` is (trial, time, 1).
    Raises a one-line ``ValueError`` for other shapes (one-hot or probability targets belong to
    :func:`masked_soft_cross_entropy`).

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
    lead = tuple(logits.shape[:2])
    _check_shapes("masked_cross_entropy", logits, targets, mask, (lead, lead + (1,)),
                  "; targets are class indices (one-hot or probability targets: loss='soft_cross_entropy')")
    m = mask.reshape(mask.shape[0], mask.shape[1], -1)[..., 0]
    idx = torch.where(m != 0, targets.reshape(m.shape), 0).long()  # any label at a masked step (e.g. -1)
    ce = torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), idx.reshape(-1), reduction="none"
    ).reshape(idx.shape)
    return (ce * m).sum() / m.sum().clamp_min(1.0)


def masked_soft_cross_entropy(
    logits: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor
) -> torch.Tensor:
    """Cross-entropy of ``logits`` (trial, time, class) against soft targets (probabilities).

    ``targets`` (trial, time, class) rows sum to 1 (e.g. place-cell codes, Sorscher et al. 2019);
    ``mask`` is (trial, time, 1) or (trial, time, class) (its first channel is used). Raises a
    one-line ``ValueError`` for other shapes.

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
    _check_shapes("masked_soft_cross_entropy", logits, targets, mask, (tuple(logits.shape),))
    m = mask.reshape(mask.shape[0], mask.shape[1], -1)[..., 0]
    ce = -(targets * torch.log_softmax(logits, dim=-1)).sum(-1)
    return (ce * m).sum() / m.sum().clamp_min(1.0)


LOSSES = {
    "mse": masked_mse, "cross_entropy": masked_cross_entropy,
    "soft_cross_entropy": masked_soft_cross_entropy,
}
