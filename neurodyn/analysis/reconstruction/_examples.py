"""The rotation that the reconstruction docstrings' examples share."""

from __future__ import annotations

import numpy as np

from neurodyn.analysis.reconstruction._evaluate import ReconstructionResult, evaluate_reconstruction
from neurodyn.models import PLRNN


def rotation(n_steps: int = 400, angle: float = 0.2) -> tuple[PLRNN, np.ndarray]:
    """A PLRNN that rotates the plane by ``angle`` radians per step, and the circle it traces.

    Returns
    -------
    model : PLRNN
        ``z' = R z`` with the rotation ``R`` (no ReLU weights, no bias).
    x : ndarray, shape (time, channel) = (n_steps, 2)
        ``x[t] = (cos(angle t), sin(angle t))``, the model's orbit from ``(1, 0)``.

    Examples
    --------
    >>> model, x = rotation()
    >>> x.shape, bool(np.allclose(x[1:], x[:-1] @ model.A.detach().numpy().T))
    ((400, 2), True)
    """
    c, s = np.cos(angle), np.sin(angle)
    model = PLRNN.from_arrays(A=[[c, -s], [s, c]], W=np.zeros((2, 2)), h=np.zeros(2))
    t = angle * np.arange(n_steps)
    return model, np.c_[np.cos(t), np.sin(t)]


def rotation_result() -> tuple[ReconstructionResult, np.ndarray]:
    """The :func:`rotation` model scored on the second half of its circle, and that half.

    ``evaluate_reconstruction(model, x[:200], x[200:], observation="identity", n_transient=50,
    pe_steps=1, n_bins=10)``; the held-out data ``x[200:]`` has shape (time, channel) = (200, 2).

    Examples
    --------
    >>> result, held_out = rotation_result()
    >>> result.status, held_out.shape
    (('ok', 'ok', 'ok'), (200, 2))
    """
    model, x = rotation()
    result = evaluate_reconstruction(model, x[:200], x[200:], observation="identity", n_transient=50,
                                     pe_steps=1, n_bins=10)
    return result, x[200:]
