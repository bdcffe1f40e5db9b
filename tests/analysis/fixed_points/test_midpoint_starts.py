"""Newton steps from the midpoints of pairs of stable points reach the saddle between them, which
searches started next to the two attractors miss; the oracle is a brute-force root search."""

import numpy as np
import torch
from scipy.optimize import fsolve

import neurodyn.analysis.fixed_points._bridge as bridge
from neurodyn.analysis import find_fixed_points
from neurodyn.models import LeakyRNN

#: h ↦ tanh(W h) with W = R diag(2, 0.5) Rᵀ: stable points ±h* along R's first column, a saddle
#: at 0 (eigenvalues 2 and 0.5), nothing else
ANGLE = 0.6


def _two_unit_network() -> LeakyRNN:
    rot = np.array([[np.cos(ANGLE), -np.sin(ANGLE)], [np.sin(ANGLE), np.cos(ANGLE)]])
    model = LeakyRNN(0, 2, 1, alpha=1.0, seed=0)
    with torch.no_grad():
        model.w_rec.copy_(torch.as_tensor(rot @ np.diag([2.0, 0.5]) @ rot.T))
        model.b.zero_()
    return model


def _brute_force_points(w: np.ndarray) -> np.ndarray:
    """Every root of ``tanh(W h) − h`` in [−1, 1]², from fsolve started on a 41 × 41 grid."""
    roots = []
    for start in np.stack(np.meshgrid(*[np.linspace(-1.0, 1.0, 41)] * 2), -1).reshape(-1, 2):
        h, _, ok, _ = fsolve(lambda v: np.tanh(w @ v) - v, start, full_output=True, xtol=1e-13)
        if ok == 1 and np.abs(np.tanh(w @ h) - h).max() < 1e-10:
            if not any(np.abs(h - r).max() < 1e-6 for r in roots):
                roots.append(h)
    return np.array(roots)


def test_default_search_finds_the_saddle_between_two_attractors(monkeypatch):
    model = _two_unit_network()
    w = model.w_rec.detach().double().numpy()
    truth = _brute_force_points(w)
    labels = ["saddle" if np.abs(np.linalg.eigvals((1 - np.tanh(w @ h) ** 2)[:, None] * w)).max() > 1
              else "stable" for h in truth]
    assert sorted(labels) == ["saddle", "stable", "stable"]
    attractors = truth[[lab == "stable" for lab in labels]]
    rng = np.random.default_rng(0)  # starts next to the attractors only
    starts = np.concatenate([a + 0.05 * rng.standard_normal((8, 2)) for a in attractors])

    res = find_fixed_points(model, initial_states=starts, seed=0)
    assert res.n_points == 3 and res.converged.all() and (res.q < 1e-20).all()
    assert res.attrs["n_midpoint_candidates"] == 1
    dist = np.abs(res.states[:, None] - truth[None]).max(-1)
    assert (dist.min(axis=0) < 1e-10).all()  # every brute-force point, to round-off
    saddle = truth[labels.index("saddle")]
    assert res.stability[np.abs(res.states - saddle).max(-1).argmin()] == "saddle"

    monkeypatch.setattr(bridge, "MAX_MIDPOINTS", 0)  # without the midpoint starts: attractors only
    alone = find_fixed_points(model, initial_states=starts, seed=0)
    assert sorted(alone.stability) == ["stable", "stable"]


def test_midpoint_starts_pair_the_points_labelled_stable(monkeypatch):
    """The starts pair exactly the points the result labels stable, proven stable by squarings
    before any eigenvalue, and every point's spectrum comes from one call."""
    import neurodyn.analysis.fixed_points._assemble as assemble

    model = _two_unit_network()
    rng = np.random.default_rng(1)
    starts = rng.uniform(-1.0, 1.0, (64, 2))
    paired, calls = [], []
    real, real_spectra = bridge.midpoints, assemble.spectra
    monkeypatch.setattr(bridge, "midpoints", lambda pts, *a: paired.append(pts.numpy()) or real(pts, *a))
    monkeypatch.setattr(assemble, "spectra", lambda jac: calls.append(jac.shape[0]) or real_spectra(jac))
    res = find_fixed_points(model, initial_states=starts, seed=0)
    stable = res.states[res.stability == "stable"]
    assert len(paired) == 1 and len(stable) == 2
    np.testing.assert_array_equal(np.sort(paired[0], axis=0), np.sort(stable, axis=0))
    assert calls == [res.n_points]


def test_points_the_squarings_cannot_prove_stable_are_paired_after_their_spectra(monkeypatch):
    """Oracle: the default run. With no point proven stable by squarings, the stable points come
    from their spectra and a second pass pairs them: the same points, labels and starts."""
    model = _two_unit_network()
    starts = np.random.default_rng(1).uniform(-1.0, 1.0, (64, 2))
    want = find_fixed_points(model, initial_states=starts, seed=0)
    real = bridge.with_midpoint_starts

    def unproven(F, part, lin, certified, *args):
        return real(F, part, lin, lambda h: np.zeros(h.shape[0], dtype=bool), *args)

    monkeypatch.setattr(bridge, "with_midpoint_starts", unproven)
    got = find_fixed_points(model, initial_states=starts, seed=0)
    assert got.n_points == want.n_points == 3
    np.testing.assert_allclose(got.states, want.states, atol=1e-12)
    assert list(got.stability) == list(want.stability)
    assert got.attrs["n_midpoint_candidates"] == want.attrs["n_midpoint_candidates"] == 1


def test_second_pass_pairs_only_the_points_proven_late(monkeypatch):
    """With one of two attractors proven by squarings and the other only by its eigenvalues, the
    first pass has no pair and the second pairs the two: the saddle is found either way."""
    model = _two_unit_network()
    starts = np.random.default_rng(1).uniform(-1.0, 1.0, (64, 2))
    real = bridge.with_midpoint_starts
    seen = []

    def one_proven(F, part, lin, certified, *args):
        def first_only(h):
            ok = np.asarray(certified(h), dtype=bool)
            ok[np.flatnonzero(ok)[1:]] = False
            seen.append(int(ok.sum()))
            return ok
        return real(F, part, lin, first_only, *args)

    monkeypatch.setattr(bridge, "with_midpoint_starts", one_proven)
    res = find_fixed_points(model, initial_states=starts, seed=0)
    assert seen == [1]
    assert sorted(res.stability) == ["saddle", "stable", "stable"]
    assert res.attrs["n_midpoint_candidates"] == 1


def test_midpoints_of_the_closest_pairs():
    points = torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 3.0]], dtype=torch.float64)
    assert bridge.midpoints(points).tolist() == [[0.5, 0.0], [0.0, 1.5], [0.5, 1.5]]
    assert bridge.midpoints(points, max_pairs=1).tolist() == [[0.5, 0.0]]
    assert bridge.midpoints(points[:1]).shape == (0, 2)
