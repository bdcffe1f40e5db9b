"""Distribution-matching pieces for HMM emulation: Gumbel-softmax sampling, Sinkhorn divergence
(against POT), MMD (against a direct sum), and a short training run."""

import numpy as np
import pytest
import torch

from neurodyn.models import LeakyRNN
from neurodyn.tasks import HMMEmulation
from neurodyn.training.distribution import (
    _entropic_ot,
    gumbel_softmax_hard,
    mmd,
    sample_emissions,
    sinkhorn_divergence,
    train_distribution,
)


def test_gumbel_softmax_hard_samples_the_softmax_and_passes_gradients():
    logits = torch.tensor([1.0, 0.0, -1.0], requires_grad=True)
    gen = torch.Generator().manual_seed(0)
    n = 20000
    y = gumbel_softmax_hard(logits.expand(n, 3), tau=0.5, generator=gen)
    assert torch.all(y.detach().sum(-1) == 1) and set(y.detach().unique().tolist()) <= {0.0, 1.0}
    p = torch.softmax(logits, -1).detach().numpy()
    freq = y.detach().mean(0).numpy()
    assert np.all(np.abs(freq - p) < 3 * np.sqrt(p * (1 - p) / n))
    (y[:, 0]).sum().backward()
    assert logits.grad is not None and logits.grad.abs().sum() > 0


def test_entropic_ot_matches_pot():
    ot = pytest.importorskip("ot", reason="POT (extra 'ot') is needed for this reference check")
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(7, 3)), rng.normal(size=(5, 3)) + 0.5
    eps = 0.5
    a, b = np.full(7, 1 / 7), np.full(5, 1 / 5)
    cost = ((x[:, None] - y[None]) ** 2).sum(-1) / 2
    plan = ot.sinkhorn(a, b, cost, eps, method="sinkhorn_log", numItermax=10000, stopThr=1e-12)
    ref = (plan * cost).sum() + eps * (plan * np.log(plan / np.outer(a, b))).sum()
    ours = _entropic_ot(torch.tensor(x), torch.tensor(y), eps, 500).item()
    assert ours == pytest.approx(ref, rel=1e-6)


def test_entropic_ot_gradient_matches_finite_differences():
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(6, 2, generator=gen, dtype=torch.float64, requires_grad=True)
    y = torch.randn(5, 2, generator=gen, dtype=torch.float64)
    _entropic_ot(x, y, 0.3, 300).backward()
    h = 1e-6
    fd = torch.zeros_like(x)
    with torch.no_grad():
        for i in range(6):
            for j in range(2):
                e = torch.zeros_like(x)
                e[i, j] = h
                fd[i, j] = (_entropic_ot(x + e, y, 0.3, 300) - _entropic_ot(x - e, y, 0.3, 300)) / (2 * h)
    np.testing.assert_allclose(x.grad.numpy(), fd.numpy(), rtol=1e-5, atol=1e-8)


def test_sinkhorn_divergence_is_zero_on_equal_clouds_and_grows_with_shift():
    x = torch.randn(30, 4, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    assert abs(sinkhorn_divergence(x, x, epsilon=0.1).item()) < 1e-8
    d1 = sinkhorn_divergence(x, x + 0.5, epsilon=0.1).item()
    d2 = sinkhorn_divergence(x, x + 1.0, epsilon=0.1, n_iter=2000).item()
    assert 0 < d1 < d2
    # for a pure translation the debiased divergence equals |shift|^2 / 2 (Feydy et al. 2019)
    assert d2 == pytest.approx(4 * 1.0**2 / 2, rel=1e-3)


def test_mmd_matches_direct_sum():
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=(4, 2)), rng.normal(size=(3, 2))

    def k(a, b):
        d2 = ((a - b) ** 2).sum()
        return sum(np.exp(-d2 / (2 * s**2)) for s in (1.0, 2.0))

    ref = (np.mean([[k(a, b) for b in x] for a in x]) + np.mean([[k(a, b) for b in y] for a in y])
           - 2 * np.mean([[k(a, b) for b in y] for a in x]))
    assert mmd(torch.tensor(x), torch.tensor(y), bandwidths=(1.0, 2.0)).item() == pytest.approx(ref)


def test_train_distribution_short_run_lowers_the_loss_and_is_seeded():
    task = HMMEmulation(n_states=2, n_steps=12, n_noise=4)
    model = LeakyRNN(task.n_inputs, 16, task.n_outputs, seed=0)
    runs = [train_distribution(model, task, n_iterations=25, batch_size=32, lr=1e-2, seed=3,
                               n_sinkhorn_iter=10, eval_every=25, progress=False)
            for _ in range(2)]
    assert runs[0].history["loss"] == runs[1].history["loss"]
    loss = runs[0].history["loss"]
    assert np.mean(loss[-5:]) < np.mean(loss[:5])
    emitted, batch = sample_emissions(runs[0].model, task, 64, seed=1)
    assert emitted.shape == (64, 12, 3) and np.all(emitted.sum(-1) == 1)
    with pytest.raises(ValueError, match="divergence"):
        train_distribution(model, task, divergence="kl", n_iterations=1, progress=False)


