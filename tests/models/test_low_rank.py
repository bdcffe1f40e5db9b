"""LowRankRNN: effective rank, equality with a LeakyRNN of the same W, checkpoints."""

import pytest
import torch

from neurodyn.io import load_checkpoint, save_checkpoint
from neurodyn.models import LeakyRNN, LeakyRNNParams, LowRankRNN, leaky_rnn_step


@pytest.mark.parametrize("rank", [1, 2, 5])
def test_effective_w_has_rank_r(rank):
    m = LowRankRNN(2, 40, 1, rank=rank, seed=rank).double()
    w = m.params().w_rec.detach()
    torch.testing.assert_close(w, m.m @ m.n.T / 40)
    assert int(torch.linalg.matrix_rank(w)) == rank
    s = torch.linalg.svdvals(w)
    assert float(s[rank]) < 1e-12 * float(s[0])


def test_random_part_makes_full_rank():
    m = LowRankRNN(1, 20, 1, rank=1, random_gain=0.8, seed=0).double()
    assert int(torch.linalg.matrix_rank(m.params().w_rec.detach())) == 20


def test_dynamics_equal_leaky_rnn_with_same_weights():
    lr = LowRankRNN(3, 10, 2, rank=2, alpha=0.2, seed=1)
    p = lr.params()
    assert isinstance(p, LeakyRNNParams)
    full = LeakyRNN(3, 10, 2, alpha=0.2)
    with torch.no_grad():
        full.w_in.copy_(p.w_in)
        full.w_rec.copy_(p.w_rec)
        full.w_out.copy_(p.w_out)
    x = torch.randn(4, 7, 3, generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(lr(x).outputs, full(x).outputs)
    h = torch.randn(4, 10)
    torch.testing.assert_close(lr.step(h, x[:, 0]), leaky_rnn_step(p, h, x[:, 0]))


def test_rank_validation():
    with pytest.raises(ValueError, match="rank must be in"):
        LowRankRNN(1, 5, 1, rank=6)


def test_gradients_reach_connectivity_vectors():
    m = LowRankRNN(1, 8, 1, rank=2, seed=0)
    m(torch.randn(2, 5, 1)).outputs.sum().backward()
    assert m.m.grad is not None and m.n.grad is not None and float(m.n.grad.abs().sum()) > 0


def test_checkpoint_round_trip(tmp_path):
    m = LowRankRNN(2, 12, 1, rank=3, random_gain=0.5, output_scale="lazy", seed=7)
    save_checkpoint(tmp_path / "lr.pt", m)
    loaded = load_checkpoint(tmp_path / "lr.pt").model
    assert type(loaded) is LowRankRNN and loaded.config() == m.config()
    for a, b in zip(m.params()[:5], loaded.params()[:5]):
        assert torch.equal(a, b)
