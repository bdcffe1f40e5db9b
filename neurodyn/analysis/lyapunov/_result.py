"""The result of :func:`~neurodyn.analysis.lyapunov_spectrum`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from neurodyn._result import Result

__all__ = ["LyapunovResult"]

LYAPUNOV_STATUS = ("finite", "diverged", "underflow")
_SETTINGS = ("jacobian", "n_steps", "n_transient", "seed", "backend")


@dataclass(frozen=True)
class LyapunovResult(Result):
    """Lyapunov exponents of one or several trajectories (format ``neurodyn.lyapunov``).

    Attributes
    ----------
    exponents : ndarray, shape (batch, exponent)
        Exponents in nats per time step, sorted in decreasing order; NaN for a diverged trajectory,
        ``-inf`` for a tangent direction mapped exactly to zero (status ``"underflow"``).
    running : ndarray, shape (batch, checkpoint, exponent)
        Running estimates after ``steps[c]`` QR steps (a convergence record).
    steps : ndarray, shape (checkpoint,)
    finite : ndarray of bool, shape (batch,)
        True where every exponent is a finite number; False where the trajectory left the finite
        numbers (status ``"diverged"``, exponents NaN) or a tangent direction collapsed to exactly
        zero (status ``"underflow"``, those exponents ``-inf``).
    jacobian : str
        ``"analytic"`` (the closed forms of the model family, or PL region Jacobians) or ``"autograd"``.
    n_steps, n_transient, seed : int
    backend : str
        ``"torch"`` (the reference: torch rollout, NumPy QR) or ``"numba"``: what ran the steps.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis import lyapunov_spectrum
    >>> from neurodyn.models import PLRNN
    >>> model = PLRNN.from_arrays(A=[0.5, 0.25], W=np.zeros((2, 2)), h=[0.0, 0.0])  # linear, diagonal
    >>> result = lyapunov_spectrum(model, n_steps=50, n_transient=10, n_checkpoints=5, backend="torch")
    >>> result.exponents.shape, result.running.shape, result.status.tolist()  # (batch, exponent)
    ((1, 2), (1, 5, 2), ['finite'])
    >>> np.round(result.exponents[0] / np.log([0.5, 0.25]), 6).tolist()  # log |eigenvalues| per step
    [1.0, 1.0]
    >>> dict(result.to_xarray().sizes)["exponent"]
    2
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
        """Per trajectory, shape (batch,): ``"finite"``, ``"diverged"`` (exponents NaN) or ``"underflow"``.

        ``"underflow"``: a tangent vector was mapped to exactly zero, because the Jacobian along the
        orbit is singular, typically where the state itself underflowed to 0 at a ReLU kink (a
        contracting orbit run for thousands of steps). Those exponents are ``-inf``, a bound rather
        than an estimate; ``running`` holds the rates measured before the collapse.
        """
        collapsed = np.isneginf(self.exponents).any(axis=1)
        return np.where(collapsed, "underflow", np.where(self.finite, "finite", "diverged")).astype(object)

    @property
    def max_exponent(self) -> np.ndarray:
        """Largest exponent per trajectory, shape (batch,)."""
        return self.exponents[:, 0]

    def kaplan_yorke_dimension(self) -> np.ndarray:
        """Kaplan-Yorke (Lyapunov) dimension per trajectory, shape (batch,).

        ``D = j + (lambda_1 + ... + lambda_j) / |lambda_{j+1}|`` with ``j`` the largest index whose
        partial sum is >= 0 (Kaplan & Yorke 1979); 0 when ``lambda_1 < 0``. NaN where an exponent is
        NaN (a diverged trajectory) or ``+inf``; a ``-inf`` exponent (status ``"underflow"``) adds 0.
        Computed from the exponents kept (``n_exponents``): with fewer than ``j + 1`` of them the
        value is a lower bound.
        """
        out = np.empty(len(self.exponents))
        for b, lam in enumerate(self.exponents):
            if np.any(np.isnan(lam) | (lam == np.inf)):
                out[b] = np.nan
                continue
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

        per_step = "nats per time step"
        return xr.Dataset(
            {
                "exponents": (("batch", "exponent"), self.exponents,
                              {"long_name": "Lyapunov exponents", "units": per_step,
                               "description": "sorted in decreasing order"}),
                "running": (("batch", "checkpoint", "exponent"), self.running,
                            {"long_name": "running estimates of the exponents", "units": per_step,
                             "description": "after steps[checkpoint] QR steps"}),
                "finite": (("batch",), self.finite.astype(np.int8),
                           {"long_name": "every exponent finite", "description": "1 yes, 0 no"}),
                "status": (("batch",), self.status, {"long_name": "status",
                                                     "description": "finite, diverged or underflow"}),
            },
            coords={"steps": (("checkpoint",), self.steps, {"long_name": "QR steps", "units": "time steps"})},
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
