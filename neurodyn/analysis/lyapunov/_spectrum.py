"""Lyapunov spectrum of a discrete-time recurrent model by the QR (Benettin) method."""

from __future__ import annotations

import copy
import warnings
from typing import Any, NamedTuple

import numpy as np

from neurodyn._budget import MAX_MEMORY, warn_flops
from neurodyn._checks import check_setting
from neurodyn._seed import SeedLike, numpy_rng, resolve_seed
from neurodyn.analysis.lyapunov._result import LyapunovResult
from neurodyn.models._base import check_model

BACKENDS = ("torch", "numba")
JACOBIANS = ("auto", "analytic", "autograd", "jvp")
_CHUNK_ELEMENTS = 1 << 15
#: ``jacobian="auto"`` takes tangent products (no Jacobian formed) from this many state dims, for
#: ``n_exponents <= n_state / 4``: at 1024 units and two exponents they are about 4 times faster
JVP_MIN_STATE = 256
#: float64 arrays of (state x state) per trajectory-step of the Jacobian path (J, the closed form's
#: intermediate, the contiguous copy for the QR kernel); of (state x exponent) on the product path
#: (the repeated states, the tangents, the autograd graph's intermediates, the products, the frame)
_FULL_COPIES, _JVP_COPIES = 3, 10


