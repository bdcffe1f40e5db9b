"""Minimisers of the speed q(h) = ½‖G(h) − h‖² used by :func:`find_fixed_points`.

``G`` is a batched map ``(batch, state) -> (batch, state)`` (the one-step map ``F(·, u*)`` or its
``k``-fold composition for period-``k`` points). Two optimisers share one stopping rule taken from
FixedPointFinder (Golub & Sussillo 2018): a candidate is done once ``q < tol_q`` or, after an
accepted step, ``|Δq| < tol_dq · lr`` (the change in q per unit step size, a gradient-norm test).

* :func:`minimise_gradient` — heavy-ball gradient descent with one step size per candidate,
  grown after every accepted step and shrunk (the step rejected) whenever q would increase;
  converged candidates are frozen and drop out of the batch. The loop around its step
  (:func:`adaptive_search`) also drives Levenberg–Marquardt in ``_newton``.
* :func:`minimise_joint` — FixedPointFinder's joint scheme: one Adam optimiser on the mean of q
  over all candidates, with a single adaptive learning rate driven by the mean q.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import NamedTuple

import torch

BatchedMap = Callable[[torch.Tensor], torch.Tensor]

#: step-size factors of the per-candidate gradient search (accepted step: grow; rejected step:
#: shrink). 1.01 per accepted step is FixedPointFinder's average rate of increase (×1/0.95 per
#: 5 improving steps); faster growth keeps the step at the edge of stability, where rejections
#: keep resetting the momentum and ill-conditioned (leaky) networks stall.
LR_GROW = 1.01
LR_SHRINK = 0.5
#: a candidate whose step size fell below ``LR_FLOOR * lr_init`` cannot decrease q any further
LR_FLOOR = 1e-12
#: heavy-ball momentum of the per-candidate gradient search (reset to zero after a rejected step)
MOMENTUM = 0.98

#: FixedPointFinder's AdaptiveLearningRate defaults, used by the joint method
ALR_WINDOW = 5
ALR_DECREASE = 0.95
ALR_INCREASE = 1.0 / 0.95
#: FixedPointFinder's Adam epsilon (TensorFlow's default betas)
ADAM_EPS = 0.01
ADAM_BETAS = (0.9, 0.999)


class SearchState(NamedTuple):
    """Outcome of a minimisation, one row per candidate.

    states (candidate, state), q (candidate,), iterations (candidate,) int64,
    converged (candidate,) bool — ``q < tol_q``; stalled (candidate,) bool — stopped on the
    ``tol_dq`` test or a vanishing step size with ``q ≥ tol_q`` (a slow point).
    """

    states: torch.Tensor
    q: torch.Tensor
    iterations: torch.Tensor
    converged: torch.Tensor
    stalled: torch.Tensor


class SearchSettings(NamedTuple):
    """The stopping rule and first step size shared by every minimiser (see
    :func:`~neurodyn.analysis.fixed_points.find_fixed_points` for their meaning): a candidate has
    converged once ``q < tol_q``; it also stops when an accepted step changes q by less than
    ``tol_dq · lr``, or after ``max_iters`` iterations; ``lr_init`` is the first step size."""

    tol_q: float
    tol_dq: float
    max_iters: int
    lr_init: float


def retire(
    out: SearchState,
    idx: torch.Tensor,
    xa: torch.Tensor,
    qa: torch.Tensor,
    na: torch.Tensor,
    done_dq: torch.Tensor,
    lr: torch.Tensor,
    *,
    tol_q: float,
    lr_min: float,
) -> torch.Tensor | None:
    """Write finished active candidates into ``out``; return the mask of those to keep.

    A candidate stops when q < tol_q (converged), when its last accepted decrease was below
    tol_dq (``done_dq``), or when its step size fell below ``lr_min`` (both: stalled).
    Returns None when none stopped.
    """
    done_q = qa < tol_q
    stop = done_q | done_dq | (lr < lr_min)
    if not bool(stop.any()):
        return None
    fin = idx[stop]
    out.states[fin], out.q[fin], out.iterations[fin] = xa[stop], qa[stop], na[stop]
    out.converged[fin] = done_q[stop]
    out.stalled[fin] = ~done_q[stop]
    return ~stop


def initial_state(x: torch.Tensor, q: torch.Tensor, tol_q: float) -> tuple[SearchState, torch.Tensor]:
    """The outcome before any iteration, and the candidates left to search.

    ``x`` (candidate, state) and its q (candidate,) become the rows of the returned state (no
    iterations; converged where ``q < tol_q``, stalled where q is not finite); the second value
    holds the indices (active,) of the other candidates.
    """
    converged, stalled = q < tol_q, ~torch.isfinite(q)
    out = SearchState(x, q, torch.zeros(x.shape[0], dtype=torch.int64, device=x.device), converged, stalled)
    return out, (~(converged | stalled)).nonzero().squeeze(1)


#: one iteration of a per-candidate search (see :func:`adaptive_search`): the active states
#: (active, state), their q and step sizes (active,) and the method's extra per-candidate tensors
#: → the states and q after the accepted steps (the others unchanged), the acceptance mask
#: (active,) and the updated extra tensors
Step = Callable[
    [torch.Tensor, torch.Tensor, torch.Tensor, tuple[torch.Tensor, ...]],
    tuple[torch.Tensor, torch.Tensor, torch.Tensor, tuple[torch.Tensor, ...]],
]


def adaptive_search(
    x: torch.Tensor,
    q: torch.Tensor,
    settings: SearchSettings,
    step: Step,
    extras: Callable[[torch.Tensor, torch.Tensor], tuple[torch.Tensor, ...]],
    *,
    grow: float,
    shrink: float,
    progress: bool,
    desc: str,
) -> SearchState:
    """Run ``step`` on every unfinished candidate, one step size each, until the stopping rule.

    Candidates with ``q < tol_q`` or non-finite q at the start take no step. Each iteration
    calls ``step`` once on the active candidates; an accepted step multiplies the candidate's
    step size by ``grow``, a rejected one by ``shrink``. A candidate stops once ``q < tol_q``,
    when an accepted step lowered q by less than ``tol_dq`` times its step size before the
    update, or when its step size fell below ``LR_FLOOR * lr_init`` (:func:`retire`); the
    active tensors then shrink. Every call of ``step`` counts as an iteration.

    Parameters
    ----------
    x : Tensor, shape (candidate, state)
        Initial states (written over with the final ones).
    q : Tensor, shape (candidate,)
        Their speeds.
    settings : SearchSettings
    step : Step
        One iteration of the method.
    extras : callable ``(idx, xa) -> tuple of Tensor``
        The method's extra per-candidate tensors (first dim active) for the initially active
        candidates ``idx`` (active,) at states ``xa`` (active, state); they shrink with the
        active candidates.
    grow, shrink : float
        Step-size factors after an accepted and a rejected step.
    progress : bool
        Show a progress bar over the iterations, labelled ``desc``.
    """
    tol_q, tol_dq, max_iters, lr_init = settings
    out, idx = initial_state(x, q, tol_q)
    xa, qa = x[idx], q[idx]
    lr = torch.full((idx.numel(),), float(lr_init), dtype=x.dtype, device=x.device)
    na = torch.zeros(idx.numel(), dtype=torch.int64, device=x.device)
    extra = extras(idx, xa)
    bar = _progress_bar(max_iters, progress, desc)
    for _ in range(max_iters):
        if idx.numel() == 0:
            break
        xa, q_new, ok, extra = step(xa, qa, lr, extra)
        done_dq = ok & (qa - q_new < tol_dq * lr)
        qa = q_new
        lr = torch.where(ok, lr * grow, lr * shrink)
        na += 1
        bar.update(1)
        keep = retire(out, idx, xa, qa, na, done_dq, lr, tol_q=tol_q, lr_min=LR_FLOOR * lr_init)
        if keep is not None:
            idx, xa, qa, lr, na = (t[keep] for t in (idx, xa, qa, lr, na))
            extra = tuple(t[keep] for t in extra)
    out.states[idx], out.q[idx], out.iterations[idx] = xa, qa, na  # ran out of iterations
    bar.close()
    return out


def speed(G: BatchedMap, x: torch.Tensor) -> torch.Tensor:
    """q(x) = ½‖G(x) − x‖² per row; ``x`` (candidate, state) → (candidate,)."""
    return 0.5 * (G(x) - x).pow(2).sum(-1)


def power_map(G: BatchedMap, k: int) -> BatchedMap:
    """``G`` composed ``k`` times (the map whose fixed points are the period-``k`` points of ``G``);
    ``G`` itself for ``k = 1``."""
    if k == 1:
        return G

    def Gk(x: torch.Tensor) -> torch.Tensor:
        for _ in range(k):
            x = G(x)
        return x

    return Gk


class ClosedFormMap:
    """A batched map ``G`` that also gives q and ∇q of each row in closed form (what
    :func:`speed_and_grad` uses for it instead of autograd): ``pull(x) -> (G(x), v ↦ vᵀ ∂G/∂x)``."""

    def __init__(self, G: BatchedMap, pull: Callable[[torch.Tensor], tuple]) -> None:
        self.G, self.pull = G, pull

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return self.G(x)


def speed_and_grad(G: BatchedMap, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """q(x) and ∇q(x) = (∂G/∂x − I)ᵀ r for each row, r = G(x) − x: in closed form for a
    :class:`ClosedFormMap`, else by one backward pass (rows are independent, so one serves all)."""
    if isinstance(G, ClosedFormMap):
        with torch.no_grad():
            y, pull = G.pull(x)
            r = y - x
            return 0.5 * r.pow(2).sum(-1), pull(r) - r
    with torch.enable_grad():
        x = x.detach().requires_grad_(True)
        q = speed(G, x)
        (grad,) = torch.autograd.grad(q.sum(), x)
    return q.detach(), grad.detach()


def minimise_gradient(
    G: BatchedMap,
    x0: torch.Tensor,
    settings: SearchSettings,
    *,
    progress: bool = False,
) -> SearchState:
    """Per-candidate adaptive gradient descent on q (the default method).

    Each iteration proposes ``x + v`` with the heavy-ball step ``v = MOMENTUM · v − lr ∇q`` for
    every active candidate; it is accepted where q decreases (then ``lr *= LR_GROW``) and
    rejected otherwise (``lr *= LR_SHRINK`` and the momentum restarts from zero). Every
    evaluation, accepted or not, counts as an iteration. The active candidates are kept in
    compact working tensors that shrink whenever some candidates stop.
    """
    x = x0.detach().clone()
    q, g = speed_and_grad(G, x)
    return adaptive_search(x, q, settings, partial(_heavy_ball_step, G),
                           lambda idx, xa: (g[idx], torch.zeros_like(xa)), grow=LR_GROW, shrink=LR_SHRINK,
                           progress=progress, desc="fixed points (gradient)")


def _heavy_ball_step(
    G: BatchedMap, xa: torch.Tensor, qa: torch.Tensor, lr: torch.Tensor, extra: tuple[torch.Tensor, ...]
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, tuple[torch.Tensor, ...]]:
    """One :data:`Step` of :func:`minimise_gradient`; ``extra`` holds ∇q and the velocity
    (active, state), the velocity restarting from zero after a rejected step."""
    ga, va = extra
    v_try = MOMENTUM * va - lr[:, None] * ga
    x_try = xa + v_try
    q_try, g_try = speed_and_grad(G, x_try)
    ok = torch.isfinite(q_try) & (q_try < qa)
    if bool(ok.all()):  # every step accepted (the common case): no masked copies
        return x_try, q_try, ok, (g_try, v_try)
    # the rejected rows (usually few) take back their state, q and gradient, in place in the fresh
    # proposals, and restart their velocity from zero
    bad = (~ok).nonzero().squeeze(1)
    x_try.index_copy_(0, bad, xa.index_select(0, bad))
    q_try.index_copy_(0, bad, qa.index_select(0, bad))
    g_try.index_copy_(0, bad, ga.index_select(0, bad))
    v_try.index_fill_(0, bad, 0.0)
    return x_try, q_try, ok, (g_try, v_try)


def minimise_joint(
    G: BatchedMap,
    x0: torch.Tensor,
    settings: SearchSettings,
    *,
    progress: bool = False,
) -> SearchState:
    """FixedPointFinder's joint optimisation: Adam on the mean q of all candidates at once.

    One learning rate for the whole batch follows FixedPointFinder's AdaptiveLearningRate rules
    on the mean q (×1/0.95 after 5 monotone improvements, ×0.95 when the newest value is worse
    than the last 5; at most one change per 5 steps); Adam's epsilon is 0.01. All candidates keep
    moving until every one meets the stopping rule or ``max_iters`` is reached; ``iterations``
    is that common count.
    """
    tol_q, tol_dq, max_iters, lr_init = settings
    x = x0.detach().clone()
    n = x.shape[0]
    m, v = torch.zeros_like(x), torch.zeros_like(x)
    lr, last_change, history = float(lr_init), 0, []
    q_prev = torch.full((n,), float("nan"), dtype=x.dtype, device=x.device)
    done = torch.zeros(n, dtype=torch.bool, device=x.device)
    it = 0
    bar = _progress_bar(max_iters, progress, "fixed points (joint)")
    for it in range(1, max_iters + 1):
        q, g = speed_and_grad(G, x)
        g = g / n  # gradient of the mean q
        dq = (q - q_prev).abs()
        done = (q < tol_q) | (dq < tol_dq * lr)
        if it > 1 and bool(done.all()):
            break
        # Adam in TensorFlow's form (the optimiser FixedPointFinder uses)
        m.mul_(ADAM_BETAS[0]).add_(g, alpha=1 - ADAM_BETAS[0])
        v.mul_(ADAM_BETAS[1]).addcmul_(g, g, value=1 - ADAM_BETAS[1])
        lr_t = lr * (1 - ADAM_BETAS[1] ** it) ** 0.5 / (1 - ADAM_BETAS[0] ** it)
        x = x - lr_t * m / (v.sqrt() + ADAM_EPS)
        q_prev = q
        history.append(float(q.mean()))
        lr, last_change = _adapt_joint_lr(history, lr, last_change, it)
        bar.update(1)
    bar.close()
    with torch.no_grad():
        q = speed(G, x)
    converged = q < tol_q
    iters = torch.full((n,), it, dtype=torch.int64, device=x.device)
    return SearchState(x, q, iters, converged, ~converged & done & torch.isfinite(q))


def _adapt_joint_lr(history: list[float], lr: float, last_change: int, it: int) -> tuple[float, int]:
    """FixedPointFinder's AdaptiveLearningRate update (decrease first, then increase)."""
    if it < last_change + ALR_WINDOW or len(history) < ALR_WINDOW + 1:
        return lr, last_change
    window = history[-(ALR_WINDOW + 1):]
    if all(window[-1] > w for w in window[:-1]):
        return lr * ALR_DECREASE, it
    if all(b < a for a, b in zip(window[:-1], window[1:])):
        return lr * ALR_INCREASE, it
    return lr, last_change


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _progress_bar(total: int, enabled: bool, desc: str):
    if not enabled:
        return _NoBar()
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc)



