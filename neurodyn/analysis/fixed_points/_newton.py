"""Newton-type searches on the speed q: damped Newton (the default), Levenberg–Marquardt, and a
final Newton polish, all on Jacobians given by a callable (closed forms where the model has them)."""

from __future__ import annotations

from functools import partial

import torch

from neurodyn.analysis.fixed_points._chord import CHORD_STEPS, chord_check, chord_inverses
from neurodyn.analysis.fixed_points._search import (
    LR_FLOOR,
    BatchedMap,
    SearchSettings,
    SearchState,
    _progress_bar,
    adaptive_search,
    initial_state,
    minimise_gradient,
    minimise_joint,
    retire,
    speed,
)
from neurodyn.analysis.fixed_points._stability import JacobianFn, step_jacobians
from neurodyn.analysis.fixed_points._unique import unique_points
from neurodyn.kernels.linalg import damped_directions, newton_directions, uses_compiled

#: damping factors of Levenberg–Marquardt: ``lr`` (the inverse damping) ×1.2 after an accepted
#: step, ×0.5 after a rejected one
LM_GROW = 1.2
LM_SHRINK = 0.5
#: a damped-Newton candidate whose step length fell below this switches to Levenberg–Marquardt
#: steps (near a slow point ``J − I`` is singular and the Newton direction is useless)
NEWTON_MIN_STEP = 1.0 / 64
#: the damped-Newton search starts with Levenberg–Marquardt steps whose inverse damping grows by
#: NEWTON_LM_GROW per accepted step, and takes plain Newton steps once it reaches NEWTON_SWITCH_LR
NEWTON_LM_GROW = 2.0
NEWTON_SWITCH_LR = 1e2
#: float64 searches solve Levenberg–Marquardt proposals in float32 for candidates with q at or above
#: this (see ``_lm_proposal``)
LM_SINGLE_Q = 1e-8
#: (state x state) float64 blocks held per active candidate by the damped-Newton search
#: (the Jacobian, ``J − I``, the normal matrix of Levenberg–Marquardt rows, the solver's copy)
NEWTON_COPIES = 4
#: a candidate in Levenberg–Marquardt steps is a slow point when, over the last SLOW_WINDOW
#: iterations, q fell by less than SLOW_FACTOR and the state moved less than SLOW_MOVE in every unit
#: (near a slow point q decreases sublinearly for thousands of steps)
SLOW_FACTOR = 0.5
SLOW_WINDOW = 50
SLOW_MOVE = 1e-3
#: a Levenberg–Marquardt candidate whose q fell by less than SLOW_FACTOR over a window while it moved
#: less than SLOW_NEAR_MOVE, within SLOW_REACH (every unit) of a slow point already found, stops
#: there with that point's state and q instead of creeping on towards it
SLOW_NEAR_MOVE = 3e-2
SLOW_REACH = 5e-2
#: heavy-ball gradient steps on q (:func:`minimise_gradient`) that every candidate of a damped-Newton
#: search takes, all candidates at once, before its Newton steps (0: Levenberg–Marquardt start
#: instead). A gradient step costs ``O(state²)`` per candidate against ``O(state³)`` for a damped
#: step, and it follows q downhill as FixedPointFinder's joint Adam does, so candidates head for the
#: same points (saddles included) before Newton's quadratic convergence; see docs/fixed_points.md
GRADIENT_START = 30
#: a candidate whose q is still at or above this after its gradient start is far from any point:
#: it goes back to its initial state and takes the Levenberg–Marquardt start instead, since q
#: descent from there tends toward slow points, where the Newton steps fail. After 30 steps, the
#: 256 free-rollout states of a chaotic 128-unit network (gain 1.5) have q from 0.22 to 1.5, the
#: 1,024 task states of the trained 128-unit flip-flop q from 1.5e-4 to 0.24 (99 % below 0.16).
#: The ranges overlap: 0.2 lost one of the flip-flop's 24 points, 0.25 keeps them and converges
#: 209 chaotic candidates (210 with 0.2, 208 with 0.3); see docs/fixed_points.md
GRADIENT_FAR_Q = 0.25
#: states smaller than this take the Levenberg–Marquardt start instead: their damped steps cost
#: less than the gradient steps' fixed overhead (a 16-unit flip-flop network, 1,024 candidates:
#: 0.11 CPU s with the damped start against 0.18 s with 30 gradient steps, the same points)
GRADIENT_START_MIN_STATE = 64
#: with chord checks on, the first Newton chunk holds at most this many candidates: the points it
#: finds let the chord checks settle most of the others before any more Newton steps
CHORD_FIRST_CHUNK = 32
#: the first chunk below ``SETTLE_MIN_STATE`` state dims, where a Newton iteration costs about the
#: same for 32 rows as for 96 (per-call overhead): the larger chunk finds more points for the chord
#: checks and leaves fewer candidates to a second chunk (16-unit flip-flop network of the benchmark,
#: 9 interleaved calls: 64 against 79 CPU ms median; at 128 units 96 rows cost 8% more than 32)
CHORD_FIRST_CHUNK_SMALL = 96
#: during a Newton chunk, a candidate whose step was accepted is chord-checked against the known
#: points when one lies within this distance (every unit): farther ones fail the check at its first
#: step. On the 128-unit flip-flop network of the benchmark, every candidate settled by chord
#: steps started at most about 0.5 from its point, the median of those that failed about 1.2
CHORD_REACH = 0.5
#: those chord checks run from this many state dims, where a Newton step's factorisation costs more
#: than the checks (below it, on the 16-unit flip-flop network, they saved no time)
SETTLE_MIN_STATE = 64


