"""The frozen result of a rollout."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch


@dataclass(frozen=True)
class RolloutResult:
    """What :func:`rollout` returns.

    states : Tensor, shape (..., time, unit), or None
        State after steps ``every, 2 * every, ...`` (``time = n_steps // every``); ``...`` is
        ``(batch,)`` for one network and ``(network, batch)`` for an ensemble.
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
    """

    states: torch.Tensor | None
    final: torch.Tensor
    backend: str
    every: int = 1
    noise_std: float = 0.0
    seed: int | None = None

    @property
    def diverged(self) -> torch.Tensor:
        """Per-trajectory status, shape (...,): True where the final state holds NaN or Inf."""
        return ~torch.isfinite(self.final).all(dim=-1)

    def to_xarray(self):
        """The trajectory (or final state) as an ``xarray.Dataset``; dims network, trial, time, unit."""
        import xarray as xr

        lead = ["network", "trial"][-(self.final.ndim - 1):]
        data = {"final": ([*lead, "unit"], self.final.cpu().numpy()),
                "diverged": (lead, self.diverged.cpu().numpy())}
        coords = {}
        if self.states is not None:
            data["states"] = ([*lead, "time", "unit"], self.states.cpu().numpy())
            coords["time"] = ("time", self.every * np.arange(1, self.states.shape[-2] + 1))
        attrs = {"backend": self.backend, "every": self.every, "noise_std": self.noise_std,
                 "seed": -1 if self.seed is None else self.seed}
        return xr.Dataset(data, coords=coords, attrs=attrs)
