"""Free-running trajectories of a fitted latent model, started from an observed point."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import torch

from neurodyn._checks import check_finite, check_setting
from neurodyn._result import Result
from neurodyn.kernels import RolloutResult
from neurodyn.models._base import eval_mode
from neurodyn.training import observation as obs
from neurodyn.training._engine import EVAL_COPIES, check_rollout_memory

__all__ = ["Generated", "generate"]


@dataclass(frozen=True)
class Generated(Result):
    """A free run as NumPy float64 arrays: a view of :class:`~neurodyn.kernels.RolloutResult`.

    ``observations`` (time, channel) — rates for the Poisson model — and the latent ``states``
    (time, state), each with a leading ``batch`` dim for a batch of starts. It unpacks as
    ``observations, states = generate(...)``. :meth:`to_rollout` gives the rollout result it views;
    :meth:`save` writes that rollout's file (format ``neurodyn.rollout``, ``outputs`` holding the
    observations), which ``neurodyn.io.load`` reads as a ``RolloutResult`` and
    :meth:`Generated.load <neurodyn._result.Result.load>` as a ``Generated``.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.models import PLRNN
    >>> from neurodyn.training import generate
    >>> model = PLRNN.from_arrays(A=[0.5, 0.5], W=np.zeros((2, 2)), h=[1.0, 0.0])
    >>> run = generate(model, np.array([0.0, 4.0]), 3, observation="identity")
    >>> observations, states = run  # unpacks like a pair
    >>> observations.shape, observations[:, 1].tolist()  # channel 1 halves every step
    ((3, 2), [2.0, 1.0, 0.5])
    >>> run.to_rollout().backend
    'torch'
    """

    observations: np.ndarray
    states: np.ndarray

    FORMAT: ClassVar[str] = RolloutResult.FORMAT
    FORMAT_VERSION: ClassVar[int] = RolloutResult.FORMAT_VERSION
    REQUIRED: ClassVar[tuple[str, ...]] = (*RolloutResult.REQUIRED, "states", "outputs")

    def __iter__(self) -> Iterator[np.ndarray]:
        return iter((self.observations, self.states))

    @property
    def status(self) -> np.ndarray:
        """Per trajectory, shape () or (batch,): ``"finite"`` or ``"diverged"``."""
        return self.to_rollout().status

    def to_rollout(self) -> RolloutResult:
        """The rollout result this is a view of (CPU float64 tensors, backend ``"torch"``, no noise)."""
        states = torch.from_numpy(self.states)
        return RolloutResult(states, states[..., -1, :], "torch", outputs=torch.from_numpy(self.observations))

    def to_xarray(self):
        """The rollout's dataset (:meth:`RolloutResult.to_xarray`)."""
        return self.to_rollout().to_xarray()

    @classmethod
    def from_xarray(cls, ds) -> Generated:
        """Rebuild from a rollout dataset with ``states`` and ``outputs``."""
        run = RolloutResult.from_xarray(ds)
        return cls(run.outputs.double().numpy(), run.states.double().numpy())


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
    n_steps : int >= 0
        Number of generated time steps after ``x0``.
    observation : {"identity", "affine", "poisson"}
    inputs : array, shape (n_steps, input) or (batch, n_steps, input), optional
        External inputs for the generated steps.

    Returns
    -------
    Generated
        ``observations`` (time, channel) or (batch, time, channel) and the latent ``states``;
        NumPy float64.

    Raises
    ------
    ValueError
        For an unknown ``observation``, ``n_steps`` that is not an integer >= 0, ``x0`` or ``inputs``
        of the wrong shape or with NaN/Inf, ``inputs`` for another number of starts than ``x0``, or a
        run larger than the memory available.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.models import PLRNN
    >>> from neurodyn.training import generate
    >>> model = PLRNN.from_arrays(A=[0.5], W=[[0.0]], h=[1.0])  # z' = 0.5 z + 1 → fixed point 2
    >>> run = generate(model, np.array([[0.0], [4.0]]), 20, observation="identity")  # a batch of 2 starts
    >>> run.observations.shape, run.states.shape  # (batch, time, channel), (batch, time, state)
    ((2, 20, 1), (2, 20, 1))
    >>> np.round(run.observations[:, -1, 0], 4).tolist()
    [2.0, 2.0]
    """
    obs.check_observation(observation)
    check_setting("n_steps", n_steps, 0, integer=True)
    n_steps = int(n_steps)
    ref = next(model.parameters())
    x0_np = np.asarray(x0, dtype=np.float64)
    single = x0_np.ndim == 1
    if x0_np.ndim not in (1, 2) or x0_np.shape[-1] != model.n_outputs:
        raise ValueError(f"x0 must have shape (channel,) or (batch, channel) with {model.n_outputs} channels "
                         f"(the model's outputs), got {x0_np.shape}")
    check_finite(x0_np, "x0", "start from an observed time point without gaps")
    x0_np = np.atleast_2d(x0_np)
    check_rollout_memory("generate", model, x0_np.shape[0], n_steps, copies=EVAL_COPIES,
                         fix="lower n_steps or the number of starts", device=ref.device)
    if observation == "poisson":
        x0_np = obs.forcing_targets(x0_np[:, None], "poisson", smoothing=0.0)[:, 0]
    B, b = obs.affine_readout(model)
    z0 = obs.invert(B, b, torch.as_tensor(x0_np, dtype=ref.dtype, device=ref.device))
    u = None
    if inputs is not None:
        u_np = np.asarray(inputs, dtype=np.float64)
        if u_np.ndim not in (2, 3) or (u_np.ndim == 3 and u_np.shape[0] not in (1, x0_np.shape[0])):
            raise ValueError(f"inputs must have shape (time, input) or (batch, time, input) with batch "
                             f"{x0_np.shape[0]} (one per start in x0), got {u_np.shape}")
        check_finite(u_np, "inputs", "fill the gaps in the inputs first")
        u = torch.as_tensor(u_np, dtype=ref.dtype, device=ref.device)
        u = u[None] if u.ndim == 2 else u
        if u.shape[1] < n_steps:
            raise ValueError(f"inputs cover {u.shape[1]} steps but n_steps = {n_steps}")
        u = u[:, :n_steps].expand(z0.shape[0], -1, -1)
    with eval_mode(model):
        states = model(u, z0, n_steps=n_steps, noise=False).states
    y = obs.observe(model, states, observation).cpu().double().numpy()
    s = states.cpu().double().numpy()
    return Generated(y[0], s[0]) if single else Generated(y, s)