def minimise_levenberg_marquardt(
    G: BatchedMap,
    x0: torch.Tensor,
    settings: SearchSettings,
    *,
    progress: bool = False,
    jacobian: JacobianFn | None = None,
) -> SearchState:
    """Per-candidate Levenberg–Marquardt (damped Gauss–Newton) on ``r(x) = G(x) − x``.

    The step solves ``(MᵀM + I / lr) δ = −Mᵀ r`` with ``M = ∂G/∂x − I`` per candidate: a small
    ``lr`` gives a short gradient step (``δ ≈ −lr ∇q``), a large one the Newton step, so near a
    fixed point the convergence is quadratic whatever the conditioning of ``M`` (slow leaky
    networks). ``lr`` is adapted by the rule of :func:`minimise_gradient` with faster growth
    (×1.2 on an accepted step, ×0.5 and rejection when q would increase), and the same stopping
    rule applies.
    Each accepted step costs one Jacobian of ``G`` (``jacobian(x)``, by default ``state``
    backward passes), so iterations are fewer but dearer than gradient steps; memory grows as
    ``candidate × state²``.
    """
    x = x0.detach().clone()
    with torch.no_grad():
        q = speed(G, x)
    return adaptive_search(x, q, settings, partial(_lm_step, G, jacobian),
                           lambda idx, xa: _residual_jacobian(G, xa, jacobian), grow=LM_GROW,
                           shrink=LM_SHRINK, progress=progress, desc="fixed points (Levenberg-Marquardt)")


def _lm_step(
    G: BatchedMap,
    jacobian: JacobianFn | None,
    xa: torch.Tensor,
    qa: torch.Tensor,
    lr: torch.Tensor,
    extra: tuple[torch.Tensor, ...],
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, tuple[torch.Tensor, ...]]:
    """One :data:`~neurodyn.analysis.fixed_points._search.Step` of
    :func:`minimise_levenberg_marquardt`; ``extra`` holds ``M = ∂G/∂x − I`` (active, state, state)
    and the residual ``r`` (active, state), recomputed only for accepted rows."""
    M, r = extra
    x_try = xa + damped_directions(M, r, 1.0 / lr)  # zero (so rejected) where the solve fails
    with torch.no_grad():
        q_try = speed(G, x_try)
    ok = torch.isfinite(q_try) & (q_try < qa)
    if bool(ok.any()):
        xa = torch.where(ok[:, None], x_try, xa)
        qa = torch.where(ok, q_try, qa)
        M[ok], r[ok] = _residual_jacobian(G, xa[ok], jacobian)
    return xa, qa, ok, (M, r)


