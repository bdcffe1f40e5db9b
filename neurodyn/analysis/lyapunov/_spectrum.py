"""Lyapunov spectrum of a discrete-time recurrent model by the QR (Benettin) method."""

from __future__ import annotations

import copy
import warnings
from typing import Any

import numpy as np

from neurodyn._seed import SeedLike, numpy_rng, resolve_seed
from neurodyn.analysis.lyapunov._result import LyapunovResult

BACKENDS = ("torch", "numba")
_CHUNK_ELEMENTS = 1 << 15


def _is_pl_system(obj: Any) -> bool:
    return all(hasattr(obj, a) for a in ("normals", "offsets", "jacobian", "step"))


def _prepare_inputs(model: Any, inputs: Any, n_total: int) -> np.ndarray | None:
    if inputs is None:
        return None
    if _is_pl_system(model):
        raise ValueError("a PLSystem has no inputs; fold a constant input into it with pl_system(model, u), "
                         "or pass the model itself")
    u = np.asarray(inputs.detach().cpu() if hasattr(inputs, "detach") else inputs, dtype=np.float64)
    n_in = getattr(model, "n_inputs", u.shape[-1])
    if u.shape[-1] != n_in or u.ndim not in (1, 2):
        raise ValueError(f"inputs must have shape (input,) or (time, input) with input={n_in}, "
                         f"got {u.shape}")
    if u.ndim == 2 and len(u) < n_total:
        raise ValueError(f"inputs has {len(u)} time steps but n_transient + n_steps = {n_total}; "
                         "give a longer input or a constant (input,) vector")
    if not np.all(np.isfinite(u)):
        raise ValueError("inputs contain NaN or Inf")
    return u


def _resolve_backend(backend: str) -> str:
    """The rollout backend's name: ``auto`` → numba when installed; ``numpy`` is the old ``torch``."""
    from neurodyn.kernels import backend_available

    if backend == "numpy":
        warnings.warn("lyapunov_spectrum(backend='numpy') is now backend='torch' (the reference: torch "
                      "rollout and NumPy QR); 'numpy' will be removed", DeprecationWarning, stacklevel=3)
        backend = "torch"
    if backend == "auto":
        return "numba" if backend_available("numba") else "torch"
    if backend not in BACKENDS:
        raise ValueError(f"backend must be 'auto', 'torch' or 'numba' (the spectrum is float64, which "
                         f"Triton does not run), got {backend!r}")
    if not backend_available(backend):
        raise ImportError(f"backend={backend!r} needs {backend} (pip install {backend})")
    return backend


def _map_of(model: Any):
    """``(target, family)``: what the rollout runs, and its family when one is registered.

    ``target`` is float64 params (a family's, or those of a PLSystem a family can hold), a float64
    copy of a model no family knows, or None for a PLSystem no family can hold.
    """
    import torch

    from neurodyn.kernels._families import cast, family_of
    from neurodyn.models.piecewise import system_params

    params = system_params(model) if _is_pl_system(model) else model.params()
    family = None if params is None else family_of(params)
    if family is not None:
        return cast(params, dtype=torch.float64, device="cpu"), family
    if _is_pl_system(model):
        return None, None
    return copy.deepcopy(model).to(torch.float64).eval(), None


def _jacobian_fn(model: Any, target: Any, family: Any, jacobian: str):
    """``(jac, kind)``: ``jac(zs, us)`` maps states (k, state) and inputs (k, input) or None to the
    Jacobians (k, state, state); ``kind`` is "analytic" or "autograd"."""
    import torch

    from neurodyn.analysis.jacobians import jacobians

    if jacobian not in ("auto", "analytic", "autograd"):
        raise ValueError(f"jacobian must be 'auto', 'analytic' or 'autograd', got {jacobian!r}")
    if target is None:  # a PLSystem no family holds: its exact region Jacobians
        if jacobian == "autograd":
            raise ValueError("jacobian='autograd' needs a model; this PLSystem has exact region Jacobians "
                             "(use jacobian='auto')")
        return (lambda zs, us: model.jacobian(zs)), "analytic"
    closed = family is not None and family.jacobian is not None
    if jacobian == "analytic" and not closed:
        raise ValueError(f"jacobian='analytic' needs a model family with closed-form Jacobians; "
                         f"{type(model).__name__} has none, use jacobian='autograd'")
    if closed and jacobian != "autograd":
        return (lambda zs, us: jacobians(target, zs, us).numpy()), "analytic"
    step = target.step if family is None else (lambda h, u: family.step(target, h, u))

    def jac(zs: np.ndarray, us: np.ndarray | None) -> np.ndarray:
        return jacobians(step, torch.as_tensor(zs), None if us is None else torch.as_tensor(us)).numpy()

    return jac, "autograd"


