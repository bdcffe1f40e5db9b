"""find_fixed_points on analytic maps: exact fixed points, stability, cycles, determinism, errors."""

import numpy as np
import pytest
import torch
from problems import BistableTanh, FlipTanh, Rotation, linear_leaky_rnn, linear_map

from neurodyn.analysis import FixedPointResult, find_fixed_points
from neurodyn.models import LeakyRNN

METHODS = ["newton", "levenberg_marquardt", "gradient", "joint"]


@pytest.mark.parametrize("method", METHODS)
def test_linear_callable_fixed_point(method):
    problem = linear_map(5, norm=0.6, seed=1)
    starts = np.random.default_rng(0).normal(size=(16, 5))
    res = find_fixed_points(problem, state_size=5, initial_states=starts, method=method)
    assert res.n_points == 1 and res.converged.all()
    np.testing.assert_allclose(res.states[0], problem.fixed_point, atol=1e-6)
    assert res.stability[0] == "stable" and res.n_unstable[0] == 0
    expected = np.sort(np.abs(np.linalg.eigvals(problem.A)))[::-1]
    np.testing.assert_allclose(np.abs(res.eigenvalues[0]), expected, atol=1e-10)


@pytest.mark.parametrize("alpha", [1.0, 0.3])
@pytest.mark.parametrize("method", METHODS)
def test_linear_leaky_rnn_fixed_point_with_input(alpha, method):
    model, answer = linear_leaky_rnn(6, 2, norm=0.6, alpha=alpha, seed=3)
    u = np.array([0.5, -1.5])
    res = find_fixed_points(model, inputs=u, n_inits=32, method=method, seed=0)
    good = res.fixed_points()
    assert good.n_points == 1
    np.testing.assert_allclose(good.states[0], answer(u), atol=1e-6)
    assert good.stability[0] == "stable"
    assert res.attrs["input"] == pytest.approx(u.tolist())


def test_default_input_is_zero_and_task_source():
    from neurodyn.tasks import FlipFlop

    model, answer = linear_leaky_rnn(6, 3, norm=0.5, seed=4)
    res = find_fixed_points(model, task=FlipFlop(n_bits=3, n_steps=20), n_inits=64, seed=2)
    assert res.attrs["initial_state_source"] == "task"
    np.testing.assert_allclose(res.fixed_points().states[0], answer(np.zeros(3)), atol=1e-6)
    res_free = find_fixed_points(model, n_inits=64, seed=2)
    assert res_free.attrs["initial_state_source"] == "free_rollouts"
    np.testing.assert_allclose(res_free.fixed_points().states[0], answer(None), atol=1e-6)


@pytest.mark.parametrize("w", [1.5, 2.0, 4.0])
def test_bistable_tanh_three_fixed_points(w):
    problem = BistableTanh(w)
    h_star = problem.h_star
    starts = np.linspace(-1.5, 1.5, 31)[:, None]
    res = find_fixed_points(problem, state_size=1, initial_states=starts)
    good = res.fixed_points()
    assert good.n_points == 3
    order = np.argsort(good.states[:, 0])
    np.testing.assert_allclose(good.states[order, 0], [-h_star, 0.0, h_star], atol=1e-9)
    assert list(good.stability[order]) == ["stable", "unstable", "stable"]
    assert list(good.n_unstable[order]) == [0, 1, 0]
    lam = np.array([problem.eigenvalue(x) for x in (-h_star, 0.0, h_star)])
    np.testing.assert_allclose(good.eigenvalues[order, 0].real, lam, atol=1e-8)


