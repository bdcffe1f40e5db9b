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
