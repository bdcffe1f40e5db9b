"""Error / teacher forcing and RFLO: closed forms, the zero-error manifold, gradients, evaluation."""

import numpy as np
import pytest
import torch

from neurodyn.models import GRU, LeakyRNN
from neurodyn.tasks import DelayedDiscrimination, FlipFlop
from neurodyn.training import evaluate, masked_mse, train
from neurodyn.training.forcing import Forcing, forced_task_rollout, forcing_step
from neurodyn.training.observation import readout_pinv
from neurodyn.training.train import held_out_batch

TINY = dict(n_iterations=4, batch_size=4, lr=1e-2, eval_every=2, progress=False)


def _case(seed=0, n_batch=5, n_state=6, n_out=2):
    g = torch.Generator().manual_seed(seed)
    r = lambda *s: torch.randn(*s, generator=g, dtype=torch.float64)  # noqa: E731
    W, b, h, target = r(n_out, n_state), r(n_out), r(n_batch, n_state), r(n_batch, n_out)
    mask = (torch.rand(n_batch, n_out, generator=g) > 0.3).to(torch.float64)
    return W, b, h, target, mask


@pytest.mark.parametrize("ridge", [0.0, 0.1])
@pytest.mark.parametrize("c", [0.3, 1.0])
def test_forcing_steps_equal_their_closed_forms(c, ridge):
    W, b, h, target, mask = _case()
    pinv_np = W.numpy().T @ np.linalg.inv(W.numpy() @ W.numpy().T + ridge * np.eye(2))  # Wᵀ (W Wᵀ + λ I)⁻¹
    pinv, cond = readout_pinv(W, ridge=ridge)
    np.testing.assert_allclose(pinv.numpy(), pinv_np, atol=1e-12)
    s = np.linalg.svd(W.numpy(), compute_uv=False)
    assert cond == pytest.approx(s[0] / s[-1])
    y = h @ W.T + b
    error = forcing_step(h, y, target, mask, method="error", strength=c, pinv=pinv, bias=b)
    expected = h.numpy() + c * (mask * (target - y)).numpy() @ pinv_np.T
    np.testing.assert_allclose(error.numpy(), expected, atol=1e-12)
    teacher = forcing_step(h, y, target, mask, method="teacher", strength=c, pinv=pinv, bias=b)
    m = c * mask.numpy().max(1, keepdims=True)
    expected = (1 - m) * h.numpy() + m * (target - b).numpy() @ pinv_np.T
    np.testing.assert_allclose(teacher.numpy(), expected, atol=1e-12)


def test_error_forcing_leaves_the_zero_error_manifold_in_place_and_steps_orthogonally_onto_it():
    W, b, h, target, _ = _case(1)
    ones = torch.ones_like(target)
    pinv, _ = readout_pinv(W)
    on = forcing_step(h, h @ W.T + b, target, ones, method="error", strength=1.0, pinv=pinv, bias=b)
    torch.testing.assert_close(on @ W.T + b, target)  # c = 1: exactly on the manifold W h + b = y*
    again = forcing_step(on, on @ W.T + b, target, ones, method="error", strength=0.7, pinv=pinv, bias=b)
    torch.testing.assert_close(again, on)  # already there: unchanged
    null = torch.linalg.svd(W).Vh[2:]  # directions along the manifold
    torch.testing.assert_close((on - h) @ null.T, torch.zeros(5, 4, dtype=torch.float64))  # orthogonal step
    teacher = forcing_step(on, on @ W.T + b, target, ones, method="teacher", strength=1.0, pinv=pinv, bias=b)
    assert not torch.allclose(teacher, on)  # teacher forcing also moves it along the manifold


def test_the_forcing_correction_carries_no_gradient():
    W, b, h, target, mask = _case(2)
    pinv, _ = readout_pinv(W)
    for method, slope in (("error", torch.ones_like(mask[:, :1])), ("teacher", 1 - 0.4 * mask.amax(1, True))):
        x = h.clone().requires_grad_(True)
        forced = forcing_step(x, x @ W.T + b, target, mask, method=method, strength=0.4, pinv=pinv, bias=b)
        forced.sum().backward()
        torch.testing.assert_close(x.grad, slope.expand_as(x))