def test_two_cycle_found_and_not_reported_as_fixed_point():
    problem = FlipTanh(2.0)
    h_star = problem.h_star
    starts = np.linspace(-1.5, 1.5, 31)[:, None]
    res = find_fixed_points(problem, state_size=1, initial_states=starts, max_order=3)
    fps = res.fixed_points()
    assert fps.n_points == 1
    np.testing.assert_allclose(fps.states[0], [0.0], atol=1e-9)
    assert fps.stability[0] == "unstable"
    two = res.select(res.order == 2)
    assert two.n_points == 2 and np.unique(two.cycle_id).size == 1
    assert sorted(two.cycle_step) == [0, 1]
    np.testing.assert_allclose(np.sort(two.states[:, 0]), [-h_star, h_star], atol=1e-9)
    np.testing.assert_allclose(two.eigenvalues[:, 0].real, problem.monodromy, atol=1e-8)
    assert (two.stability == "stable").all() and two.converged.all()
    assert not (res.order == 3).any()  # h ↦ -tanh(2h) has no 3-cycle
    # without max_order the cycle points are not fixed points
    only = find_fixed_points(problem, state_size=1, initial_states=starts)
    assert only.fixed_points().n_points == 1 and (only.order == 1).all()


def test_huge_max_order_is_refused_up_front_with_the_estimate():
    from neurodyn.models import PLRNN

    one_unit = PLRNN.from_arrays([0.5], [[-2.0]], [1.0])
    for order in (10**9, 1155):  # 1155: just above 1e7 one-step maps (15 iterations x 1155 x 1156 / 2)
        with pytest.raises(ValueError, match=rf"max_order={order} needs about .* lower max_order \(to 1154"):
            find_fixed_points(one_unit, initial_states=np.zeros((4, 1)), max_order=order)


def test_complex_eigenvalues_sorted_by_modulus():
    problem = Rotation(rho=0.9, theta=0.7)
    res = find_fixed_points(problem, state_size=2, initial_states=np.eye(2))
    ev = res.eigenvalues[0]
    np.testing.assert_allclose(np.abs(ev), [0.9, 0.9], atol=1e-12)
    np.testing.assert_allclose(sorted(ev.imag), [-0.9 * np.sin(0.7), 0.9 * np.sin(0.7)], atol=1e-12)
    assert res.stability[0] == "stable"