def minimise_newton(
    G: BatchedMap,
    x0: torch.Tensor,
    settings: SearchSettings,
    *,
    progress: bool = False,
    jacobian: JacobianFn | None = None,
    tol_unique: float | None = None,
    chunk_size: int | None = None,
    chord_steps: int = CHORD_STEPS,
    gradient_steps: int | None = None,
    single_map: BatchedMap | None = None,
    join_slow: bool = True,
    n_cond: int = 0,
) -> SearchState:
    """Per-candidate damped Newton on ``r(x) = G(x) − x``, falling back to Levenberg–Marquardt.

    Each candidate steps ``x ← x − s (J − I)⁻¹ r`` with ``J = ∂G/∂x`` from ``jacobian`` (the
    closed forms of :func:`neurodyn.analysis.jacobians` for a model, autograd otherwise) and its
    own step length ``s``: doubled (up to 1) after an accepted step, halved and the step
    rejected when q would not decrease. First, every candidate takes ``gradient_steps`` heavy-ball
    gradient steps on q (:func:`minimise_gradient`, all candidates at once, ``O(state²)`` each):
    they follow q downhill along slow directions (to saddles), as FixedPointFinder's joint Adam
    does, before Newton's quadratic convergence. With ``gradient_steps=0`` each candidate instead
    starts with the damped steps of :func:`minimise_levenberg_marquardt` (``O(state³)`` each), their
    inverse damping ×``NEWTON_LM_GROW`` per accepted step, and turns to Newton steps once it
    reaches ``NEWTON_SWITCH_LR``; so does a candidate whose q is still ``≥ GRADIENT_FAR_Q`` after
    its gradient steps (far from any point, e.g. on a chaotic network), from its initial state. The
    Newton direction always descends q where ``J − I`` is invertible; a candidate whose step
    length falls below ``NEWTON_MIN_STEP`` (a slow point, where ``J − I`` is singular) returns to
    Levenberg–Marquardt steps, whose stopping rules then apply, and one whose q fell by less than
    ×``SLOW_FACTOR`` while it moved less than ``SLOW_MOVE`` over ``SLOW_WINDOW`` such steps stops as a
    slow point. With ``tol_unique`` and ``join_slow``, a candidate whose q fell as little while it
    moved less than ``SLOW_NEAR_MOVE``, within ``SLOW_REACH`` of a slow point already found whose q
    is not above its own, stops there with that point's state and q (:func:`_join_slow_points`;
    ``join_slow=False`` where the rows carry their own inputs, which must not be exchanged).

    Before each chunk, every pending candidate whose nearest converged point changed since its
    last check is chord-checked (:func:`~neurodyn.analysis.fixed_points._chord.chord_check`):
    up to ``chord_steps`` steps ``x ← x − (J* − I)⁻¹ r(x)`` with the inverse at that point ``x*``,
    each required to lower q ×``CHORD_RATE``; a candidate that so reaches ``q < tol_q`` has
    converged by its own iterates (its state and q are its own) and runs no Newton step. The
    first chunk holds at most ``CHORD_FIRST_CHUNK`` candidates (``CHORD_FIRST_CHUNK_SMALL`` below
    ``SETTLE_MIN_STATE`` state dims), so that its points settle most others this way; the rest
    start their Newton search from their initial state.

    Candidates run in chunks of ``chunk_size`` (memory ``NEWTON_COPIES × chunk × state²``
    floats), and an active candidate that comes within ``tol_unique`` (in every unit) of a point
    already converged — in its chunk or an earlier one — is retired at once with that point's
    state and q (it would converge to it: Newton's basin around a regular point is larger than
    the de-duplication tolerance). A Jacobian is computed only after an accepted step; a
    rejected Newton step re-uses the direction. In a float64 search, Levenberg–Marquardt
    proposals of candidates with ``q ≥ LM_SINGLE_Q`` are solved in float32 (each is accepted
    only if the float64 q decreases); when every active candidate takes the same branch, the
    iteration runs on whole tensors instead of masked copies.

    Parameters
    ----------
    G : callable ``(candidate, state) -> (candidate, state)``
        The map whose fixed points are sought (``F`` or ``F^k``); rows do not interact.
    x0 : Tensor, shape (candidate, state)
        Initial states.
    settings : SearchSettings
        As in :func:`minimise_levenberg_marquardt` (``lr_init`` starts the fallback's damping and
        the gradient start's step size).
    jacobian : callable ``(candidate, state) -> (candidate, state, state)``, optional
        ``∂G/∂x`` at each row; reverse-mode autograd of ``G`` by default.
    tol_unique : float, optional
        Retire candidates this close to an already converged point (None: never).
    chunk_size : int, optional
        Candidates searched at once (all by default).
    chord_steps : int
        Chord steps of each check against known points (0: no chord checks). The known points
        are kept only with ``tol_unique``, so without it no candidate is chord-checked.
    gradient_steps : int, optional
        Gradient steps of every candidate before its Newton steps (0: a Levenberg–Marquardt
        start); by default ``GRADIENT_START`` from ``GRADIENT_START_MIN_STATE`` state dims, else 0.
    single_map : callable ``(candidate, state) -> (candidate, state)``, optional
        ``G`` in float32, for the gradient steps of a float64 search (about half the cost of each;
        they only bring candidates near a point, which the float64 Newton steps then converge to).

    Returns
    -------
    SearchState
        Retired duplicates count as converged, with the state and q of the point they reached.

    Examples
    --------
    >>> import torch
    >>> from neurodyn.analysis.fixed_points._newton import minimise_newton
    >>> from neurodyn.analysis.fixed_points._search import SearchSettings
    >>> G = lambda x: torch.tanh(2.0 * x)          # fixed points 0 and ±0.9575
    >>> out = minimise_newton(G, torch.tensor([[0.1], [-2.0], [0.5]], dtype=torch.float64),
    ...                       SearchSettings(tol_q=1e-24, tol_dq=0.0, max_iters=50, lr_init=1.0))
    >>> [round(v, 4) + 0.0 for v in out.states[:, 0].tolist()], out.converged.tolist()
    ([0.0, -0.9575, 0.9575], [True, True, True])
    """
    tol_q, tol_dq, max_iters, lr_init = settings
    n, n_state = x0.shape
    chunk = n if chunk_size is None else max(1, int(chunk_size))
    if gradient_steps is None:
        gradient_steps = GRADIENT_START if n_state >= GRADIENT_START_MIN_STATE else 0
    x = x0.detach().clone()
    with torch.no_grad():
        q = speed(G, x)
    out, pending = initial_state(x, q, tol_q)
    found_x, found_q = x[:0], q[:0]
    slow = {"x": x[:0], "q": q[:0]}  # slow points found so far (see _join_slow_points)
    inverses = x.new_zeros((0, n_state, n_state)) if chord_steps else None
    checked = torch.full((n,), -1, dtype=torch.int64, device=x.device)  # nearest point at the last check
    damped = torch.full((n,), not gradient_steps, dtype=torch.bool, device=x.device)  # damped start
    if gradient_steps and pending.numel():
        pending = _gradient_start(G, out, pending, damped, tol_q=tol_q, tol_dq=tol_dq, lr_init=lr_init,
                                  n_steps=min(int(gradient_steps), max_iters), single_map=single_map)
    first = CHORD_FIRST_CHUNK if n_state >= SETTLE_MIN_STATE else CHORD_FIRST_CHUNK_SMALL
    size = min(chunk, first) if chord_steps else chunk
    settle_in_chunk = bool(chord_steps) and n_state >= SETTLE_MIN_STATE
    cache = {"inverses": inverses}

    def inverses_of(points: torch.Tensor) -> torch.Tensor:  # (J − I)⁻¹ of the known points
        held = cache["inverses"]
        if held.shape[0] < points.shape[0]:
            held = torch.cat([held, chord_inverses(G, points[held.shape[0]:], jacobian)])
            cache["inverses"] = held
        return held

    def settle(rows, xa, na, points):
        return _settle_in_chunk(G, out, rows, xa, na, points, inverses_of(points), tol_q, chord_steps)

    bar, remaining = _progress_bar(n, progress, "fixed points (Newton)"), n
    while pending.numel():
        if chord_steps and found_x.shape[0]:
            pending = _chord_pending(G, out, pending, checked, found_x, inverses_of(found_x), tol_q,
                                     chord_steps)
        if settle_in_chunk and pending.numel() > size:  # a chunk of far-apart candidates
            pending = _spread_first(out.states, pending, found_x, size)
        idx, pending = pending[:size], pending[size:]
        found_x, found_q = _newton_chunk(G, out, idx, found_x, found_q, tol_q=tol_q, tol_dq=tol_dq,
                                         max_iters=max_iters, lr_init=lr_init, jacobian=jacobian,
                                         tol_unique=tol_unique, damped_start=damped[idx],
                                         settle=settle if settle_in_chunk else None,
                                         slow=slow if tol_unique is not None and join_slow else None,
                                         n_cond=n_cond)
        bar.update(remaining - pending.numel())
        remaining, size = pending.numel(), chunk
    bar.close()
    return out


