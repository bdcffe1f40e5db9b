"""The result of :func:`~neurodyn.analysis.lyapunov_spectrum`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class LyapunovResult:
    """Lyapunov exponents of one or several trajectories.

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
        import xarray as xr

        return xr.Dataset(
            {
                "exponents": (("batch", "exponent"), self.exponents),
                "running": (("batch", "checkpoint", "exponent"), self.running),
                "finite": (("batch",), self.finite.astype(np.int8)),
            },
            coords={"steps": (("checkpoint",), self.steps)},
            attrs={"jacobian": self.jacobian, "backend": self.backend, "n_steps": self.n_steps,
                   "n_transient": self.n_transient, "seed": self.seed,
                   "units": "nats per time step"},
        )
