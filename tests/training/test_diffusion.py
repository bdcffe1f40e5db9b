"""The diffusion objective: the cosine schedule and forward chain against their closed forms, the loss's
value on a tiny case, the reverse step's posterior mean, gradients reaching every weight, seeds, bad input."""

import numpy as np
import pytest
import torch

from neurodyn.models import LeakyRNN
from neurodyn.tasks import ContinuousReport
from neurodyn.training import _engine
from neurodyn.training.diffusion import (
    _training_batch,
    denoising_loss,
    forward_chain,
    noise_schedule,
    posterior_mean,
    sample_diffusion,
    standard_code,
    train_diffusion,
)

TASK = ContinuousReport(n_items=2, n_ring=4, output_ring=6, fixation_ms=20.0, stimulus_ms=20.0,
                        delay_min_ms=20.0, delay_max_ms=20.0, cue_ms=20.0, response_ms=80.0,
                        grace_ms=0.0)  # 4 response steps
SWAPS = {"kappa": 8.0, "p_target": 0.7, "p_swap": 0.2, "p_guess": 0.1}


def _model(seed=0):
    return LeakyRNN(TASK.n_inputs + 6, 8, 6, noise_std=0.1, seed=seed)  # seeded state noise too


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


def test_posterior_mean_is_the_ddpm_step_of_the_true_noise():
    beta = torch.as_tensor(noise_schedule(5), dtype=torch.float64)
    abar = torch.cumprod(1 - beta, 0)
    gen = torch.Generator().manual_seed(1)
    x0, eps = torch.randn(3, 4, generator=gen, dtype=torch.float64), torch.randn(3, 4, generator=gen,
                                                                                dtype=torch.float64)
    for k in range(5):  # the ε form of the step (Ho et al. 2020, eq. 11) with the noise that made x_k
        xk = abar[k].sqrt() * x0 + (1 - abar[k]).sqrt() * eps
        step = (xk - beta[k] / (1 - abar[k]).sqrt() * eps) / (1 - beta[k]).sqrt()
        np.testing.assert_allclose(posterior_mean(xk, x0, torch.full((3,), k), beta), step, rtol=1e-9)
    # at the last step (x_1) it returns x_0 itself
    x1 = abar[0].sqrt() * x0 + (1 - abar[0]).sqrt() * eps
    np.testing.assert_allclose(posterior_mean(x1, x0, torch.zeros(3, dtype=torch.long), beta), x0, rtol=1e-9)


def test_loss_of_a_silent_readout_is_the_mean_squared_code_and_of_the_clean_code_zero():
    model = _model()
    with torch.no_grad():
        model.w_out.zero_(), model.b_out.zero_()
    batch = TASK.sample(5, seed=0)
    beta = torch.as_tensor(noise_schedule(4), dtype=torch.float32)
    inputs, clean, mask = _training_batch(TASK, batch, batch.trial_params["target_angle"], beta,
                                          torch.Generator().manual_seed(0), "cpu")
    assert mask.sum() == 5 * 4 and inputs.shape == (5, TASK.n_steps, TASK.n_inputs + 6)
    out = model(inputs).outputs.detach()
    assert float(out.abs().max()) == 0.0
    code = torch.as_tensor(standard_code(batch.trial_params["target_angle"], 6, TASK.kappa)).float()
    expected = float((code ** 2).mean())  # the same code at each of the 4 response steps
    assert float(denoising_loss(out, clean, mask)) == pytest.approx(expected, rel=1e-5)
    assert float(denoising_loss(clean, clean, mask)) == 0.0
    np.testing.assert_allclose(clean[:, -4:], code[:, None].expand(5, 4, 6))
    assert float(clean[:, :-4].abs().max()) == 0.0
    assert float(inputs[:, :-4, TASK.n_inputs:].abs().max()) == 0.0  # sample channels silent before
    # the standardised code: mean 0, variance 1 over units and angles
    grid = standard_code(np.linspace(0, 2 * np.pi, 360, endpoint=False), 6, TASK.kappa)
    assert abs(grid.mean()) < 1e-9 and grid.std() == pytest.approx(1.0, rel=1e-3)


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