def _spread_first(states, pending, found_x, size):
    """``pending`` with ``size`` rows first, chosen one by one as the farthest (max-abs distance in
    ``states``, (candidate, state)) from the known points ``found_x`` and from the rows chosen
    before (greedy farthest-point sampling); the rest keep their order.

    One Newton chunk of far-apart candidates meets more distinct points than one of neighbours,
    and the chord checks then settle most other candidates on them: on the 128-unit flip-flop
    network of the benchmark, 81 of 992 candidates were left to Newton steps after the first chunk
    of 32, against 377 in index order (the same 27 points, about 12 % less CPU a call)."""
    x = states[pending]
    dist = torch.cdist(x, found_x, p=float("inf")).min(1).values if found_x.shape[0] else \
        torch.full((x.shape[0],), float("inf"), dtype=x.dtype, device=x.device)
    taken = torch.zeros(x.shape[0], dtype=torch.bool, device=x.device)
    chosen = []
    for _ in range(size):
        # distances are ≥ 0; a row with a non-finite state (NaN distance) comes after every finite
        # one, and a row already chosen after every other
        score = torch.where(taken, -2.0, torch.nan_to_num(dist, nan=-1.0))
        j = int(torch.argmax(score))
        chosen.append(j)
        taken[j] = True
        dist = torch.minimum(dist, (x - x[j]).abs().amax(-1))
    first = torch.as_tensor(chosen, device=pending.device)
    rest = torch.ones(pending.numel(), dtype=torch.bool, device=pending.device)
    rest[first] = False
    return torch.cat([pending[first], pending[rest]])


def _gradient_start(G, out, rows, damped, *, tol_q, tol_dq, n_steps, lr_init, single_map):
    """Gradient steps (:func:`minimise_gradient`) of the candidates ``rows``, written into ``out``
    (on ``single_map`` in float32 when given for a float64 search, with q then taken on ``G``);
    the rows left to Newton steps (all but those converged: one stopped above ``tol_q`` by the
    gradient search's rules still gets its Newton steps). A row left with ``q ≥ GRADIENT_FAR_Q``
    gets its initial state and q back and is marked in ``damped`` for the Levenberg–Marquardt
    start (its iterations still count the gradient steps)."""
    x = out.states[rows]
    q_init = out.q[rows]
    single = single_map is not None and x.dtype == torch.float64
    start = minimise_gradient(single_map if single else G, x.float() if single else x,
                              SearchSettings(tol_q, tol_dq, n_steps, lr_init))
    states, q = start.states.to(x.dtype), start.q
    if single:
        with torch.no_grad():
            q = speed(G, states)
    converged = q < tol_q
    far = ~(q < GRADIENT_FAR_Q)  # NaN counts as far
    states = torch.where(far[:, None], x, states)
    q = torch.where(far, q_init, q)
    out.states[rows], out.q[rows], out.iterations[rows] = states, q, start.iterations
    out.converged[rows] = converged
    damped[rows] = far
    return rows[~converged]


