"""Linear least-squares baselines for reconstruction scores: VAR(1), and ARX with external inputs."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neurodyn._checks import check_finite, check_setting, float64_copy

__all__ = ["LinearBaseline", "fit_linear_baseline"]


@dataclass(frozen=True)
class LinearBaseline:
    """``x[t+1] = A x[t] + C u[t+1] + c``; ``A`` (channel, channel), ``C`` (channel, input), ``c``.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.reconstruction import LinearBaseline
    >>> baseline = LinearBaseline(A=np.array([[0.5]]), C=np.zeros((1, 0)), c=np.array([1.0]))
    >>> baseline.run(np.array([0.0]), 3)[:, 0].tolist()  # x' = 0.5 x + 1 from 0
    [1.0, 1.5, 1.75]
    >>> baseline.predict(np.array([[0.0], [2.0], [4.0]]), 1)[:, 0].tolist()  # one step ahead of x[:-1]
    [1.0, 2.0]
    """

    A: np.ndarray
    C: np.ndarray
    c: np.ndarray

    def _drive(self, u: np.ndarray | None, n: int) -> np.ndarray:
        if u is None or self.C.shape[1] == 0:
            return np.broadcast_to(self.c, (n, len(self.c)))
        return u @ self.C.T + self.c

    def _check_u(self, u, n_time: int, what: str) -> np.ndarray | None:
        if u is None:
            return None
        n_in = self.C.shape[1]
        if n_in == 0:
            raise ValueError("u was given but this baseline takes no external inputs (C has 0 columns); "
                             "drop u or fit the baseline with inputs")
        u = np.asarray(u, dtype=np.float64)
        if u.shape != (n_time, n_in):
            raise ValueError(f"u must have shape (time, input) = ({n_time}, {n_in}) ({what}), got {u.shape}")
        return u

    def run(self, x0: np.ndarray, n: int, u: np.ndarray | None = None) -> np.ndarray:
        """Free run of ``n`` steps from ``x0``; ``u`` (n, input) drives step ``t``. Returns (n, channel).

        Raises
        ------
        ValueError
            If ``x0`` is not ``(channel,)``, ``n`` not an integer >= 0, or ``u`` not ``(n, input)``
            (or given to a baseline without inputs).
        """
        n_ch = len(self.c)
        x0 = np.asarray(x0, dtype=np.float64)
        if x0.shape != (n_ch,):
            raise ValueError(f"x0 must have shape (channel,) = ({n_ch},), got {x0.shape}")
        check_setting("n", n, 0, integer=True, hint=" (time steps to run)")
        n = int(n)
        drive = self._drive(self._check_u(u, n, "one row per step"), n)
        out, x = np.empty((n, n_ch)), x0
        with np.errstate(over="ignore", invalid="ignore"):
            for t in range(n):
                x = self.A @ x + drive[t]
                out[t] = x
        return out

    def predict(self, x: np.ndarray, n: int, u: np.ndarray | None = None) -> np.ndarray:
        """``n``-step-ahead predictions of ``x[n:]`` from every ``x[:-n]``; ``u`` (time, input).

        Raises
        ------
        ValueError
            If ``x`` is not ``(time, channel)``, ``n`` not an integer in ``[1, time - 1]``, or ``u``
            not ``(time, input)`` (or given to a baseline without inputs).
        """
        n_ch = len(self.c)
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != n_ch or len(x) < 2:
            raise ValueError(f"x must have shape (time, channel) with channel = {n_ch} and at least 2 time "
                             f"points, got {x.shape}")
        check_setting("n", n, 1, high=len(x) - 1, integer=True,
                      hint=f" (prediction horizon for {len(x)} time points)")
        n = int(n)
        u = self._check_u(u, len(x), "aligned with x")
        m = len(x) - n
        z = x[:-n]
        with np.errstate(over="ignore", invalid="ignore"):
            for i in range(n):
                z = z @ self.A.T + self._drive(None if u is None else u[i + 1:i + 1 + m], m)
        return z


def fit_linear_baseline(x_train: np.ndarray, inputs: np.ndarray | None = None) -> LinearBaseline:
    """Least-squares linear model ``x[t+1] = A x[t] + C u[t+1] + c`` (VAR(1), ARX with inputs).

    Parameters
    ----------
    x_train : array, shape (time, channel)
    inputs : array, shape (time, input), optional
        External inputs aligned with ``x_train``; ``u[t+1]`` drives the step to ``x[t+1]``, as in
        :func:`neurodyn.training.fit_teacher_forcing`.

    Raises
    ------
    ValueError
        For fewer than 2 time points, wrong shapes, or NaN/Inf in the data or inputs.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.reconstruction import fit_linear_baseline
    >>> x = np.empty((50, 1))
    >>> x[0] = 5.0
    >>> for t in range(49):
    ...     x[t + 1] = 0.8 * x[t] + 0.2
    >>> baseline = fit_linear_baseline(x)
    >>> round(float(baseline.A[0, 0]), 6), round(float(baseline.c[0]), 6)
    (0.8, 0.2)
    """
    x = float64_copy(x_train, "x_train")
    if x.ndim != 2 or len(x) < 2:
        raise ValueError(f"x_train must be (time, channel) with at least 2 time points, got shape {x.shape}")
    check_finite(x, "x_train", "clean or interpolate the data first")
    if inputs is not None:
        inputs = float64_copy(inputs, "inputs")
        if inputs.ndim != 2 or len(inputs) != len(x):
            raise ValueError(f"inputs must be (time, input) with the {len(x)} time points of x_train, "
                             f"got shape {inputs.shape}")
        check_finite(inputs, "inputs", "clean or interpolate the inputs first")
    cols = [x[:-1]] if inputs is None else [x[:-1], inputs[1:]]
    X = np.concatenate(cols + [np.ones((len(x) - 1, 1))], axis=1)
    coef, *_ = np.linalg.lstsq(X, x[1:], rcond=None)
    n = x.shape[1]
    return LinearBaseline(coef[:n].T, coef[n:-1].T, coef[-1])
