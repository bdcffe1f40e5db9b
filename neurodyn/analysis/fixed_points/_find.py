"""Fixed points, slow points and period-k cycles of recurrent networks (Sussillo & Barak 2013)."""

from __future__ import annotations

import copy
import math
import reprlib
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from neurodyn._budget import MAX_MEMORY, check_memory, warn_flops
from neurodyn._checks import check_device, check_finite, check_setting
from neurodyn._seed import SeedLike, resolve_seed
from neurodyn._version import __version__
from neurodyn.analysis.fixed_points import _bridge as bridge
from neurodyn.analysis.fixed_points import _init as init
from neurodyn.analysis.fixed_points._assemble import assemble, linearise
from neurodyn.analysis.fixed_points._newton import (
    GRADIENT_START_MIN_STATE,
    METHODS,
    NEWTON_COPIES,
    SLOW_REACH,
    newton_polish,
    pinv_polish,
    round_off_q,
)
from neurodyn.analysis.fixed_points._result import FixedPointResult
from neurodyn.analysis.fixed_points._search import ClosedFormMap, SearchSettings, power_map, speed
from neurodyn.analysis.fixed_points._stability import certify_stable, power_jacobian
from neurodyn.analysis.fixed_points._unique import (
    distance_inliers,
    has_minimal_period,
    merge_bracketing,
    result_order,
    unique_cycles,
    unique_points,
)
from neurodyn.analysis.jacobians import jacobians_unchecked as jacobians
from neurodyn.analysis.jacobians import probe_map
from neurodyn.models._base import RecurrentModel
from neurodyn.models._family import family_of

#: the method ``method="auto"`` runs
AUTO_METHOD = "newton"
#: Newton iterations per candidate assumed by the up-front cost estimate
_EST_ITERS = 15
#: the Newton search runs chunks of about this many Jacobian entries (chunk × state²), and at least
#: NEWTON_MIN_CHUNK candidates: at 128 units, chunks of 64 let candidates of later chunks settle on
#: the points of earlier ones by chord steps (1,024 task states of the 128-unit flip-flop network:
#: 182 candidates took Newton steps), while small networks keep one chunk (per-call overhead
#: dominates there)
NEWTON_CHUNK_ELEMENTS = 1 << 20
NEWTON_MIN_CHUNK = 64
#: (candidate, state) arrays the search holds at once, for the memory estimate of free rollouts
_STATE_COPIES = 8
#: the search at order k evaluates F^k and its Jacobian as k one-step maps in sequence, so every
#: Newton iteration of every chunk costs about k steps whatever the state size (about 0.2 ms each on
#: a 1-unit PLRNN: max_order=100, 15 x 5050 = 75,750 such steps, took 15.7 s); a search estimated at
#: more than this many steps (about half an hour at that rate; max_order above about 1150 with one
#: chunk) is refused up front
MAX_MAP_STEPS = 1e7