def _chord_pending(G, out, pending, checked, found_x, inverses, tol_q, n_steps):
    """The pending candidates left after chord checks (:func:`chord_check`) of those whose nearest
    known point changed since their last check; the converged ones are written into ``out``."""
    nearest = torch.cdist(out.states[pending], found_x).argmin(1)
    fresh = nearest != checked[pending]
    checked[pending] = nearest
    if not bool(fresh.any()):
        return pending
    rows = pending[fresh]
    keep = _retire_by_chord(G, out, rows, out.states[rows], out.iterations[rows], found_x, inverses,
                            tol_q, n_steps)
    if keep is None:
        return pending
    left = torch.ones_like(fresh)
    left[fresh] = keep
    return pending[left]


def _settle_in_chunk(G, out, idx, xa, na, found_x, inverses, tol_q, n_steps):
    """Chord checks (:func:`_retire_by_chord`) of the rows ``xa`` of candidates ``idx`` that lie
    within ``CHORD_REACH`` (every unit) of a known point; mask of rows to keep, or None when none
    converged."""
    near = torch.cdist(xa, found_x, p=float("inf")).min(1).values < CHORD_REACH
    if not bool(near.any()):
        return None
    keep = _retire_by_chord(G, out, idx[near], xa[near], na[near], found_x, inverses, tol_q, n_steps)
    if keep is None:
        return None
    rows = torch.ones_like(near)
    rows[near] = keep
    return rows


def _retire_by_chord(G, out, idx, xa, na, found_x, inverses, tol_q, n_steps):
    """Write the rows ``xa`` of candidates ``idx`` that converge by chord steps into ``out``
    (iterations: ``na`` plus the chord steps); mask of rows to keep, or None when none converged."""
    conv, states, q, steps = chord_check(G, xa, found_x, inverses, tol_q=tol_q, n_steps=n_steps)
    if not bool(conv.any()):
        return None
    fin = idx[conv]
    out.states[fin], out.q[fin], out.iterations[fin] = states[conv], q[conv], na[conv] + steps[conv]
    out.converged[fin] = True
    out.stalled[fin] = False
    return ~conv


