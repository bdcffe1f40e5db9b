"""``rollout``: validate, pick a backend, run the kernel in time chunks, return a frozen result."""

from __future__ import annotations

import importlib.util
import math
import warnings
from functools import partial
from typing import Any

import numpy as np
import torch

from neurodyn._checks import check_setting
from neurodyn._seed import SeedLike, resolve_seed, torch_generator
from neurodyn.kernels._families import cast, family_of, is_ensemble, kernel_for, lift
from neurodyn.kernels._result import RolloutResult
from neurodyn.kernels.reference import draw_noise, rollout_torch

BACKENDS = ("torch", "numba", "triton")
_INSTALL_HINT = {
    "numba": "pip install numba (a core dependency of neurodyn)",
    "triton": "pip install 'neurodyn[gpu]' (Triton needs a CUDA GPU, or TRITON_INTERPRET=1 on CPU)",
}
_NOISE_CHUNK_ELEMENTS = 1 << 24  # noise drawn per chunk of time steps: at most 64 MiB of float32


def backend_available(name: str) -> bool:
    """Whether backend ``name`` can be imported (without importing it).

    Examples
    --------
    >>> from neurodyn.kernels import BACKENDS, backend_available
    >>> backend_available("torch")  # always there; "numba" and "triton" depend on the install
    True
    >>> "numba" in BACKENDS
    True
    """
    if name == "torch":
        return True
    return importlib.util.find_spec(name) is not None


def _choose_backend(backend: str, device: torch.device, family: Any, params: Any, dtype) -> str:
    """The backend that runs: ``auto`` takes a compiled one only when it has the family's kernel."""
    if backend not in (*BACKENDS, "auto"):
        raise ValueError(f"unknown backend {backend!r}; choose one of auto, {', '.join(BACKENDS)}")
    if backend == "auto":
        if device.type == "cuda" and backend_available("triton") and kernel_for("triton", family):
            from neurodyn.kernels._triton_backend import supports

            return "triton" if supports(family.name, params, dtype) is None else "torch"
        if device.type == "cpu" and backend_available("numba") and kernel_for("numba", family):
            return "numba"
        return "torch"
    if not backend_available(backend):
        raise ImportError(f"backend {backend!r} is not installed; {_INSTALL_HINT[backend]}")
    if backend == "torch":
        return backend
    if family is None:
        raise ValueError(f"backend {backend!r} does not know this model family; use backend='torch'")
    if kernel_for(backend, family) is None:
        raise ValueError(f"backend {backend!r} has no kernel for model family {family.name!r}; use "
                         f"backend='torch' or register one with register_family(..., kernels=...)")
    if backend == "numba" and device.type != "cpu":
        raise ValueError("the numba backend runs on CPU tensors; move h0 to the CPU or use triton")
    if backend == "triton":
        from neurodyn.kernels._triton_backend import interpreting, supports

        reason = supports(family.name, params, dtype)
        if reason:
            raise ValueError(reason)
        if device.type != "cuda" and not interpreting():
            raise ValueError("the triton backend needs CUDA tensors (or TRITON_INTERPRET=1 for testing)")
    return backend