def find_fixed_points(
    model: RecurrentModel | Callable[[torch.Tensor, torch.Tensor | None], torch.Tensor],
    *,
    inputs: Any = None,
    initial_states: Any = None,
    task: Any = None,
    n_inits: int = 1024,
    noise_scale: float = 0.0,
    seed: SeedLike = 0,
    tol_q: float = 1e-12,
    tol_dq: float = 1e-20,
    max_iters: int = 5000,
    lr_init: float = 1.0,
    tol_unique: float = 1e-3,
    outlier_distance_scale: float = 10.0,
    max_order: int = 1,
    marginal_tol: float = 1e-3,
    method: str = "auto",
    state_size: int | None = None,
    dtype: torch.dtype = torch.float64,
    device: Any = None,
    progress: bool = False,
    max_memory: float = MAX_MEMORY,
) -> FixedPointResult:
    """Find fixed points, slow points and period-k cycles of ``h ↦ F(h, u*)``.

    Minimises the speed ``q(h) = ½‖F(h, u*) − h‖²`` from many initial states at once (Sussillo &
    Barak 2013, *Neural Computation* 25(3); tolerances follow Golub & Sussillo's FixedPointFinder,
    JOSS 2018), removes distance outliers and duplicates, then labels each point from the
    eigenvalues of its Jacobian (the discrete-time map's: stable means every ``|λ| < 1``).
    With ``max_order = K > 1`` it also minimises ``½‖F^k(h) − h‖²`` for ``k = 2..K`` and keeps
    converged points of minimal period ``k``, one entry per cycle point, with stability from the
    monodromy matrix.

    Parameters
    ----------
    model : RecurrentModel, loaded model or callable ``F(h, u)``
        A model (its ``step(h, u)`` is used on a float64 copy), what
        :func:`neurodyn.io.load_model` or :func:`~neurodyn.io.load_checkpoint` return (their
        ``model``, and their ``task`` as ``task`` when neither it nor ``initial_states`` is given),
        or a plain batched map ``(batch, state), (batch, input) or None -> (batch, state)``; then
        give ``state_size``.
    inputs : array-like, shape (input,), optional
        The constant input ``u*``; zeros by default (``None`` is passed to a callable).
    initial_states : array-like, shape (n, state) or (trial, time, state), optional
        Where the searches start. All rows are used when there are at most ``n_inits``,
        otherwise ``n_inits`` are sampled without replacement.
    task : Task, optional
        When ``initial_states`` is None: roll the model out noise-free on 128 trials of this task
        and sample its states. Without both, states come from free rollouts: ``n_inits`` states
        drawn from N(0, 1) run 50 steps under input ``u* + N(0, 0.1²)``, each stopped at a
        random step. Precedence: ``initial_states``, then ``task``, then free rollouts.
    n_inits : int
        Number of initial states.
    noise_scale : float
        Standard deviation of Gaussian noise added to the sampled initial states.
    seed : int, Generator or None
        Seed of the sampling and noise; same seed ⇒ identical result.
    tol_q : float
        A candidate has converged once ``q < tol_q`` (FixedPointFinder: 1e-12).
    tol_dq : float
        A candidate also stops when an accepted step changes q by less than ``tol_dq · lr``
        (FixedPointFinder: 1e-20); stopped above ``tol_q`` it is reported as a slow point.
    max_iters : int
        Iterations per candidate (FixedPointFinder: 5000).
    lr_init : float
        Initial step size (FixedPointFinder's adaptive learning rate starts at 1.0).
    tol_unique : float
        Points closer than this in every unit are duplicates (FixedPointFinder: 1e-3); with one
        input per initial state, only points under exactly the same input are.
    outlier_distance_scale : float
        Points farther from the initial states' centroid than this many mean initial distances
        are dropped (FixedPointFinder: 10); ``inf`` keeps all finite points.
    max_order : int
        Largest cycle period searched (1: fixed points only).
    marginal_tol : float
        Half-width of the band ``1 ± marginal_tol`` of eigenvalue moduli counted as marginal.
    method : {"auto", "newton", "levenberg_marquardt", "gradient", "joint"}
        ``"newton"`` (what ``"auto"`` runs): per-candidate damped Newton steps on the exact
        Jacobians of the model family (closed forms, see :func:`neurodyn.analysis.jacobians`;
        autograd for a callable; the chain rule along the orbit for period ``k``), in chunks
        of about ``2²⁰ / state²`` candidates (at least 64) that keep ``4 × chunk × state²``
        floats under ``max_memory``. From 64 state dims every candidate first takes 30
        heavy-ball gradient steps on q, all at once (on a float32 copy of a model in a float64
        search), smaller states a few Levenberg–Marquardt steps each; a pending candidate whose
        chord steps with the factorised ``J − I`` of the nearest converged point cut q ×20 at
        each step down to ``tol_q`` converges by those steps alone (no Newton step; from 64 state
        dims also checked during its Newton steps), a candidate that comes
        within ``tol_unique`` of an already converged point is retired with it, and one whose
        Newton steps stall (a slow point) continues with Levenberg–Marquardt steps until q falls
        less than half while it moves less than 1e-3 over 50 steps (slow points are located to
        about 1e-3; one creeping towards a slow point already found, within 5e-2, stops there).
        From 64 state dims each chunk takes the pending candidates farthest apart. Then Newton
        steps from the midpoints of pairs of the stable points found (labelled by the eigenvalues
        the result reports; with one input for all candidates and two or more state dims) add the
        converged points they reach that the search lacks, typically saddles between attractors
        (``attrs["n_midpoint_candidates"]`` counts these starts). All but
        ``"joint"`` give each candidate its own step size and stop each on its own.
        ``"levenberg_marquardt"``: damped Gauss–Newton steps on every candidate at once (×1.2
        after an accepted step, ×0.5 and rejection when q would increase). ``"gradient"``:
        heavy-ball gradient descent (momentum 0.98; cheap steps, hundreds of iterations, no
        Jacobians). ``"joint"``: FixedPointFinder's Adam optimisation of the mean q with a
        single adaptive rate (for comparison). ``attrs["method"]`` records the one that ran.
    state_size : int, optional
        Required when ``model`` is a plain callable.
    dtype : torch.dtype
        Precision of the search: float64 (default) or float32, also given as ``"float32"`` or
        ``np.float32``; a callable must accept it.
    device : torch device, optional
        Defaults to the model's device (CPU for a callable).
    progress : bool
        Show a progress bar per search.
    max_memory : float
        Bytes the Newton-class searches may hold in Jacobians at once (1 GiB by default).

    Returns
    -------
    FixedPointResult
        One row per unique point, including non-converged slow points (``converged`` False);
        ``status`` is ``"converged"``, ``"slow_point"`` (q stopped decreasing above ``tol_q``) or
        ``"not_converged"`` (out of iterations).

    Raises
    ------
    ValueError
        On a bad shape, NaN/Inf inputs or states, an unknown method, a setting that is not a finite
        number in its range (NaN included; counts must be integers, not bools), or
        when one candidate's Jacobians need more than ``max_memory``, or the ``n_inits`` free
        rollouts more than the memory available (the messages give the estimate). A search
        estimated at more than about 10¹³ operations warns first (``RuntimeWarning``, one line
        with the estimate and how to reduce it). Also, before any work, when ``max_order`` asks
        for more than ``MAX_MAP_STEPS`` (10⁷) one-step maps in sequence: chunks × about 15
        iterations × ``k`` steps for each period ``k = 1..max_order`` (about 0.2 ms a step, so
        half an hour; with one chunk, ``max_order`` above 1154); the message names the largest
        ``max_order`` that fits.
        Also for a ``dtype`` other than float32/float64, a ``device`` that is not available, a plain
        callable with ``state_size`` not a positive int or that does not return a tensor (batch,
        state_size) on a probe batch, inputs given to a model without inputs, ``inputs`` that are not
        numbers or ragged ``initial_states``, a model parameter with NaN or Inf (as after a diverged
        training run; the message names it), or a map that gives NaN or Inf at every initial state.
        A search whose candidates of some period all end at NaN or Inf warns (``RuntimeWarning``, one
        line) before returning without them.
    TypeError
        If ``model`` is a callable and ``state_size`` is missing, or ``task`` is not a Task.

    Examples
    --------
    One tanh unit with self-weight 2 is bistable: ``h = tanh(2 h)`` has the stable points ±0.9575 and
    the unstable point 0.

    >>> import numpy as np
    >>> from neurodyn.analysis import find_fixed_points
    >>> from neurodyn.analysis.fixed_points._examples import bistable_unit
    >>> model = bistable_unit()  # h -> tanh(2 h)
    >>> result = find_fixed_points(model, initial_states=np.linspace(-2.0, 2.0, 16)[:, None], seed=0)
    >>> points = result.fixed_points()
    >>> sorted(zip(np.round(points.states[:, 0], 4).tolist(), points.stability))
    [(-0.9575, 'stable'), (0.0, 'unstable'), (0.9575, 'stable')]
    """
    if not isinstance(model, RecurrentModel) and isinstance(getattr(model, "model", None), RecurrentModel):
        if task is None and initial_states is None:  # a LoadedModel or Checkpoint
            task = getattr(model, "task", None)
        model = model.model
    if method not in (*METHODS, "auto"):
        raise ValueError(f"unknown method {method!r}; choose one of auto, {', '.join(METHODS)}")
    _check_settings(n_inits=n_inits, max_iters=max_iters, max_order=max_order, tol_q=tol_q, lr_init=lr_init,
                    tol_unique=tol_unique, outlier_distance_scale=outlier_distance_scale,
                    noise_scale=noise_scale, tol_dq=tol_dq, marginal_tol=marginal_tol, max_memory=max_memory)
    _check_map_steps(int(max_order), 1)  # a lower bound (one chunk), before any state is built
    seed_int = resolve_seed(seed)
    dtype = _search_dtype(dtype)
    if task is not None:
        from neurodyn.tasks._base import check_task

        check_task(task, "or pass initial_states")
    step, n_state, n_in, device, shell = _one_step_map(model, state_size, dtype, device)
    if shell is not None:
        for name, value in shell.named_parameters():
            check_finite(value, f"model parameter {name}", "training likely diverged: load an earlier "
                         "checkpoint or retrain (a lower learning rate or gradient clipping)")
    u_star, u_rows = _input_conditions(inputs, n_in, dtype, device)
    batch_u = None if u_star is None else u_star[None, :]
    if shell is None:
        probe_map(step, n_state, batch_u if u_rows is None else u_rows[:1], dtype, device)

    def F(h: torch.Tensor) -> torch.Tensor:
        return step(h, None if batch_u is None else batch_u.expand(h.shape[0], -1))

    if u_rows is not None:
        pool = _rows_with_inputs(initial_states, u_rows, n_state, int(n_inits))
        source = "initial_states"
    elif initial_states is not None:
        pool, source = init.as_state_array(initial_states, n_state), "initial_states"
    elif task is not None:
        if shell is None:
            raise ValueError("task= needs a RecurrentModel; pass initial_states for a callable")
        pool = init.as_state_array(init.task_states(shell, task, seed_int, device, dtype), n_state)
        source = "task"
    else:
        # the search holds a few (candidate, state) arrays (rollouts, starts, iterates, results)
        check_memory("find_fixed_points", _STATE_COPIES * int(n_inits) * n_state * 8.0,
                     f"n_inits={int(n_inits)} states of {n_state} dims", "lower n_inits", device=device)
        pool = init.free_rollout_states(step, n_state, u_star, int(n_inits), seed_int, device, dtype)
        source = "free_rollouts"
    x0_np = init.sample_states(pool, int(n_inits), float(noise_scale), seed_int)
    jac1 = _step_jacobian(shell, F, u_star)
    jac_hu = _input_split_jacobians(shell if shell is not None else step, n_in)
    n_cond = 0
    if u_rows is not None:  # the state carries its input, held fixed: (h, u) -> (F(h, u), u)
        x0_np = np.concatenate([x0_np, u_rows.cpu().numpy()], axis=1)
        F, jac1, n_cond = _with_inputs(step, jac_hu, n_state), _augmented_jacobian(jac_hu, n_state), n_in
    x0 = torch.as_tensor(x0_np, dtype=dtype, device=device)
    _check_map_finite(F, x0, source)

    if method == "auto":
        method = AUTO_METHOD
    chunk = _plan(method, x0.shape[0], n_state + n_cond, int(max_order), max_memory)
    # the float32 copy serves only the gradient start, which only large states take
    single = method == "newton" and dtype == torch.float64 and n_state + n_cond >= GRADIENT_START_MIN_STATE
    F32 = _single_map(shell, batch_u, n_cond, n_state) if single else None
    settings = SearchSettings(tol_q=tol_q, tol_dq=tol_dq, max_iters=int(max_iters), lr_init=lr_init)
    parts, counts = [], {"n_candidates": 0, "n_outliers": 0, "n_midpoint_candidates": 0}
    for k in range(1, int(max_order) + 1):
        Gk, jac_k = power_map(F, k), power_jacobian(F, k, jac1)
        extra = {"newton": dict(jacobian=jac_k, tol_unique=tol_unique, chunk_size=chunk,
                                single_map=None if F32 is None else power_map(F32, k), join_slow=not n_cond,
                                n_cond=n_cond),
                 "levenberg_marquardt": dict(jacobian=jac_k)}.get(method, {})
        found = METHODS[method](Gk, x0, settings, progress=progress, **extra)
        if not bool(torch.isfinite(found.q).any()):
            warnings.warn(f"find_fixed_points: all {x0.shape[0]} candidates of period {k} ended at NaN or "
                          "Inf and were dropped; the map F(h, u*) gives NaN or Inf along the search (NaN or "
                          "Inf in its parameters, or an overflow)", RuntimeWarning, stacklevel=2)
        counts["n_candidates"] += x0.shape[0]
        part = _collect(F, k, found, x0_np, tol_unique, outlier_distance_scale, counts, jac_k, tol_q, n_cond)
        if method == "newton" and k == 1 and n_state >= 2 and not n_cond:  # saddles need two dims
            def lin(p: dict) -> dict:
                return linearise(p, jac_hu, u_star, n_state, n_cond, marginal_tol, dtype, device)

            def proven_stable(h: torch.Tensor) -> np.ndarray:
                A, _ = jac_hu(h, None if u_star is None else u_star.expand(h.shape[0], -1))
                return certify_stable(A, marginal_tol)[0].cpu().numpy()

            part = bridge.with_midpoint_starts(F, part, lin, proven_stable, x0, tol_unique, jac_k, tol_q,
                                               counts)
        parts.append(part)
    attrs = {
        "input": [] if u_star is None else u_star.cpu().tolist(), "per_candidate_inputs": int(n_cond > 0),
        "tol_q": tol_q, "tol_dq": tol_dq,
        "max_iters": int(max_iters), "lr_init": lr_init, "tol_unique": tol_unique,
        "outlier_distance_scale": outlier_distance_scale, "marginal_tol": marginal_tol,
        "max_order": int(max_order), "n_inits": int(x0.shape[0]), "noise_scale": noise_scale,
        "seed": seed_int, "method": method, "initial_state_source": source,
        "dtype": str(dtype).replace("torch.", ""), "neurodyn_version": __version__, **counts,
    }
    return assemble(F, parts, marginal_tol, attrs, n_state, dtype, device, jac_hu, u_star, n_cond)


