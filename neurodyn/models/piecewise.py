"""The piecewise-affine structure of the PL models as plain float64 NumPy arrays.

Every PL model here is written in one form,

    F(z) = L z + b + V relu(N z + o),

with ``N`` (hyperplane, latent) the hyperplane normals, ``o`` (hyperplane,) their offsets,
``V`` (latent, hyperplane) the mixing weights, ``L`` (latent, latent) the linear part and ``b``
(latent,) the bias (any constant input folded in). Bit ``i`` of the region code of ``z`` is
``N[i] @ z + o[i] > 0``; inside the region with code ``d`` the map is affine,
``F(z) = (L + V diag(d) N) z + (b + V (d * o))``.

=========================  =====================  ==========  =================================
model                      normals ``N``          offsets     mixing ``V``
=========================  =====================  ==========  =================================
PLRNN                      ``I``                  ``0``       ``W``
ShallowPLRNN               ``W2``                 ``h2``      ``W1``
ShallowPLRNN (clipped)     ``[W2; W2]``           ``[h2; 0]`` ``[W1, -W1]``
ALRNN                      last ``P`` rows of I   ``0``       last ``P`` columns of ``W``
=========================  =====================  ==========  =================================
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import torch

__all__ = ["PLSystem", "is_piecewise_linear", "pl_system"]


class PLSystem(NamedTuple):
    """A piecewise-affine map ``F(z) = L z + b + V relu(N z + o)`` (all float64 arrays).

    normals (hyperplane, latent), offsets (hyperplane,), linear (latent, latent), bias (latent,),
    mixing (latent, hyperplane).

    Examples
    --------
    ``F(z) = L z + b + V relu(N z + o)``; in each region the map is affine:

    >>> import numpy as np
    >>> from neurodyn.models.piecewise import PLSystem
    >>> system = PLSystem(normals=np.eye(1), offsets=np.zeros(1), linear=np.array([[0.5]]),
    ...                   bias=np.array([0.1]), mixing=np.array([[1.0]]))
    >>> system.n_latent, system.n_hyperplanes
    (1, 1)
    >>> system.step([[2.0], [-2.0]]).ravel().tolist()  # 0.5 z + 0.1 + relu(z)
    [3.1, -0.9]
    >>> J, c = system.affine_map([True])
    >>> J.tolist(), c.tolist()
    ([[1.5]], [0.1])
    """

    normals: np.ndarray
    offsets: np.ndarray
    linear: np.ndarray
    bias: np.ndarray
    mixing: np.ndarray

    @property
    def n_latent(self) -> int:
        return self.linear.shape[0]

    @property
    def n_hyperplanes(self) -> int:
        return self.normals.shape[0]

    def preactivation(self, z: Any) -> np.ndarray:
        """``N z + o``; ``z`` (..., latent) → (..., hyperplane)."""
        return np.asarray(z, dtype=np.float64) @ self.normals.T + self.offsets

    def region_code(self, z: Any) -> np.ndarray:
        """Boolean region code ``N z + o > 0``; ``z`` (..., latent) → (..., hyperplane)."""
        return self.preactivation(z) > 0

    def affine_map(self, code: Any) -> tuple[np.ndarray, np.ndarray]:
        """``(J, c)`` with ``F(z) = J z + c`` in the region ``code``.

        ``code`` (..., hyperplane) bool → ``J`` (..., latent, latent), ``c`` (..., latent).
        """
        d = np.asarray(code, dtype=np.float64)
        if d.shape[-1] != self.n_hyperplanes:
            raise ValueError(f"region code must have {self.n_hyperplanes} entries, got {d.shape}")
        vd = self.mixing * d[..., None, :]
        return self.linear + vd @ self.normals, self.bias + vd @ self.offsets

    def jacobian(self, z: Any) -> np.ndarray:
        """Jacobian ``dF/dz`` (relu'(0) = 0); ``z`` (..., latent) → (..., latent, latent)."""
        return self.affine_map(self.region_code(z))[0]

    def step(self, z: Any) -> np.ndarray:
        """``F(z)``; ``z`` (..., latent) → (..., latent), float64."""
        z = np.asarray(z, dtype=np.float64)
        return z @ self.linear.T + self.bias + np.maximum(self.preactivation(z), 0.0) @ self.mixing.T


def system_params(system: PLSystem) -> Any:
    """The same map as float64 params of a model family, so kernels can roll it out; or None.

    Normals that are rows of the identity with zero offsets give :class:`PLRNNParams` (``A = L``,
    column ``i`` of ``W`` the sum of the mixing columns of the hyperplanes on unit ``i``; every
    PLRNN, ALRNN and linear system); a diagonal ``L`` gives :class:`ShallowPLRNNParams`
    (``a = diag L``, ``W1 = V``, ``W2 = N``, ``h2 = o``; the clipped shallow PLRNN too). Other
    systems return None.
    """
    from neurodyn.models.plrnn import PLRNNParams
    from neurodyn.models.shplrnn import ShallowPLRNNParams

    N, o, L, b, V = (torch.as_tensor(np.array(x, dtype=np.float64)) for x in system)
    n = L.shape[0]
    empty = torch.zeros(n, 0, dtype=torch.float64)
    on_units = bool(torch.all(o == 0)) and bool(torch.all((N == 0) | (N == 1))) and bool(
        torch.all(N.sum(dim=1) == 1))
    if on_units:
        W = torch.zeros(n, n, dtype=torch.float64).index_add_(1, N.argmax(dim=1), V)
        return PLRNNParams(L, W, b, empty, None, None)
    if bool(torch.all(L == torch.diag(torch.diagonal(L)))):
        return ShallowPLRNNParams(torch.diagonal(L).clone(), V, N, b, o, empty, None, None, False)
    return None


def _np(x: torch.Tensor | None) -> np.ndarray | None:
    return None if x is None else x.detach().cpu().to(torch.float64).numpy()


def _plrnn_parts(p: Any) -> tuple[np.ndarray, ...]:
    A, W, h = _np(p.A), _np(p.W), _np(p.h)
    n = A.shape[0]
    return np.eye(n), np.zeros(n), A, h, W


def _alrnn_parts(p: Any) -> tuple[np.ndarray, ...]:
    A, W, h = _np(p.A), _np(p.W), _np(p.h)
    n, n_lin = A.shape[0], A.shape[0] - p.n_relu
    linear = A.copy()
    linear[:, :n_lin] += W[:, :n_lin]
    return np.eye(n)[n_lin:], np.zeros(p.n_relu), linear, h, W[:, n_lin:].copy()


def _shplrnn_parts(p: Any) -> tuple[np.ndarray, ...]:
    a, W1, W2, h1, h2 = (_np(x) for x in (p.a, p.W1, p.W2, p.h1, p.h2))
    if p.clipped:
        normals, offsets = np.vstack([W2, W2]), np.concatenate([h2, np.zeros_like(h2)])
        mixing = np.hstack([W1, -W1])
    else:
        normals, offsets, mixing = W2, h2, W1
    return normals, offsets, np.diag(a), h1, mixing


_PARTS = {"PLRNN": _plrnn_parts, "ALRNN": _alrnn_parts, "ShallowPLRNN": _shplrnn_parts}


def is_piecewise_linear(model: Any) -> bool:
    """True when :func:`pl_system` supports ``model``'s class.

    Examples
    --------
    >>> from neurodyn.models import GRU, PLRNN
    >>> from neurodyn.models.piecewise import is_piecewise_linear
    >>> is_piecewise_linear(PLRNN(0, 3, 3, observation="identity")), is_piecewise_linear(GRU(1, 3, 1))
    (True, False)
    """
    return type(model).__name__ in _PARTS


def pl_system(model: Any, u: Any = None) -> PLSystem:
    """The piecewise-affine structure of a PLRNN, ShallowPLRNN or ALRNN in float64.

    Parameters
    ----------
    model : PLRNN, ShallowPLRNN or ALRNN
        Any dtype/device; parameters are copied to CPU float64.
    u : array, shape (input,), optional
        A constant external input, folded into the bias (``b = h + C u``); ``None`` means zero.

    Returns
    -------
    PLSystem

    Raises
    ------
    TypeError
        If ``model`` is not one of the piecewise-linear models.
    ValueError
        If ``u`` has the wrong shape or holds NaN/Inf, or the parameters are not finite.

    Examples
    --------
    >>> import numpy as np
    >>> import torch
    >>> from neurodyn.models import PLRNN
    >>> from neurodyn.models.piecewise import pl_system
    >>> model = PLRNN.from_arrays(A=[0.5, 0.8], W=[[0.0, 0.3], [-0.2, 0.0]], h=[0.1, -0.1], C=[[1.0], [0.0]])
    >>> system = pl_system(model, u=[0.5])  # the constant input joins the bias
    >>> system.bias.tolist(), system.normals.shape
    ([0.6, -0.1], (2, 2))
    >>> z = np.array([0.3, -0.4])
    >>> step = model.step(torch.tensor(z), torch.tensor([0.5], dtype=torch.float64))
    >>> bool(np.allclose(system.step(z), step.detach().numpy()))
    True
    """
    name = type(model).__name__
    if name not in _PARTS:
        raise TypeError(
            f"pl_system needs a PLRNN, ShallowPLRNN or ALRNN, got {name}; "
            "use the general fixed-point finder for smooth models"
        )
    normals, offsets, linear, bias, mixing = _PARTS[name](model.params())
    C = _np(model.params().C)
    if u is not None:
        u = np.asarray(u.detach().cpu() if isinstance(u, torch.Tensor) else u, dtype=np.float64)
        if u.shape != (C.shape[1],):
            raise ValueError(f"u must have shape ({C.shape[1]},) (the model's inputs), got {u.shape}")
        if not np.all(np.isfinite(u)):
            raise ValueError("u contains NaN or Inf")
        bias = bias + C @ u
    system = PLSystem(normals, offsets, linear, bias, mixing)
    for field, arr in zip(system._fields, system):
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"the model's {field} contain NaN or Inf; the map is not defined")
    return system