def _check_tensor(name: str, x: torch.Tensor) -> None:
    """One-line ``TypeError`` unless ``x`` is a tensor, ``ValueError`` if it holds NaN or Inf (not
    checked under a ``torch.func`` transform, where its values cannot be read)."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if torch._C._functorch.is_functorch_wrapped_tensor(x):
        return
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} contains NaN or Inf; clean it before the rollout")


def _shapes(h0, inputs, n_steps, lead, n_state, n_inputs):
    if h0.ndim != len(lead) + 1 or tuple(h0.shape[:-1]) != lead[: h0.ndim - 1] or h0.shape[-1] != n_state:
        want = "(network, batch, unit)" if len(lead) == 2 else "(batch, unit)"
        raise ValueError(f"h0 must have shape {want} with unit = {n_state}, got {tuple(h0.shape)}")
    if inputs is None:
        if n_steps is None:
            raise ValueError("without inputs, give n_steps")
        return int(n_steps), False
    varying = inputs.ndim == h0.ndim + 1
    if inputs.ndim not in (h0.ndim, h0.ndim + 1) or tuple(inputs.shape[: h0.ndim - 1]) != tuple(
        h0.shape[:-1]
    ) or inputs.shape[-1] != n_inputs:
        raise ValueError(
            f"inputs must have shape {(*h0.shape[:-1], n_inputs)} (constant) or "
            f"{(*h0.shape[:-1], 'time', n_inputs)} (time-varying), got {tuple(inputs.shape)}"
        )
    if not varying:
        if n_steps is None:
            raise ValueError("constant inputs need n_steps")
        return int(n_steps), False
    if n_steps is not None and int(n_steps) != inputs.shape[-2]:
        raise ValueError(f"n_steps={n_steps} but inputs have {inputs.shape[-2]} time steps")
    return int(inputs.shape[-2]), True


def _legacy_positional(model: Any, legacy: tuple, h0: Any, inputs: Any) -> tuple[Any, Any]:
    """Resolve ``h0``/``inputs`` from keywords, the deprecated positional form, or the model."""
    if legacy:
        if len(legacy) > 2 or (h0 is not None) or (len(legacy) == 2 and inputs is not None):
            raise TypeError("rollout takes the model, then h0= and inputs= as keywords")
        warnings.warn("rollout(model, h0, inputs) with positional h0/inputs is deprecated; "
                      "write rollout(model, inputs=..., h0=...)", DeprecationWarning, stacklevel=3)
        h0 = legacy[0]
        inputs = legacy[1] if len(legacy) == 2 else inputs
    if h0 is None:
        if hasattr(model, "initial_state") and isinstance(inputs, torch.Tensor) and inputs.ndim == 3:
            return model.initial_state(inputs.shape[0], device=inputs.device, dtype=inputs.dtype), inputs
        raise ValueError("rollout needs h0=, the initial state (batch, unit); it can be left out only "
                         "for a model given time-varying inputs (batch, time, input)")
    return h0, inputs


def rollout(
    model_or_params: Any,
    *legacy: torch.Tensor | None,
    inputs: torch.Tensor | None = None,
    h0: torch.Tensor | None = None,
    n_steps: int | None = None,
    backend: str = "auto",
    return_trajectory: bool = True,
    every: int = 1,
    noise_std: float | None = 0.0,
    seed: SeedLike = None,
) -> RolloutResult:
    """Batched rollout of one network or an ensemble of networks, without gradients.

    Parameters
    ----------
    model_or_params : RecurrentModel or its ``params()`` NamedTuple
        Params of a registered family (:data:`FAMILIES`) run on the torch backend through the
        family's step, and on Numba/Triton where the family has a kernel there (the leaky RNN,
        GRU, PLRNN, ALRNN and shallow PLRNN do; the LSTM runs on torch). A model whose params
        type is not registered runs on torch through its own ``step``. Ensemble params (tensor
        fields with a leading ``network`` dim) come from :func:`stack_params`.
    inputs : Tensor, optional
        Constant ``(..., input)`` or time-varying ``(..., time, input)`` external input, where
        ``...`` are the leading dims of ``h0``. Keyword-only, as ``h0``: the order of the two is
        that of ``model(inputs, h0)``.
    h0 : Tensor, shape (batch, unit) or (network, batch, unit) for ensembles
        Initial state, float32 or float64; its dtype and device set those of the rollout. May be
        left out for a model (not params) given time-varying ``inputs``: then the model's
        ``initial_state`` is used. The older positional form ``rollout(model, h0, inputs)`` still
        works and emits a ``DeprecationWarning``.
    n_steps : int, optional
        Number of time steps (taken from time-varying ``inputs`` when omitted).
    backend : {"auto", "torch", "numba", "triton"}
        ``auto``: Triton for CUDA tensors and Numba for CPU tensors when installed and the family
        has a kernel there, else torch. ``result.backend`` says which ran.
    return_trajectory : bool
        Return the states, or only the final state.
    every : int
        Record every ``every``-th state (after steps ``every, 2*every, ...``).
    noise_std : float or None
        Per-step std of additive Gaussian state noise; ``None`` uses the model's own noise scale
        (``sqrt(2 alpha) * noise_std`` for a leaky RNN).
    seed : int, Generator or None
        Noise seed; the noise of step ``t`` is the ``t``-th draw of shape ``h0.shape`` from
        ``neurodyn._seed.torch_generator(seed)`` on the CPU, the same for every backend and equal to
        ``model.forward(noise=True, generator=torch_generator(seed))``.

    Returns
    -------
    RolloutResult

    Raises
    ------
    ValueError
        Without ``h0`` where it cannot be inferred; on shape mismatches, NaN/Inf in
        ``h0``/``inputs``, unsupported dtypes, ``every`` not an integer >= 1, ``n_steps`` not an
        integer >= 0 (bools and fractions such as 2.9 are refused, not truncated), a
        negative or non-finite ``noise_std``.
    TypeError
        If ``seed`` is not a ``SeedLike`` (checked even when no noise is drawn).
        An explicitly requested compiled backend without a kernel for the family also raises
        ``ValueError`` (naming the family).
    ImportError
        If an explicitly requested backend is not installed.

    Examples
    --------
    >>> import torch
    >>> from neurodyn.kernels import rollout
    >>> from neurodyn.models import PLRNN
    >>> model = PLRNN.from_arrays(A=[0.5], W=[[0.0]], h=[1.0])  # z' = 0.5 z + 1, fixed point 2
    >>> result = rollout(model, h0=torch.zeros(3, 1, dtype=torch.float64), n_steps=40, backend="torch")
    >>> tuple(result.states.shape), result.backend  # (batch, time, unit)
    ((3, 40, 1), 'torch')
    >>> round(result.final[0, 0].item(), 6)
    2.0
    >>> noisy = rollout(model, h0=torch.zeros(3, 1, dtype=torch.float64), n_steps=5, noise_std=0.1, seed=0,
    ...                 backend="torch")
    >>> again = rollout(model, h0=torch.zeros(3, 1, dtype=torch.float64), n_steps=5, noise_std=0.1, seed=0,
    ...                 backend="torch")
    >>> bool(torch.equal(noisy.states, again.states)), noisy.seed  # same seed, same noise
    (True, 0)
    """
    h0, inputs = _legacy_positional(model_or_params, legacy, h0, inputs)
    params = model_or_params.params() if hasattr(model_or_params, "step") else model_or_params
    family = family_of(params)
    _check_tensor("h0", h0)
    h0 = h0.detach()
    if h0.dtype not in (torch.float32, torch.float64):
        raise ValueError(f"h0 must be float32 or float64, got {h0.dtype}")
    if inputs is not None:
        _check_tensor("inputs", inputs)
        inputs = inputs.detach().to(h0.dtype)
    check_setting("every", every, 1, integer=True)
    if n_steps is not None:
        check_setting("n_steps", n_steps, 0, integer=True)
    every = int(every)
    if family is None:
        if not hasattr(model_or_params, "step"):
            raise TypeError(f"rollout does not know params of type {type(params).__name__}; pass the model")
        lead, n_state, ens = tuple(h0.shape[:-1]), model_or_params.state_size, False
        n_inputs = model_or_params.n_inputs
    else:
        params = cast(params, dtype=h0.dtype, device=h0.device)
        ens = is_ensemble(params, family)
        w = getattr(params, family.recurrent)
        n_state = family.n_state(params)
        if ens and h0.ndim != 3:
            raise ValueError(
                f"ensemble params ({w.shape[0]} networks) need h0 of shape (network, batch, unit), "
                f"got {tuple(h0.shape)}"
            )
        lead = (w.shape[0], h0.shape[1]) if ens else (h0.shape[0],)
        n_inputs = family.n_inputs(params)
    n_steps, varying = _shapes(h0, inputs, n_steps, lead, n_state, n_inputs)
    if n_steps < 0:
        raise ValueError(f"n_steps must be >= 0, got {n_steps}")
    if noise_std is None:
        if hasattr(model_or_params, "step"):
            noise_std = model_or_params.noise_scale
        else:
            noise_std = 0.0 if family is None else family.noise_scale(params)
    noise_std = float(noise_std or 0.0)
    if not math.isfinite(noise_std) or noise_std < 0:
        raise ValueError(f"noise_std must be finite and >= 0, got {noise_std}")
    if noise_std == 0 and not isinstance(seed, (np.random.Generator, torch.Generator, type(None))):
        resolve_seed(seed)  # a malformed seed raises even when no noise is drawn
    seed_int = resolve_seed(seed) if noise_std > 0 else None
    gen = torch_generator(seed_int) if noise_std > 0 else None
    name = _choose_backend(backend, h0.device, family, params, h0.dtype)
    if name == "torch":
        step = model_or_params.step if family is None else partial(family.step, lift(params, family))
        states, final = rollout_torch(
            step, h0, inputs, n_steps=n_steps, time_varying=varying, every=every,
            noise_std=noise_std, generator=gen, return_trajectory=return_trajectory,
        )
    else:
        states, final = _run_kernel(
            name, family, params, h0, inputs, n_steps=n_steps, varying=varying, every=every,
            noise_std=noise_std, gen=gen, return_trajectory=return_trajectory, ensemble=ens,
        )
    return RolloutResult(states, final, name, every, noise_std, seed_int)


def _run_kernel(name, family, params, h0, inputs, *, n_steps, varying, every, noise_std, gen,
                return_trajectory, ensemble):
    """Bring everything to ensemble form (network, batch, ...) and run the kernel in time chunks."""
    if not ensemble:
        params = type(params)(*(v.unsqueeze(0) if isinstance(v, torch.Tensor) else v for v in params))
        h0 = h0.unsqueeze(0)
        inputs = None if inputs is None else inputs.unsqueeze(0)
    n_net, n_batch, n_unit = h0.shape
    with torch.no_grad():
        flat = inputs.reshape(n_net, -1, inputs.shape[-1]) if varying else inputs
        drive = family.drive(lift(params, family), flat)
        drive = drive.reshape(n_net, n_batch, n_steps, -1) if varying else drive.unsqueeze(-2)
        drive = drive.expand(n_net, n_batch, drive.shape[-2], drive.shape[-1]).contiguous()
    run = kernel_for(name, family)
    h = h0.clone().contiguous()
    n_rec = n_steps // every
    states = h0.new_empty((n_net, n_batch, n_rec, n_unit)) if return_trajectory else None
    chunk = n_steps if noise_std == 0 else max(1, _NOISE_CHUNK_ELEMENTS // max(h.numel(), 1))
    for t0 in range(0, n_steps, max(chunk, 1)):
        n = min(chunk, n_steps - t0)
        d = drive[:, :, t0:t0 + n].contiguous() if varying else drive
        noise = None
        if noise_std > 0:
            noise = draw_noise(gen, tuple(h.shape), n, h.dtype).to(h.device).contiguous()
        r0, r1 = t0 // every, (t0 + n) // every
        out = h.new_empty((n_net, n_batch, r1 - r0, n_unit)) if states is not None else None
        run(params, h, d, noise, noise_std, n, t0, every, out)
        if states is not None:
            states[:, :, r0:r1] = out
    if not ensemble:
        return (None if states is None else states[0]), h[0]
    return states, h
