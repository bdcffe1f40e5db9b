"""Chord checks of candidates against known fixed points, alone and inside the Newton search."""

import itertools

import numpy as np
import torch
from problems import BistableTanh

import neurodyn.analysis.fixed_points._newton as newton
from neurodyn.analysis.fixed_points._chord import CHORD_STEPS, chord_check, chord_inverses
from neurodyn.analysis.fixed_points._search import SearchSettings

SETTINGS = SearchSettings(tol_q=1e-24, tol_dq=0.0, max_iters=200, lr_init=1.0)


def test_chord_check_converges_in_the_basin_and_fails_outside():
    """Known point h* of h = tanh(2h): starts near ±h* reach ±h* (J is even, so the chord contracts
    at −h* too), the start near the unstable point 0 fails and is returned unchanged."""
    problem = BistableTanh(2.0)
    h = problem.h_star
    points = torch.tensor([[h]], dtype=torch.float64)
    inverses = chord_inverses(problem, points, None)
    np.testing.assert_allclose(inverses[0, 0, 0].item(), 1.0 / (problem.eigenvalue(h) - 1.0), rtol=1e-12)
    x = torch.tensor([[0.9], [1.2], [-0.93], [0.05]], dtype=torch.float64)
    converged, states, q, steps = chord_check(problem, x, points, inverses, tol_q=1e-24)
    assert converged.tolist() == [True, True, True, False]
    np.testing.assert_allclose(states[:3, 0].numpy(), [h, h, -h], atol=1e-12)
    assert (q[:3] < 1e-24).all() and (1 <= steps[:3]).all() and (steps[:3] <= CHORD_STEPS).all()
    assert states[3, 0].item() == 0.05 and steps[3].item() == 0


def test_chord_check_skips_a_singular_point():
    """At a point where J − I is singular the inverse is NaN and no candidate passes through it."""
    G = lambda x: x + x.pow(3)  # noqa: E731 - fixed point 0 with J = I
    inverses = chord_inverses(G, torch.zeros(1, 1, dtype=torch.float64), None)
    assert torch.isnan(inverses).all()
    converged, _, _, _ = chord_check(G, torch.tensor([[0.1]], dtype=torch.float64),
                                     torch.zeros(1, 1, dtype=torch.float64), inverses, tol_q=1e-20)
    assert not converged.any()


def test_newton_search_with_chord_checks_reaches_exact_points(monkeypatch):
    """Three independent bistable units (27 fixed points, coordinates in {−h*, 0, h*}): with chord
    checks, some candidates are settled by chord steps; every candidate still converges, to one of
    the 27 exact points, and the points reached are those of the search without chord checks."""
    problem = BistableTanh(2.0)
    h = problem.h_star
    exact = np.array(list(itertools.product([-h, 0.0, h], repeat=3)))
    x0 = torch.as_tensor(np.random.default_rng(0).uniform(-1.5, 1.5, size=(150, 3)))
    settled = []
    real = newton._retire_by_chord

    def spy(*args):
        keep = real(*args)
        settled.append(0 if keep is None else int((~keep).sum()))
        return keep

    monkeypatch.setattr(newton, "_retire_by_chord", spy)
    found = {}
    for steps in (CHORD_STEPS, 0):
        out = newton.minimise_newton(problem, x0, SETTINGS, tol_unique=1e-3, chunk_size=64,
                                     chord_steps=steps)
        assert out.converged.all()
        q = 0.5 * (problem(out.states) - out.states).pow(2).sum(-1)
        assert (q < 1e-24).all()
        dist = np.abs(out.states.numpy()[:, None] - exact[None]).max(-1)
        assert (dist.min(1) < 1e-10).all()
        found[steps] = set(dist.argmin(1).tolist())
    assert sum(settled) > 10  # starts in the fast basin of a point found by the first chunk
    assert found[CHORD_STEPS] == found[0]


