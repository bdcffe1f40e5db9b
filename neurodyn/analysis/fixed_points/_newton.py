"""Newton-type steps on the speed q: per-candidate Levenberg–Marquardt and a final Newton polish."""

from __future__ import annotations

import torch

from neurodyn.analysis.fixed_points._search import (
    LR_FLOOR,
    BatchedMap,
    SearchState,
    _progress_bar,
    minimise_gradient,
    minimise_joint,
    retire,
    speed,
)
from neurodyn.analysis.fixed_points._stability import batch_jacobian

#: damping factors of Levenberg–Marquardt: ``lr`` (the inverse damping) ×1.2 after an accepted
#: step, ×0.5 after a rejected one
LM_GROW = 1.2
LM_SHRINK = 0.5


def minimise_levenberg_marquardt(
    G: BatchedMap,
    x0: torch.Tensor,
    *,
    tol_q: float,
    tol_dq: float,
    max_iters: int,
    lr_init: float,
    progress: bool = False,
) -> SearchState:
    """Per-candidate Levenberg–Marquardt (damped Gauss–Newton) on ``r(x) = G(x) − x``.

    The step solves ``(MᵀM + I / lr) δ = −Mᵀ r`` with ``M = ∂G/∂x − I`` per candidate: a small
    ``lr`` gives a short gradient step (``δ ≈ −lr ∇q``), a large one the Newton step, so near a
    fixed point the convergence is quadratic whatever the conditioning of ``M`` (slow leaky
    networks). ``lr`` is adapted by the rule of :func:`minimise_gradient` with faster growth
    (×1.2 on an accepted step, ×0.5 and rejection when q would increase), and the same stopping
    rule applies.
    Each accepted step costs one Jacobian (``state`` backward passes), so iterations are fewer
    but dearer than gradient steps; memory grows as ``candidate × state²``.
    """
    n, n_state = x0.shape
    x = x0.detach().clone()
    with torch.no_grad():
        q = speed(G, x)
    iters = torch.zeros(n, dtype=torch.int64, device=x.device)
    converged = q < tol_q
    stalled = ~torch.isfinite(q)
    out = SearchState(x, q, iters, converged, stalled)
    idx = (~(converged | stalled)).nonzero().squeeze(1)
    eye = torch.eye(n_state, dtype=x.dtype, device=x.device)
    xa, qa = x[idx], q[idx]
    lr = torch.full((idx.numel(),), float(lr_init), dtype=x.dtype, device=x.device)
    na = torch.zeros(idx.numel(), dtype=torch.int64, device=x.device)
    M, r = _residual_jacobian(G, xa, eye)
    bar = _progress_bar(max_iters, progress, "fixed points (Levenberg-Marquardt)")
    for _ in range(max_iters):
        if idx.numel() == 0:
            break
        Mt = M.transpose(-1, -2)
        A = Mt @ M + eye / lr[:, None, None]
        delta, info = torch.linalg.solve_ex(A, -(Mt @ r.unsqueeze(-1)))
        x_try = xa + delta.squeeze(-1)
        with torch.no_grad():
            q_try = speed(G, x_try)
        ok = (info == 0) & torch.isfinite(q_try) & (q_try < qa)
        dq = qa - q_try
        if bool(ok.any()):
            xa = torch.where(ok[:, None], x_try, xa)
            qa = torch.where(ok, q_try, qa)
            M_new, r_new = _residual_jacobian(G, xa[ok], eye)
            M[ok], r[ok] = M_new, r_new
        done_dq = ok & (dq < tol_dq * lr)
        lr = torch.where(ok, lr * LM_GROW, lr * LM_SHRINK)
        na += 1
        bar.update(1)
        keep = retire(out, idx, xa, qa, na, done_dq, lr, tol_q=tol_q, lr_min=LR_FLOOR * lr_init)
        if keep is not None:
            idx, xa, qa, lr, na, M, r = (t[keep] for t in (idx, xa, qa, lr, na, M, r))
    x[idx], q[idx], iters[idx] = xa, qa, na
    bar.close()
    return SearchState(x, q, iters, converged, stalled)


def _residual_jacobian(G: BatchedMap, x: torch.Tensor, eye: torch.Tensor):
    """``(∂G/∂x − I, G(x) − x)`` for each row of ``x``."""
    with torch.no_grad():
        r = G(x) - x
    return batch_jacobian(G, x) - eye, r


def newton_polish(G: BatchedMap, x: torch.Tensor, *, n_steps: int = 3) -> torch.Tensor:
    """A few Newton steps ``x ← x − (J − I)⁻¹ (G(x) − x)`` on converged points.

    Gradient descent stops as soon as ``q < tol_q``, which leaves an error of order
    ``‖(J − I)⁻¹‖ · sqrt(2 tol_q)`` in the point; Newton's method removes it quadratically.
    A step is kept only where it is finite and lowers q, so singular ``J − I`` (marginal
    directions) leave a point unchanged.
    """
    x = x.detach().clone()
    if x.shape[0] == 0:
        return x
    eye = torch.eye(x.shape[1], dtype=x.dtype, device=x.device)
    for _ in range(n_steps):
        with torch.no_grad():
            r = G(x) - x
        q = 0.5 * r.pow(2).sum(-1)
        delta, info = torch.linalg.solve_ex(batch_jacobian(G, x) - eye, r.unsqueeze(-1))
        x_try = x - delta.squeeze(-1)
        with torch.no_grad():
            q_try = speed(G, x_try)
        ok = (info == 0) & torch.isfinite(q_try) & (q_try < q)
        x = torch.where(ok[:, None], x_try, x)
    return x


def pinv_polish(G: BatchedMap, x: torch.Tensor, *, n_steps: int = 3) -> torch.Tensor:
    """Newton steps with the pseudo-inverse of ``J − I``: like :func:`newton_polish`, but a singular
    ``J − I`` only leaves the residual along its null directions (a line attractor's points land
    on the line; an isolated marginal point keeps the residual it cannot remove). A step is kept
    only where it is finite and lowers q."""
    x = x.detach().clone()
    if x.shape[0] == 0:
        return x
    eye = torch.eye(x.shape[1], dtype=x.dtype, device=x.device)
    for _ in range(n_steps):
        with torch.no_grad():
            r = G(x) - x
        q = 0.5 * r.pow(2).sum(-1)
        delta = torch.linalg.pinv(batch_jacobian(G, x) - eye) @ r.unsqueeze(-1)
        x_try = x - delta.squeeze(-1)
        with torch.no_grad():
            q_try = speed(G, x_try)
        ok = torch.isfinite(q_try) & (q_try < q)
        x = torch.where(ok[:, None], x_try, x)
    return x


METHODS = {
    "gradient": minimise_gradient,
    "joint": minimise_joint,
    "levenberg_marquardt": minimise_levenberg_marquardt,
}
