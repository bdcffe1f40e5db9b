"""Fused training rollouts: the whole time loop forward and BPTT backward in one compiled kernel.

:func:`fused_states` is a differentiable rollout whose ``torch.autograd.Function`` runs the time
loop in Numba (:mod:`~neurodyn.kernels.numba_bptt`) and backpropagates through time in Numba too,
instead of recording one autograd node per operation and step. Everything outside the recurrence
(effective weights with masks and Dale's law, the input drive, the readout, the loss) stays in
torch, so its gradients reach the raw parameters through autograd as usual.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from neurodyn.kernels._api import backend_available
from neurodyn.kernels._families import family_of

__all__ = ["FUSED_FAMILIES", "fused_backend", "fused_states"]

#: families with a fused forward + backward on the CPU (Numba)
FUSED_FAMILIES = ("leaky",)
_TRAIN_BACKENDS = ("auto", "torch", "numba")


def fused_backend(params: Any, *, backend: str = "auto", device: Any = "cpu",
                  dtype: torch.dtype = torch.float32, state_hook: Any = None) -> str:
    """The backend a training rollout of ``params`` runs on: ``"numba"`` (fused) or ``"torch"``.

    Parameters
    ----------
    params : params NamedTuple
        A model's ``params()``; the leaky RNN (:data:`FUSED_FAMILIES`) has a fused kernel.
    backend : {"auto", "torch", "numba"}
        ``auto`` takes the fused Numba path for a supported family on the CPU in float32/float64
        without a ``state_hook`` (a Python call per step cannot run inside the kernel) and torch
        otherwise; ``torch`` always runs the reference; ``numba`` insists on the fused path.
    device, dtype
        Where and in which dtype the rollout runs.
    state_hook : callable or None
        The training ``state_hook``; any hook rules the fused path out.

    Returns
    -------
    str
        ``"numba"`` or ``"torch"``.

    Raises
    ------
    ValueError
        For an unknown ``backend``, or ``backend="numba"`` where the fused path cannot run (the
        message names the reason and suggests ``backend="auto"``).
    ImportError
        For ``backend="numba"`` without Numba installed.

    Examples
    --------
    >>> import torch
    >>> from neurodyn.kernels import fused_backend
    >>> from neurodyn.models import GRU, LeakyRNN
    >>> fused_backend(LeakyRNN(1, 4, 1).params())
    'numba'
    >>> fused_backend(GRU(1, 4, 1).params()), fused_backend(LeakyRNN(1, 4, 1).params(), backend="torch")
    ('torch', 'torch')
    """
    if backend not in _TRAIN_BACKENDS:
        raise ValueError(f"unknown training backend {backend!r}; choose one of {', '.join(_TRAIN_BACKENDS)}")
    if backend == "torch":
        return "torch"
    family = family_of(params)
    reason = None
    if family is None or family.name not in FUSED_FAMILIES:
        name = type(params).__name__ if family is None else family.name
        reason = f"model family {name!r} has no fused training kernel (fused: {', '.join(FUSED_FAMILIES)})"
    elif getattr(params, family.recurrent).ndim != 2:
        reason = "ensemble params are not fused; train them with backend='torch'"
    elif torch.device(device).type != "cpu":
        reason = f"the fused Numba kernel runs on the CPU, not {torch.device(device)}"
    elif dtype not in (torch.float32, torch.float64):
        reason = f"the fused kernel runs float32 or float64, not {dtype}"
    elif state_hook is not None:
        reason = "a state_hook runs Python at every step, which the fused kernel cannot"
    if reason is None and not backend_available("numba"):
        if backend == "numba":
            raise ImportError("backend 'numba' is not installed; pip install numba")
        reason = "numba is not installed"
    if reason is None:
        return "numba"
    if backend == "numba":
        raise ValueError(f"backend='numba' cannot train this model: {reason}; use backend='auto'")
    return "torch"


def fused_states(params: Any, h0: torch.Tensor, inputs: torch.Tensor, *,
                 noise: torch.Tensor | None = None) -> torch.Tensor:
    """Differentiable leaky-RNN rollout with the time loop and its BPTT in Numba.

    ``h[t+1] = (1 - alpha) h[t] + alpha phi(W_rec h[t] + W_in u[t] + b) + noise[t]``: the same map
    as :func:`neurodyn.models.leaky_rnn_step` plus the additive noise, so with the noise the model
    itself draws (``model.noise_scale`` times its standard-normal draws) this equals
    ``model(inputs, h0).states`` within float tolerance, gradients included.

    Parameters
    ----------
    params : LeakyRNNParams
        Effective parameters of one network (``model.params()``); gradients flow to ``w_rec``,
        ``w_in``, ``b`` and through them to the model's raw parameters (masks, Dale's law).
    h0 : Tensor, shape (batch, unit)
        Initial state, CPU, float32 or float64 (the dtype of the rollout); may require grad.
    inputs : Tensor, shape (batch, time, input)
        External input (``time`` steps).
    noise : Tensor, shape (batch, time, unit), optional
        Additive state noise of each step, already scaled (no gradient flows to it). Giving it as
        a tensor keeps the rollout reproducible and equal across backends.

    Returns
    -------
    Tensor, shape (batch, time, unit)
        ``states[:, t]`` is the state after step ``t``.

    Raises
    ------
    ValueError
        If the family, device or dtype is not supported (see :func:`fused_backend`), or a shape
        does not match.

    Notes
    -----
    The forward stores the states and ``alpha phi'(pre)`` (2 x time x batch x unit values); the
    backward runs ``g <- (1 - alpha) g + (slope * g) W_rec`` backwards in time (Werbos 1990,
    backpropagation through time) and forms ``dL/dW_rec`` as one GEMM over all steps. float32
    rollouts use the kernels' rational tanh (absolute error < 4e-7), float64 the exact one.

    Examples
    --------
    >>> import torch
    >>> from neurodyn.kernels import fused_states
    >>> from neurodyn.models import LeakyRNN
    >>> model = LeakyRNN(2, 8, 1, alpha=0.5, seed=0).double()
    >>> x = torch.randn(3, 20, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    >>> h0 = model.initial_state(3)
    >>> states = fused_states(model.params(), h0, x)
    >>> tuple(states.shape)  # (batch, time, unit)
    (3, 20, 8)
    >>> bool(torch.allclose(states, model(x, h0).states, atol=1e-12))
    True
    >>> states.square().sum().backward()
    >>> ref = model.w_rec.grad.clone(); model.zero_grad()
    >>> model(x, h0).states.square().sum().backward()
    >>> bool(torch.allclose(ref, model.w_rec.grad, rtol=1e-10, atol=1e-12))
    True
    """
    fused_backend(params, backend="numba", device=h0.device, dtype=h0.dtype)
    from neurodyn.kernels.numba_math import ACTIVATION_CODES
    from neurodyn.models.leaky_rnn import leaky_rnn_drive

    n_batch, n_unit = h0.shape[0], params.w_rec.shape[-1]
    if h0.ndim != 2 or h0.shape[1] != n_unit:
        raise ValueError(f"h0 must have shape (batch, {n_unit}), got {tuple(h0.shape)}")
    if inputs.ndim != 3 or inputs.shape[0] != n_batch:
        raise ValueError(f"inputs must have shape ({n_batch}, time, input), got {tuple(inputs.shape)}")
    shape = (n_batch, inputs.shape[1], n_unit)
    if noise is not None and tuple(noise.shape) != shape:
        raise ValueError(f"noise must have shape {shape} (batch, time, unit), got {tuple(noise.shape)}")
    # time-major (time, batch, unit) throughout, so each step of the kernel reads one contiguous slab
    drive = leaky_rnn_drive(params, inputs.transpose(0, 1)).to(h0.dtype).expand(shape[1], n_batch, n_unit)
    xi = None if noise is None else noise.transpose(0, 1)
    states = _LeakyRecurrence.apply(params.w_rec.to(h0.dtype), drive, h0, xi, float(params.alpha),
                                    ACTIVATION_CODES[params.activation])
    return states.transpose(0, 1)


def _np(x: torch.Tensor) -> np.ndarray:
    """A contiguous NumPy view (or copy) of ``x``, detached."""
    return x.detach().contiguous().numpy()


class _LeakyRecurrence(torch.autograd.Function):
    """``(w_rec, drive, h0, noise) -> states``, all time-major (time, batch, unit), with the loops in
    :mod:`~neurodyn.kernels.numba_bptt`."""

    @staticmethod
    def forward(ctx, w_rec, drive, h0, noise, alpha, code):  # type: ignore[override]
        from neurodyn.kernels.numba_bptt import leaky_forward_kernel

        dt = h0.detach().numpy().dtype.type
        n_steps, n_batch, n_unit = drive.shape
        w = w_rec.detach().contiguous()
        states = torch.empty((n_steps + 1, n_batch, n_unit), dtype=h0.dtype)
        slopes = torch.empty((n_steps, n_batch, n_unit), dtype=h0.dtype)
        states[0] = h0.detach()
        xi = _np(noise) if noise is not None else np.empty((0, n_batch, n_unit), dt)
        leaky_forward_kernel(w.numpy(), _np(drive), xi, states.numpy(), slopes.numpy(), dt(alpha),
                             int(code), dt is np.float64)
        ctx.save_for_backward(w, states, slopes)
        ctx.alpha = alpha
        return states[1:]

    @staticmethod
    def backward(ctx, grad_states):  # type: ignore[override]
        from neurodyn.kernels.numba_bptt import leaky_backward_kernel

        w, states, slopes = ctx.saved_tensors
        n_steps, n_batch, n_unit = slopes.shape
        grad_drive = torch.empty_like(slopes)
        grad_h = torch.zeros((n_batch, n_unit), dtype=w.dtype)
        dt = w.numpy().dtype.type
        leaky_backward_kernel(w.numpy().T.copy(), _np(grad_states), slopes.numpy(), grad_drive.numpy(),
                              grad_h.numpy(), dt(ctx.alpha))
        grad_w = grad_drive.reshape(-1, n_unit).T @ states[:-1].reshape(-1, n_unit)
        return grad_w, grad_drive, grad_h, None, None, None