def _check_map_finite(F, x0: torch.Tensor, source: str) -> None:
    """One-line ``ValueError`` when the map gives NaN or Inf at every initial state (at none of them
    can a search start): NaN or Inf in its parameters, typically after a diverged training run."""
    with torch.no_grad():
        finite = torch.isfinite(F(x0)).all(-1) & torch.isfinite(x0).all(-1)
    if not bool(finite.any()):
        raise ValueError(f"find_fixed_points: the map F(h, u*) gives NaN or Inf at all {x0.shape[0]} initial "
                         f"states (from {source}); check F for NaN or Inf in its parameters (a diverged "
                         "training run?) or pass initial_states where F is finite")


def _check_settings(**values: Any) -> None:
    """One-line ``ValueError`` for a bad setting: counts are integers >= 1 (not bools), tolerances
    and scales finite numbers (``outlier_distance_scale`` may be ``inf``), NaN nowhere."""
    for name in ("n_inits", "max_iters", "max_order"):
        check_setting(name, values[name], 1, integer=True)
    for name in ("tol_q", "lr_init", "tol_unique", "max_memory"):
        check_setting(name, values[name], 0, strict=True)
    for name in ("noise_scale", "tol_dq", "marginal_tol"):
        check_setting(name, values[name], 0)
    scale = values["outlier_distance_scale"]
    if scale != float("inf"):
        check_setting("outlier_distance_scale", scale, 0, strict=True, hint=" (inf keeps all finite points)")


