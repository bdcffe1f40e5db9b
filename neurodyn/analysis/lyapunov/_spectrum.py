"""Lyapunov spectrum of a discrete-time recurrent model by the QR (Benettin) method."""

from __future__ import annotations

from typing import Any

import numpy as np

from neurodyn._seed import SeedLike, numpy_rng, resolve_seed
from neurodyn.analysis.lyapunov._result import LyapunovResult


def _is_pl_system(obj: Any) -> bool:
    return all(hasattr(obj, a) for a in ("normals", "offsets", "jacobian", "step"))


def _pl_or_none(model: Any, inputs: np.ndarray | None):
    """The piecewise-affine system of a PL model with constant input, else None."""
    if _is_pl_system(model):
        return model
    if inputs is not None and inputs.ndim == 2 and not np.all(inputs == inputs[:1]):
        return None
    from neurodyn.models.piecewise import is_piecewise_linear, pl_system

    if not is_piecewise_linear(model):
        return None
    u = None if inputs is None else inputs.reshape(-1, inputs.shape[-1])[0]
    return pl_system(model, u)


def _is_pl_model(model: Any) -> bool:
    from neurodyn.models.piecewise import is_piecewise_linear

    return is_piecewise_linear(model)


def _prepare_inputs(model: Any, inputs: Any, n_total: int) -> np.ndarray | None:
    if inputs is None:
        return None
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


def _torch_stepper(model: Any, u: np.ndarray | None):
    """(step, jac) closures over a torch model in float64: z (batch, state) numpy in, numpy out."""
    import copy

    import torch

    m = copy.deepcopy(model).to(torch.float64).eval()

    def u_at(t: int, n_batch: int):
        if u is None:
            return None
        ut = u if u.ndim == 1 else u[t]
        return torch.as_tensor(ut, dtype=torch.float64).expand(n_batch, -1)

    def step(z: np.ndarray, t: int) -> np.ndarray:
        with torch.no_grad():
            return m.step(torch.as_tensor(z), u_at(t, len(z))).numpy()

    def f(h, v):
        return m.step(h[None], None if v is None else v[None])[0]

    def jac(zs: np.ndarray, ts: np.ndarray) -> np.ndarray:
        zt = torch.as_tensor(zs)
        if u is None:
            jt = torch.func.vmap(torch.func.jacrev(lambda h: f(h, None)))(zt)
        else:
            ut = torch.as_tensor(u[None].repeat(len(ts), 0) if u.ndim == 1 else u[ts])
            jt = torch.func.vmap(torch.func.jacrev(f), in_dims=(0, 0))(zt, ut)
        return jt.detach().numpy()

    return step, jac