def _farthest_first_brute_force(x: np.ndarray, known: np.ndarray, size: int) -> list[int]:
    """Greedy farthest-point sampling by brute force: each pick maximises the smallest max-abs
    distance to the known points and the picks before it (first index on ties)."""
    chosen: list[int] = []
    for _ in range(size):
        centres = np.concatenate([known, x[chosen]]) if chosen else known
        best, best_j = -1.0, -1
        for j in range(len(x)):
            if j in chosen:
                continue
            d = np.inf if len(centres) == 0 else np.abs(x[j] - centres).max(-1).min()
            if d > best:
                best, best_j = d, j
        chosen.append(best_j)
    return chosen


def test_spread_first_picks_far_apart_candidates_first():
    """The first ``size`` pending rows are the greedy farthest points from the known points and from
    each other (brute force), the others follow in their own order, and no row is lost."""
    rng = np.random.default_rng(3)
    states = torch.as_tensor(rng.normal(size=(40, 5)))
    pending = torch.as_tensor(rng.permutation(40)[:25])
    for known in (states[:0], torch.as_tensor(rng.normal(size=(3, 5)))):
        out = newton._spread_first(states, pending, known, 6)
        picks = _farthest_first_brute_force(states[pending].numpy(), known.numpy(), 6)
        assert out[:6].tolist() == pending[picks].tolist()
        rest = [int(p) for p in pending if int(p) not in set(out[:6].tolist())]
        assert out[6:].tolist() == rest
        assert sorted(out.tolist()) == sorted(pending.tolist())


def test_rows_near_a_known_slow_point_stop_there():
    """Only flagged rows within SLOW_REACH (every unit) of a known slow point join it, taking its
    state and q; other rows keep theirs, and the inputs are not modified."""
    slow = {"x": torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64),
            "q": torch.tensor([1e-3, 2e-3], dtype=torch.float64)}
    reach = newton.SLOW_REACH
    xa = torch.tensor([[0.5 * reach, 0.0], [1.0, 1.0 - 0.5 * reach], [2.0 * reach, 0.0], [0.0, 0.0]],
                      dtype=torch.float64)
    qa = torch.tensor([5e-3, 6e-3, 7e-3, 8e-3], dtype=torch.float64)
    done = torch.zeros(4, dtype=torch.bool)
    flagged = torch.tensor([True, True, True, False])
    x, q, d = newton._join_slow_points(slow, xa.clone(), qa.clone(), done.clone(), flagged)
    assert d.tolist() == [True, True, False, False]
    assert torch.equal(x[0], slow["x"][0]) and torch.equal(x[1], slow["x"][1])
    assert q[:2].tolist() == [1e-3, 2e-3] and torch.equal(x[2:], xa[2:]) and torch.equal(q[2:], qa[2:])
    empty = {"x": slow["x"][:0], "q": slow["q"][:0]}
    x, q, d = newton._join_slow_points(empty, xa, qa, done, flagged)
    assert not d.any() and torch.equal(x, xa)


def test_spread_first_puts_non_finite_states_last_and_never_repeats():
    """A candidate whose state holds NaN is picked after every finite one, and no row twice."""
    states = torch.as_tensor(np.random.default_rng(4).normal(size=(10, 3)))
    states[4, 1] = float("nan")
    pending = torch.arange(10)
    out = newton._spread_first(states, pending, states[:0], 9)
    assert sorted(out.tolist()) == list(range(10)) and 4 not in out[:9].tolist()
    row0_nan = states.clone()
    row0_nan[0] = float("nan")  # the first pick: every later distance is NaN, picks go in index order
    assert newton._spread_first(row0_nan, pending, states[:0], 5).tolist() == list(range(10))


def test_a_candidate_below_a_slow_point_s_q_does_not_join_it():
    f64 = torch.float64
    slow = {"x": torch.tensor([[0.1, 0.5]], dtype=f64), "q": torch.tensor([1e-6], dtype=f64)}
    xa = torch.tensor([[0.12, 0.52], [0.11, 0.51]], dtype=torch.float64)
    qa = torch.tensor([5e-7, 2e-6], dtype=torch.float64)
    none, every = torch.zeros(2, dtype=torch.bool), torch.ones(2, dtype=torch.bool)
    x, q, d = newton._join_slow_points(slow, xa, qa, none, every)
    assert d.tolist() == [False, True] and torch.equal(x[0], xa[0]) and q[1].item() == 1e-6
