"""Plain-torch rollout: the ground truth every other backend is tested against.

One Python-level loop over time steps; each step is the model's own map (batched matmuls that
broadcast over a leading ``network`` dimension for ensembles), so a single network rolled out
here equals :meth:`RecurrentModel.forward` bit for bit, noise included (see ``draw_noise_once``).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

__all__ = ["draw_noise", "draw_noise_once", "rollout_torch"]

StepFn = Callable[[torch.Tensor, torch.Tensor | None], torch.Tensor]


def draw_noise_once(gen: torch.Generator, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
    """Standard-normal noise of one time step, ``shape`` = (..., unit), drawn on the device of ``gen``
    (the CPU for the generators of :func:`~neurodyn.kernels.rollout`; a training run on CUDA draws on
    its CUDA generator, as the model's own forward does).

    Every backend consumes the noise of step ``t`` as the ``t``-th such draw from one
    ``torch.Generator`` seeded by :func:`neurodyn._seed.torch_generator`, so torch, Numba and
    Triton add identical noise for the same seed, and the draws equal those of
    :meth:`RecurrentModel.forward` given the same generator.

    Examples
    --------
    >>> import torch
    >>> from neurodyn.kernels.reference import draw_noise_once
    >>> xi = draw_noise_once(torch.Generator().manual_seed(0), (4, 3), torch.float32)
    >>> tuple(xi.shape), bool(torch.equal(xi, torch.randn(4, 3, generator=torch.Generator().manual_seed(0))))
    ((4, 3), True)
    """
    return torch.randn(shape, generator=gen, dtype=dtype, device=None if gen is None else gen.device)


def draw_noise(gen: torch.Generator, shape: tuple[int, ...], n_steps: int, dtype: torch.dtype,
               ) -> torch.Tensor:
    """``n_steps`` consecutive step draws stacked as ``(..., time, unit)``.

    Examples
    --------
    >>> import torch
    >>> from neurodyn.kernels.reference import draw_noise, draw_noise_once
    >>> xi = draw_noise(torch.Generator().manual_seed(0), (4, 3), 5, torch.float32)
    >>> tuple(xi.shape)  # (batch, time, unit)
    (4, 5, 3)
    >>> gen = torch.Generator().manual_seed(0)
    >>> first = draw_noise_once(gen, (4, 3), torch.float32)
    >>> second = draw_noise_once(gen, (4, 3), torch.float32)
    >>> bool(torch.equal(xi[:, 1], second))  # step t is the t-th draw
    True
    """
    return torch.stack([draw_noise_once(gen, shape, dtype) for _ in range(n_steps)], dim=-2)


@torch.no_grad()
def rollout_torch(
    step: StepFn,
    h0: torch.Tensor,
    inputs: torch.Tensor | None,
    *,
    n_steps: int,
    time_varying: bool,
    every: int = 1,
    noise_std: float = 0.0,
    generator: torch.Generator | None = None,
    return_trajectory: bool = True,
) -> tuple[torch.Tensor | None, torch.Tensor]:
    """Roll ``step`` out from ``h0`` for ``n_steps`` steps.

    Parameters
    ----------
    step : callable ``(h, u) -> h``
        One-step map on ``h`` of shape (..., unit).
    h0 : Tensor, shape (..., unit)
    inputs : Tensor, shape (..., input) or (..., time, input), optional
    n_steps : int
    time_varying : bool
        Whether ``inputs`` has a time axis.
    every : int
        Record the state after steps ``every, 2*every, ...``.
    noise_std : float
        Std of the additive state noise per step (0: none).
    generator : torch.Generator, CPU
        Noise source; needed when ``noise_std > 0``.
    return_trajectory : bool

    Returns
    -------
    (states, final)
        ``states`` (..., n_steps // every, unit) or None, ``final`` (..., unit).

    Examples
    --------
    >>> import torch
    >>> from neurodyn.kernels.reference import rollout_torch
    >>> states, final = rollout_torch(lambda h, u: 0.5 * h + u, torch.zeros(2, 1), torch.ones(2, 1),
    ...                               n_steps=4, time_varying=False, every=2)
    >>> tuple(states.shape), states[0, :, 0].tolist(), final[0, 0].item()  # h = 1, 1.5, 1.75, 1.875
    ((2, 2, 1), [1.5, 1.875], 1.875)
    """
    h = h0
    n_rec = n_steps // every
    states = h0.new_empty((*h0.shape[:-1], n_rec, h0.shape[-1])) if return_trajectory else None
    for t in range(n_steps):
        u = None if inputs is None else (inputs[..., t, :] if time_varying else inputs)
        h = step(h, u)
        if noise_std > 0:
            xi = draw_noise_once(generator, tuple(h.shape), h.dtype).to(h.device)
            h = h + noise_std * xi
        if states is not None and (t + 1) % every == 0:
            states[..., (t + 1) // every - 1, :] = h
    return states, h
