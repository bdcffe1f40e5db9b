"""The frozen result of a rollout: the one rollout result type of neurodyn (format ``neurodyn.rollout``).

:func:`~neurodyn.kernels.rollout` returns it; :class:`neurodyn.training.Generated` (free runs of a
fitted model) is a NumPy view of it that writes the same file format, and
:class:`neurodyn.models.Rollout` is the plain ``(outputs, states)`` pair of ``model.forward`` (a
training-time tuple with gradients, not a result).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import torch

from neurodyn._result import Result

__all__ = ["ROLLOUT_STATUS", "RolloutResult"]

ROLLOUT_STATUS = ("finite", "diverged")
_LEAD = ("network", "trial")


@dataclass(frozen=True)
class RolloutResult(Result):
    """What :func:`rollout` returns.

    states : Tensor, shape (..., time, unit), or None
        State after steps ``every, 2 * every, ...`` (``time = n_steps // every``); ``...`` is
        ``(batch,)`` for one network, ``(network, batch)`` for an ensemble, ``()`` for one trajectory.
    final : Tensor, shape (..., unit)
        State after the last step.
    backend : str
        The backend that ran (``"torch"``, ``"numba"`` or ``"triton"``).
    every : int
        Recording interval in time steps.
    noise_std : float
        Per-step std of the additive state noise that was used.
    seed : int or None
        Resolved noise seed (None when noise-free).
    outputs : Tensor, shape (..., time, output), or None
        Readouts (observations) of the recorded states, when the producer computed them.

    Examples
    --------
    >>> import torch
    >>> from neurodyn.kernels import RolloutResult, rollout
    >>> from neurodyn.models import LeakyRNN
    >>> result = rollout(LeakyRNN(1, 5, 1, seed=0), h0=torch.zeros(2, 5), n_steps=20, every=5,
    ...                  backend="torch")
    >>> tuple(result.states.shape), result.status.tolist()  # 20 steps recorded every 5
    ((2, 4, 5), ['finite', 'finite'])
    >>> ds = result.to_xarray()
    >>> dict(ds.sizes), ds["time"].values.tolist()
    ({'trial': 2, 'unit': 5, 'time': 4}, [5, 10, 15, 20])
    >>> bool(torch.equal(RolloutResult.from_xarray(ds).final, result.final))
    True
    """

    states: torch.Tensor | None
    final: torch.Tensor
    backend: str
    every: int = 1
    noise_std: float = 0.0
    seed: int | None = None
    outputs: torch.Tensor | None = None

    FORMAT: ClassVar[str] = "neurodyn.rollout"
    FORMAT_VERSION: ClassVar[int] = 1
    REQUIRED: ClassVar[tuple[str, ...]] = ("final", "diverged")

    @property
    def diverged(self) -> torch.Tensor:
        """Per-trajectory flag, shape (...,): True where the final state holds NaN or Inf."""
        return ~torch.isfinite(self.final).all(dim=-1)

    @property
    def status(self) -> np.ndarray:
        """Per trajectory, shape (...,): ``"finite"`` or ``"diverged"`` (NaN/Inf in the final state)."""
        return np.where(self.diverged.cpu().numpy(), "diverged", "finite").astype(object)

    def to_xarray(self):
        """The trajectory as an ``xarray.Dataset``; dims network, trial, time, unit, output."""
        import xarray as xr

        lead = list(_LEAD[len(_LEAD) - (self.final.ndim - 1):])
        data = {"final": ([*lead, "unit"], self.final.cpu().numpy()),
                "diverged": (lead, self.diverged.cpu().numpy()), "status": (lead, self.status)}
        coords = {}
        if self.states is not None:
            data["states"] = ([*lead, "time", "unit"], self.states.cpu().numpy())
            coords["time"] = ("time", self.every * np.arange(1, self.states.shape[-2] + 1))
        if self.outputs is not None:
            data["outputs"] = ([*lead, "time", "output"], self.outputs.cpu().numpy())
        attrs = {**self.format_attrs(), "backend": self.backend, "every": self.every,
                 "noise_std": self.noise_std, "seed": -1 if self.seed is None else self.seed}
        return xr.Dataset(data, coords=coords, attrs=attrs)

    @classmethod
    def from_xarray(cls, ds) -> RolloutResult:
        """Rebuild from :meth:`to_xarray`'s dataset (or a file written from one); tensors on the CPU."""
        def tensor(name: str) -> torch.Tensor | None:
            return torch.as_tensor(ds[name].values) if name in ds else None

        seed = int(ds.attrs.get("seed", -1))
        return cls(tensor("states"), tensor("final"), str(ds.attrs.get("backend", "torch")),
                   int(ds.attrs.get("every", 1)), float(ds.attrs.get("noise_std", 0.0)),
                   None if seed < 0 else seed, tensor("outputs"))
