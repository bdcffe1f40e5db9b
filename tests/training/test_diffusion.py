"""The diffusion objective: the cosine schedule and forward chain against their closed forms, the loss's
value on a tiny case, the reverse step's posterior mean, gradients reaching every weight, seeds, bad input."""

import numpy as np
import pytest
import torch

from neurodyn.models import LeakyRNN
from neurodyn.tasks import ContinuousReport
from neurodyn.training.diffusion import standard_code
from neurodyn.training.diffusion import (
    _training_batch,
    denoising_loss,
    forward_chain,
    noise_schedule,
    reverse_mean,
    sample_diffusion,
    train_diffusion,
)

TASK = ContinuousReport(n_items=2, n_ring=4, output_ring=6, fixation_ms=20.0, stimulus_ms=20.0,
                        delay_min_ms=20.0, delay_max_ms=20.0, cue_ms=20.0, response_ms=80.0,
                        grace_ms=0.0)  # 4 response steps
SWAPS = {"kappa": 8.0, "p_target": 0.7, "p_swap": 0.2, "p_guess": 0.1}


def _model(seed=0):
    return LeakyRNN(TASK.n_inputs + 6, 8, 6, seed=seed)


def test_schedule_telescopes_to_the_cosine_closed_form():
    beta, s = noise_schedule(6), 0.008
    f = np.cos(0.5 * np.pi * (np.arange(7) / 6 + s) / (1 + s)) ** 2
    np.testing.assert_allclose(np.cumprod(1 - beta)[:-1], f[1:-1] / f[0], rtol=1e-12)  # unclipped levels
    assert beta[-1] == 0.999 and np.all(np.diff(beta) > 0)


def test_forward_chain_has_the_closed_form_marginals():
    beta = torch.as_tensor(noise_schedule(4), dtype=torch.float64)
    x0 = torch.tensor([[1.0, -2.0]], dtype=torch.float64).expand(40000, 2)
    x, eps = forward_chain(x0, beta, torch.Generator().manual_seed(0))
    abar = torch.cumprod(1 - beta, 0)
    # x_k | x_0 ~ N(sqrt(ᾱ_k) x_0, (1 - ᾱ_k) I) and ε_k standard normal, level by level
    np.testing.assert_allclose(x.mean(0), abar.sqrt()[:, None] * x0[0], atol=0.02)
    np.testing.assert_allclose(x.var(0), (1 - abar)[:, None].expand(4, 2), rtol=0.03)
    np.testing.assert_allclose(eps.var(0), 1.0, rtol=0.03)
    # Markov chain: x_2 - sqrt(1 - β_2) x_1 is fresh noise, independent of x_1
    fresh = x[:, 1] - (1 - beta[1]).sqrt() * x[:, 0]
    assert abs(float(torch.corrcoef(torch.stack([fresh[:, 0], x[:, 0, 0]]))[0, 1])) < 0.02


def test_reverse_step_with_the_true_noise_is_the_posterior_mean():
    beta = torch.as_tensor(noise_schedule(5), dtype=torch.float64)
    abar = torch.cumprod(1 - beta, 0)
    gen = torch.Generator().manual_seed(1)
    x0, eps = torch.randn(3, 4, generator=gen, dtype=torch.float64), torch.randn(3, 4, generator=gen,
                                                                                dtype=torch.float64)
    for k in range(1, 5):  # Ho et al. 2020, eq. 7
        xk = abar[k].sqrt() * x0 + (1 - abar[k]).sqrt() * eps
        posterior = (abar[k - 1].sqrt() * beta[k] * x0
                     + (1 - beta[k]).sqrt() * (1 - abar[k - 1]) * xk) / (1 - abar[k])
        np.testing.assert_allclose(reverse_mean(xk, eps, torch.full((3,), k), beta), posterior, rtol=1e-10)
    # at the last step (k = 1) it returns x_0 itself
    x1 = abar[0].sqrt() * x0 + (1 - abar[0]).sqrt() * eps
    np.testing.assert_allclose(reverse_mean(x1, eps, torch.zeros(3, dtype=torch.long), beta), x0, rtol=1e-10)


