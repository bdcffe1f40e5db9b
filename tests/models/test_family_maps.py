"""Each family's step and closed-form Jacobians against autograd, finite differences and ensembles."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neurodyn.models import (
    ALRNN,
    GRU,
    LSTM,
    PLRNN,
    LeakyRNN,
    LowRankRNN,
    ShallowPLRNN,
)
from neurodyn.models._family import FAMILIES, family_of, lift

N_IN = 3


def _models():
    """(id, model) for every family and every option that changes the map."""
    cases = [(f"leaky_{act}_a{alpha}", LeakyRNN(N_IN, 6, 2, activation=act, alpha=alpha, gain=1.5, seed=1))
             for act in ("tanh", "relu", "softplus", "sigmoid", "linear") for alpha in (1.0, 0.3)]
    mask = (torch.rand(6, 6, generator=torch.Generator().manual_seed(0)) > 0.3).float()
    cases += [
        ("leaky_dale", LeakyRNN(N_IN, 6, 2, dale=True, dale_output=True, alpha=0.2, seed=2)),
        ("leaky_masks", LeakyRNN(N_IN, 6, 2, rec_mask=mask, input_mask=torch.ones(6, N_IN).tril(),
                                 no_autapse=True, activation="softplus", seed=3)),
        ("leaky_fixed", LeakyRNN(N_IN, 6, 2, fixed={"w_rec": True}, activation="sigmoid", seed=4)),
        ("low_rank", LowRankRNN(N_IN, 6, 2, rank=2, random_gain=0.5, alpha=0.5, seed=5)),
        ("leaky_no_input", LeakyRNN(0, 6, 2, alpha=0.5, seed=6)),
        ("gru", GRU(N_IN, 5, 2, seed=7)),
        ("lstm", LSTM(N_IN, 4, 2, seed=8)),
        ("plrnn", PLRNN(N_IN, 6, 2, seed=9)),
        ("plrnn_full_A", PLRNN(N_IN, 6, 2, full_A=True, w_diagonal=True, gain=1.5, seed=10)),
        ("alrnn", ALRNN(N_IN, 6, 2, n_relu=2, seed=11)),
        ("alrnn_all_relu", ALRNN(N_IN, 5, 2, n_relu=5, full_A=True, seed=12)),
        ("alrnn_linear", ALRNN(N_IN, 5, 2, n_relu=0, seed=13)),
        ("shplrnn", ShallowPLRNN(N_IN, 5, 2, n_hidden=7, seed=14)),
        ("shplrnn_clipped", ShallowPLRNN(N_IN, 5, 2, n_hidden=7, clipped=True, seed=15)),
    ]
    with torch.no_grad():  # non-zero biases so that gates and units sit away from symmetric points
        for _, m in cases:
            for name in ("b", "h", "h1", "b_ih", "b_hh"):
                if isinstance(getattr(m, name, None), torch.nn.Parameter):
                    getattr(m, name).normal_(0.0, 0.5, generator=torch.Generator().manual_seed(99))
    return cases


CASES = _models()
IDS = [c[0] for c in CASES]


def _params64(model):
    return type(model.params())(*(v.detach().double() if isinstance(v, torch.Tensor) else v
                                  for v in model.params()))


def _point(model, n_batch=5, seed=0, dtype=torch.float64):
    gen = torch.Generator().manual_seed(seed)
    h = torch.randn(n_batch, model.state_size, generator=gen, dtype=dtype)
    u = torch.randn(n_batch, model.n_inputs, generator=gen, dtype=dtype)
    return h, u


def _autograd(family, p, h, u, argnums):
    def one(hi, ui):
        return family.step(p, hi[None], ui[None])[0]

    return torch.func.vmap(torch.func.jacrev(one, argnums=argnums))(h, u)


def _central_differences(family, p, h, u, wrt, eps=1e-6):
    x = h if wrt == "state" else u
    cols = []
    for j in range(x.shape[-1]):
        dx = torch.zeros_like(x)
        dx[:, j] = eps
        if wrt == "state":
            plus, minus = family.step(p, h + dx, u), family.step(p, h - dx, u)
        else:
            plus, minus = family.step(p, h, u + dx), family.step(p, h, u - dx)
        cols.append((plus - minus) / (2 * eps))
    return torch.stack(cols, dim=-1) if cols else h.new_zeros((*h.shape, 0))


def test_every_builtin_model_has_a_family_with_closed_forms():
    names = {f.name for f in FAMILIES.values()}
    assert {"leaky", "gru", "lstm", "plrnn", "alrnn", "shplrnn"} <= names
    for _, model in CASES:
        family = family_of(model.params())
        assert family is not None and family.jacobian is not None and family.input_jacobian is not None
        assert family.n_state(model.params()) == model.state_size


@pytest.mark.parametrize("name,model", CASES, ids=IDS)
def test_family_step_is_the_model_step(name, model):
    h, u = _point(model.float(), dtype=torch.float32)
    family = family_of(model.params())
    with torch.no_grad():
        assert torch.equal(family.step(model.params(), h, u), model.step(h, u))


@pytest.mark.parametrize("name,model", CASES, ids=IDS)
def test_frozen_step_is_the_model_step(name, model):
    h, u = _point(model.float(), dtype=torch.float32)
    with torch.no_grad():
        assert torch.equal(model.frozen_step()(h, u), model.step(h, u))


def test_frozen_step_keeps_a_subclass_s_own_step():
    class Doubled(LeakyRNN):
        def step(self, h, u=None):
            return 2.0 * super().step(h, u)

    model = Doubled(N_IN, 6, 2, seed=0)
    h, u = _point(model, dtype=torch.float32)
    with torch.no_grad():
        assert torch.equal(model.frozen_step()(h, u), model.step(h, u))


@pytest.mark.parametrize("name,model", [c for c in CASES if family_of(c[1].params()).step_vjp is not None],
                         ids=[i for i, c in zip(IDS, CASES) if family_of(c[1].params()).step_vjp is not None])
def test_step_vjp_equals_the_step_and_the_jacobian_transpose(name, model):
    family, p = family_of(model.params()), _params64(model)
    h, u = _point(model)
    v = torch.randn(h.shape, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    out, pull = family.step_vjp(p, h, u)
    torch.testing.assert_close(out, family.step(p, h, u), rtol=1e-14, atol=1e-14)
    vJ = torch.einsum("bi,bij->bj", v, _autograd(family, p, h, u, 0))
    torch.testing.assert_close(pull(v), vJ, rtol=1e-12, atol=1e-12)
    # a constant input given once, (1, input), broadcasts over the rows like the expanded one
    out1, pull1 = family.step_vjp(p, h, u[:1])
    outx, pullx = family.step_vjp(p, h, u[:1].expand(h.shape[0], -1))
    torch.testing.assert_close(out1, outx, rtol=1e-14, atol=1e-14)
    torch.testing.assert_close(pull1(v), pullx(v), rtol=1e-14, atol=1e-14)


def test_frozen_step_vjp_is_none_for_a_subclass_s_own_step():
    class Doubled(LeakyRNN):
        def step(self, h, u=None):
            return 2.0 * super().step(h, u)

    assert Doubled(N_IN, 6, 2, seed=0).frozen_step_vjp() is None
    assert LeakyRNN(N_IN, 6, 2, seed=0).frozen_step_vjp() is not None


@pytest.mark.parametrize("name,model", CASES, ids=IDS)
def test_jacobians_equal_autograd_and_finite_differences(name, model):
    family, p = family_of(model.params()), _params64(model)
    h, u = _point(model)
    for wrt, closed, argnums in (("state", family.jacobian, 0), ("input", family.input_jacobian, 1)):
        J = closed(p, h, u)
        n_cols = h.shape[-1] if wrt == "state" else u.shape[-1]
        assert J.shape == (5, model.state_size, n_cols) and J.dtype == torch.float64
        torch.testing.assert_close(J, _autograd(family, p, h, u, argnums), rtol=0, atol=1e-10)
        torch.testing.assert_close(J, _central_differences(family, p, h, u, wrt), rtol=0, atol=1e-7)


@pytest.mark.parametrize("name", ["plrnn", "alrnn", "shplrnn_clipped"])
def test_pl_jacobians_take_relu_slope_zero_at_the_kink(name):
    model = dict(CASES)[name]
    family, p = family_of(model.params()), _params64(model)
    h = torch.zeros(2, model.state_size, dtype=torch.float64)
    u = torch.zeros(2, N_IN, dtype=torch.float64)
    if name == "shplrnn_clipped":  # hidden pre-activations W2 z + h2 and W2 z exactly at 0
        p = p._replace(h2=torch.zeros_like(p.h2))
        expected = torch.diag(p.a)
    else:
        expected = p.A.clone()
        if name == "alrnn":  # the linear units keep their W columns
            expected[:, : 6 - p.n_relu] += p.W[:, : 6 - p.n_relu]
    torch.testing.assert_close(family.jacobian(p, h, u), _autograd(family, p, h, u, 0), rtol=0, atol=0)
    torch.testing.assert_close(family.jacobian(p, h, u)[0], expected, rtol=0, atol=0)


@pytest.mark.parametrize("name", ["leaky_tanh_a0.3", "gru", "lstm", "alrnn", "shplrnn_clipped"])
def test_jacobians_broadcast_over_ensembles(name):
    from neurodyn.kernels import stack_params

    model = dict(CASES)[name]
    others = [type(model).from_config({**model.config(), "seed": s}) for s in (21, 22)]
    nets = [model, *others]
    with torch.no_grad():
        for m in nets[1:]:
            for prm in m.parameters():
                prm.add_(0.1 * torch.randn(prm.shape, generator=torch.Generator().manual_seed(prm.numel())))
    family = family_of(model.params())
    ens = lift(stack_params([_params64(m) for m in nets]), family)
    gen = torch.Generator().manual_seed(3)
    h = torch.randn(3, 4, model.state_size, generator=gen, dtype=torch.float64)
    u = torch.randn(3, 4, N_IN, generator=gen, dtype=torch.float64)
    J, Ju, step = family.jacobian(ens, h, u), family.input_jacobian(ens, h, u), family.step(ens, h, u)
    assert J.shape == (3, 4, model.state_size, model.state_size)
    for e, m in enumerate(nets):
        p = _params64(m)
        torch.testing.assert_close(J[e], family.jacobian(p, h[e], u[e]), rtol=0, atol=1e-13)
        torch.testing.assert_close(Ju[e], family.input_jacobian(p, h[e], u[e]), rtol=0, atol=1e-13)
        torch.testing.assert_close(step[e], family.step(p, h[e], u[e]), rtol=0, atol=1e-13)


@pytest.mark.parametrize("name", ["leaky_softplus_a0.3", "gru", "lstm", "plrnn", "shplrnn"])
def test_float32_states_give_float32_jacobians_close_to_float64(name):
    model = dict(CASES)[name].float()
    family = family_of(model.params())
    p32 = type(model.params())(*(v.detach() if isinstance(v, torch.Tensor) else v for v in model.params()))
    h, u = _point(model, dtype=torch.float32)
    J32 = family.jacobian(p32, h, u)
    J64 = family.jacobian(_params64(model), h.double(), u.double())
    assert J32.dtype == torch.float32
    np.testing.assert_allclose(J32.numpy(), J64.numpy(), atol=1e-5)
