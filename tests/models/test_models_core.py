import pytest
import torch

from neurodyn.models import GRU, LSTM, LeakyRNN


@pytest.fixture(autouse=True)
def float64_default():
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(old)


def test_leaky_alpha_one_equals_torch_rnn_cell():
    m = LeakyRNN(3, 5, 2, alpha=1.0, seed=1).double()
    cell = torch.nn.RNNCell(3, 5).double()
    with torch.no_grad():
        cell.weight_ih.copy_(m.w_in)
        cell.weight_hh.copy_(m.w_rec)
        cell.bias_ih.copy_(m.b)
        cell.bias_hh.zero_()
    h, u = torch.randn(4, 5), torch.randn(4, 3)
    torch.testing.assert_close(m.step(h, u), cell(u, h))


def test_leaky_euler_step_closed_form():
    m = LeakyRNN(1, 2, 1, alpha=0.25, activation="linear", seed=0).double()
    h, u = torch.randn(3, 2), torch.randn(3, 1)
    expected = 0.75 * h + 0.25 * (h @ m.w_rec.T + u @ m.w_in.T + m.b)
    torch.testing.assert_close(m.step(h, u), expected)


@pytest.mark.parametrize("cls,cell_cls", [(GRU, torch.nn.GRUCell), (LSTM, torch.nn.LSTMCell)])
def test_gated_models_equal_torch_cells(cls, cell_cls):
    m = cls(3, 4, 2, seed=2).double()
    cell = cell_cls(3, 4).double()
    with torch.no_grad():
        for a, b in (("weight_ih", "w_ih"), ("weight_hh", "w_hh"), ("bias_ih", "b_ih"), ("bias_hh", "b_hh")):
            getattr(cell, a).copy_(getattr(m, b))
    u = torch.randn(5, 3)
    if cls is GRU:
        h = torch.randn(5, 4)
        torch.testing.assert_close(m.step(h, u), cell(u, h))
    else:
        h, c = torch.randn(5, 4), torch.randn(5, 4)
        h2, c2 = cell(u, (h, c))
        torch.testing.assert_close(m.step(torch.cat([h, c], -1), u), torch.cat([h2, c2], -1))


def test_forward_shapes_noise_and_seed():
    m = LeakyRNN(2, 6, 3, alpha=0.5, noise_std=0.1, seed=0)
    x = torch.randn(4, 7, 2)
    out = m(x, noise=False)
    assert out.outputs.shape == (4, 7, 3) and out.states.shape == (4, 7, 6)
    n1 = m(x, noise=True, generator=torch.Generator().manual_seed(1)).states
    n2 = m(x, noise=True, generator=torch.Generator().manual_seed(1)).states
    torch.testing.assert_close(n1, n2)
    assert not torch.allclose(n1, out.states)
    assert torch.equal(LeakyRNN(2, 6, 3, seed=5).w_rec, LeakyRNN(2, 6, 3, seed=5).w_rec)
    assert not torch.equal(LeakyRNN(2, 6, 3, seed=5).w_rec, LeakyRNN(2, 6, 3, seed=6).w_rec)


def test_bad_arguments():
    with pytest.raises(ValueError, match="alpha"):
        LeakyRNN(1, 2, 1, alpha=1.5)
    with pytest.raises(ValueError, match="activation"):
        LeakyRNN(1, 2, 1, activation="elu")
    with pytest.raises(ValueError, match="inputs must have shape"):
        LeakyRNN(2, 3, 1)(torch.zeros(1, 4, 5))


@pytest.mark.parametrize("cls", [LeakyRNN, GRU, LSTM])
def test_step_names_bad_arguments(cls):
    model = cls(2, 3, 1, seed=0)
    size = model.state_size  # 6 for the LSTM's joint (h, c)
    h, u = torch.zeros(4, size), torch.zeros(4, 2)
    assert model.step(h, u).shape == (4, size)
    with pytest.raises(ValueError, match=rf"h must have shape \(\.\.\., {size}\) .*got \(4, {size + 1}\)"):
        model.step(torch.zeros(4, size + 1), u)
    with pytest.raises(ValueError, match=r"u must have shape \(\.\.\., 2\) .*got \(4, 3\)"):
        model.step(h, torch.zeros(4, 3))
    with pytest.raises(ValueError, match="h has dtype torch.float32 but the model.s parameters are"):
        model.step(h.float(), u)
    with pytest.raises(TypeError, match="h must be a torch.Tensor, got list"):
        model.step([0.0] * size, u)


def test_forward_keeps_a_subclass_step():
    class Doubling(LeakyRNN):
        def step(self, h, u=None):
            return 2.0 * h

    model = Doubling(0, 2, 1, seed=0)
    out = model(None, torch.ones(1, 2), n_steps=3)
    assert out.states[0, -1].tolist() == [8.0, 8.0]
    assert model.frozen_step()(torch.ones(1, 2), None).tolist() == [[2.0, 2.0]]