def test_same_seed_identical_results_and_noise_changes_starts():
    model, _ = linear_leaky_rnn(6, 2, norm=0.9, seed=5)
    with torch.no_grad():
        model.activation = "tanh"
        model.w_rec.mul_(3.0)  # multistable tanh network
    kw = dict(n_inits=64, noise_scale=0.2, max_iters=300)
    a = find_fixed_points(model, seed=11, **kw)
    b = find_fixed_points(model, seed=11, **kw)
    for name in ("states", "q", "eigenvalues", "converged", "iterations", "n_unstable"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert list(a.stability) == list(b.stability)
    c = find_fixed_points(model, seed=12, **kw)
    assert a.attrs["seed"] == 11 and c.attrs["seed"] == 12
    assert not np.array_equal(a.iterations, c.iterations) or not np.array_equal(a.q, c.q)


def test_slow_points_reported_as_not_converged():
    # h ↦ h + 0.1 + h² has no fixed point... use h ↦ h + 0.05 (1 + h²): q minimum at h = 0, q > 0
    def drift(h, u):
        return h + 0.05 * (1.0 + h**2)

    res = find_fixed_points(drift, state_size=1, initial_states=np.linspace(-1, 1, 9)[:, None],
                            max_iters=2000)
    assert res.n_points == 1 and not res.converged[0]
    np.testing.assert_allclose(res.states[0], [0.0], atol=1e-5)
    assert res.q[0] == pytest.approx(0.5 * 0.05**2, rel=1e-6)
    assert res.fixed_points().n_points == 0
    assert "slow points (not converged)" in res.summary()


def test_duplicates_merged_and_outliers_excluded():
    problem = BistableTanh(3.0)
    starts = np.concatenate([np.full((10, 1), 0.9), np.full((10, 1), -0.9), [[0.0]]])
    res = find_fixed_points(problem, state_size=1, initial_states=starts)
    assert res.fixed_points().n_points == 3
    # FixedPointFinder's rule: distance to the starts' centroid over their mean distance to it
    near = np.concatenate([0.99 + np.linspace(-0.01, 0.01, 20)[:, None], [[-0.99]]])
    centroid = near.mean()
    spread = np.abs(near - centroid).mean()
    h = problem.h_star
    assert abs(h - centroid) / spread < 3.0 < abs(-h - centroid) / spread
    res = find_fixed_points(problem, state_size=1, initial_states=near, outlier_distance_scale=3.0)
    assert res.fixed_points().states[:, 0] == pytest.approx([h])
    assert res.attrs["n_outliers"] == 1
    res = find_fixed_points(problem, state_size=1, initial_states=near,
                            outlier_distance_scale=np.inf)
    assert np.sort(res.fixed_points().states[:, 0]) == pytest.approx([-h, h])


def test_classify_marginal_band():
    from neurodyn.analysis.fixed_points._stability import classify

    ev = np.array([[0.5, 0.2], [1.0005, 0.3], [1.2, 0.9995], [1.2, 1.5], [1.2, 0.1], [0.999, 0.1]])
    labels, n_unstable = classify(ev.astype(complex), 1e-3)
    assert list(labels) == ["stable", "marginal", "saddle", "unstable", "saddle", "marginal"]
    assert list(n_unstable) == [0, 0, 1, 2, 1, 0]


def test_bad_arguments_raise_clear_errors():
    problem = linear_map(3)
    with pytest.raises(TypeError, match="state_size"):
        find_fixed_points(problem)
    with pytest.raises(ValueError, match="initial_states must have shape"):
        find_fixed_points(problem, state_size=3, initial_states=np.zeros((4, 2)))
    with pytest.raises(ValueError, match="NaN"):
        find_fixed_points(problem, state_size=3, initial_states=np.full((4, 3), np.nan))
    with pytest.raises(ValueError, match="unknown method"):
        find_fixed_points(problem, state_size=3, method="sequential")
    model, _ = linear_leaky_rnn(4, 2)
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        find_fixed_points(model, inputs=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="tol_q"):
        find_fixed_points(model, tol_q=0)
    with pytest.raises(ValueError, match="NaN"):
        find_fixed_points(model, inputs=[np.nan, 0.0])


def test_result_is_frozen():
    res = find_fixed_points(linear_map(3), state_size=3, initial_states=np.zeros((2, 3)))
    assert isinstance(res, FixedPointResult)
    with pytest.raises(AttributeError):
        res.q = None


def test_auto_method_is_newton_at_every_size():
    problem = linear_map(4)
    starts = np.random.default_rng(0).normal(size=(8, 4))
    res = find_fixed_points(problem, state_size=4, initial_states=starts)
    assert res.attrs["method"] == "newton"
    np.testing.assert_allclose(res.states[0], problem.fixed_point, atol=1e-12)
    model = LeakyRNN(0, 200, 1, gain=0.5, seed=0)  # contracting: the origin is the only fixed point
    res = find_fixed_points(model, n_inits=4, seed=0)
    assert res.attrs["method"] == "newton" and res.states.shape[0] == 1 and res.converged.all()
    assert np.abs(res.states).max() < 1e-10 and res.stability[0] == "stable"


def test_newton_chunks_and_retired_duplicates_give_the_same_points(monkeypatch):
    """Chunking (a small memory budget) and retiring candidates that reach a known point change
    neither the unique points nor their stability; duplicates are retired once one converged.
    Converged points agree to the Newton polish; slow points, located only to about ``SLOW_MOVE``
    (where a candidate stops creeping), agree to that and in q."""
    import neurodyn.analysis.fixed_points._newton as newton

    model = LeakyRNN(0, 6, 1, gain=2.0, seed=3)
    full = find_fixed_points(model, n_inits=256, seed=1)
    calls = []
    real = newton._retire_duplicates

    def spy(out, idx, xa, na, found_x, found_q, tol_unique, n_cond=0):
        keep = real(out, idx, xa, na, found_x, found_q, tol_unique, n_cond)
        calls.append(0 if keep is None else int((~keep).sum()))
        return keep

    monkeypatch.setattr(newton, "_retire_duplicates", spy)
    chunked = find_fixed_points(model, n_inits=256, seed=1, max_memory=4 * 8 * 36 * 16)  # 16 per chunk
    assert sum(calls) > 0
    assert chunked.states.shape == full.states.shape and set(chunked.stability) == set(full.stability)
    dist = np.abs(chunked.states[:, None] - full.states[None]).max(-1)
    nearest = dist.argmin(axis=1)
    conv = chunked.converged
    assert (chunked.converged == full.converged[nearest]).all() and conv.any() and (~conv).any()
    assert (dist.min(axis=1)[conv] < 1e-6).all()  # the same points, to within the Newton polish
    assert (dist.min(axis=1)[~conv] < newton.SLOW_MOVE).all()
    np.testing.assert_allclose(chunked.q[~conv], full.q[nearest][~conv], rtol=1e-4)


def test_cost_is_checked_before_the_search(monkeypatch):
    model = LeakyRNN(0, 64, 1, seed=0)
    with pytest.raises(ValueError, match=r"GiB per candidate.*raise max_memory or use method='gradient'"):
        find_fixed_points(model, n_inits=4, max_memory=1e4)
    with pytest.raises(ValueError, match="use method='newton'"):
        find_fixed_points(model, n_inits=64, method="levenberg_marquardt", max_memory=64 * 4 * 8 * 64**2 - 1)
    import neurodyn._budget as budget

    monkeypatch.setattr(budget, "WARN_FLOPS", 1.0)
    with pytest.warns(RuntimeWarning, match=r"find_fixed_points: about .* floating-point operations"):
        find_fixed_points(model, n_inits=2, max_iters=2)


def _tanh_unit(w: float = 2.0) -> LeakyRNN:
    """h' = tanh(w h + u): bistable for u = 0, with fixed points the roots of h = tanh(w h + u)."""
    model = LeakyRNN(1, 1, 1, alpha=1.0, seed=0)
    with torch.no_grad():
        model.w_rec.fill_(w), model.b.zero_(), model.w_in.fill_(1.0)
    return model


def test_per_candidate_inputs_find_each_condition_s_points():
    """One input per initial state (FixedPointFinder's inputs of shape (n, input)): each point solves
    h = tanh(2h + u) for its own u, and points under different inputs are never merged."""
    model = _tanh_unit()
    h0 = np.array([[1.0], [-1.0], [1.0], [-1.0], [1.1]])
    u = np.array([[0.0], [0.0], [0.5], [0.5], [0.5]])
    res = find_fixed_points(model, initial_states=h0, inputs=u, n_inits=5)
    assert res.attrs["per_candidate_inputs"] == 1 and res.converged.all()
    assert res.states.shape == (4, 1) and res.inputs.shape == (4, 1)
    np.testing.assert_allclose(np.tanh(2 * res.states + res.inputs), res.states, atol=1e-14)
    assert sorted(map(tuple, np.round(np.c_[res.states, res.inputs], 6))) == sorted(
        [(0.957504, 0.0), (-0.957504, 0.0), (0.985840, 0.5), (-0.801759, 0.5)])
    # the same points as one search per constant input
    for value in (0.0, 0.5):
        one = find_fixed_points(model, initial_states=h0, inputs=[value], n_inits=5)
        mine = np.sort(res.states[res.inputs[:, 0] == value, 0])
        np.testing.assert_allclose(np.sort(one.states[:, 0]), mine, atol=1e-12)
    back = FixedPointResult.from_xarray(res.to_xarray())
    np.testing.assert_array_equal(back.inputs, res.inputs)


def test_per_candidate_inputs_turn_slow_point_joins_off(monkeypatch):
    """Rows that carry their own input never take a slow point found under another input: the
    search runs without slow-point joins then, and with them for one shared input."""
    from neurodyn.analysis.fixed_points import _find

    seen = []
    real = _find.METHODS["newton"]

    def spy(*args, **kwargs):
        seen.append(kwargs["join_slow"])
        return real(*args, **kwargs)

    monkeypatch.setitem(_find.METHODS, "newton", spy)
    model = _tanh_unit()
    find_fixed_points(model, initial_states=[[1.0], [-1.0]], inputs=[[0.0], [0.5]], n_inits=2)
    find_fixed_points(model, initial_states=[[1.0], [-1.0]], inputs=[0.5], n_inits=2)
    assert seen == [False, True]


def test_input_jacobians_match_the_closed_form_and_finite_differences():
    model = _tanh_unit()
    res = find_fixed_points(model, initial_states=[[1.0], [-1.0]], inputs=[0.3], n_inits=2)
    d = 1.0 - np.tanh(2 * res.states + 0.3) ** 2  # dF/du = tanh'(2h + u)
    np.testing.assert_allclose(res.input_jacobians[:, :, 0], d, atol=1e-12)
    leaky = LeakyRNN(2, 3, 1, alpha=0.5, gain=0.8, seed=2)
    res = find_fixed_points(leaky, inputs=[0.2, -0.1], n_inits=8, seed=0)
    h = torch.as_tensor(res.states)
    eps = 1e-6
    for j in range(2):
        du = torch.zeros(2, dtype=torch.float64)
        du[j] = eps
        shell = leaky.double()
        with torch.no_grad():
            up = shell.step(h, (torch.tensor([0.2, -0.1], dtype=torch.float64) + du).expand(len(h), -1))
            down = shell.step(h, (torch.tensor([0.2, -0.1], dtype=torch.float64) - du).expand(len(h), -1))
        np.testing.assert_allclose(res.input_jacobians[:, :, j], ((up - down) / (2 * eps)).numpy(), atol=1e-8)


def test_per_candidate_inputs_bad_shapes_are_one_line_errors():
    model = _tanh_unit()
    with pytest.raises(ValueError, match="need initial_states"):
        find_fixed_points(model, inputs=[[0.0], [0.5]])
    with pytest.raises(ValueError, match="2 input rows for 3 initial states"):
        find_fixed_points(model, initial_states=np.zeros((3, 1)), inputs=[[0.0], [0.5]])
    with pytest.raises(ValueError, match="raise n_inits"):
        find_fixed_points(model, initial_states=np.zeros((3, 1)), inputs=np.zeros((3, 1)), n_inits=2)
    with pytest.raises(ValueError, match=r"one per initial state, \(n, 1\)"):
        find_fixed_points(model, initial_states=np.zeros((3, 1)), inputs=np.zeros((3, 2)))


@pytest.mark.parametrize("setting, value, expected", [
    ("marginal_tol", float("nan"), "marginal_tol must be a finite number >= 0, got nan"),
    ("noise_scale", float("nan"), "noise_scale must be a finite number >= 0, got nan"),
    ("max_memory", float("nan"), "max_memory must be a finite number > 0, got nan"),
    ("tol_unique", float("inf"), "tol_unique must be a finite number > 0, got inf"),
    ("n_inits", 2.5, "n_inits must be an integer >= 1, got 2.5"),
    ("n_inits", True, "n_inits must be an integer >= 1, got True"),
    ("max_order", 1.5, "max_order must be an integer >= 1, got 1.5"),
    ("outlier_distance_scale", float("nan"), "outlier_distance_scale must be a finite number > 0"),
])
def test_nan_and_non_integer_settings_are_one_line_errors(setting, value, expected):
    with pytest.raises(ValueError, match=expected.replace("(", r"\(")) as err:
        find_fixed_points(_tanh_unit(), initial_states=[[1.0], [-1.0]], **{setting: value})
    assert "\n" not in str(err.value)


def test_infinite_outlier_scale_and_integer_floats_are_accepted():
    res = find_fixed_points(_tanh_unit(), initial_states=[[1.0], [-1.0]], outlier_distance_scale=float("inf"),
                            n_inits=np.int64(2), max_order=1.0)
    assert res.n_points == 2


def test_per_candidate_inputs_closer_than_tol_unique_are_never_merged():
    """Two groups of rows whose inputs differ by 1e-6 (< tol_unique): each keeps its own points,
    those of a search under its constant input."""
    model = LeakyRNN(2, 8, 1, seed=0, gain=1.5)
    X = np.random.default_rng(0).normal(size=(40, 8))
    u = np.array([0.2, -0.1])
    U = np.tile(u, (40, 1))
    U[20:] += 1e-6
    res = find_fixed_points(model, initial_states=X, inputs=U)
    groups = [(U[0], X[:20]), (U[20], X[20:])]
    singles = [find_fixed_points(model, initial_states=x, inputs=v) for v, x in groups]
    assert [s.n_points for s in singles] == [3, 3]
    assert res.n_points == 6
    for (v, _), one in zip(groups, singles):
        mine = res.states[(res.inputs == v).all(axis=1)]
        assert mine.shape == one.states.shape
        np.testing.assert_allclose(mine[np.lexsort(mine.T)], one.states[np.lexsort(one.states.T)], atol=1e-8)


def test_empty_input_of_a_model_without_inputs():
    model = LeakyRNN(0, 8, 1, seed=0)
    X = np.random.default_rng(0).normal(size=(8, 8))
    res = find_fixed_points(model, initial_states=X, inputs=np.zeros(0))
    assert res.n_points == find_fixed_points(model, initial_states=X).n_points
    with pytest.raises(ValueError, match="the model takes no inputs.*drop inputs="):
        find_fixed_points(model, initial_states=X, inputs=[0.5])


@pytest.mark.parametrize("kwargs, error, expected", [
    (dict(state_size=0), ValueError, "state_size must be an integer >= 1, got 0"),
    (dict(state_size=-2), ValueError, "state_size must be an integer >= 1, got -2"),
    (dict(state_size=3), ValueError, r"F must return a tensor of shape \(batch, state_size\) = \(2, 3\)"),
    (dict(state_size=2, dtype=torch.float16), ValueError, "dtype must be torch.float32 or torch.float64"),
    (dict(state_size=2, task=5), TypeError, "task must be a neurodyn Task"),
    (dict(state_size=2, device="nodevice"), ValueError, "is not a torch device"),
])
def test_bad_model_settings_are_one_line_errors(kwargs, error, expected):
    with pytest.raises(error, match=expected) as err:
        find_fixed_points(lambda h, u: 0.5 * h[:, :2], initial_states=np.zeros((4, kwargs["state_size"]))
                          if kwargs["state_size"] > 0 else None, **kwargs)
    assert "\n" not in str(err.value)


def test_non_tensor_callable_and_dtype_spellings():
    with pytest.raises(ValueError, match="F must return a tensor.*got ndarray"):
        find_fixed_points(lambda h, u: np.zeros((2, 2)), state_size=2, initial_states=np.zeros((4, 2)))
    for dtype in ("float32", np.float32, np.dtype("float32")):
        res = find_fixed_points(lambda h, u: 0.5 * h + 1.0, state_size=2, initial_states=np.zeros((4, 2)),
                                dtype=dtype)
        assert res.attrs["dtype"] == "float32"


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is available here")
def test_cuda_device_without_cuda_is_a_one_line_error():
    with pytest.raises(ValueError, match="CUDA is not available here; use device='cpu'"):
        find_fixed_points(LeakyRNN(2, 4, 1, seed=0), n_inits=4, device="cuda")


def test_too_many_free_rollouts_are_refused_before_allocating():
    with pytest.raises(ValueError, match=r"find_fixed_points needs about \S+ GiB .*lower n_inits"):
        find_fixed_points(LeakyRNN(2, 8, 1, seed=0), n_inits=10**12)


def test_complex_initial_states_are_a_one_line_error():
    X = np.random.default_rng(0).normal(size=(8, 8))
    with pytest.raises(ValueError, match="initial_states must be real numbers, got complex values"):
        find_fixed_points(LeakyRNN(2, 8, 1, seed=0), initial_states=X + 5j)
