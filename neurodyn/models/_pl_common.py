"""Pieces shared by the piecewise-linear models (PLRNN, shallow PLRNN, ALRNN).

Input weights ``C``, the readout (``observation="linear"``: ``y = B z + b_out``; ``"identity"``:
``y = z``), argument checks and the conversion of user arrays to tensors live here so that each
model module only states its own recursion.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from torch import nn

from neurodyn._checks import check_setting
from neurodyn.models import _family as fam
from neurodyn.models._base import (
    RecurrentModel,
    check_param_memory,
    check_sizes,
    init_generator,
    init_h0,
    init_input_weights,
)
from neurodyn.models.leaky_rnn import check_nonnegative

OBSERVATIONS = ("linear", "identity")


class PLShell(RecurrentModel):
    """The latent size, noise level, readout and config of every PL model; subclasses add ``params``."""

    n_latent = property(lambda self: self.n_units, doc="The latent dimension (same as ``n_units``).")
    noise_scale = property(lambda self: self.noise_std, doc="Process-noise standard deviation per step.")

    def config(self) -> dict[str, Any]:
        """The constructor arguments shared by the PL models, then the model's own ``config_fields``."""
        return {"n_inputs": self.n_inputs, "n_latent": self.n_units, "n_outputs": self.n_outputs,
                "observation": self.observation, "noise_std": self.noise_std, "train_h0": self.train_h0,
                "seed": self.seed, "dtype": self.dtype_name, **super().config()}

    def readout(self, h: torch.Tensor) -> torch.Tensor:
        """``B z + b_out`` or ``z`` (identity observation); ``h`` (..., latent)."""
        if self.observation == "identity":
            return h
        return h @ self.B.T + self.b_out


def drive(p: Any, u: torch.Tensor | None) -> torch.Tensor:
    """The state-independent part ``h + C u`` (PLRNN, ALRNN); ``u`` (..., input) → (..., latent)."""
    return fam.affine(p.C, u, p.h)


def resolve_latent(n_latent: int | None, n_units: int | None) -> int:
    """``n_units`` is accepted as a keyword alias of ``n_latent`` (the generic model size); each given
    one must be an integer >= 1 (a whole float such as ``4.0`` is taken as ``4``)."""
    if n_latent is None and n_units is None:
        raise TypeError("give the latent dimension n_latent (alias n_units)")
    for name, value in (("n_latent", n_latent), ("n_units", n_units)):
        if value is not None:
            check_setting(name, value, 1, integer=True)
    if n_latent is not None and n_units is not None and int(n_latent) != int(n_units):
        raise ValueError(f"n_latent={n_latent} and n_units={n_units} disagree; give only one")
    return int(n_latent if n_latent is not None else n_units)


def sizes(
    n_inputs: int, n_latent: int | None, n_units: int | None, n_outputs: int | None, observation: str
) -> tuple[int, int]:
    """Resolve and check the latent and output sizes and the observation; returns ``(n_latent, n_outputs)``.

    ``n_outputs`` defaults to ``n_latent``. Raises as :func:`resolve_latent` and
    :func:`~neurodyn.models._base.check_sizes`, and for an unknown ``observation`` or an identity
    observation whose output size is not the latent size.
    """
    n = resolve_latent(n_latent, n_units)
    _, n, n_outputs = check_sizes(n_inputs, n, n if n_outputs is None else n_outputs, units="n_latent")
    if observation not in OBSERVATIONS:
        raise ValueError(f"observation must be one of {OBSERVATIONS}, got {observation!r}")
    if observation == "identity" and n_outputs != n:
        raise ValueError(
            f"observation='identity' needs n_outputs == n_latent ({n}), got {n_outputs}; "
            "use observation='linear' for a learned readout"
        )
    return n, n_outputs


def check_pl_memory(module: nn.Module, n_values: float, n: int, n_inputs: int, n_outputs: int,
                    dtype: str | torch.dtype, detail: str, fix: str = "lower n_latent") -> None:
    """:func:`~neurodyn.models._base.check_param_memory` for a PL model of latent size ``n``: its own
    ``n_values`` plus the input weights, readout and initial state, before anything is allocated."""
    io = n * (int(n_inputs) + n_outputs + 2) + n_outputs
    check_param_memory(type(module).__name__, n_values + io, detail, fix,
                       itemsize=8 if "64" in str(dtype) else 4)


