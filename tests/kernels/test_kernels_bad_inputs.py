"""One-line errors of ``fused_states``, ``fused_backend``, ``rollout`` and ``stack_params`` for
malformed arguments."""

from __future__ import annotations

import pytest
import torch

from neurodyn.kernels import fused_backend, fused_states, rollout, stack_params
from neurodyn.models import LeakyRNN


def test_fused_states_takes_params_not_the_model():
    model = LeakyRNN(1, 4, 1, seed=0)
    with pytest.raises(TypeError, match=r"fused_states takes model.params\(\), not the model; got LeakyRNN"):
        fused_states(model, torch.zeros(2, 4), torch.zeros(2, 3, 1))
    with pytest.raises(TypeError, match=r"takes model.params\(\), a params NamedTuple; got tuple"):
        fused_states(tuple(model.params()), torch.zeros(2, 4), torch.zeros(2, 3, 1))


@pytest.mark.parametrize("which", ["h0", "inputs"])
def test_fused_states_lets_non_finite_h0_and_inputs_through_to_the_states(which):
    # the training engine names non-finite data when the loss diverges (tests/training/test_divergence.py)
    h0, x = torch.zeros(2, 4), torch.zeros(2, 3, 1)
    (h0 if which == "h0" else x)[0, 0] = float("nan")
    states = fused_states(LeakyRNN(1, 4, 1, seed=0).params(), h0, x)
    assert torch.isnan(states[0]).any() and torch.isfinite(states[1]).all()  # row 1 is untouched


@pytest.mark.parametrize("kwargs, match", [
    (dict(n_steps=2.9), "n_steps must be an integer >= 0, got 2.9"),
    (dict(n_steps=True), "n_steps must be an integer >= 0, got True"),
    (dict(n_steps=5, every=1.9), "every must be an integer >= 1, got 1.9"),
])
def test_rollout_refuses_non_integer_counts(kwargs, match):
    with pytest.raises(ValueError, match=match):
        rollout(LeakyRNN(1, 4, 1, seed=0), h0=torch.zeros(2, 4), inputs=torch.zeros(2, 1), **kwargs)


def test_rollout_accepts_whole_counts():
    out = rollout(LeakyRNN(1, 4, 1, seed=0), h0=torch.zeros(2, 4), inputs=torch.zeros(2, 1), n_steps=4.0,
                  every=2, backend="torch")
    assert tuple(out.states.shape) == (2, 2, 4)


def test_stack_params_names_what_it_takes():
    with pytest.raises(TypeError, match=r"stack_params takes a list of models or of their params\(\) "
                                        "NamedTuples, got an item of type int"):
        stack_params([1, 2])
    with pytest.raises(TypeError, match="got LeakyRNN"):
        stack_params(LeakyRNN(1, 4, 1, seed=0))
    nets = [LeakyRNN(1, 4, 1, seed=s) for s in range(2)]
    assert stack_params(n.params() for n in nets).w_rec.shape == (2, 4, 4)


def test_fused_backend_checks_the_device_string():
    with pytest.raises(ValueError, match="device 'gpu' is not a torch device; use e.g. 'cpu' or 'cuda:0'"):
        fused_backend(LeakyRNN(1, 4, 1, seed=0).params(), device="gpu")