def test_train_distribution_callback_sees_the_model_in_eval_mode_and_leaves_the_fit_unchanged():
    task = HMMEmulation(n_states=2, n_steps=8, n_noise=4)
    model = LeakyRNN(task.n_inputs, 8, task.n_outputs, seed=0)
    seen = []

    def callback(iteration, net):
        seen.append((iteration, net.training))
        with torch.no_grad():  # a readout of the current weights, as a checkpoint analysis would take
            weight = float(net.params().w_out.abs().sum())
        return {"w_out_norm": weight} if iteration % 2 == 1 else {}

    kwargs = {"n_iterations": 6, "batch_size": 16, "n_sinkhorn_iter": 5, "seed": 1, "eval_every": 0,
              "progress": False}
    plain = train_distribution(model, task, **kwargs)
    tracked = train_distribution(model, task, callback=callback, **kwargs)
    assert tracked.history["loss"] == plain.history["loss"]
    assert seen == [(i, False) for i in range(6)]
    assert len(tracked.history["w_out_norm"]) == 3 and "w_out_norm" not in plain.history
    final = float(tracked.model.params().w_out.detach().abs().sum())
    assert tracked.history["w_out_norm"][-1] == pytest.approx(final)


def test_float64_network_trains_and_emits():
    # the task's float32 inputs were fed to a float64 network: a dtype error naming the inputs
    task = HMMEmulation(n_states=2, n_steps=5, n_noise=2)
    kw = dict(n_iterations=2, batch_size=4, eval_every=1, progress=False, divergence="mmd")
    res = train_distribution(LeakyRNN(2, 4, 3, seed=0).double(), task, **kw)
    again = train_distribution(LeakyRNN(2, 4, 3, seed=0).double(), task, **kw)
    assert res.status == "completed" and next(res.model.parameters()).dtype == torch.float64
    assert res.history["loss"] == again.history["loss"]  # same seed, same fit
    one_hot, _ = sample_emissions(res.model, task, n_trials=6, seed=1)
    assert one_hot.dtype == np.float64 and (one_hot.sum(-1) == 1).all()
    np.testing.assert_array_equal(one_hot, sample_emissions(res.model, task, n_trials=6, seed=1)[0])


def test_sample_emissions_keeps_the_model_mode_and_checks_sizes():
    task = HMMEmulation(n_states=2, n_steps=5, n_noise=2)
    model = LeakyRNN(2, 4, 3, seed=0).train()
    sample_emissions(model, task, n_trials=3)
    assert model.training  # it was left in eval mode before
    with pytest.raises(ValueError, match="model has 3 inputs / 3 outputs but task 'hmm' needs 2 / 3"):
        sample_emissions(LeakyRNN(3, 4, 3, seed=0), task, n_trials=3)


@pytest.mark.parametrize("n_iter", [2.5, "30"])
def test_non_integer_sinkhorn_iterations_are_refused(n_iter):
    task = HMMEmulation(n_states=2, n_steps=5, n_noise=2)
    with pytest.raises(ValueError, match="n_sinkhorn_iter must be an integer >= 1"):
        train_distribution(LeakyRNN(2, 4, 3, seed=0), task, n_iterations=1, n_sinkhorn_iter=n_iter,
                           progress=False)


@pytest.mark.parametrize("divergence", ["mmd", "sinkhorn"])
def test_batch_too_large_for_the_pairwise_costs_is_refused_up_front(divergence):
    # a torch allocation error after sampling and rolling out the batch, tens of seconds in
    task = HMMEmulation(n_states=2, n_steps=5, n_noise=2)
    with pytest.raises(ValueError, match=rf"train_distribution \({divergence}\) needs .* lower batch_size"):
        train_distribution(LeakyRNN(2, 4, 3, seed=0), task, n_iterations=1, batch_size=10**6,
                           divergence=divergence, eval_every=0, progress=False)


def test_rollouts_too_long_for_memory_are_refused_up_front():
    task = HMMEmulation(n_states=2, n_steps=10**6, n_noise=2)
    with pytest.raises(ValueError, match=r"train_distribution needs about .* lower batch_size or the task's"):
        train_distribution(LeakyRNN(2, 4, 3, seed=0), task, n_iterations=1, batch_size=10**4,
                           divergence="mmd", eval_every=0, progress=False)