def init_common(
    module: nn.Module, n_inputs: int, n: int, n_outputs: int, observation: str, noise_std: float,
    seed: Any,
) -> torch.Generator:
    """Store sizes, observation, noise level and seed; return the initialisation generator.

    Raises
    ------
    ValueError
        If ``noise_std`` is negative or not finite.
    """
    module.n_inputs, module.n_units, module.n_outputs = int(n_inputs), n, n_outputs
    module.observation = observation
    module.noise_std = check_nonnegative("noise_std", noise_std)
    module.seed, gen = init_generator(seed)
    return gen


def init_pl_weights(
    module: nn.Module, n: int, full_A: bool, w_diagonal: bool, gain: float, gen: torch.Generator
) -> None:
    """Create ``A``, ``W``, ``h``, the input/readout weights and the ``W`` mask (PLRNN, ALRNN).

    ``A`` is uniform in [0.5, 0.9] (a vector, or its diagonal matrix when ``full_A``),
    ``W ~ N(0, gain**2 / n)`` and ``h = 0``; the mask zeroes the diagonal of ``W`` unless
    ``w_diagonal``.
    """
    module.full_A, module.w_diagonal, module.gain = bool(full_A), bool(w_diagonal), float(gain)
    a = init_decay(n, gen)
    module.A = nn.Parameter(torch.diag(a) if full_A else a)
    module.W = nn.Parameter(torch.randn(n, n, generator=gen) * gain / math.sqrt(n))
    module.h = nn.Parameter(torch.zeros(n))
    init_io(module, gen)
    module.register_buffer("w_mask", torch.ones(n, n) - (0 if w_diagonal else torch.eye(n)))


def init_decay(n: int, gen: torch.Generator) -> torch.Tensor:
    """The initial diagonal of ``A`` (latent,), uniform in [0.5, 0.9], drawn from ``gen``."""
    return 0.5 + 0.4 * torch.rand(n, generator=gen)


def finish_init(module: nn.Module, train_h0: bool, dtype: str | torch.dtype) -> None:
    """Create the learnable initial state when asked, then convert to ``dtype``."""
    init_h0(module, train_h0)
    apply_dtype(module, dtype)


def effective_A_W(module: nn.Module) -> tuple[torch.Tensor, torch.Tensor]:
    """The full matrix ``A`` and the masked ``W`` of a PLRNN or ALRNN."""
    A = module.A if module.full_A else torch.diag(module.A)
    return A, module.W * module.w_mask


def init_io(module: nn.Module, gen: torch.Generator) -> None:
    """Create ``C`` (latent, input), and for a linear readout ``B`` (output, latent), ``b_out``."""
    n, n_in, n_out = module.n_units, module.n_inputs, module.n_outputs
    module.C = nn.Parameter(init_input_weights(gen, n, n_in))
    if module.observation == "linear":
        module.B = nn.Parameter(torch.randn(n_out, n, generator=gen) / math.sqrt(n))
        module.b_out = nn.Parameter(torch.zeros(n_out))
    else:
        module.B = None
        module.b_out = None


def input_jacobian(p: Any, z: torch.Tensor, u: torch.Tensor | None) -> torch.Tensor:
    """``dF/du = C`` of every PL model (inputs enter additively); (..., latent) → (..., latent, input)."""
    return fam.broadcast_to_states(p.C, z)


def family(name: str, recurrent: str, vectors: tuple[str, ...], step, drive, jacobian) -> fam.Family:
    """The :class:`~neurodyn.models._family.Family` of a PL model (noise-free map, inputs through ``C``)."""
    return fam.Family(name, recurrent, (*vectors, "b_out"), step, drive, noise_scale=lambda p: 0.0,
                      n_inputs=lambda p: p.C.shape[-1], jacobian=jacobian, input_jacobian=input_jacobian)