def test_masked_steps_are_not_forced_and_zero_strength_is_the_plain_rollout_bit_for_bit():
    model = LeakyRNN(1, 8, 1, alpha=0.5, noise_std=0.1, seed=0).train()
    x, y, m = FlipFlop(n_bits=1, n_steps=10).sample(3, seed=0).to_torch()
    plain = model(x, generator=torch.Generator().manual_seed(5))
    free = forced_task_rollout(model, x, y, m, forcing=Forcing("error"), strength=0.0,
                               generator=torch.Generator().manual_seed(5))
    assert torch.equal(free.states, plain.states) and torch.equal(free.outputs, plain.outputs)
    masked = forced_task_rollout(model, x, y, torch.zeros_like(m), forcing=Forcing("teacher"), strength=1.0,
                                 generator=torch.Generator().manual_seed(5))
    torch.testing.assert_close(masked.states, plain.states)


@pytest.mark.slow  # three trainings: 2.7 s warm, 6 s in a loaded run
def test_forcing_is_absent_at_evaluation_and_zero_strength_trains_as_plain_bptt():
    model, task = LeakyRNN(1, 8, 1, alpha=0.5, seed=0), FlipFlop(n_bits=1, n_steps=8)
    short = {**TINY, "n_iterations": 2}
    forced = train(model, task, seed=1, forcing="error", forcing_strength=1.0, **short)
    assert type(forced.model) is LeakyRNN and forced.config["forcing"]["method"] == "error"
    assert forced.history["forcing_strength"] == [1.0] * 2
    metrics = evaluate(forced.model, task, held_out_batch(task, 4, 1))  # a fresh, unforced evaluation
    assert forced.history["eval_loss"][-1] == metrics["loss"]
    for backend in ("torch", "auto"):  # the forced rollout on each backend against the plain one there
        plain = train(model, task, seed=1, backend=backend, **short)
        zero = train(model, task, seed=1, forcing="error", forcing_strength=0.0, backend=backend, **short)
        assert zero.config["backend"] == plain.config["backend"]
        for p, q in zip(plain.model.parameters(), zero.model.parameters()):
            assert torch.equal(p, q)
    assert any(not torch.equal(p, q) for p, q in zip(plain.model.parameters(), forced.model.parameters()))


def test_annealed_strength_is_logged_per_iteration():
    result = train(LeakyRNN(1, 6, 1, seed=0), FlipFlop(n_bits=1, n_steps=8), seed=0, forcing="teacher",
                   forcing_strength=0.6, forcing_anneal="linear", **{**TINY, "eval_every": 0})
    np.testing.assert_allclose(result.history["forcing_strength"], [0.6, 0.4, 0.2, 0.0], atol=1e-12)


def test_rflo_gradients_equal_the_eligibility_trace_updates():
    torch.manual_seed(0)
    model = LeakyRNN(2, 5, 1, alpha=0.3, seed=3).double()
    g = torch.Generator().manual_seed(1)
    x = torch.randn(2, 7, 2, generator=g, dtype=torch.float64)
    y = torch.randn(2, 7, 1, generator=g, dtype=torch.float64)
    m = (torch.rand(2, 7, 1, generator=g) > 0.3).double()
    feedback = torch.randn(1, 5, generator=g, dtype=torch.float64)
    roll = forced_task_rollout(model, x, y, m, forcing=Forcing(rule="rflo"), strength=0.0, feedback=feedback)
    masked_mse(roll.outputs, y, m).backward()
    # the RFLO update written out (Murray 2019): traces p_ij <- (1 - a) p_ij + a phi'(pre_i) r_j
    P = {k: v.detach().numpy() for k, v in model.params()._asdict().items() if isinstance(v, torch.Tensor)}
    a, xs, ys, ms, F = 0.3, x.numpy(), y.numpy(), m.numpy(), feedback.numpy()
    grads = {k: np.zeros_like(P[k]) for k in ("w_rec", "w_in", "b", "w_out")}
    for n in range(2):
        h, tr_rec, tr_in, tr_b = np.zeros(5), np.zeros((5, 5)), np.zeros((5, 2)), np.zeros(5)
        for t in range(7):
            pre = P["w_rec"] @ h + P["w_in"] @ xs[n, t] + P["b"]
            slope = a * (1 - np.tanh(pre) ** 2)
            tr_rec = (1 - a) * tr_rec + slope[:, None] * h[None, :]
            tr_in = (1 - a) * tr_in + slope[:, None] * xs[n, t][None, :]
            tr_b = (1 - a) * tr_b + slope
            h = (1 - a) * h + a * np.tanh(pre)
            err = 2 * ms[n, t] * (P["w_out"] @ h + P["b_out"] - ys[n, t]) / ms.sum()  # dL/dy
            fed = F.T @ err  # random feedback instead of W_outᵀ
            grads["w_rec"] += fed[:, None] * tr_rec
            grads["w_in"] += fed[:, None] * tr_in
            grads["b"] += fed * tr_b
            grads["w_out"] += np.outer(err, h)
    for k, expected in grads.items():
        np.testing.assert_allclose(getattr(model, k).grad.numpy(), expected, atol=1e-12, err_msg=k)


