"""The public ``jacobians``: models, params, ensembles and callables; dtypes; errors."""

from __future__ import annotations

import copy
from typing import NamedTuple

import numpy as np
import pytest
import torch
from problems import RotationModel

from neurodyn.analysis import jacobians
from neurodyn.kernels import FAMILIES, Family, register_family, stack_params
from neurodyn.models import GRU, LSTM, PLRNN, LeakyRNN, ShallowPLRNN


def _states(model, n=6, seed=0, dtype=torch.float64):
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(n, model.state_size, generator=gen, dtype=dtype),
            torch.randn(n, model.n_inputs, generator=gen, dtype=dtype))


@pytest.mark.parametrize("model", [LeakyRNN(2, 5, 1, activation="softplus", alpha=0.4, seed=0),
                                   GRU(2, 4, 1, seed=1), LSTM(2, 3, 1, seed=2),
                                   ShallowPLRNN(2, 4, 1, clipped=True, seed=3)],
                         ids=["leaky", "gru", "lstm", "shplrnn"])
def test_model_params_and_callable_agree(model):
    h, u = _states(model)
    model64 = copy.deepcopy(model).double()
    for wrt, n_cols in (("state", model.state_size), ("input", 2)):
        exact = jacobians(model64, h, u, wrt=wrt)
        assert exact.shape == (6, model.state_size, n_cols) and exact.dtype == torch.float64
        torch.testing.assert_close(jacobians(model64.params(), h, u, wrt=wrt), exact, rtol=0, atol=0)
        # the callable path is forward-mode autodiff through the model's own step
        torch.testing.assert_close(jacobians(model64.step, h, u, wrt=wrt), exact, rtol=0, atol=1e-10)


def test_constant_input_vector_broadcasts_and_no_input_is_zero_input():
    model = LeakyRNN(3, 5, 1, alpha=0.5, seed=4).double()
    h, u = _states(model)
    one = jacobians(model, h, u[0])
    torch.testing.assert_close(one, jacobians(model, h, u[:1].expand(6, -1)), rtol=0, atol=0)
    torch.testing.assert_close(jacobians(model, h), jacobians(model, h, torch.zeros(3, dtype=torch.float64)),
                               rtol=0, atol=1e-15)
    assert jacobians(model, h, wrt="input").shape == (6, 5, 3)


def test_ensemble_params_give_one_jacobian_per_network_and_state():
    nets = [GRU(2, 4, 1, seed=s).double() for s in range(3)]
    gen = torch.Generator().manual_seed(1)
    h = torch.randn(3, 5, 4, generator=gen, dtype=torch.float64)
    u = torch.randn(3, 5, 2, generator=gen, dtype=torch.float64)
    J = jacobians(stack_params(nets), h, u)
    Ju = jacobians(stack_params(nets), h, u, wrt="input")
    assert J.shape == (3, 5, 4, 4) and Ju.shape == (3, 5, 4, 2)
    for e, m in enumerate(nets):
        torch.testing.assert_close(J[e], jacobians(m, h[e], u[e]), rtol=0, atol=1e-14)
        torch.testing.assert_close(Ju[e], jacobians(m, h[e], u[e], wrt="input"), rtol=0, atol=1e-14)
    with pytest.raises(ValueError, match="network, batch"):
        jacobians(stack_params(nets), h[0], u[0])


def test_dtype_rules():
    model = LeakyRNN(2, 4, 1, seed=5)  # float32 parameters
    h, u = _states(model, dtype=torch.float32)
    J32 = jacobians(model, h, u)
    J64 = jacobians(model, h.double(), u)  # float32 weights widened exactly, float64 arithmetic
    assert J32.dtype == torch.float32 and J64.dtype == torch.float64
    np.testing.assert_allclose(J32.numpy(), J64.numpy(), atol=1e-6)
    from_numpy = jacobians(model, h.double().numpy())
    assert isinstance(from_numpy, torch.Tensor) and from_numpy.dtype == torch.float64
    assert not jacobians(model, h.requires_grad_()).requires_grad


def test_a_model_without_a_family_is_differentiated_through_its_step():
    model = RotationModel(dtype=torch.float32)  # float32 weights, float64 states
    h = torch.randn(4, 2, dtype=torch.float64)
    J = jacobians(model, h)
    assert J.dtype == torch.float64
    torch.testing.assert_close(J, model.w.detach().double().expand(4, 2, 2), rtol=0, atol=0)
    two = 2 * torch.eye(2, dtype=torch.float64).expand(4, 2, 2)
    torch.testing.assert_close(jacobians(model, h, wrt="input"), two)


