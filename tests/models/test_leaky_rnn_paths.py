"""Every code path sees the same effective weights: forward, step, kernels, analyses."""

import pytest
import torch

from neurodyn.kernels import backend_available, rollout
from neurodyn.models import LeakyRNN, LowRankRNN, leaky_rnn_step
from neurodyn.models.constraints import make_sparse_mask


def constrained():
    return LeakyRNN(3, 10, 2, dale=True, dale_output=True, no_autapse=True, alpha=0.3,
                    rec_mask=make_sparse_mask((10, 10), 0.6, seed=2), spectral_radius=1.1,
                    output_scale="lazy", seed=0).double()


MODELS = {"dale_masked": constrained,
          "lowrank": lambda: LowRankRNN(3, 10, 2, rank=2, random_gain=0.5, alpha=0.3, seed=1).double()}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_forward_equals_stepping_params(name):
    m = MODELS[name]()
    x = torch.randn(4, 12, 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    roll = m(x)
    p = m.params()
    h = m.initial_state(4)
    for t in range(12):
        h = leaky_rnn_step(p, h, x[:, t])
        torch.testing.assert_close(roll.states[:, t], h)
    torch.testing.assert_close(roll.outputs, roll.states @ p.w_out.T + p.b_out)


@pytest.mark.parametrize("backend", ["torch", "numba"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_kernels_match_forward(name, backend):
    if not backend_available(backend):
        pytest.skip(f"{backend} backend not installed")
    m = MODELS[name]()
    x = torch.randn(4, 12, 3, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    h0 = torch.randn(4, 10, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    res = rollout(m, h0=h0, inputs=x, backend=backend)
    torch.testing.assert_close(res.states, m(x, h0).states)


def test_noise_scale_sqrt_2_alpha():
    m = LeakyRNN(1, 5, 1, alpha=0.2, noise_std=0.5)
    assert m.noise_scale == pytest.approx((2 * 0.2) ** 0.5 * 0.5)
    lr = LowRankRNN(1, 5, 1, alpha=0.2, noise_std=0.5)
    assert lr.noise_scale == m.noise_scale


def test_noise_statistics_of_one_step():
    """With W = 0, b = 0 and a linear unit, one step from h = 0 is pure noise of std sqrt(2 alpha) sigma."""
    m = LeakyRNN(1, 50, 1, activation="linear", alpha=0.1, noise_std=0.3).double()
    with torch.no_grad():
        m.w_rec.zero_()
    gen = torch.Generator().manual_seed(0)
    h1 = m(torch.zeros(400, 1, 1, dtype=torch.float64), noise=True, generator=gen).states[:, 0].detach()
    assert float(h1.mean()) == pytest.approx(0.0, abs=0.01)
    assert float(h1.std()) == pytest.approx((2 * 0.1) ** 0.5 * 0.3, rel=0.02)
    quiet = m(torch.zeros(3, 2, 1, dtype=torch.float64), noise=False).states
    assert torch.equal(quiet, torch.zeros_like(quiet))


def test_trainable_h0_is_used_and_learnt():
    m = LeakyRNN(1, 4, 1, train_h0=True)
    with torch.no_grad():
        m.h0.fill_(0.5)
    assert torch.equal(m.initial_state(2), torch.full((2, 4), 0.5))
    m(torch.zeros(2, 3, 1)).outputs.sum().backward()
    assert m.h0.grad is not None and float(m.h0.grad.abs().sum()) > 0
