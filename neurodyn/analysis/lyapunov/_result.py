"""The result of :func:`~neurodyn.analysis.lyapunov_spectrum`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from neurodyn._result import Result

__all__ = ["LyapunovResult"]

LYAPUNOV_STATUS = ("finite", "diverged")
_SETTINGS = ("jacobian", "n_steps", "n_transient", "seed", "backend")


@dataclass(frozen=True)
class LyapunovResult(Result):
    """Lyapunov exponents of one or several trajectories (format ``neurodyn.lyapunov``).

    Attributes
    ----------
    exponents : ndarray, shape (batch, exponent)
        Exponents in nats per time step, sorted in decreasing order.
    running : ndarray, shape (batch, checkpoint, exponent)
        Running estimates after ``steps[c]`` QR steps (a convergence record).
    steps : ndarray, shape (checkpoint,)
    finite : ndarray of bool, shape (batch,)
        False where the trajectory left the finite numbers (diverged); its exponents are NaN.
    jacobian : str
        ``"analytic"`` (the closed forms of the model family, or PL region Jacobians) or ``"autograd"``.
    n_steps, n_transient, seed : int
    backend : str
        ``"torch"`` (the reference: torch rollout, NumPy QR) or ``"numba"``: what ran the steps.
    """

    exponents: np.ndarray
    running: np.ndarray
    steps: np.ndarray
    finite: np.ndarray
    jacobian: str
    n_steps: int
    n_transient: int
    seed: int
    backend: str = "torch"

    FORMAT: ClassVar[str] = "neurodyn.lyapunov"
    FORMAT_VERSION: ClassVar[int] = 1
    REQUIRED: ClassVar[tuple[str, ...]] = ("exponents", "running", "finite", "steps")

    @property
    def status(self) -> np.ndarray:
        """Per trajectory, shape (batch,): ``"finite"`` or ``"diverged"`` (exponents NaN)."""
        return np.where(self.finite, "finite", "diverged").astype(object)

    @property
    def max_exponent(self) -> np.ndarray:
        """Largest exponent per trajectory, shape (batch,)."""
        return self.exponents[:, 0]

    def kaplan_yorke_dimension(self) -> np.ndarray:
        """Kaplan-Yorke (Lyapunov) dimension per trajectory, shape (batch,)."""
        out = np.empty(len(self.exponents))
        for b, lam in enumerate(self.exponents):
            c = np.cumsum(lam)
            j = int(np.sum(c >= 0))
            if j == 0:
                out[b] = 0.0
            elif j == len(lam):
                out[b] = float(j)
            else:
                out[b] = j + c[j - 1] / abs(lam[j])
        return out

    def to_xarray(self):
        """Dims ``batch``, ``checkpoint``, ``exponent``; ``finite`` as int8, the settings as attrs."""
        import xarray as xr

        return xr.Dataset(
            {
                "exponents": (("batch", "exponent"), self.exponents),
                "running": (("batch", "checkpoint", "exponent"), self.running),
                "finite": (("batch",), self.finite.astype(np.int8)),
                "status": (("batch",), self.status),
            },
            coords={"steps": (("checkpoint",), self.steps)},
            attrs={**self.format_attrs(), **{k: getattr(self, k) for k in _SETTINGS},
                   "units": "nats per time step"},
        )

    @classmethod
    def from_xarray(cls, ds) -> LyapunovResult:
        """Rebuild from :meth:`to_xarray`'s dataset (or a file written from one)."""
        settings = {k: ds.attrs[k].item() if isinstance(ds.attrs[k], np.generic) else ds.attrs[k]
                    for k in _SETTINGS if k in ds.attrs}
        return cls(ds["exponents"].values, ds["running"].values, ds["steps"].values,
                   ds["finite"].values.astype(bool), **settings)