def _stepper(model: Any, target: Any, u: np.ndarray | None, backend: str):
    """``states(z, t0, n)`` → states before each of the steps ``t0 .. t0 + n - 1`` (n, batch, state) and
    the state after them, by the kernels' rollout (a PLSystem no family holds: NumPy steps)."""
    import torch

    from neurodyn.kernels import rollout

    def states(z: np.ndarray, t0: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        if target is None:
            out = np.empty((n, *z.shape))
            for i in range(n):
                out[i] = z
                z = np.asarray(model.step(z), dtype=np.float64)
            return out, z
        inputs = None
        if u is not None:
            chunk = u if u.ndim == 1 else u[t0:t0 + n]
            inputs = torch.as_tensor(np.array(chunk)).expand(len(z), *chunk.shape)
        # "auto" on CPU float64: the family's Numba kernel where it has one, else torch
        res = rollout(target, torch.as_tensor(np.array(z)), inputs, n_steps=n,
                      backend="auto" if backend == "numba" else "torch")
        after = res.states.transpose(0, 1).numpy()
        return np.concatenate([z[None], after[:-1]]), res.final.numpy().copy()

    return states


def _qr_loop(states, jac, u, z, q, total, running, checks, finite, n_transient, n_total, backend):
    """Roll a chunk of steps out, get its Jacobians in one batched call, then the QR steps."""
    from neurodyn.analysis.lyapunov._qr_numba import qr_chunk

    n_batch, n_state, k = q.shape
    # chunks of 256 to 4096 steps whose Jacobians (about 2**15 numbers, 256 KiB) stay in cache for the QR
    # steps; many short chunks would spend their time in per-call overhead
    chunk = max(256, min(4096, _CHUNK_ELEMENTS // (n_batch * n_state * n_state)))
    ci = 0
    for c0 in range(0, n_total, chunk):
        ts = np.arange(c0, min(c0 + chunk, n_total))
        zs, z = states(z, c0, len(ts))
        bad = ~np.all(np.isfinite(zs) & (np.abs(zs) < 1e150), axis=(0, 2))
        bad |= ~np.all(np.isfinite(z) & (np.abs(z) < 1e150), axis=1)
        finite &= ~bad
        zs[:, bad] = 0.0
        z[bad] = 0.0
        us = None  # inputs of each step, repeated over the batch (time-major, as zs)
        if u is not None:
            per_step = np.broadcast_to(u, (len(ts), u.shape[-1])) if u.ndim == 1 else u[ts]
            us = np.repeat(per_step, n_batch, axis=0)
        J = jac(zs.reshape(-1, n_state), us)
        J = J.reshape(len(ts), n_batch, n_state, n_state)
        J[:, ~finite] = np.eye(n_state)
        logs, q = qr_chunk(J, q, backend)
        counted = ts >= n_transient
        if not counted.any():
            continue
        cums = total + np.cumsum(logs[counted], axis=0)
        first_done = ts[counted][0] - n_transient + 1
        while ci < len(checks) and checks[ci] < first_done + len(cums):
            running[:, ci] = cums[checks[ci] - first_done] / checks[ci]
            ci += 1
        total = cums[-1]
    return total, running


def lyapunov_spectrum(
    model: Any,
    *,
    h0: Any = None,
    n_steps: int = 10_000,
    n_transient: int = 1_000,
    inputs: Any = None,
    n_exponents: int | None = None,
    n_checkpoints: int = 20,
    jacobian: str = "auto",
    backend: str = "auto",
    seed: SeedLike = 0,
) -> LyapunovResult:
    """Lyapunov spectrum by repeated QR re-orthonormalisation of tangent vectors.

    Tangent vectors ``Q`` are propagated with the one-step Jacobians, ``J_t Q_t = Q_{t+1} R_t``,
    and the exponents are the time averages of ``log |diag R_t|`` (Benettin et al. 1980, Meccanica 15;
    Eckmann & Ruelle 1985, Rev. Mod. Phys. 57). Computed in float64: trajectories by the kernels'
    :func:`~neurodyn.kernels.rollout` in chunks of steps, the Jacobians of a chunk in one batched
    call of :func:`~neurodyn.analysis.jacobians`, then the QR steps.

    Parameters
    ----------
    model : RecurrentModel or PLSystem
        Any neurodyn model, or a piecewise-affine system from
        :func:`neurodyn.models.piecewise.pl_system` (exact region Jacobians).
    h0 : array, shape (state,) or (batch, state), optional
        Initial state(s); defaults to ``0.1 * N(0, I)`` drawn from ``seed`` (one trajectory).
    n_steps : int
        Time steps averaged over (after the transient).
    n_transient : int
        Steps discarded first (the tangent vectors are aligned during the transient as well).
    inputs : array, shape (input,) or (time, input), optional
        Constant or time-varying external input (``time >= n_transient + n_steps``).
    n_exponents : int, optional
        Number of leading exponents (default: all).
    n_checkpoints : int
        Number of running estimates kept for convergence checks.
    jacobian : {"auto", "analytic", "autograd"}
        ``"analytic"``: the closed forms of the model's family (every built-in model; exact region
        Jacobians of PL models, with any input) or of a PLSystem; ``"autograd"``: forward-mode
        ``torch.func`` on the step; ``"auto"``: analytic where available.
    backend : {"auto", "torch", "numba"}
        The rollout backend of the trajectories, and the QR steps by NumPy (``"torch"``, the
        reference) or a compiled Numba kernel (``"numba"``); ``"auto"``: Numba when installed.
        Families without a Numba kernel (the LSTM) roll out on torch. Recorded in
        ``result.backend``. ``"numpy"`` is accepted as the old name of ``"torch"`` with a
        ``DeprecationWarning``.
    seed : int, Generator or None
        Seed of the default ``h0`` and of the random initial tangent frame.

    Returns
    -------
    LyapunovResult
        Exponents in nats per time step, shape (batch, exponent).

    Raises
    ------
    ValueError
        On a wrong ``h0``/``inputs`` shape, NaN/Inf in them, non-positive step counts, an unknown
        ``jacobian`` or ``backend``, or ``jacobian="analytic"`` for a model without closed forms.
    ImportError
        If ``backend="numba"`` and Numba is not installed.
    """
    if n_steps < 1 or n_transient < 0:
        raise ValueError(f"need n_steps >= 1 and n_transient >= 0, got {n_steps}, {n_transient}")
    seed_int = resolve_seed(seed)
    rng = numpy_rng(seed_int)
    n_state = int(model.normals.shape[1]) if _is_pl_system(model) else int(model.state_size)
    k = n_state if n_exponents is None else int(n_exponents)
    if not 1 <= k <= n_state:
        raise ValueError(f"n_exponents must be in [1, {n_state}], got {n_exponents}")
    if h0 is None:
        z = 0.1 * rng.standard_normal((1, n_state))
    else:
        z = np.asarray(h0.detach().cpu() if hasattr(h0, "detach") else h0, dtype=np.float64)
        z = np.atleast_2d(z).copy()
        if z.ndim != 2 or z.shape[1] != n_state:
            raise ValueError(f"h0 must have shape (state,) or (batch, state) with state={n_state}, "
                             f"got {np.shape(h0)}")
        if not np.all(np.isfinite(z)):
            raise ValueError("h0 contains NaN or Inf")
    n_total = n_transient + n_steps
    u = _prepare_inputs(model, inputs, n_total)
    backend = _resolve_backend(backend)
    target, family = _map_of(model)
    jac, kind = _jacobian_fn(model, target, family, jacobian)
    n_batch = len(z)
    q, _ = np.linalg.qr(rng.standard_normal((n_batch, n_state, k)))
    total = np.zeros((n_batch, k))
    checks = np.linspace(n_steps / n_checkpoints, n_steps, n_checkpoints).astype(int)
    checks = np.unique(np.maximum(checks, 1))  # fewer steps than checkpoints: no step-0 estimate
    running = np.full((n_batch, len(checks), k), np.nan)
    finite = np.ones(n_batch, dtype=bool)
    with np.errstate(over="ignore", invalid="ignore"):
        states = _stepper(model, target, u, backend)
        total, running = _qr_loop(states, jac, u, z, q, total, running, checks, finite,
                                   n_transient, n_total, backend)
    lam = total / n_steps
    order = np.argsort(-lam, axis=1)
    lam = np.take_along_axis(lam, order, axis=1)
    running = np.take_along_axis(running, order[:, None, :], axis=2)
    lam[~finite] = np.nan  # diverged: the trajectory left the finite numbers
    running[~finite] = np.nan
    finite &= ~np.isneginf(lam).any(axis=1)  # a collapsed direction (status "underflow") is not finite
    return LyapunovResult(lam, running, checks, finite, kind, int(n_steps), int(n_transient), seed_int,
                          backend)
