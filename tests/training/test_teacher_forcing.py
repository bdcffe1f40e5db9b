"""Teacher forcing: forcing mechanics against direct computations, α estimate, seeds, NaN abort."""

import numpy as np
import pytest
import torch

from neurodyn.models import PLRNN, LeakyRNN, ShallowPLRNN
from neurodyn.training import fit_teacher_forcing, generate
from neurodyn.training import observation as obs
from neurodyn.training.teacher_forcing import _alpha_product_bound, forced_rollout

TINY = dict(n_epochs=2, batches_per_epoch=3, batch_size=4, seq_len=10, progress=False)


def sine_data(n=400, c=2):
    t = np.arange(n) * 0.1
    return np.stack([np.sin(t + k) for k in range(c)], 1)


def test_alpha_one_gives_one_step_predictions_and_alpha_zero_free_run():
    model = ShallowPLRNN(0, 3, 3, n_hidden=6, observation="identity", seed=1).double()
    zhat = torch.randn(2, 8, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    z0 = torch.randn(2, 3, dtype=torch.float64)
    mask = torch.ones(3, dtype=torch.float64)
    with torch.no_grad():
        forced = forced_rollout(model, z0, zhat, [1.0] * 8, mask)
        torch.testing.assert_close(forced[:, 0], model.step(z0))
        torch.testing.assert_close(forced[:, 1:], model.step(zhat[:, :-1]))
        free = forced_rollout(model, z0, zhat, [0.0] * 8, mask)
        torch.testing.assert_close(free, model(None, z0, n_steps=8).states)
        a = 0.3
        gtf = forced_rollout(model, z0, zhat, [a] * 8, mask)
        z_tilde = (1 - a) * gtf[:, 2] + a * zhat[:, 2]
        torch.testing.assert_close(gtf[:, 3], model.step(z_tilde))


def test_sparse_forcing_replaces_only_the_observed_units_every_tau_steps():
    model = PLRNN(0, 3, 3, seed=0).double()
    zhat = torch.randn(1, 6, 3, dtype=torch.float64)
    z0 = torch.zeros(1, 3, dtype=torch.float64)
    mask = torch.tensor([1.0, 1.0, 0.0], dtype=torch.float64)
    alphas = [1.0 if (t + 1) % 3 == 0 else 0.0 for t in range(6)]
    with torch.no_grad():
        out = forced_rollout(model, z0, zhat, alphas, mask)
        z = model.step(model.step(z0))
        z = torch.cat([zhat[:, 2, :2], z[:, 2:]], dim=1)  # forced after step index 2
        torch.testing.assert_close(out[:, 3], model.step(z))


def test_alpha_estimate_of_a_linear_model_is_one_minus_inverse_norm():
    for a, expected in (([1.25, 0.5], 1 - 1 / 1.25), ([0.9, 0.5], 0.0)):
        model = PLRNN.from_arrays(np.array(a), np.zeros((2, 2)), np.zeros(2))
        zhat = torch.randn(3, 12, 2, dtype=torch.float64)
        assert _alpha_product_bound(model, zhat, None) == pytest.approx(expected, abs=1e-12)


def test_identity_observation_freezes_readout_and_same_seed_same_fit():
    model = LeakyRNN(0, 5, 2, activation="linear", seed=0)
    fits = [fit_teacher_forcing(model, sine_data(), observation="identity", seed=s, **TINY)
            for s in (3, 3, 4)]
    B, b = obs.affine_readout(fits[0].model)
    torch.testing.assert_close(B, torch.eye(2, 5))
    assert not b.any() and fits[0].status == "completed"
    for p, q in zip(fits[0].model.parameters(), fits[1].model.parameters()):
        assert torch.equal(p, q)
    assert any(not torch.equal(p, q) for p, q in zip(fits[0].model.parameters(), fits[2].model.parameters()))
    assert fits[0].config["seed"] == 3 and len(fits[0].history["loss"]) == 2
    assert model.w_out.requires_grad and not torch.equal(model.w_out.detach(), B)  # argument untouched


def test_gtf_learns_a_sine_with_affine_observation():
    from neurodyn.analysis import prediction_error

    x = sine_data(600)
    model = ShallowPLRNN(0, 4, 2, n_hidden=16, seed=0)
    res = fit_teacher_forcing(model, x, observation="affine", alpha=0.2, n_epochs=8, batches_per_epoch=8,
                              batch_size=8, seq_len=30, lr=3e-2, lr_end=1e-3, progress=False, seed=0)
    assert res.history["loss"][-1] < 0.5 * res.history["loss"][0]
    assert prediction_error(res.model, x, 5) < 0.3 * prediction_error(model, x, 5)


def test_adaptive_alpha_and_sparse_method_run_and_record():
    model = ShallowPLRNN(0, 3, 2, n_hidden=8, seed=0)
    res = fit_teacher_forcing(model, sine_data(), observation="identity", adaptive_alpha=True, alpha=1.0,
                              alpha_update_every=1, seed=0, **TINY)
    assert 0.0 <= res.history["alpha"][-1] < 1.0  # annealed from 1
    sp = fit_teacher_forcing(model, sine_data(), method="sparse", tau=5, seed=0, **TINY)
    assert sp.history["alpha"] == [0.2, 0.2] and sp.config["method"] == "sparse"


def test_divergence_aborts_with_the_last_finite_model():
    model = PLRNN.from_arrays(np.full(2, 50.0), np.zeros((2, 2)), np.zeros(2)).float()
    with pytest.warns(RuntimeWarning, match="diverged at epoch 0"):
        res = fit_teacher_forcing(model, sine_data(), observation="identity", alpha=0.0,
                                  **{**TINY, "seq_len": 60})
    assert res.status == "diverged" and res.config["epochs_run"] == 0
    for p, q in zip(res.model.parameters(), model.parameters()):
        torch.testing.assert_close(p, q)


def test_poisson_observation_predicts_rates():
    rng = np.random.default_rng(0)
    t = np.arange(800) * 0.2
    rates = np.stack([2 + 1.5 * np.sin(t), 4 + 2 * np.cos(t), np.full_like(t, 1.0)], 1)
    counts = rng.poisson(rates).astype(float)
    model = ShallowPLRNN(0, 3, 3, n_hidden=12, seed=0)
    res = fit_teacher_forcing(model, counts, observation="poisson", alpha=0.8, n_epochs=8,
                              batches_per_epoch=8, batch_size=8, seq_len=30, lr=1e-2, progress=False)
    assert res.history["loss"][-1] < 0.5 * res.history["loss"][0]
    with torch.no_grad():  # one-step rate predictions from data-inferred latent states
        B, b = obs.affine_readout(res.model)
        targets = obs.forcing_targets(counts[None], "poisson")[0]
        z = obs.invert(B, b, torch.tensor(targets, dtype=torch.float32))
        pred = obs.observe(res.model, res.model.step(z), "poisson").numpy()
    for c in (0, 1):
        assert np.corrcoef(pred[:-1, c], rates[1:, c])[0, 1] > 0.5
    gen = generate(res.model, counts[0], 50, observation="poisson").observations
    assert gen.shape == (50, 3) and np.all(gen >= 0)


def test_bad_settings_raise():
    model = LeakyRNN(0, 4, 2)
    with pytest.raises(ValueError, match="3 channels"):
        fit_teacher_forcing(model, sine_data(c=3), **TINY)
    with pytest.raises(ValueError, match="seq_len \\+ 1 = 11"):
        fit_teacher_forcing(model, sine_data(10), **TINY)
    with pytest.raises(ValueError, match="unknown method"):
        fit_teacher_forcing(model, sine_data(), method="bptt", **TINY)
    with pytest.raises(ValueError, match="identity observation needs at least 2"):
        fit_teacher_forcing(LeakyRNN(0, 1, 2), sine_data(), observation="identity", **TINY)
    with pytest.raises(ValueError, match="unknown observation"):
        fit_teacher_forcing(model, sine_data(), observation="gauss", **TINY)
    with pytest.raises(ValueError, match="non-negative integer counts; got negative values"):
        fit_teacher_forcing(model, sine_data(), observation="poisson", **TINY)


def test_poisson_observation_refuses_non_integer_counts_before_training():
    counts = np.random.default_rng(0).poisson(2.0, (60, 2)).astype(float)
    counts[0, 0] = 0.0  # the first non-integer value named is then 0.5
    model = PLRNN(0, 4, 2, seed=0)
    with pytest.raises(ValueError, match=r"^Poisson observation needs non-negative integer counts; got "
                                         r"non-integer values \(e\.g\. 0\.5\): bin spikes into counts or use "
                                         r"observation='identity'$"):
        fit_teacher_forcing(model, counts + 0.5, observation="poisson", **TINY)
    res = fit_teacher_forcing(model, counts, observation="poisson", **TINY)  # 3.0 is a count
    assert res.status == "completed"


def test_external_inputs_are_aligned_with_the_predicted_step():
    from neurodyn.io import TimeSeries

    A, W = np.array([0.6, 0.7]), np.array([[0.0, 0.2], [-0.3, 0.0]])
    h, C = np.zeros(2), np.array([[1.0], [-0.5]])
    s = np.random.default_rng(0).standard_normal((300, 1))
    z, xs = np.zeros(2), [np.zeros(2)]
    for t in range(1, 300):  # x[t] = F(x[t-1], s[t])
        z = A * z + W @ np.maximum(z, 0) + h + C @ s[t]
        xs.append(z)
    ts = TimeSeries.from_arrays(np.array(xs), inputs=s)
    true = PLRNN.from_arrays(A, W, h, C=C)
    res = fit_teacher_forcing(true, ts, observation="identity", alpha=1.0, lr=1e-12, lr_end=1e-12, **TINY)
    assert max(res.history["loss"]) < 1e-20
    with pytest.raises(ValueError, match="1 inputs but the data have 0"):
        fit_teacher_forcing(true, np.array(xs), observation="identity", **TINY)


def test_process_noise_perturbs_the_carried_state_not_the_scored_prediction():
    A = np.array([0.9, 0.5])
    model = PLRNN.from_arrays(A, np.zeros((2, 2)), np.zeros(2))  # z' = A z
    z0 = torch.tensor([[1.0, -2.0]], dtype=torch.float64)
    noise = torch.tensor([[[0.1, 0.0], [0.0, 0.3], [-0.2, 0.1]]], dtype=torch.float64)
    zhat = torch.zeros(1, 3, 2, dtype=torch.float64)
    preds = forced_rollout(model, z0, zhat, [0.0] * 3, torch.ones(2, dtype=torch.float64), None, noise)
    z, expected = z0[0].numpy(), []
    for t in range(3):  # prediction F(z), then the noise joins the state carried on
        z = A * z
        expected.append(z)
        z = z + noise[0, t].numpy()
    np.testing.assert_allclose(preds[0].detach().numpy(), np.array(expected), atol=1e-15)


def test_process_noise_is_seeded_and_checked():
    kw = dict(TINY, observation="identity", seed=4)
    base = fit_teacher_forcing(LeakyRNN(0, 2, 2, seed=0), sine_data(), **kw)
    noisy = [fit_teacher_forcing(LeakyRNN(0, 2, 2, seed=0), sine_data(), process_noise=0.2, **kw)
             for _ in range(2)]
    assert noisy[0].history["loss"] == noisy[1].history["loss"]  # same seed, same noise
    assert noisy[0].history["loss"] != base.history["loss"] and noisy[0].config["process_noise"] == 0.2
    for bad in (-0.1, float("nan")):
        with pytest.raises(ValueError, match="process_noise must be a finite number >= 0"):
            fit_teacher_forcing(LeakyRNN(0, 2, 2), sine_data(), process_noise=bad, **TINY)


def test_sparse_forcing_longer_than_the_window_is_refused():
    import numpy as np

    from neurodyn.models import PLRNN
    from neurodyn.training import fit_teacher_forcing

    data = np.random.default_rng(0).standard_normal((100, 2))
    with pytest.raises(ValueError, match="tau=50 is longer than seq_len=10: sparse teacher forcing would"):
        fit_teacher_forcing(PLRNN(0, 3, 2, seed=0), data, method="sparse", tau=50, seq_len=10,
                            n_epochs=1, batches_per_epoch=1, batch_size=2, progress=False)
    fit_teacher_forcing(PLRNN(0, 3, 2, seed=0), data, method="sparse", tau=10, seq_len=10,  # one forced step
                        n_epochs=1, batches_per_epoch=1, batch_size=2, progress=False)