def test_rflo_and_error_forcing_train_together_and_reproduce_with_the_seed():
    model, task = LeakyRNN(1, 6, 1, alpha=0.5, seed=0), FlipFlop(n_bits=1, n_steps=8)
    runs = [train(model, task, seed=2, forcing="error", learning_rule="rflo", **TINY) for _ in range(2)]
    assert runs[0].status == "completed" and runs[0].config["forcing"]["rule"] == "rflo"
    for p, q in zip(runs[0].model.parameters(), runs[1].model.parameters()):
        assert torch.equal(p, q)


def test_bad_forcing_settings_raise_one_line_errors():
    task = FlipFlop(n_bits=1, n_steps=8)
    with pytest.raises(ValueError, match=r"forcing_strength must be a finite number in \[0, 1\], got 1.5"):
        train(LeakyRNN(1, 4, 1), task, forcing="teacher", forcing_strength=1.5, **TINY)
    with pytest.raises(ValueError, match="unknown forcing 'errors'"):
        train(LeakyRNN(1, 4, 1), task, forcing="errors", **TINY)
    with pytest.raises(ValueError, match="learning_rule='rflo' needs a LeakyRNN"):
        train(GRU(1, 4, 1), task, learning_rule="rflo", **TINY)
    with pytest.raises(ValueError, match="loss 'mse'"):
        train(LeakyRNN(3, 4, 3), DelayedDiscrimination(), forcing="error", **TINY)


@pytest.mark.parametrize("method", ["teacher", "error"])
@pytest.mark.parametrize("strength", [-0.1, 1.0001, float("nan"), float("inf")])
def test_a_strength_outside_zero_one_is_refused_before_any_rollout(method, strength):
    with pytest.raises(ValueError, match=r"^forcing_strength must be a finite number in \[0, 1\], got"):
        Forcing(method, strength=strength)
    assert Forcing(method, strength=0.0).strength == 0.0 and Forcing(method, strength=1.0).strength == 1.0


def test_an_ill_conditioned_readout_warns_with_its_condition_number():
    model = LeakyRNN(1, 4, 2, seed=0)
    with torch.no_grad():
        model.w_out.copy_(torch.tensor([[1.0, 0.0, 0.0, 0.0], [1.0, 1e-6, 0.0, 0.0]]))
    x, y, m = FlipFlop(n_bits=2, n_steps=3).sample(2, seed=0).to_torch()
    with pytest.warns(RuntimeWarning, match=r"condition number 2e\+06.*raise forcing_ridge"):
        forced_task_rollout(model, x[..., :1], y, m, forcing=Forcing("error"), strength=0.5)


@pytest.mark.parametrize("method", ["error", "teacher"])
def test_a_forced_gru_trains_fused_as_on_torch(method):
    # the fused Numba rollout forces the GRU as the torch loop does: same weights and losses
    task = FlipFlop(n_bits=2, n_steps=10)
    kw = dict(seed=4, forcing=method, forcing_strength=0.8, forcing_anneal="linear",
              **{**TINY, "eval_every": 0})
    runs = {b: train(GRU(2, 6, 2, train_h0=True, seed=1).double(), task, backend=b, **kw)
            for b in ("auto", "torch")}
    assert runs["auto"].config["backend"] == "numba" and runs["torch"].config["backend"] == "torch"
    for (name, p), q in zip(runs["auto"].model.named_parameters(), runs["torch"].model.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-10, atol=1e-12, msg=lambda m, name=name: f"{name}: {m}")
    assert runs["auto"].history["loss"] == pytest.approx(runs["torch"].history["loss"], rel=1e-10)
    free = train(GRU(2, 6, 2, train_h0=True, seed=1).double(), task, seed=4, **{**TINY, "eval_every": 0})
    forced = runs["auto"].model.parameters()
    assert any(not torch.allclose(p, q) for p, q in zip(free.model.parameters(), forced))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_forcing_a_half_precision_model_is_a_one_line_error(dtype):
    model = GRU(2, 4, 2, seed=0).to(dtype)
    with pytest.raises(ValueError, match=f"needs a float32 or float64 model .*not {dtype}") as err:
        train(model, FlipFlop(n_bits=2, n_steps=8), forcing="error", n_iterations=2, batch_size=2,
              eval_every=0, progress=False)
    assert "\n" not in str(err.value)