class _Plan(NamedTuple):
    """How the tangent steps run within the memory budget (see :func:`_plan`)."""

    mode: str  # "jacobian" (Jacobians formed, QR kernel) or "jvp" (tangent products, no Jacobian)
    chunk: int  # time steps rolled out (and, on the Jacobian path, differentiated) at once
    group: int  # trajectories whose tangent steps run at once
    n_bytes: int  # the estimate of the largest block held


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

    if target is None:  # a PLSystem no family holds: its exact region Jacobians
        if jacobian in ("autograd", "jvp"):
            raise ValueError(f"jacobian={jacobian!r} needs a model; this PLSystem has exact region Jacobians "
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
        res = rollout(target, h0=torch.as_tensor(np.array(z)), inputs=inputs, n_steps=n,
                      backend="auto" if backend == "numba" else "torch")
        after = res.states.transpose(0, 1).numpy()
        return np.concatenate([z[None], after[:-1]]), res.final.numpy().copy()

    return states


def _plan(n_batch: int, n_state: int, k: int, jacobian: str, can_jvp: bool, max_memory: float) -> _Plan:
    """Choose the tangent path and the chunk sizes that keep the blocks held under ``max_memory``.

    The Jacobian path holds ``chunk * group`` Jacobians (state x state) at once; the product path
    (``jvp``) holds ``group`` frames of ``k`` tangent vectors and never forms a Jacobian. Both roll
    out ``chunk`` steps of all trajectories at once.

    Raises
    ------
    ValueError
        One line with the estimate and how to reduce it, when even one trajectory's block for one
        step exceeds ``max_memory``.
    """
    full = _FULL_COPIES * 8 * n_state * n_state  # bytes per trajectory and step
    jvp = _JVP_COPIES * 8 * n_state * k
    gib = 2.0 ** 30
    mode = jacobian
    if jacobian == "auto":
        small_k = n_state >= JVP_MIN_STATE and 4 * k <= n_state
        mode = "jvp" if can_jvp and (small_k or full > max_memory) else "jacobian"
    elif jacobian != "jvp":
        mode = "jacobian"
    per = full if mode == "jacobian" else jvp
    if per > max_memory:
        if mode == "jacobian":
            fix = ("use jacobian='jvp' (tangent products: no Jacobian is formed), " if can_jvp else "") + \
                "raise max_memory"
            what = (f"the Jacobian of one step ({n_state} x {n_state} float64, x{_FULL_COPIES} while it is "
                    "built)")
        else:
            fix = "lower n_exponents or raise max_memory"
            what = f"{k} tangent vectors of {n_state} dims with their products (x{_JVP_COPIES})"
        raise ValueError(f"lyapunov_spectrum needs about {per / gib:.3g} GiB for {what} but max_memory is "
                         f"{max_memory / gib:.3g} GiB; {fix}")
    group = int(min(n_batch, max_memory // per))
    states = 8 * n_batch * n_state  # one rolled-out step of every trajectory
    if mode == "jacobian":
        cache = max(256, min(4096, _CHUNK_ELEMENTS // (n_batch * n_state * n_state)))  # QR steps in cache
        chunk = int(max(1, min(cache, max_memory // (group * per + states))))
        n_bytes = chunk * (group * per + states)
    else:
        chunk = int(max(1, min(4096, (max_memory - group * per) // states)))
        n_bytes = group * per + chunk * states
    return _Plan(mode, chunk, group, int(n_bytes))


def _warn_cost(plan: _Plan, n_batch: int, n_state: int, k: int, n_total: int) -> None:
    """One warning line when the run would take more than about ``neurodyn._budget.WARN_FLOPS`` operations."""
    per_step = 2.0 * n_state * k * k  # the QR of the frame
    per_step += 6.0 * n_state * n_state * k if plan.mode == "jvp" else n_state * n_state * (3.0 + 2.0 * k)
    flops = per_step * n_batch * n_total
    warn_flops("lyapunov_spectrum", flops, f"{n_batch} trajectories x {n_total} steps, {k} exponents of "
               f"{n_state} dims", "lower n_exponents, n_steps or the number of trajectories", stacklevel=4)


def _jvp_fn(model: Any, target: Any, family: Any):
    """``jvp(z, us, q)`` → the products ``J(z) q``: states ``z`` (batch, state), inputs ``us``
    (batch * k, input) or None, frames ``q`` (batch, state, k) → (batch, state, k), without forming J.

    Forward-mode products by two reverse passes (``g(v) = J^T v`` is linear in ``v``, and the
    gradient of ``g(v) . t`` with respect to ``v`` is ``J t``), which costs far less per call than
    ``torch.func.jvp``; the tangent vectors run as rows of one batch through the one-step map.
    """
    import torch

    step = target.step if family is None else (lambda h, u: family.step(target, h, u))

    def jvp(z: np.ndarray, us: np.ndarray | None, q: np.ndarray) -> np.ndarray:
        b, n, k = q.shape
        h = torch.as_tensor(np.repeat(z, k, axis=0)).requires_grad_(True)  # row b * k + j: column j
        t = torch.as_tensor(np.ascontiguousarray(q.transpose(0, 2, 1)).reshape(b * k, n))
        with torch.enable_grad():
            out = step(h, None if us is None else torch.tensor(us))
            v = torch.zeros_like(out, requires_grad=True)
            (g,) = torch.autograd.grad(out, h, v, create_graph=True, allow_unused=True)
            if g is None or not g.requires_grad:  # the map does not depend on the state
                return np.zeros_like(q)
            (jq,) = torch.autograd.grad(g, v, t, allow_unused=True)
        if jq is None:
            return np.zeros_like(q)
        return jq.detach().reshape(b, k, n).transpose(1, 2).numpy()

    return jvp


def _tangent_steps(plan: _Plan, jac, jvp, backend: str):
    """``steps(zs, per_step, q, ok)`` → ``(logs (time, batch, k), q)``: the QR steps of a chunk of states
    ``zs`` (time, batch, state) with inputs ``per_step`` (time, input) or None; trajectories not ``ok``
    (diverged) step with the identity."""
    from neurodyn.analysis.lyapunov._qr_numba import qr_chunk

    def by_jacobians(zs, per_step, q, ok):
        n_t, n_b, n_state = zs.shape
        us = None if per_step is None else np.repeat(per_step, n_b, axis=0)  # time-major, as zs
        J = jac(zs.reshape(-1, n_state), us).reshape(n_t, n_b, n_state, n_state)
        J[:, ~ok] = np.eye(n_state)
        return qr_chunk(J, q, backend)

    def by_products(zs, per_step, q, ok):
        n_t, n_b, _ = zs.shape
        k = q.shape[2]
        logs = np.empty((n_t, n_b, k))
        for t in range(n_t):
            us = None if per_step is None else np.broadcast_to(per_step[t], (n_b * k, per_step.shape[-1]))
            v = jvp(zs[t], us, q)
            v[~ok] = q[~ok]
            q, r = np.linalg.qr(v)
            with np.errstate(divide="ignore"):
                logs[t] = np.log(np.abs(np.diagonal(r, axis1=1, axis2=2)))
        return logs, q

    return by_jacobians if plan.mode == "jacobian" else by_products


def _qr_loop(states, steps, u, z, q, total, running, checks, finite, n_transient, n_total, plan):
    """Roll a chunk of steps out, then the tangent steps of groups of trajectories; running sums
    (accumulated step by step, in one order whatever the chunk and group sizes)."""
    n_batch, n_state, k = q.shape
    ci = 0
    for c0 in range(0, n_total, plan.chunk):
        ts = np.arange(c0, min(c0 + plan.chunk, n_total))
        zs, z = states(z, c0, len(ts))
        bad = ~np.all(np.isfinite(zs) & (np.abs(zs) < 1e150), axis=(0, 2))
        bad |= ~np.all(np.isfinite(z) & (np.abs(z) < 1e150), axis=1)
        finite &= ~bad
        zs[:, bad] = 0.0
        z[bad] = 0.0
        per_step = None  # inputs of each step of the chunk
        if u is not None:
            per_step = np.broadcast_to(u, (len(ts), u.shape[-1])) if u.ndim == 1 else u[ts]
        logs = np.empty((len(ts), n_batch, k))
        for g0 in range(0, n_batch, plan.group):
            g = slice(g0, g0 + plan.group)
            logs[:, g], q[g] = steps(zs[:, g], per_step, q[g], finite[g])
        counted = ts >= n_transient
        if not counted.any():
            continue
        cums = np.cumsum(np.concatenate([total[None], logs[counted]]), axis=0)[1:]
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
    max_memory: float = MAX_MEMORY,
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
        Constant or time-varying external input (``time >= n_transient + n_steps``). None (default):
        the autonomous system, a model with inputs run with all inputs zero.
    n_exponents : int, optional
        Number of leading exponents (default: all).
    n_checkpoints : int
        Number of running estimates kept for convergence checks.
    jacobian : {"auto", "analytic", "autograd", "jvp"}
        ``"analytic"``: the closed forms of the model's family (every built-in model; exact region
        Jacobians of PL models, with any input) or of a PLSystem; ``"autograd"``: forward-mode
        ``torch.func`` on the step; ``"jvp"``: the products ``J Q`` of the Jacobian with the
        ``n_exponents`` tangent vectors by automatic differentiation of the step, one step at a
        time, never forming ``J`` (memory ``state x n_exponents`` instead of ``state x state``);
        ``"auto"``: ``"jvp"`` from 256 state dims when ``n_exponents <= state / 4`` or when one
        Jacobian would not fit in ``max_memory``, else analytic where available. Recorded in
        ``result.jacobian``.
    backend : {"auto", "torch", "numba"}
        The rollout backend of the trajectories, and the QR steps by NumPy (``"torch"``, the
        reference) or a compiled Numba kernel (``"numba"``); ``"auto"``: Numba when installed.
        Families without a Numba kernel (the LSTM) roll out on torch. Recorded in
        ``result.backend``. ``"numpy"`` is accepted as the old name of ``"torch"`` with a
        ``DeprecationWarning``.
    max_memory : float
        Bytes the Jacobian or tangent blocks may take at once (default 1 GiB): the steps are
        chunked in time and the trajectories in groups to stay below it (the exponents change
        only by round-off). The estimate is made before anything is allocated.
    seed : int, Generator or None
        Seed of the default ``h0`` and of the random initial tangent frame.

    Returns
    -------
    LyapunovResult
        Exponents in nats per time step, shape (batch, exponent).

    Raises
    ------
    TypeError
        If ``model`` is neither a ``RecurrentModel`` nor a PLSystem.
    ValueError
        On a wrong ``h0``/``inputs`` shape (or an ``h0`` without trajectories), NaN/Inf in them,
        ``n_steps`` not an integer >= 1, ``n_transient`` not an integer >= 0, ``n_exponents`` not an
        integer in ``[1, state]``, an ``n_checkpoints`` that is not an integer >= 1, an unknown
        ``jacobian`` or ``backend``, ``jacobian="analytic"`` for a model without closed forms, or
        when one trajectory's block for one step exceeds ``max_memory`` (the message gives the
        estimate and what to change).
    ImportError
        If ``backend="numba"`` and Numba is not installed.

    Warns
    -----
    RuntimeWarning
        When the run needs more than about 1e13 floating-point operations (one line with the
        estimate and how to reduce it).

    Examples
    --------
    A linear map ``h' = W h`` has the exponents ``log |eig(W)|``. At 600 units two exponents take
    tangent products of a few hundred KiB per step (the Jacobians of a chunk of steps would take
    about a gigabyte):

    >>> import numpy as np, torch
    >>> from neurodyn.models import LeakyRNN
    >>> model = LeakyRNN(0, 600, 1, activation="linear", alpha=1.0, seed=0)
    >>> eig = torch.full((600,), 0.5, dtype=torch.float64)
    >>> eig[:2] = torch.tensor([0.9, 0.8])
    >>> with torch.no_grad():
    ...     _ = model.w_rec.copy_(torch.diag(eig))
    >>> res = lyapunov_spectrum(model, n_exponents=2, n_steps=200, n_transient=50)
    >>> res.jacobian, np.round(res.exponents / np.log([0.9, 0.8]), 3).tolist()
    ('jvp', [[1.0, 1.0]])
    """
    check_setting("n_steps", n_steps, 1, integer=True, hint=" (time steps averaged over)")
    check_setting("n_transient", n_transient, 0, integer=True, hint=" (time steps discarded first)")
    n_steps, n_transient = int(n_steps), int(n_transient)
    check_setting("n_checkpoints", n_checkpoints, 1, integer=True,
                  hint="; the number of running estimates kept (default 20)")
    n_checkpoints = int(n_checkpoints)
    seed_int = resolve_seed(seed)
    rng = numpy_rng(seed_int)
    if not _is_pl_system(model):
        check_model(model, example="PLRNN(...), or a PLSystem from pl_system(model)")
    n_state = int(model.normals.shape[1]) if _is_pl_system(model) else int(model.state_size)
    if n_exponents is not None:
        check_setting("n_exponents", n_exponents, 1, high=n_state, integer=True, hint=" (default: all)")
    k = n_state if n_exponents is None else int(n_exponents)
    if h0 is None:
        z = 0.1 * rng.standard_normal((1, n_state))
    else:
        z = np.asarray(h0.detach().cpu() if hasattr(h0, "detach") else h0, dtype=np.float64)
        z = np.atleast_2d(z).copy()
        if z.ndim != 2 or z.shape[1] != n_state or len(z) == 0:
            raise ValueError(f"h0 must have shape (state,) or (batch, state) with state={n_state} and at "
                             f"least one trajectory, got {np.shape(h0)}")
        if not np.all(np.isfinite(z)):
            raise ValueError("h0 contains NaN or Inf")
    n_total = n_transient + n_steps
    u = _prepare_inputs(model, inputs, n_total)
    backend = _resolve_backend(backend)
    if jacobian not in JACOBIANS:
        raise ValueError(f"jacobian must be one of {', '.join(map(repr, JACOBIANS))}, got {jacobian!r}")
    if not (isinstance(max_memory, (int, float)) and max_memory > 0):
        raise ValueError(f"max_memory must be a positive number of bytes, got {max_memory!r}")
    target, family = _map_of(model)
    if target is None and jacobian == "jvp":
        raise ValueError("jacobian='jvp' needs a model; this PLSystem has exact region Jacobians "
                         "(use jacobian='auto')")
    n_batch = len(z)
    plan = _plan(n_batch, n_state, k, jacobian, target is not None, float(max_memory))
    _warn_cost(plan, n_batch, n_state, k, n_total)
    if plan.mode == "jvp":
        jac, kind, jvp = None, "jvp", _jvp_fn(model, target, family)
    else:
        (jac, kind), jvp = _jacobian_fn(model, target, family, jacobian), None
    q, _ = np.linalg.qr(rng.standard_normal((n_batch, n_state, k)))
    total = np.zeros((n_batch, k))
    checks = np.linspace(n_steps / n_checkpoints, n_steps, n_checkpoints).astype(int)
    checks = np.unique(np.maximum(checks, 1))  # fewer steps than checkpoints: no step-0 estimate
    running = np.full((n_batch, len(checks), k), np.nan)
    finite = np.ones(n_batch, dtype=bool)
    with np.errstate(over="ignore", invalid="ignore"):
        states = _stepper(model, target, u, backend)
        total, running = _qr_loop(states, _tangent_steps(plan, jac, jvp, backend), u, z, q, total, running,
                                   checks, finite, n_transient, n_total, plan)
    lam = total / n_steps
    order = np.argsort(-lam, axis=1)
    lam = np.take_along_axis(lam, order, axis=1)
    running = np.take_along_axis(running, order[:, None, :], axis=2)
    lam[~finite] = np.nan  # diverged: the trajectory left the finite numbers
    running[~finite] = np.nan
    finite &= ~np.isneginf(lam).any(axis=1)  # a collapsed direction (status "underflow") is not finite
    return LyapunovResult(lam, running, checks, finite, kind, int(n_steps), int(n_transient), seed_int,
                          backend)