def _newton_chunk(G, out, idx, found_x, found_q, *, tol_q, tol_dq, max_iters, lr_init, jacobian,
                  tol_unique, damped_start, settle=None, slow=None, n_cond=0):
    """Run one chunk of candidates ``idx`` to completion, writing into ``out``; return the
    converged points known afterwards (for retiring duplicates). Candidates marked in
    ``damped_start`` (a mask over ``idx``) start with Levenberg–Marquardt steps, the others with
    Newton steps. ``slow`` (``{"x": (point, state), "q": (point,)}``, or None) holds the slow
    points found so far, which candidates join and to which this chunk's add theirs (in place)."""
    x0 = out.states[idx]
    xa, qa = x0, out.q[idx]
    na = out.iterations[idx].clone()
    step = torch.ones_like(qa)  # Newton step length
    lr = torch.full_like(qa, float(lr_init))  # inverse damping of Levenberg–Marquardt rows
    lm = damped_start.clone() if NEWTON_SWITCH_LR > lr_init else torch.zeros_like(damped_start)
    q_mark, x_mark = qa.clone(), xa.clone()  # at the start of each slow-point window (every row's at once)
    with torch.no_grad():
        r = G(xa) - xa
    M = xa.new_empty((*xa.shape, xa.shape[-1]))
    direction = torch.zeros_like(xa)
    # ``J − I`` (for ``stale`` rows) and the Newton direction (for ``fresh`` rows) are brought up to
    # date at the top of each iteration, after the retirements: a candidate that converged, reached
    # a known point or was settled by chord steps never pays for its last factorisation
    stale, fresh = torch.ones_like(lm), ~lm
    moved = torch.zeros_like(lm)  # rows whose Newton step was accepted in the last iteration
    for it in range(max_iters):
        if tol_unique is not None and found_x.shape[0] and idx.numel():
            keep = _retire_duplicates(out, idx, xa, na, found_x, found_q, tol_unique, n_cond)
            if settle is not None and bool(moved.any()):  # chord checks of rows that just moved
                rows = moved if keep is None else moved & keep
                settled = settle(idx[rows], xa[rows], na[rows], found_x) if bool(rows.any()) else None
                if settled is not None:
                    keep = torch.ones_like(moved) if keep is None else keep
                    keep[rows] = settled
            if keep is not None:
                idx, xa, qa, na, step, lr, lm, M, r, direction, q_mark, x_mark, moved, stale, fresh = \
                    _rows(keep, (idx, xa, qa, na, step, lr, lm, M, r, direction, q_mark, x_mark, moved, stale,
                                 fresh))
        if idx.numel() == 0:
            break
        _refresh(G, jacobian, xa, r, M, direction, stale, fresh)
        n_lm = int(lm.sum())  # one synchronisation per iteration decides the dense paths below
        if n_lm == lm.numel():
            delta = _lm_proposal(M, r, lr, qa)
        else:
            delta = step[:, None] * direction
            if n_lm:
                delta[lm] = _lm_proposal(M[lm], r[lm], lr[lm], qa[lm])
        x_try = xa + delta
        with torch.no_grad():
            r_try = G(x_try) - x_try
        q_try = 0.5 * r_try.pow(2).sum(-1)
        ok = torch.isfinite(q_try) & (q_try < qa)
        dq = qa - q_try
        n_ok = int(ok.sum())
        if n_ok == ok.numel():
            xa, qa, r = x_try, q_try, r_try
        elif n_ok:
            xa = torch.where(ok[:, None], x_try, xa)
            qa = torch.where(ok, q_try, qa)
            r[ok] = r_try[ok]
        stale = ok
        done_dq = ok & lm & (dq < tol_dq * lr)
        step = torch.where(ok, (2.0 * step).clamp(max=1.0), 0.5 * step)
        lr = torch.where(lm, torch.where(ok, lr * NEWTON_LM_GROW, lr * LM_SHRINK), lr)
        to_newton = lm & (lr >= NEWTON_SWITCH_LR)
        to_lm = ~lm & (step < NEWTON_MIN_STEP)
        lm = (lm & ~to_newton) | to_lm
        step = torch.where(to_newton, torch.ones_like(step), step)
        lr = torch.where(to_lm, torch.full_like(lr, float(lr_init)), lr)
        fresh = ~lm & (ok | to_newton)
        moved = ok & ~lm
        na += 1
        if (it + 1) % SLOW_WINDOW == 0:  # the rows of a chunk start together, so their windows end together
            move = (xa - x_mark).abs().amax(-1)
            flat = lm & (qa > SLOW_FACTOR * q_mark)
            slow_now = flat & (move < SLOW_MOVE)
            done_dq = done_dq | slow_now
            if slow is not None:
                near = flat & ~slow_now & (move < SLOW_NEAR_MOVE)
                xa, qa, done_dq = _join_slow_points(slow, xa, qa, done_dq, near)
                if bool(slow_now.any()):
                    slow["x"], slow["q"] = _add_new_points(slow["x"], slow["q"], xa[slow_now], qa[slow_now],
                                                           SLOW_REACH)
            q_mark, x_mark = qa.clone(), xa.clone()
        converged_now = qa < tol_q
        if tol_unique is not None and bool(converged_now.any()):
            found_x, found_q = _add_new_points(found_x, found_q, xa[converged_now], qa[converged_now],
                                               tol_unique, n_cond)
        lr_eff = torch.where(lm, lr, torch.ones_like(lr))
        keep = retire(out, idx, xa, qa, na, done_dq, lr_eff, tol_q=tol_q, lr_min=LR_FLOOR * lr_init)
        if keep is not None:
            idx, xa, qa, na, step, lr, lm, M, r, direction, q_mark, x_mark, moved, stale, fresh = \
                _rows(keep, (idx, xa, qa, na, step, lr, lm, M, r, direction, q_mark, x_mark, moved, stale,
                             fresh))
    out.states[idx], out.q[idx], out.iterations[idx] = xa, qa, na  # ran out of iterations
    return found_x, found_q


def _join_slow_points(slow, xa, qa, done, near_rows):
    """Rows of ``near_rows`` (a mask) within ``SLOW_REACH`` (every unit) of a known slow point
    (``slow["x"]``, ``slow["q"]``) whose q is not above theirs stop there: they take its state and q
    and are marked in ``done``. A row already below its nearest slow point's q goes on (it may
    become a better slow point)."""
    if slow["x"].shape[0] == 0 or not bool(near_rows.any()):
        return xa, qa, done
    rows = near_rows.nonzero().squeeze(1)
    nearest = torch.cdist(xa[rows], slow["x"], p=float("inf")).min(1)
    join = (nearest.values < SLOW_REACH) & (slow["q"][nearest.indices] <= qa[rows])
    if not bool(join.any()):
        return xa, qa, done
    rows, j = rows[join], nearest.indices[join]
    xa, qa, done = xa.clone(), qa.clone(), done.clone()
    xa[rows], qa[rows], done[rows] = slow["x"][j], slow["q"][j], True
    return xa, qa, done