def _plan(method: str, n_cand: int, n_state: int, max_order: int, max_memory: float) -> int | None:
    """Candidates per chunk of the Newton-class searches, after checking the cost up front: about
    ``NEWTON_CHUNK_ELEMENTS / state²`` (at least ``NEWTON_MIN_CHUNK``), and never more than fit in
    ``max_memory``.

    Raises a one-line ``ValueError`` when even one candidate's blocks exceed ``max_memory`` or the
    chunks need more than ``MAX_MAP_STEPS`` one-step maps in sequence; warns in one line when the
    estimated work is large (see :mod:`neurodyn._budget`).
    """
    if method not in ("newton", "levenberg_marquardt"):
        return None
    preferred = max(NEWTON_MIN_CHUNK, NEWTON_CHUNK_ELEMENTS // n_state**2)
    per = NEWTON_COPIES * 8.0 * n_state * n_state
    gib = 2.0**30
    if per > max_memory:
        raise ValueError(f"find_fixed_points needs about {per / gib:.3g} GiB per candidate for its "
                         f"{n_state} x {n_state} Jacobians but max_memory is {max_memory / gib:.3g} GiB; "
                         "raise max_memory or use method='gradient' (no Jacobians)")
    if method == "levenberg_marquardt" and per * n_cand > max_memory:
        raise ValueError(f"method='levenberg_marquardt' holds every candidate's Jacobians at once "
                         f"(about {per * n_cand / gib:.3g} GiB for {n_cand} candidates) but max_memory is "
                         f"{max_memory / gib:.3g} GiB; use method='newton' (chunked) or fewer n_inits")
    chunk = int(max(1, min(n_cand, max_memory // per, preferred)))
    if method == "newton":
        _check_map_steps(max_order, -(-n_cand // chunk))
    flops = n_cand * _EST_ITERS * sum(k * 2.0 * n_state**3 + 2.0 / 3.0 * n_state**3
                                      for k in range(1, max_order + 1))
    warn_flops("find_fixed_points", flops, f"{n_cand} candidates x about {_EST_ITERS} Newton steps of "
               f"{n_state} dims, periods up to {max_order}", "lower n_inits or max_order, or use "
               "method='gradient' (cheaper steps, slower convergence)", stacklevel=4)
    return chunk


def _check_map_steps(max_order: int, n_chunks: int) -> None:
    """One-line ``ValueError`` when the search would take more than :data:`MAX_MAP_STEPS` one-step
    maps in sequence: ``n_chunks`` x about ``_EST_ITERS`` iterations x ``k`` steps for each order
    ``k = 1..max_order``; names the largest ``max_order`` that fits."""
    steps = n_chunks * _EST_ITERS * max_order * (max_order + 1) / 2.0
    if steps > MAX_MAP_STEPS:
        fits = int((math.sqrt(1.0 + 8.0 * MAX_MAP_STEPS / (n_chunks * _EST_ITERS)) - 1.0) / 2.0)
        raise ValueError(
            f"find_fixed_points: max_order={max_order} needs about {steps:.2g} one-step maps in sequence "
            f"({n_chunks} chunk(s) x about {_EST_ITERS} iterations x k steps for each period k = "
            f"1..{max_order}; about {steps * 2e-4 / 3600:.2g} h at 0.2 ms a step), more than "
            f"{MAX_MAP_STEPS:.0e}; lower max_order (to {fits} or less) or n_inits, or use find_cycles for a "
            "PLRNN-family model")


def _step_jacobian(shell, F, u_star):
    """One-step Jacobians ``(point, state) -> (point, state, state)``: the model family's closed
    form when there is one (see :func:`neurodyn.analysis.jacobians`), else None (autograd of F)."""
    if shell is None or family_of(shell.params()) is None:
        return None
    params = shell.params()  # built once, in the search's dtype: the search never changes the weights
    closed = family_of(params).jacobian

    def jac(h: torch.Tensor) -> torch.Tensor:
        if closed is None:
            return jacobians(params, h, u_star)
        return closed(params, h, None if u_star is None else u_star.expand(h.shape[0], -1))

    return jac


def _search_dtype(dtype: Any) -> torch.dtype:
    """``dtype`` as torch.float32 or torch.float64 (also given as a string or NumPy type)."""
    names = {"float32": torch.float32, "float64": torch.float64}
    if isinstance(dtype, torch.dtype) and dtype in names.values():
        return dtype
    try:
        name = dtype.replace("torch.", "") if isinstance(dtype, str) else np.dtype(dtype).name
    except TypeError:
        name = None
    if name in names and not isinstance(dtype, torch.dtype):
        return names[name]
    raise ValueError(f"dtype must be torch.float32 or torch.float64 (or 'float32', 'float64'), got {dtype!r}")


def _one_step_map(model, state_size, dtype, device):
    """``(step(h, u), state_size, n_inputs, device, model copy or None)``."""
    if device is not None:
        device = check_device(device)
    if isinstance(model, RecurrentModel):
        device = device if device is not None else next(model.parameters()).device
        shell = copy.deepcopy(model).to(device=device, dtype=dtype).eval().requires_grad_(False)
        return shell.frozen_step(), int(shell.state_size), int(shell.n_inputs), device, shell
    if not callable(model):
        raise TypeError(f"model must be a RecurrentModel or a callable F(h, u), got {type(model)}")
    if state_size is None:
        raise TypeError("a plain callable needs state_size= (the length of the state vector)")
    check_setting("state_size", state_size, 1, integer=True, hint=" (the length of the state vector)")
    return model, int(state_size), None, device if device is not None else torch.device("cpu"), None


def _input_conditions(inputs, n_in, dtype, device):
    """``(u*, None)`` for one constant input (zeros by default; None without inputs) or
    ``(None, u_rows)`` for one input per initial state, ``u_rows`` (candidate, input)."""
    if inputs is None:
        if n_in is None or n_in == 0:
            return None, None
        return torch.zeros(n_in, dtype=dtype, device=device), None
    try:
        u_np = np.asarray(inputs, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"inputs must be numbers: one input vector (input,) or one per initial state "
                         f"(n, input), got {reprlib.repr(inputs)}") from err
    u = torch.as_tensor(u_np, dtype=dtype, device=device)
    if n_in == 0 and u.ndim in (1, 2) and u.shape[-1] == 0:
        return None, None  # an empty input for a model without inputs
    if n_in == 0:
        raise ValueError(f"the model takes no inputs but inputs of shape {tuple(u.shape)} were given; "
                         "drop inputs=")
    if u.ndim not in (1, 2) or (n_in is not None and u.shape[-1] != n_in) or u.shape[-1] == 0:
        want = "(input,)" if n_in is None else f"({n_in},)"
        raise ValueError(f"inputs must be one constant input vector of shape {want} or one per initial "
                         f"state, (n, {'input' if n_in is None else n_in}); got {tuple(u.shape)}")
    check_finite(u, "inputs")
    return (u, None) if u.ndim == 1 else (None, u)


def _rows_with_inputs(initial_states, u_rows, n_state, n_inits) -> np.ndarray:
    """The initial states that go with per-candidate inputs: all of them, in order."""
    if initial_states is None:
        raise ValueError("inputs of shape (n, input), one per candidate, need initial_states of n rows "
                         "to go with them; give initial_states, or one input vector (input,)")
    pool = init.as_state_array(initial_states, n_state)
    if pool.shape[0] != u_rows.shape[0]:
        raise ValueError(f"{u_rows.shape[0]} input rows for {pool.shape[0]} initial states; give one input "
                         "per initial state (the same n)")
    if n_inits < pool.shape[0]:
        raise ValueError(f"n_inits={n_inits} is below the {pool.shape[0]} initial states that carry their "
                         "own inputs; all are searched: raise n_inits or pass fewer rows")
    return pool


def _input_split_jacobians(model, n_in):
    """``jac_hu(h, u) -> (∂F/∂h, ∂F/∂u or None)`` at rows ``h`` (point, state) with inputs ``u``
    (point, input) or None: closed forms for model families, forward-mode autodiff otherwise.
    A model of a family is differentiated through its params, built once (the search never
    changes the weights)."""
    params = model.params() if isinstance(model, RecurrentModel) else None
    if params is not None and family_of(params) is not None:
        model = params

    def jac_hu(h: torch.Tensor, u: torch.Tensor | None):
        A = jacobians(model, h, u)
        B = jacobians(model, h, u, wrt="input") if u is not None and u.shape[-1] else None
        return A, B

    return jac_hu


def _with_inputs(step, jac_hu, n_state):
    """The map on states that carry their input: ``(h, u) -> (F(h, u), u)``; u gets no gradient."""
    def F_aug(z: torch.Tensor) -> torch.Tensor:
        h, u = z[:, :n_state], z[:, n_state:]
        return torch.cat([step(h, u.detach()), u], dim=1)

    return F_aug


def _augmented_jacobian(jac_hu, n_state):
    """``[[∂F/∂h, 0], [0, 0]]`` on states that carry their input: Newton steps leave the input alone
    (its residual is zero), and ``J − I`` stays invertible wherever ``∂F/∂h − I`` is."""
    def jac(z: torch.Tensor) -> torch.Tensor:
        A, _ = jac_hu(z[:, :n_state], z[:, n_state:])
        out = z.new_zeros((z.shape[0], z.shape[1], z.shape[1]))
        out[:, :n_state, :n_state] = A
        return out

    return jac


def _single_map(shell, batch_u, n_cond, n_state):
    """The one-step map of a float32 copy of ``shell`` (None without a model): what the Newton
    search's gradient start runs on (see :func:`~neurodyn.analysis.fixed_points._newton.minimise_newton`)."""
    if shell is None:
        return None
    copy32 = copy.deepcopy(shell).float()
    single = copy32.frozen_step()
    if n_cond:
        return _with_inputs(single, None, n_state)
    u = None if batch_u is None else batch_u.float()

    def F32(h: torch.Tensor) -> torch.Tensor:
        return single(h, None if u is None else u.expand(h.shape[0], -1))

    step_vjp = copy32.frozen_step_vjp()
    if step_vjp is None:
        return F32
    return ClosedFormMap(F32, lambda h: step_vjp(h, u))  # u (1, input) broadcasts over the rows


def _collect(F, k, found, x0_np, tol_unique, scale, counts, jac_k, tol_q, n_cond=0) -> dict[str, np.ndarray]:
    """One order's points: finite inliers, unique (up to cyclic shifts; with ``n_cond``, only among
    rows of exactly the same input columns), Newton-polished where converged, of minimal period k
    (converged only for k > 1)."""
    states = found.states.cpu().numpy()
    q = found.q.cpu().numpy()
    converged = found.converged.cpu().numpy()
    keep = distance_inliers(states, x0_np, scale) & np.isfinite(q)
    counts["n_outliers"] += int((~keep).sum())
    if k > 1:
        keep &= converged  # period-k slow points are not reported
    idx = np.flatnonzero(keep)
    if k > 1:
        orbits = _orbits(F, found.states[idx], k)
        idx = idx[has_minimal_period(orbits, tol_unique)]
        orbits = _orbits(F, found.states[idx], k)
    rank = np.argsort(np.lexsort((q[idx], ~converged[idx])))  # each row's rank: converged first, then by q
    chosen = unique_points(states[idx], rank, tol_unique, n_cond) if k == 1 \
        else unique_cycles(orbits[:, :k], rank, tol_unique, n_cond)
    sel = idx[chosen]
    x = found.states[sel]
    conv = converged[sel]
    if conv.any():  # polished to round-off (each row on its own: a subset gives the same rows)
        eps = float(torch.finfo(x.dtype).eps)
        rows = torch.as_tensor(np.flatnonzero(conv), device=x.device)
        x = x.clone()
        x[rows] = newton_polish(power_map(F, k), x[rows], jacobian=jac_k, until_q=round_off_q(x[rows], eps))
    if k == 1 and conv.sum() > 1:
        x, sel = _merge_marginal(F, x, sel, conv, tol_q, jac_k, n_cond)
    q_sel = None
    if k == 1 and x.shape[0] > 1:  # polishing can bring points found apart within tol_unique
        with torch.no_grad():
            q_now = speed(F, x).cpu().numpy()
        rank = np.argsort(np.lexsort((q_now, ~converged[sel])))
        again = np.sort(unique_points(x.cpu().numpy(), rank, tol_unique, n_cond))
        x, sel, q_sel = x[torch.as_tensor(again, device=x.device)], sel[again], q_now[again]
        x, sel, q_sel = _merge_slow(x, sel, q_sel, found.stalled.cpu().numpy(), n_cond)
    orbits = x.cpu().numpy()[:, None] if k == 1 else _orbits(F, x, k)
    if q_sel is None:
        with torch.no_grad():
            q_sel = speed(power_map(F, k), x).cpu().numpy()
    order = result_order(orbits[:, 0], q_sel, converged[sel])
    status = np.where(converged, "converged",
                      np.where(found.stalled.cpu().numpy(), "slow_point", "not_converged"))[sel][order]
    return {"orbits": orbits[order, :k], "q": q_sel[order], "converged": converged[sel][order],
            "iterations": found.iterations.cpu().numpy()[sel][order], "status": status, "order": k}


def _merge_slow(x: torch.Tensor, sel: np.ndarray, q: np.ndarray, stalled: np.ndarray, n_cond: int = 0):
    """Slow points (rows ``sel`` of stalled candidates) within ``SLOW_REACH`` (every unit; under the
    same input with ``n_cond``) of a slow point with lower q merged into it: the reach within which
    the search joins a creeping candidate to a slow point it found. Located only to about
    ``SLOW_MOVE``, one slow point reached by several candidates would otherwise be reported once per
    candidate (a few 1e-3 apart, q equal to five digits)."""
    slow = np.flatnonzero(stalled[sel])
    if slow.size < 2:
        return x, sel, q
    kept = slow[unique_points(x.cpu().numpy()[slow], q[slow], SLOW_REACH, n_cond)]
    rows = np.sort(np.concatenate([np.setdiff1d(np.arange(sel.size), slow), kept]))
    if rows.size == sel.size:
        return x, sel, q
    return x[torch.as_tensor(rows, device=x.device)], sel[rows], q[rows]


def _merge_marginal(F, x: torch.Tensor, sel: np.ndarray, conv: np.ndarray, tol_q: float, jacobian=None,
                    n_cond: int = 0):
    """Converged points bracketing one marginal fixed point merged (see :func:`merge_bracketing`;
    with ``n_cond``, only points under exactly the same input)."""
    def qfun(states: np.ndarray) -> np.ndarray:
        h = torch.as_tensor(states, dtype=x.dtype, device=x.device)
        with torch.no_grad():
            return speed(F, h).cpu().numpy()

    pts = x.detach().cpu().numpy()
    rows = np.flatnonzero(conv)
    eps = float(torch.finfo(x.dtype).eps)
    if (qfun(pts[rows]) > round_off_q(pts[rows], eps)).sum() < 2:
        return x, sel  # points at round-off are never merged, and one point has no partner
    # residuals off the null directions of J - I removed first: only those along them tell points apart
    polished = pinv_polish(F, x[torch.as_tensor(rows, device=x.device)], jacobian=jacobian).cpu().numpy()
    floor = round_off_q(polished, eps)
    keep, states = merge_bracketing(polished, qfun(polished), qfun, tol_q, floor, n_cond=n_cond)
    if len(keep) == len(rows):
        return x, sel
    pts[rows[keep]] = states
    kept = np.sort(np.concatenate([rows[keep], np.flatnonzero(~conv)]))
    return torch.as_tensor(pts[kept], dtype=x.dtype, device=x.device), sel[kept]


def _orbits(F, x: torch.Tensor, k: int) -> np.ndarray:
    """``[x, F(x), ..., F^k(x)]`` as an array (point, k + 1, state)."""
    with torch.no_grad():
        orbit = [x]
        for _ in range(k):
            orbit.append(F(orbit[-1]))
    return torch.stack(orbit, dim=1).cpu().numpy()
