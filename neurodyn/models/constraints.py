"""Connectivity constraints for rate RNNs: Dale's law signs, fixed masks, spectral radius.

These are pure functions on tensors; :class:`~neurodyn.models.LeakyRNN` applies them in
``params()`` so that every code path (``step``, kernels, analyses, checkpoints) sees the same
effective weights.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from neurodyn._seed import SeedLike, torch_generator

__all__ = ["apply_dale", "balanced_dale_init", "dale_signs", "make_sparse_mask", "spectral_radius"]


def dale_signs(n_units: int, frac_excitatory: float = 0.8) -> torch.Tensor:
    """Sign of each presynaptic unit under Dale's law: ``+1`` (excitatory) then ``-1`` (inhibitory).

    The first ``round(frac_excitatory * n_units)`` units are excitatory (Song, Yang & Wang 2016,
    PLoS Comput Biol 12(2):e1004792 use 80 % excitatory).

    Returns
    -------
    Tensor, shape (unit,), float32

    Raises
    ------
    ValueError
        If ``frac_excitatory`` is not in [0, 1].

    Examples
    --------
    >>> from neurodyn.models.constraints import dale_signs
    >>> dale_signs(5, frac_excitatory=0.6).tolist()  # 3 excitatory, then 2 inhibitory units
    [1.0, 1.0, 1.0, -1.0, -1.0]
    """
    if not 0.0 <= frac_excitatory <= 1.0:
        raise ValueError(f"frac_excitatory must be in [0, 1], got {frac_excitatory}")
    n_exc = int(round(frac_excitatory * n_units))
    signs = -torch.ones(n_units)
    signs[:n_exc] = 1.0
    return signs


def apply_dale(w: torch.Tensor, signs: torch.Tensor) -> torch.Tensor:
    """Effective weights ``|w| * signs`` with one sign per column (presynaptic unit).

    ``w`` (post, pre), ``signs`` (pre,); the result's column ``j`` has the sign of ``signs[j]``
    (or is zero) whatever the values of ``w``, so gradient steps on ``w`` can never flip it.

    Examples
    --------
    >>> import torch
    >>> from neurodyn.models.constraints import apply_dale
    >>> w = torch.tensor([[0.5, 0.3], [-0.2, -0.4]])
    >>> apply_dale(w, torch.tensor([1.0, -1.0])).tolist()  # column 0 excitatory, column 1 inhibitory
    [[0.5, -0.30000001192092896], [0.20000000298023224, -0.4000000059604645]]
    """
    return w.abs() * signs


def as_mask(mask: Any, shape: tuple[int, ...], name: str) -> torch.Tensor:
    """Validate a connectivity mask and return it as a float32 tensor of 0s and 1s.

    ``mask`` may be a tensor, array or nested list of booleans or 0/1 values; ``True`` stands for
    an all-ones placeholder whose values are filled in later by ``load_state_dict``.

    Raises
    ------
    ValueError
        If the shape differs from ``shape`` or values other than 0 and 1 occur.
    """
    if mask is True:
        return torch.ones(shape)
    m = torch.as_tensor(np.asarray(mask.detach().cpu() if isinstance(mask, torch.Tensor) else mask))
    if tuple(m.shape) != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, got {tuple(m.shape)}")
    m = m.to(torch.float32)
    if not torch.all((m == 0) | (m == 1)):
        raise ValueError(f"{name} must hold only 0/1 (or booleans); found other values")
    return m


def make_sparse_mask(shape: tuple[int, int], density: float, *, seed: SeedLike = 0,
                     no_autapse: bool = False) -> torch.Tensor:
    """Random Erdős–Rényi connectivity mask: each entry is 1 with probability ``density``.

    Parameters
    ----------
    shape : (post, pre)
    density : float in [0, 1]
    seed : int, Generator or None
    no_autapse : bool
        Zero the diagonal (square masks only).

    Returns
    -------
    Tensor, shape ``shape``, float32 of 0s and 1s

    Raises
    ------
    ValueError
        If ``density`` is outside [0, 1], or ``no_autapse`` is asked for a non-square shape.

    Examples
    --------
    >>> from neurodyn.models.constraints import make_sparse_mask
    >>> mask = make_sparse_mask((50, 50), 0.2, seed=0, no_autapse=True)
    >>> tuple(mask.shape), float(mask.diagonal().sum()), round(float(mask.mean()), 1)
    ((50, 50), 0.0, 0.2)
    """
    if not 0.0 <= density <= 1.0:
        raise ValueError(f"density must be in [0, 1], got {density}")
    gen = torch_generator(seed)
    m = (torch.rand(shape, generator=gen) < density).to(torch.float32)
    if no_autapse:
        if shape[0] != shape[1]:
            raise ValueError(f"no_autapse needs a square shape, got {shape}")
        m.fill_diagonal_(0.0)
    return m


def spectral_radius(w: torch.Tensor) -> float:
    """Largest absolute eigenvalue of a square matrix ``w`` (unit, unit).

    Examples
    --------
    >>> import torch
    >>> from neurodyn.models.constraints import spectral_radius
    >>> round(spectral_radius(torch.tensor([[0.0, 2.0], [-2.0, 0.0]])), 6)  # eigenvalues +-2i
    2.0
    """
    return float(torch.linalg.eigvals(w.detach().double()).abs().max())


def balanced_dale_init(w: torch.Tensor, signs: torch.Tensor) -> torch.Tensor:
    """Scale inhibitory columns of non-negative ``w`` by ``n_exc / n_inh`` (mean input balanced).

    With ``|w|`` of equal means in every column, each unit then receives as much expected
    inhibition as excitation, so the effective matrix's mean row sum is zero (the balanced
    initialisation of Song, Yang & Wang 2016).

    Examples
    --------
    >>> import torch
    >>> from neurodyn.models.constraints import apply_dale, balanced_dale_init, dale_signs
    >>> signs = dale_signs(5)  # 4 excitatory, 1 inhibitory
    >>> w = balanced_dale_init(torch.ones(5, 5), signs)
    >>> w[0].tolist()  # the inhibitory column is scaled by 4 / 1
    [1.0, 1.0, 1.0, 1.0, 4.0]
    >>> apply_dale(w, signs).sum(dim=1).tolist()  # excitation and inhibition balance
    [0.0, 0.0, 0.0, 0.0, 0.0]
    """
    n_exc = int((signs > 0).sum())
    n_inh = int((signs < 0).sum())
    if n_exc == 0 or n_inh == 0:
        return w
    scale = torch.where(signs > 0, torch.ones_like(signs), torch.full_like(signs, n_exc / n_inh))
    return w * scale
