import pytest
import torch

from neurodyn.models import GRU, PLRNN, LeakyRNN, LowRankRNN
from neurodyn.models._base import check_sizes, eval_mode


def test_eval_mode_restores_the_mode_also_on_error():
    model = LeakyRNN(1, 3, 1, seed=0)
    with eval_mode(model):
        assert not model.training
    assert model.training
    with pytest.raises(RuntimeError, match="boom"), eval_mode(model):
        raise RuntimeError("boom")
    assert model.training
    model.eval()
    with eval_mode(model):
        pass
    assert not model.training


def test_check_sizes_names_the_bad_size():
    assert check_sizes(0, 3, 0) == (0, 3, 0)
    with pytest.raises(ValueError, match="n_units must be positive, got 0"):
        check_sizes(1, 0, 1)
    with pytest.raises(ValueError, match="n_outputs must be >= 0, got -1"):
        check_sizes(1, 2, -1)


@pytest.mark.parametrize("build, message", [
    (lambda: LeakyRNN(-1, 3, 1), "n_inputs must be >= 0, got -1"),
    (lambda: LowRankRNN(1, 0, 1), "n_units must be positive, got 0"),
    (lambda: GRU(1, 3, -2), "n_outputs must be >= 0, got -2"),
    (lambda: PLRNN(1, 0, 1), "n_latent must be positive, got 0"),
])
def test_every_model_uses_the_one_size_check(build, message):
    with pytest.raises(ValueError, match=message):
        build()


def test_low_rank_and_leaky_share_the_rollout_params_cache():
    model = LowRankRNN(1, 4, 1, rank=1, seed=0)
    x = torch.randn(2, 5, 1, generator=torch.Generator().manual_seed(0))
    out = model(x)
    h = torch.zeros(2, 4)
    for t in range(5):  # the step outside a rollout builds the params itself: same states
        h = model.step(h, x[:, t])
    assert torch.equal(out.states[:, -1], h)
    assert model._rollout_params is None