def as_array(name: str, x: Any, ndim: tuple[int, ...]) -> np.ndarray:
    """A finite float64 array with one of the allowed numbers of dimensions.

    Raises
    ------
    ValueError
        If ``x`` has the wrong number of dimensions or holds NaN/Inf.
    """
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu().numpy()
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim not in ndim:
        raise ValueError(f"{name} must have {' or '.join(map(str, ndim))} dimensions, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or Inf; clean the array before building the model")
    return arr


def split_A(A: Any, n: int | None = None) -> tuple[np.ndarray, bool]:
    """Return ``(A, is_full)``: the diagonal vector of a vector/diagonal ``A``, or the full matrix."""
    arr = as_array("A", A, (1, 2))
    if arr.ndim == 2 and arr.shape[0] != arr.shape[1]:
        raise ValueError(f"A must be square, got shape {arr.shape}")
    m = arr.shape[0]
    if n is not None and m != n:
        raise ValueError(f"A has size {m} but the latent dimension is {n}")
    if arr.ndim == 1:
        return arr, False
    if np.count_nonzero(arr - np.diag(np.diag(arr))) == 0:
        return np.diag(arr).copy(), False
    return arr, True


def check_shape(name: str, arr: np.ndarray, shape: tuple[int, ...]) -> None:
    """Raise ``ValueError`` when ``arr.shape != shape``."""
    if arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {arr.shape}")


def input_weights(C: Any, n: int) -> np.ndarray:
    """``C`` as a (latent, input) float64 array (empty when ``None``)."""
    if C is None:
        return np.zeros((n, 0))
    arr = as_array("C", C, (1, 2))
    arr = arr[:, None] if arr.ndim == 1 else arr
    check_shape("C", arr, (n, arr.shape[1]))
    return arr


def check_array(name: str, x: Any, shape: tuple[int | None, ...]) -> np.ndarray:
    """:func:`as_array` with ``len(shape)`` dimensions, then :func:`check_shape`.

    ``None`` in ``shape`` accepts any size along that axis.
    """
    arr = as_array(name, x, (len(shape),))
    check_shape(name, arr, tuple(arr.shape[i] if s is None else s for i, s in enumerate(shape)))
    return arr


def from_pl_arrays(cls: type, A: Any, W: Any, h: Any, C: Any, *, dtype: torch.dtype, **options: Any) -> Any:
    """The PLRNN or ALRNN ``from_arrays``: check the arrays, build ``cls`` (identity observation, ``options``
    passed on) and copy them in.

    ``A`` is the diagonal vector or the full matrix (see :func:`split_A`), ``W`` (latent, latent), ``h``
    (latent,), ``C`` (latent, input) or None; a non-zero diagonal of ``W`` is kept.
    """
    a, full = split_A(A)
    n = a.shape[0]
    W_ = check_array("W", W, (n, n))
    h_ = check_array("h", h, (n,))
    C_ = input_weights(C, n)
    model = cls(C_.shape[1], n, n, **options, full_A=full, w_diagonal=bool(np.any(np.diag(W_) != 0)),
                observation="identity", dtype=dtype)
    set_params(model, A=a, W=W_, h=h_, C=C_)
    return model


def set_params(module: nn.Module, **values: np.ndarray) -> None:
    """:func:`set_param` for each named parameter of ``module``."""
    for name, value in values.items():
        set_param(getattr(module, name), value)


def set_param(param: nn.Parameter, value: np.ndarray) -> None:
    """Copy ``value`` into ``param`` in place (no gradient)."""
    with torch.no_grad():
        param.copy_(torch.as_tensor(value, dtype=param.dtype))


DTYPES = {"float32": torch.float32, "float64": torch.float64}


def apply_dtype(module: nn.Module, dtype: str | torch.dtype) -> None:
    """Store the parameter dtype name and convert the module to it.

    Raises
    ------
    ValueError
        If ``dtype`` is not float32 or float64.
    """
    name = str(dtype).replace("torch.", "")
    if name not in DTYPES:
        raise ValueError(f"dtype must be 'float32' or 'float64', got {dtype!r}")
    module.dtype_name = name
    if name != "float32":
        module.to(DTYPES[name])
