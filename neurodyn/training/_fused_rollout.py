"""The fused (Numba) training rollout of a model: its own noise draws, :func:`~neurodyn.kernels.fused_states`,
its readout."""

from __future__ import annotations

from typing import Any

import torch

from neurodyn.kernels.fused import ReadoutForcing, fused_states, fuses_outputs
from neurodyn.kernels.reference import draw_noise
from neurodyn.models._base import Rollout


def fused_rollout(model: Any, x: torch.Tensor, *, generator: torch.Generator | None,
                  forcing: ReadoutForcing | None = None, backend: str = "auto") -> Rollout:
    """``model(x, generator=generator)`` with the recurrence in :func:`~neurodyn.kernels.fused_states`.

    The noise is drawn as the model's own forward draws it (the ``t``-th standard-normal draw of
    shape (batch, state) for step ``t``, scaled by ``model.noise_scale``; only in training mode).

    Parameters
    ----------
    model : RecurrentModel
        Of a family :func:`~neurodyn.kernels.fused_backend` fuses.
    x : Tensor, shape (batch, time, input)
    generator : torch.Generator or None
        Source of the state noise.
    forcing : ReadoutForcing, optional
        Forcing through the readout after each step (leaky RNN, GRU, PLRNN, ALRNN, shallow PLRNN); the rollout
        then holds the states and outputs before forcing.
    backend : {"auto", "numba", "triton"}
        The fused kernels (:func:`~neurodyn.kernels.fused_states`); ``"auto"`` picks by device.

    Returns
    -------
    Rollout
        ``outputs`` (batch, time, output) and ``states`` (batch, time, state). A leaky RNN on Numba
        forms its readout inside the loops (:func:`~neurodyn.kernels.fused.fuses_outputs`); every
        other model applies ``model.readout`` to the states.
    """
    noise = None
    if model.training and model.noise_scale > 0:
        xi = draw_noise(generator, (x.shape[0], model.state_size), x.shape[1], x.dtype)
        noise = model.noise_scale * xi
    params, h0 = model.params(), model.initial_state(x.shape[0])
    want = ("triton" if x.device.type == "cuda" else "numba") if backend == "auto" else backend
    if fuses_outputs(params, want):
        # the readout inside the loops (a leaky RNN on Numba): no pass over the states after them
        states, outputs = fused_states(params, h0, x, noise=noise, forcing=forcing, backend=backend,
                                       outputs=True)
        return Rollout(outputs, states)
    states = fused_states(params, h0, x, noise=noise, forcing=forcing, backend=backend)
    # the readout on the time-major view (the kernels' layout): neither it nor its gradient, which
    # the backward kernel reads time-major, needs a (batch, time, state) copy
    return Rollout(model.readout(states.transpose(0, 1)).transpose(0, 1), states)