def _qr_loop(step, jac, z, q, total, running, checks, finite, n_transient, n_total, backend,
             fast_states=None, chunk=256):
    """Simulate a chunk of steps, get its Jacobians in one batched call, then the QR steps."""
    from neurodyn.analysis.lyapunov._qr_numba import qr_chunk

    n_batch, n_state, k = q.shape
    ci = 0
    for c0 in range(0, n_total, chunk):
        ts = np.arange(c0, min(c0 + chunk, n_total))
        if fast_states is not None:
            zs, z = fast_states(z, len(ts))
            bad = ~np.all(np.isfinite(zs) & (np.abs(zs) < 1e150), axis=(0, 2))
            bad |= ~np.all(np.isfinite(z) & (np.abs(z) < 1e150), axis=1)
            finite &= ~bad
            zs[:, bad] = 0.0
            z[bad] = 0.0
        else:
            zs = np.empty((len(ts), n_batch, n_state))
            for i, t in enumerate(ts):
                zs[i] = z
                z = step(z, t)
                bad = ~np.all(np.isfinite(z), axis=1) | (np.abs(z).max(axis=1) > 1e150)
                if bad.any():
                    finite &= ~bad
                    z[bad] = 0.0
        J = jac(zs.reshape(-1, n_state), np.repeat(ts, n_batch)).reshape(len(ts), n_batch,
                                                                           n_state, n_state)
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
    Eckmann & Ruelle 1985, Rev. Mod. Phys. 57). Computed in float64.

    Parameters
    ----------
    model : RecurrentModel or PLSystem
        Any neurodyn model (Jacobians by ``torch.func`` autograd) or a piecewise-affine system from
        :func:`neurodyn.models.piecewise.pl_system` (exact region Jacobians). PL models with a
        constant input use their analytic region Jacobians automatically.
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
        ``"auto"`` uses the exact region Jacobians of piecewise-linear models (their inputs enter
        additively, so this holds for time-varying inputs too) and autograd otherwise.
    backend : {"auto", "numpy", "numba"}
        QR steps by NumPy (reference) or a compiled Numba kernel (``"auto"``: Numba when
        installed). Recorded in ``result.backend``.
    seed : int, Generator or None
        Seed of the default ``h0`` and of the random initial tangent frame.

    Returns
    -------
    LyapunovResult
        Exponents in nats per time step, shape (batch, exponent).

    Raises
    ------
    ValueError
        On a wrong ``h0``/``inputs`` shape, NaN/Inf in them, or non-positive step counts.
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
    if jacobian not in ("auto", "analytic", "autograd"):
        raise ValueError(f"jacobian must be 'auto', 'analytic' or 'autograd', got {jacobian!r}")
    system = None if jacobian == "autograd" else _pl_or_none(model, u)
    if system is not None:
        step = lambda x, t: np.asarray(system.step(x), dtype=np.float64)  # noqa: E731
        jac = lambda xs, ts: np.asarray(system.jacobian(xs), dtype=np.float64)  # noqa: E731
        kind = "analytic"
    else:
        step, jac = _torch_stepper(model, u)
        kind = "autograd"
        if jacobian != "autograd" and _is_pl_model(model):
            # inputs enter PL models additively, so the region Jacobians do not depend on them
            from neurodyn.models.piecewise import pl_system

            plain = pl_system(model)
            jac = lambda xs, ts: plain.jacobian(xs)  # noqa: E731
            kind = "analytic"
    from neurodyn.analysis.lyapunov._qr_numba import BACKENDS, numba_available

    if backend == "auto":
        backend = "numba" if numba_available() else "numpy"
    if backend not in BACKENDS:
        raise ValueError(f"backend must be 'auto', 'numpy' or 'numba', got {backend!r}")
    if backend == "numba" and not numba_available():
        raise ImportError("backend='numba' needs numba (pip install numba)")
    if jacobian == "analytic" and kind != "analytic":
        raise ValueError("jacobian='analytic' needs a PLRNN/ShallowPLRNN/ALRNN or a PLSystem; "
                         "use jacobian='autograd'")
    n_batch = len(z)
    q, _ = np.linalg.qr(rng.standard_normal((n_batch, n_state, k)))
    total = np.zeros((n_batch, k))
    checks = np.linspace(n_steps / n_checkpoints, n_steps, n_checkpoints).astype(int)
    checks = np.unique(np.maximum(checks, 1))  # fewer steps than checkpoints: no step-0 estimate
    running = np.full((n_batch, len(checks), k), np.nan)
    finite = np.ones(n_batch, dtype=bool)
    with np.errstate(over="ignore", invalid="ignore"):
        fast = None
        if backend == "numba" and system is not None:
            from neurodyn.analysis.lyapunov._qr_numba import pl_states

            fast = lambda x, n: pl_states(system, x, n)  # noqa: E731
        total, running = _qr_loop(step, jac, z, q, total, running, checks, finite,
                                   n_transient, n_total, backend, fast)
    lam = total / n_steps
    order = np.argsort(-lam, axis=1)
    lam = np.take_along_axis(lam, order, axis=1)
    running = np.take_along_axis(running, order[:, None, :], axis=2)
    lam[~finite] = np.nan
    running[~finite] = np.nan
    return LyapunovResult(lam, running, checks, finite, kind, int(n_steps), int(n_transient), seed_int,
                          backend)
