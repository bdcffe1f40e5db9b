"""compute_stability against eigenvalues computed one matrix at a time, and its input checks."""

import numpy as np
import pytest
import torch

from neurodyn.analysis import compute_stability, jacobians
from neurodyn.analysis.fixed_points._stability import classify
from neurodyn.models import GRU, LeakyRNN


@pytest.mark.parametrize("model", [LeakyRNN(2, 6, 1, alpha=0.5, gain=1.8, seed=1), GRU(2, 4, 1, seed=2)])
def test_matches_numpy_eigenvalues_per_state(model):
    states = torch.as_tensor(np.random.default_rng(0).normal(size=(9, model.state_size)))
    u = torch.tensor([0.3, -0.2], dtype=torch.float64)
    ds = compute_stability(model, states, u, max_memory=3 * 2 * 8 * model.state_size**2)  # chunks of 3
    jac = jacobians(model, states, u).numpy()
    eig = np.stack([np.linalg.eigvals(j) for j in jac])
    labels, n_unstable = classify(eig, 1e-3)
    np.testing.assert_allclose(ds.spectral_radius.values, np.abs(eig).max(-1), rtol=1e-12)
    assert ds.n_unstable.values.tolist() == n_unstable.tolist()
    assert ds.stability.values.tolist() == labels.tolist()
    assert ds.spectral_radius.dims == ("point",)


def test_linear_map_closed_form_and_float32():
    # h -> 0.5 h + diag(d) h with d = (0.2, 0.9, 1.6): eigenvalues 0.7, 1.4, 2.1 at every state
    model = LeakyRNN(0, 3, 1, alpha=0.5, activation="linear", seed=0)
    with torch.no_grad():
        model.w_rec.copy_(torch.diag(torch.tensor([0.4, 1.8, 3.2])))
    states = torch.zeros(4, 3)
    ds = compute_stability(model, states)
    assert ds.attrs["dtype"] == "float32"
    np.testing.assert_allclose(ds.spectral_radius.values, 2.1, rtol=1e-6)
    assert ds.n_unstable.values.tolist() == [2] * 4 and set(ds.stability.values) == {"saddle"}


def test_bad_states_are_one_line_errors():
    model = LeakyRNN(0, 3, 1, seed=0)
    with pytest.raises(ValueError, match="shape \\(point, state\\)"):
        compute_stability(model, torch.zeros(2, 2, 3))
    with pytest.raises(ValueError, match="NaN or Inf"):
        compute_stability(model, torch.full((2, 3), float("nan")))
    with pytest.raises(ValueError, match="marginal_tol"):
        compute_stability(model, torch.zeros(2, 3), marginal_tol=-1.0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_eigenvalues_over_threads_equal_one_matrix_at_a_time(dtype):
    """The batched eigenvalues split over two threads are each matrix's own LAPACK eigenvalues, the
    same bits as on one thread; no points give an empty complex array."""
    from neurodyn.analysis.fixed_points._stability import PARALLEL_SPECTRA_MIN_STATE, eigenvalues

    n = PARALLEL_SPECTRA_MIN_STATE
    jac = (np.random.default_rng(3).normal(size=(5, n, n)) / np.sqrt(n)).astype(dtype)
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = eigenvalues(jac)
        torch.set_num_threads(2)
        two = eigenvalues(jac)
    finally:
        torch.set_num_threads(before)
    each = np.stack([np.linalg.eigvals(j) for j in jac])
    assert np.array_equal(one, two) and np.array_equal(two, each)
    assert two.dtype == (np.complex128 if dtype == np.float64 else np.complex64)
    empty = eigenvalues(np.zeros((0, 3, 3), dtype))
    assert empty.shape == (0, 3) and np.iscomplexobj(empty)


def test_same_labels_and_radii_on_one_and_two_threads():
    model = LeakyRNN(1, 64, 1, gain=1.6, seed=4)
    states = torch.as_tensor(np.random.default_rng(1).normal(size=(6, 64)))
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = compute_stability(model, states)
        torch.set_num_threads(2)
        two = compute_stability(model, states)
    finally:
        torch.set_num_threads(before)
    assert np.array_equal(one.spectral_radius.values, two.spectral_radius.values)
    assert one.stability.values.tolist() == two.stability.values.tolist()


@pytest.mark.parametrize("labels_only", [False, True])
def test_nan_inputs_are_one_line_errors(labels_only):
    model = LeakyRNN(2, 8, 1, seed=0)
    X = np.random.default_rng(0).normal(size=(4, 8))
    with pytest.raises(ValueError, match="inputs contains NaN or Inf") as err:
        compute_stability(model, X, np.array([np.nan, 0.0]), labels_only=labels_only)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("u", [np.zeros((6, 2)), np.zeros((4, 1)), np.zeros(1), np.zeros((1, 4, 2))])
def test_inputs_of_the_wrong_shape_are_refused(u):
    model = LeakyRNN(2, 8, 1, seed=0)
    X = np.random.default_rng(0).normal(size=(4, 8))
    with pytest.raises(ValueError, match=r"inputs must have shape \(input,\) or \((point|\.\.\.), input\)") \
            as err:
        compute_stability(model, X, u)
    assert "\n" not in str(err.value)


def test_too_many_states_are_refused_before_allocating():
    model = LeakyRNN(2, 8, 1, seed=0)
    huge = torch.zeros(1, 8, dtype=torch.float64).expand(10**10, 8)
    with pytest.raises(ValueError, match=r"compute_stability needs about \S+ GiB .*call it in chunks"):
        compute_stability(model, huge)