class _Cubic(NamedTuple):
    """``h' = k h^3 + c u`` with per-network ``k``: a family registered without closed forms."""

    k: torch.Tensor
    c: torch.Tensor


@pytest.fixture
def cubic_family():
    def drive(p, u):
        return torch.zeros_like(p.k) if u is None else u @ p.c.mT

    family = Family("cubic", "c", ("k",), lambda p, h, u: p.k * h**3 + drive(p, u), drive,
                    lambda p: 0.0, lambda p: p.c.shape[-1], state_size=lambda p: p.k.shape[-1])
    register_family(_Cubic, family)
    yield
    FAMILIES.pop(_Cubic)


def test_a_family_without_closed_forms_falls_back_to_autodiff(cubic_family):
    p = _Cubic(torch.tensor([1.0, -2.0], dtype=torch.float64), torch.eye(2, dtype=torch.float64))
    h = torch.tensor([[1.0, 2.0], [0.5, -1.0]], dtype=torch.float64)
    torch.testing.assert_close(jacobians(p, h), torch.diag_embed(3 * p.k * h**2))
    ens = stack_params([p, p._replace(k=2 * p.k)])
    J = jacobians(ens, torch.stack([h, h]))
    torch.testing.assert_close(J[1], torch.diag_embed(6 * p.k * h**2))


def test_bad_arguments_raise_clear_errors():
    model = LeakyRNN(2, 4, 1)
    with pytest.raises(ValueError, match="wrt must be"):
        jacobians(model, torch.zeros(3, 4), wrt="params")
    with pytest.raises(ValueError, match="float32 or float64"):
        jacobians(model, torch.zeros(3, 4, dtype=torch.int64))
    with pytest.raises(ValueError, match=r"states must have shape \(\.\.\., 4\)"):
        jacobians(model, torch.zeros(3, 5))
    with pytest.raises(ValueError, match="inputs must have shape"):
        jacobians(model, torch.zeros(3, 4), torch.zeros(3, 3))
    with pytest.raises(TypeError, match="register its family"):
        jacobians((torch.eye(2),), torch.zeros(3, 2))
    with pytest.raises(ValueError, match="needs inputs"):
        jacobians(lambda h, u: h, torch.zeros(3, 2), wrt="input")



@pytest.mark.parametrize("model, u", [
    (LeakyRNN(2, 6, 1, alpha=0.3, seed=0), torch.tensor([1.5])),      # width 1 for 2 inputs
    (PLRNN(2, 5, 2, seed=0), torch.ones(3, 1)),                       # (batch, 1) for 2 inputs
    (LeakyRNN(2, 6, 1, seed=0), torch.ones(5, 2)),                    # 5 rows for 3 states
])
def test_inputs_of_the_wrong_width_are_refused_not_broadcast(model, u):
    h = torch.zeros(3, model.state_size, dtype=torch.float64)
    shape = r"inputs must have shape \(input,\) or \(\.\.\., input\).* input = 2, got"
    with pytest.raises(ValueError, match=shape) as err:
        jacobians(model, h, u)
    assert "\n" not in str(err.value)


def test_inputs_to_a_model_without_inputs_are_refused():
    model, h = GRU(0, 5, 1, seed=0), torch.zeros(3, 5, dtype=torch.float64)
    with pytest.raises(ValueError, match="takes no inputs .*drop inputs="):
        jacobians(model, h, torch.tensor([3.0]))
    torch.testing.assert_close(jacobians(model, h, torch.zeros(0)), jacobians(model, h))


def test_nan_states_and_inputs_are_one_line_errors():
    model = LeakyRNN(2, 8, 1, seed=0)
    X = np.random.default_rng(0).normal(size=(2, 8))
    with pytest.raises(ValueError, match="states contain NaN or Inf|states contains NaN or Inf"):
        jacobians(model, np.full((2, 8), np.nan))
    with pytest.raises(ValueError, match="inputs contains NaN or Inf"):
        jacobians(model, X, np.array([np.nan, 0.0]))
    with pytest.raises(ValueError, match="inputs contains NaN or Inf"):
        jacobians(lambda h, u: h + u.sum(-1, keepdim=True), X, np.array([np.inf, 0.0]), wrt="input")


def test_jacobians_too_large_for_memory_are_refused_before_allocating():
    model = LeakyRNN(2, 8, 1, seed=0)
    huge = torch.zeros(1, 8, dtype=torch.float64).expand(10**10, 8)
    with pytest.raises(ValueError, match=r"jacobians needs about \S+ GiB .*call it in chunks"):
        jacobians(model, huge)
