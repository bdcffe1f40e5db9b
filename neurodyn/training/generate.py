"""Free-running trajectories of a fitted latent model, started from an observed point."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import torch

from neurodyn.training import observation as obs


class Generated(NamedTuple):
    """observations (time, channel) — rates for the Poisson model; states (time, state)."""

    observations: np.ndarray
    states: np.ndarray


@torch.no_grad()
def generate(
    model, x0: Any, n_steps: int, *, observation: str = "affine", inputs: Any = None,
) -> Generated:
    """Run the model freely for ``n_steps`` from the latent state inferred from ``x0``.

    Parameters
    ----------
    model : RecurrentModel
    x0 : array, shape (channel,) or (batch, channel)
        First observation; the initial latent state is ``B⁺ (x0 - b)`` (for the Poisson model ``x0``
        is taken as a rate and passed through the inverse link).
    n_steps : int
        Number of generated time steps after ``x0``.
    observation : {"identity", "affine", "poisson"}
    inputs : array, shape (n_steps, input) or (batch, n_steps, input), optional
        External inputs for the generated steps.

    Returns
    -------
    Generated
        ``observations`` (time, channel) or (batch, time, channel) and the latent ``states``;
        NumPy float64.
    """
    obs.check_observation(observation)
    ref = next(model.parameters())
    x0_np = np.asarray(x0, dtype=np.float64)
    single = x0_np.ndim == 1
    x0_np = np.atleast_2d(x0_np)
    if x0_np.shape[-1] != model.n_outputs:
        raise ValueError(f"x0 has {x0_np.shape[-1]} channels but the model has {model.n_outputs} outputs")
    if observation == "poisson":
        x0_np = obs.forcing_targets(x0_np[:, None], "poisson", smoothing=0.0)[:, 0]
    B, b = obs.affine_readout(model)
    z0 = obs.invert(B, b, torch.as_tensor(x0_np, dtype=ref.dtype, device=ref.device))
    u = None
    if inputs is not None:
        u = torch.as_tensor(np.asarray(inputs), dtype=ref.dtype, device=ref.device)
        u = u[None] if u.ndim == 2 else u
        if u.shape[1] < n_steps:
            raise ValueError(f"inputs cover {u.shape[1]} steps but n_steps = {n_steps}")
        u = u[:, :n_steps].expand(z0.shape[0], -1, -1)
    was = model.training
    model.eval()
    states = model(u, z0, n_steps=n_steps, noise=False).states
    model.train(was)
    y = obs.observe(model, states, observation).cpu().double().numpy()
    s = states.cpu().double().numpy()
    return Generated(y[0], s[0]) if single else Generated(y, s)