def test_too_few_evaluation_reports_are_refused_before_training(monkeypatch):
    # the swap model of each evaluation needs one report more than its three free parameters (two items)
    monkeypatch.setattr(_engine, "start", lambda *a, **k: pytest.fail("training started"))
    assert TASK.n_items == 2
    with pytest.raises(ValueError, match=r"n_eval_trials must be an integer >= 4, got 3 \(the swap model"):
        train_diffusion(_model(), TASK, n_iterations=1, eval_every=1, n_eval_trials=3, progress=False)
    with pytest.raises(ValueError, match="n_eval_trials must be an integer"):
        train_diffusion(_model(), TASK, n_iterations=1, eval_every=1, n_eval_trials=4.5, progress=False)


def test_the_smallest_evaluation_reports_fit_the_swap_model():
    result = train_diffusion(_model(), TASK, n_iterations=1, batch_size=4, eval_every=1, n_eval_trials=4,
                             progress=False)
    assert len(result.history["eval_kappa"]) == 1


@pytest.mark.slow
def test_the_sampler_with_the_exact_denoiser_reproduces_the_swap_model():
    """Oracle: the posterior mean of the clean code given x_k (integrated over a grid of angles) in the
    sampler's 10 reverse steps gives reports whose fitted swap model is the generating one."""
    from neurodyn.tasks import fit_mixture_model
    from neurodyn.tasks._timeline import decode_ring

    n_levels, n_ring, n = 10, 8, 2000
    grid = np.linspace(-np.pi, np.pi, 360, endpoint=False)
    density = sum(w * np.exp(8.0 * np.cos(grid - mu)) / (2 * np.pi * np.i0(8.0))
                  for w, mu in ((0.7, 0.0), (0.2, np.pi / 2))) + 0.1 / (2 * np.pi)
    log_prior = torch.as_tensor(np.log(density / density.sum()))
    codes = torch.as_tensor(standard_code(grid, n_ring, 2.0))
    beta = torch.as_tensor(noise_schedule(n_levels), dtype=torch.float64)
    abar = torch.cumprod(1 - beta, 0)
    prev = torch.cat([abar.new_ones(1), abar[:-1]])
    sd = ((1 - prev) / (1 - abar) * beta).sqrt()
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(n, n_ring, generator=gen, dtype=torch.float64)
    for k in range(n_levels - 1, -1, -1):
        d2 = ((x[:, None] - abar[k].sqrt() * codes[None]) ** 2).sum(-1)
        x0 = torch.softmax(log_prior[None] - d2 / (2 * (1 - abar[k])), dim=1) @ codes
        x = posterior_mean(x, x0, torch.full((n,), k), beta) + sd[k] * torch.randn(x.shape, generator=gen,
                                                                                     dtype=torch.float64)
    fit = fit_mixture_model(decode_ring(x.numpy()), np.zeros(n), np.full(n, np.pi / 2))
    assert fit.p_swap == pytest.approx(0.2, abs=0.03) and fit.p_target == pytest.approx(0.7, abs=0.07)
    assert fit.p_guess == pytest.approx(0.1, abs=0.05) and fit.kappa == pytest.approx(8.0, rel=0.2)


def test_float64_model_is_refused_with_the_fix():
    # the error named the task's inputs ("convert with inputs.to(...)"), which the caller does not hold
    task = ContinuousReport(n_items=2, n_ring=4, output_ring=4, delay_min_ms=40.0, delay_max_ms=40.0)
    model = LeakyRNN(task.n_inputs + 4, 5, 4, seed=0).double()
    for run in (lambda: train_diffusion(model, task, n_iterations=1, progress=False),
                lambda: sample_diffusion(model, task, 2)):
        with pytest.raises(ValueError, match=r"diffusion runs in float32 .* convert it with model.float\(\)"):
            run()


@pytest.mark.parametrize("kw, what", [({"batch_size": 10**9}, "train_diffusion needs"),
                                      ({"n_eval_trials": 10**9, "eval_every": 1},
                                       "train_diffusion's evaluations needs")])
def test_rollouts_too_large_for_memory_are_refused_up_front(kw, what):
    task = ContinuousReport(n_items=2, n_ring=4, output_ring=4, delay_min_ms=40.0, delay_max_ms=40.0)
    model = LeakyRNN(task.n_inputs + 4, 5, 4, seed=0)
    with pytest.raises(ValueError, match=rf"{what} about .* GiB .*lower batch_size or n_eval_trials"):
        train_diffusion(model, task, n_iterations=1, progress=False, **{"eval_every": 0, **kw})