def _refresh(G, jacobian, xa, r, M, direction, stale, fresh) -> None:
    """In place: ``M = ∂G/∂x − I`` at the ``stale`` rows of ``xa``, then the Newton direction
    ``−M⁻¹ r`` at the ``fresh`` rows (each on whole tensors when every row needs it)."""
    n_stale = int(stale.sum())
    if n_stale == stale.numel():
        M.copy_(_shifted_jacobian(G, xa, jacobian))
    elif n_stale:
        M[stale] = _shifted_jacobian(G, xa[stale], jacobian)
    n_fresh = int(fresh.sum())
    if n_fresh == fresh.numel():
        direction.copy_(newton_directions(M, r))
    elif n_fresh:
        direction[fresh] = newton_directions(M[fresh], r[fresh])


def _rows(keep: torch.Tensor, tensors: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
    """The rows ``keep`` (a mask over the first dim) of each tensor (one ``nonzero`` for all)."""
    rows = keep.nonzero().squeeze(1)
    return tuple(t.index_select(0, rows) for t in tensors)


def _lm_proposal(M: torch.Tensor, r: torch.Tensor, lr: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """:func:`_lm_direction`, solved in float32 for float64 rows with ``q ≥ LM_SINGLE_Q`` where
    torch's LAPACK solves them (not the compiled small solves, which cost the same in float64).

    The step is only a proposal, accepted on the float64 q, and far from a point float32 solves it
    well enough (``μ = 1/lr ≥ 1/NEWTON_SWITCH_LR`` bounds the normal matrix's condition number) at
    about half the cost of ``MᵀM`` and its Cholesky factor; rows close to a point keep float64."""
    if M.dtype != torch.float64 or uses_compiled(M):
        return _lm_direction(M, r, lr)
    coarse = q >= LM_SINGLE_Q
    n_coarse = int(coarse.sum())
    if n_coarse == 0:
        return _lm_direction(M, r, lr)
    if n_coarse == coarse.numel():
        return _lm_direction(M.float(), r.float(), lr.float()).to(M.dtype)
    delta = torch.empty_like(r)
    delta[coarse] = _lm_direction(M[coarse].float(), r[coarse].float(), lr[coarse].float()).to(M.dtype)
    delta[~coarse] = _lm_direction(M[~coarse], r[~coarse], lr[~coarse])
    return delta


def _lm_direction(M: torch.Tensor, r: torch.Tensor, lr: torch.Tensor) -> torch.Tensor:
    """``−(MᵀM + I / lr)⁻¹ Mᵀ r`` per row (:func:`~neurodyn.kernels.linalg.damped_directions`);
    zero where the normal matrix is not positive definite or the step is not finite."""
    return damped_directions(M, r, 1.0 / lr)


def _add_new_points(found_x, found_q, new_x, new_q, tol_unique, n_cond=0):
    """The known converged points with those of ``new_x`` that are not within ``tol_unique`` of one
    already known nor of another new one, so that the duplicate test stays ``active × distinct
    points``, not × candidates (with ``n_cond``, points under other inputs are never duplicates)."""
    if found_x.shape[0]:
        fresh = _distances(new_x, found_x, n_cond).min(dim=1).values >= tol_unique
        new_x, new_q = new_x[fresh], new_q[fresh]
    if new_x.shape[0] > 1:  # candidates converging at once to one point
        keep = unique_points(new_x.cpu().numpy(), new_q.cpu().numpy(), tol_unique, n_cond)
        keep = torch.as_tensor(keep, device=new_x.device)
        new_x, new_q = new_x[keep], new_q[keep]
    return torch.cat([found_x, new_x]), torch.cat([found_q, new_q])


def _distances(a: torch.Tensor, b: torch.Tensor, n_cond: int = 0) -> torch.Tensor:
    """Max-abs distances (row of a, row of b); with ``n_cond`` > 0 over the state columns only, and
    ``inf`` between rows whose last ``n_cond`` columns (their inputs) differ (see
    :func:`~neurodyn.analysis.fixed_points._unique.distance`)."""
    if not n_cond:
        return torch.cdist(a, b, p=float("inf"))
    dist = torch.cdist(a[:, :-n_cond], b[:, :-n_cond], p=float("inf"))
    same = torch.cdist(a[:, -n_cond:], b[:, -n_cond:], p=float("inf")) == 0
    return torch.where(same, dist, torch.full_like(dist, float("inf")))


def _retire_duplicates(out, idx, xa, na, found_x, found_q, tol_unique, n_cond=0):
    """Retire active rows within ``tol_unique`` (max-abs) of a converged point (under the same input
    with ``n_cond``); mask of rows to keep."""
    nearest = _distances(xa, found_x, n_cond).min(dim=1)
    dup = nearest.values < tol_unique
    if not bool(dup.any()):
        return None
    fin, j = idx[dup], nearest.indices[dup]
    out.states[fin], out.q[fin], out.iterations[fin] = found_x[j], found_q[j], na[dup]
    out.converged[fin] = True
    out.stalled[fin] = False
    return ~dup


def _residual_jacobian(G: BatchedMap, x: torch.Tensor, jacobian: JacobianFn | None):
    """``(∂G/∂x − I, G(x) − x)`` for each row of ``x``."""
    with torch.no_grad():
        r = G(x) - x
    return _shifted_jacobian(G, x, jacobian), r


def _shifted_jacobian(G: BatchedMap, x: torch.Tensor, jacobian: JacobianFn | None) -> torch.Tensor:
    """``∂G/∂x − I`` for each row of ``x``, (row, state, state)."""
    M = step_jacobians(G, x, jacobian).contiguous()
    if M._base is not None:  # a view (e.g. of a constant Jacobian): subtract on a copy
        M = M.clone()
    M.diagonal(dim1=-2, dim2=-1).sub_(1.0)
    return M


def newton_polish(G: BatchedMap, x: torch.Tensor, *, n_steps: int = 3,
                  jacobian: JacobianFn | None = None, until_q: float | None = None) -> torch.Tensor:
    """A few Newton steps ``x ← x − (J − I)⁻¹ (G(x) − x)`` on converged points.

    Gradient descent stops as soon as ``q < tol_q``, which leaves an error of order
    ``‖(J − I)⁻¹‖ · sqrt(2 tol_q)`` in the point; Newton's method removes it quadratically.
    A step is kept only where it is finite and lowers q, so singular ``J − I`` (marginal
    directions) leave a point unchanged. With ``until_q``, a row whose q is below it takes no
    further step, and the steps end once every row is there (a short Newton search).
    """
    return _polish(G, x, n_steps, jacobian, _solve, until_q)


def round_off_q(states, eps: float) -> float:
    """The q that rounding leaves at states of this size, ``100 (eps · max(1, max |state|))²``
    (``states`` an array or tensor of at least one row, ``eps`` its dtype's machine epsilon):
    Newton steps from below it only move a point by round-off."""
    return 100.0 * (eps * max(1.0, float(abs(states).max()))) ** 2


def pinv_polish(G: BatchedMap, x: torch.Tensor, *, n_steps: int = 3,
                jacobian: JacobianFn | None = None) -> torch.Tensor:
    """Newton steps with the pseudo-inverse of ``J − I``: like :func:`newton_polish`, but a singular
    ``J − I`` only leaves the residual along its null directions (a line attractor's points land
    on the line; an isolated marginal point keeps the residual it cannot remove). A step is kept
    only where it is finite and lowers q."""
    return _polish(G, x, n_steps, jacobian, _pinv_solve)


def _solve(M: torch.Tensor, r: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``M⁻¹ r`` per row (``r`` of shape (row, state, 1)) and whether it is defined: a singular
    ``M`` gives a zero step, which the caller rejects as it does not lower q."""
    delta = -newton_directions(M, r.squeeze(-1)).unsqueeze(-1)
    return delta, torch.ones(M.shape[0], dtype=torch.bool, device=M.device)


def _pinv_solve(M: torch.Tensor, r: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``M⁺ r`` per row (always defined)."""
    return torch.linalg.pinv(M) @ r, torch.ones(M.shape[0], dtype=torch.bool, device=M.device)


def _polish(G: BatchedMap, x: torch.Tensor, n_steps: int, jacobian: JacobianFn | None, solve,
            until_q: float | None = None) -> torch.Tensor:
    """Up to ``n_steps`` steps ``x ← x − solve(J − I, G(x) − x)``, each kept only where the solve
    succeeded, the step is finite and q decreases; with ``until_q``, only on rows with q at or
    above it."""
    x = x.detach().clone()
    if x.shape[0] == 0:
        return x
    rows = None
    for _ in range(n_steps):
        xa = x if rows is None else x[rows]
        with torch.no_grad():
            r = G(xa) - xa
        q = 0.5 * r.pow(2).sum(-1)
        if until_q is not None:
            rows = (q >= until_q).nonzero().squeeze(1) if rows is None else rows[q >= until_q]
            if rows.numel() == 0:
                break
            xa, r, q = x[rows], r[q >= until_q], q[q >= until_q]
        delta, solved = solve(_shifted_jacobian(G, xa, jacobian), r.unsqueeze(-1))
        x_try = xa - delta.squeeze(-1)
        with torch.no_grad():
            q_try = speed(G, x_try)
        ok = solved & torch.isfinite(q_try) & (q_try < q)
        if not bool(ok.any()):
            break  # nothing moved: every further step would be the same, and rejected
        if rows is None:
            x = torch.where(ok[:, None], x_try, x)
        else:
            x[rows] = torch.where(ok[:, None], x_try, xa)
    return x


METHODS = {
    "newton": minimise_newton,
    "gradient": minimise_gradient,
    "joint": minimise_joint,
    "levenberg_marquardt": minimise_levenberg_marquardt,
}