def test_loss_of_a_silent_readout_is_the_mean_squared_noise_and_of_the_true_noise_zero():
    model = _model()
    with torch.no_grad():
        model.w_out.zero_(), model.b_out.zero_()
    batch = TASK.sample(5, seed=0)
    beta = torch.as_tensor(noise_schedule(4), dtype=torch.float32)
    inputs, noise, mask = _training_batch(TASK, batch, batch.trial_params["target_angle"], beta,
                                          torch.Generator().manual_seed(0), "cpu")
    assert mask.sum() == 5 * 4 and inputs.shape == (5, TASK.n_steps, TASK.n_inputs + 6)
    out = model(inputs).outputs
    assert float(out.abs().max()) == 0.0
    expected = float((noise[mask[..., 0] > 0] ** 2).mean())
    assert float(denoising_loss(out, noise, mask)) == pytest.approx(expected, rel=1e-6)
    assert float(denoising_loss(noise, noise, mask)) == 0.0
    # the sample channels show x_K .. x_1 in the response steps: x_1 is closest to the report's code
    code = torch.as_tensor(standard_code(batch.trial_params["target_angle"], 6, TASK.kappa), dtype=torch.float32)
    last = inputs[:, -1, TASK.n_inputs:]
    abar1 = float(1 - beta[0])
    np.testing.assert_allclose(last, abar1 ** 0.5 * code + (1 - abar1) ** 0.5 * noise[:, -1], atol=1e-5)


def test_gradients_reach_every_weight_and_the_same_seed_gives_the_same_network():
    a = train_diffusion(_model(), TASK, behaviour=SWAPS, n_iterations=2, batch_size=6, eval_every=0,
                        progress=False, seed=3)
    b = train_diffusion(_model(), TASK, behaviour=SWAPS, n_iterations=2, batch_size=6, eval_every=0,
                        progress=False, seed=3)
    c = train_diffusion(_model(), TASK, behaviour=SWAPS, n_iterations=2, batch_size=6, eval_every=0,
                        progress=False, seed=4)
    start = _model().state_dict()
    for name, p in a.model.state_dict().items():
        assert torch.equal(p, b.model.state_dict()[name]), name
    moved = [n for n, p in a.model.named_parameters() if not torch.equal(p.detach(), start[n])]
    assert set(moved) == {n for n, _ in a.model.named_parameters()}
    assert not all(torch.equal(p, c.model.state_dict()[n]) for n, p in a.model.state_dict().items())
    assert a.config["loss"] == "diffusion" and a.config["n_levels"] == 4 and a.config["behaviour"] == SWAPS
    r1, states, batch = sample_diffusion(a.model, TASK, 7, seed=2)
    assert r1.shape == (7,) and states.shape == (7, TASK.n_steps, 8) and np.all(np.abs(r1) <= np.pi)
    assert np.array_equal(r1, sample_diffusion(a.model, TASK, 7, seed=2)[0])


@pytest.mark.parametrize("model, task, message", [
    (LeakyRNN(TASK.n_inputs + 6, 8, 6), TASK.replace(output_ring=0), "no ring-coded report"),
    (LeakyRNN(TASK.n_inputs, 8, 6), TASK, rf"needs {TASK.n_inputs} task inputs \+ 6 sample channels / 6"),
])
def test_bad_input_raises_one_line_errors(model, task, message):
    with pytest.raises(ValueError, match=message):
        train_diffusion(model, task, n_iterations=1, progress=False)


def test_invalid_behaviour_is_refused_before_training():
    with pytest.raises(ValueError, match="sum to 1"):
        train_diffusion(_model(), TASK, behaviour={**SWAPS, "p_guess": 0.5}, n_iterations=1, progress=False)
