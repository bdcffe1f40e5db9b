import pytest
import torch

from neurodyn.models import ALRNN, GRU, LSTM, PLRNN, LeakyRNN, LowRankRNN, ShallowPLRNN
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
    with pytest.raises(ValueError, match="n_units must be an integer >= 1, got 0"):
        check_sizes(1, 0, 1)
    with pytest.raises(ValueError, match="n_outputs must be an integer >= 0, got -1"):
        check_sizes(1, 2, -1)


@pytest.mark.parametrize("build, message", [
    (lambda: LeakyRNN(-1, 3, 1), "n_inputs must be an integer >= 0, got -1"),
    (lambda: LowRankRNN(1, 0, 1), "n_units must be an integer >= 1, got 0"),
    (lambda: GRU(1, 3, -2), "n_outputs must be an integer >= 0, got -2"),
    (lambda: PLRNN(1, 0, 1), "n_latent must be an integer >= 1, got 0"),
])
def test_every_model_uses_the_one_size_check(build, message):
    with pytest.raises(ValueError, match=message):
        build()


def test_check_sizes_refuses_non_integers_and_takes_whole_floats():
    assert check_sizes(1.0, 4.0, 2) == (1, 4, 2)
    assert all(type(n) is int for n in check_sizes(1.0, 4.0, 2))
    for bad, shown in ((4.5, "4.5"), (float("nan"), "nan"), (True, "True"), ("4", "'4'")):
        with pytest.raises(ValueError, match=rf"^n_units must be an integer >= 1, got {shown}$"):
            check_sizes(1, bad, 1)
    with pytest.raises(ValueError, match=r"^n_inputs must be an integer >= 0, got '1'$"):
        check_sizes("1", 3, 1)


FAMILIES = [LeakyRNN, GRU, LSTM, PLRNN, ALRNN, ShallowPLRNN, LowRankRNN]


@pytest.mark.parametrize("cls", FAMILIES)
def test_every_family_refuses_a_fractional_or_nan_unit_count(cls):
    units = "n_latent" if cls in (PLRNN, ALRNN, ShallowPLRNN) else "n_units"
    with pytest.raises(ValueError, match=rf"^{units} must be an integer >= 1, got 4.5$"):
        cls(1, 4.5, 1)
    with pytest.raises(ValueError, match=rf"^{units} must be an integer >= 1, got nan$"):
        cls(1, float("nan"), 1)
    with pytest.raises(ValueError, match=r"^n_inputs must be an integer >= 0, got '1'$"):
        cls("1", 3, 1)
    model = cls(1.0, 4.0, 1.0)  # whole floats are taken as ints
    assert (model.n_inputs, model.n_units, model.n_outputs) == (1, 4, 1)
    assert type(model.n_units) is int


@pytest.mark.parametrize("build, message", [
    (lambda: ALRNN(1, 4, 1, n_relu=1.5), r"n_relu must be an integer in \[0, 4\], got 1.5"),
    (lambda: ShallowPLRNN(1, 4, 1, n_hidden=2.5), "n_hidden must be an integer >= 1, got 2.5"),
    (lambda: ShallowPLRNN(1, 4, 1, n_hidden=0), "n_hidden must be an integer >= 1, got 0"),
    (lambda: LowRankRNN(1, 4, 1, rank=1.5), "rank must be an integer >= 1, got 1.5"),
    (lambda: PLRNN(1, n_units=float("nan")), "n_units must be an integer >= 1, got nan"),
])
def test_other_size_arguments_must_be_integers(build, message):
    with pytest.raises(ValueError, match=message):
        build()


@pytest.mark.parametrize("cls", FAMILIES)
def test_a_model_too_large_for_memory_fails_before_allocating(cls):
    units = "n_latent" if cls in (PLRNN, ALRNN, ShallowPLRNN) else "n_units"
    message = rf"^{cls.__name__} needs about .* GiB \(parameters for {units}={10**12}.*; lower {units}"
    with pytest.raises(ValueError, match=message):
        cls(1, 10**12, 1)


def test_low_rank_and_leaky_share_the_rollout_params_cache():
    model = LowRankRNN(1, 4, 1, rank=1, seed=0)
    x = torch.randn(2, 5, 1, generator=torch.Generator().manual_seed(0))
    out = model(x)
    h = torch.zeros(2, 4)
    for t in range(5):  # the step outside a rollout builds the params itself: same states
        h = model.step(h, x[:, t])
    assert torch.equal(out.states[:, -1], h)
    assert model._rollout_params is None


@pytest.mark.parametrize("cls", [PLRNN, GRU])
def test_step_is_the_registered_family_step(cls):
    from neurodyn.kernels import FAMILIES

    model = cls(2, 4, 1, seed=0)
    p = model.params()
    h, u = torch.full((3, model.state_size), 0.2), torch.ones(3, 2)
    assert torch.equal(model.step(h, u), FAMILIES[type(p)].step(p, h, u))


def test_a_model_without_family_or_config_fields_says_what_to_define():
    from typing import NamedTuple

    from neurodyn.models import RecurrentModel

    class Params(NamedTuple):
        w: torch.Tensor

    class Bare(RecurrentModel):
        def params(self):
            return Params(torch.zeros(1))

    with pytest.raises(NotImplementedError, match="no registered family"):
        Bare().step(torch.zeros(1, 1))
    with pytest.raises(NotImplementedError, match="lists no config_fields"):
        Bare().config()


def test_config_lists_the_config_fields_in_order():
    assert list(GRU(1, 3, 1, seed=2, train_h0=True).config().items()) == [
        ("n_inputs", 1), ("n_units", 3), ("n_outputs", 1), ("train_h0", True), ("seed", 2)]
    assert list(PLRNN(1, 3, 2, seed=0).config())[-3:] == ["full_A", "w_diagonal", "gain"]


def test_weight_initialisers_draw_their_documented_laws():
    from neurodyn.models._base import init_input_weights, init_readout_weights, uniform_weights

    gen = torch.Generator().manual_seed(0)
    w = uniform_weights(gen, 0.5, 200, 50)
    assert w.requires_grad and w.abs().max() <= 0.5 and w.abs().max() > 0.49
    w_in = init_input_weights(torch.Generator().manual_seed(1), 400, 25)  # std 1 / sqrt(25) = 0.2
    assert abs(w_in.std().item() - 0.2) < 0.01
    raw = init_readout_weights(torch.Generator().manual_seed(2), 3, 16, 1.0)
    scaled = init_readout_weights(torch.Generator().manual_seed(2), 3, 16, None)
    assert torch.equal(scaled, raw / 4.0)  # 1 / sqrt(16) unless an output scale is applied later
