"""Fitting a latent RNN to a recording by (generalized / sparse) teacher forcing.

Generalized teacher forcing (GTF; Hess et al., ICML 2023, after Doya 1992) pulls the latent state
towards the data-inferred state after every step, ``z̃[t] = (1 - α) z[t] + α ẑ[t]``, with a constant
``α`` or one estimated from the Jacobians along the forcing signals (``α* = max(0, 1 - 1/N)``, ``N``
the batch maximum of the geometric mean of Jacobian spectral norms) and annealed (``α ← α*`` if larger,
else ``α ← γ α + (1 - γ) α*``). Sparse teacher forcing (Mikhaeil et al., NeurIPS 2022) replaces the
forced dimensions by ``ẑ`` every ``tau`` steps. The loss is on the predictions *before* forcing;
defaults follow the GTF reference settings (RAdam, lr 1e-3 → 1e-6, sequence length 200, batch 16).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from neurodyn._seed import SeedLike, numpy_rng, torch_generator
from neurodyn.kernels.fused import fused_backend, fused_states
from neurodyn.models._base import RecurrentModel, check_model
from neurodyn.training import _engine
from neurodyn.training import observation as obs
from neurodyn.training._config import TrainConfig, check_setting
from neurodyn.training._results import FitResult, one_network_result

__all__ = ["FitResult", "fit_teacher_forcing", "forced_rollout"]

__all__ = ["FitResult", "fit_teacher_forcing"]

METHODS = ("gtf", "sparse")


def _as_arrays(data: Any) -> tuple[np.ndarray, np.ndarray | None]:
    if hasattr(data, "data") and hasattr(data, "n_channels"):
        return data.data, data.inputs
    from neurodyn.io.timeseries import TimeSeries

    ts = TimeSeries.from_arrays(data)
    return ts.data, None


def _alpha_product_bound(model, zhat: torch.Tensor, u: torch.Tensor | None, n_points: int = 16) -> float:
    """GTF ``α* = max(0, 1 - 1/N)`` from Jacobian norms along ``zhat`` (batch, time, state)."""
    from torch.func import jacrev, vmap

    n_b, n_t, n_s = zhat.shape
    idx = torch.linspace(0, n_t - 1, min(n_points, n_t)).long()
    z = zhat[:, idx].detach().reshape(-1, n_s)
    if u is None:
        J = vmap(jacrev(lambda v: model.step(v[None])[0]))(z)
    else:
        uu = u[:, idx].reshape(-1, u.shape[-1])
        J = vmap(jacrev(lambda v, w: model.step(v[None], w[None])[0]))(z, uu)
    norms = torch.linalg.matrix_norm(J.detach(), ord=2).reshape(n_b, -1).clamp_min(1e-12)
    n_max = float(torch.exp(torch.log(norms).mean(dim=1)).max())
    return max(0.0, 1.0 - 1.0 / n_max)


def forced_rollout(model, z0, zhat, alphas, mask, u=None, state_noise=None, *, backend: str = "torch",
                   ) -> torch.Tensor:
    """Latent predictions (batch, time, state) under forcing ``z ← z + α_t mask (ẑ_t - z)``.

    ``zhat[:, t]`` is the target of step ``t`` (data point ``t + 1``); ``alphas`` (time,) floats;
    ``state_noise`` (batch, time, state), optional, is added to the state carried to the next step
    (after the prediction is taken, before forcing). ``backend="numba"`` runs the same map fused
    (:func:`neurodyn.kernels.fused_states`; shallow PLRNN, PLRNN and ALRNN, one network), as does
    ``"triton"`` (shallow PLRNN only); ``"torch"`` is the reference.
    """
    if backend in ("numba", "triton"):
        return fused_states(model.params(), z0, u, noise=state_noise, forcing=(zhat, alphas, mask),
                            backend=backend)
    z, preds = z0, []
    for t in range(zhat.shape[1]):
        z = model.step(z, None if u is None else u[:, t])
        preds.append(z)
        if state_noise is not None:
            z = z + state_noise[:, t]
        a = alphas[t]
        if a > 0:
            z = z + (a * mask) * (zhat[:, t] - z)
    return torch.stack(preds, dim=1)


def fit_teacher_forcing(
    model: RecurrentModel,
    data: Any,
    *,
    observation: str = "identity",
    method: str = "gtf",
    alpha: float = 0.1,
    adaptive_alpha: bool = False,
    alpha_decay: float = 0.999,
    alpha_update_every: int = 5,
    tau: int = 16,
    n_epochs: int = 100,
    batches_per_epoch: int = 50,
    batch_size: int = 16,
    seq_len: int = 200,
    lr: float = 1e-3,
    lr_end: float | None = 1e-6,
    lambda_latent: float = 0.0,
    lambda_obs: float = 0.0,
    clip_grad_norm: float | None = None,
    noise_level: float = 0.0,
    process_noise: float = 0.0,
    poisson_smoothing: float = 2.0,
    seed: SeedLike = 0,
    callback: Callable[[int, RecurrentModel], dict[str, float]] | None = None,
    progress: bool = True,
    device: Any = "cpu",
    deterministic: bool = False,
    backend: str = "auto",
) -> FitResult:
    """Fit ``model`` to a recording by generalized or sparse teacher forcing.

    Parameters
    ----------
    model : RecurrentModel
        Latent model with ``n_outputs == n_channels`` and ``n_inputs`` equal to the data's inputs;
        copied, not modified.
    data : TimeSeries or array, shape (time, channel) or (trial, time, channel)
        Preprocessed (e.g. standardised) observations; windows of ``seq_len + 1`` points are
        drawn uniformly from all trials with a generator seeded from ``seed``.
    observation : {"identity", "affine", "poisson"}
        See :mod:`neurodyn.training.observation`.
    method : {"gtf", "sparse"}
        Generalized teacher forcing with ``alpha`` (Hess et al. 2023), or sparse identity
        teacher forcing every ``tau`` steps (Mikhaeil et al. 2022).
    alpha : float
        GTF forcing strength in [0, 1] (initial value when ``adaptive_alpha``).
    adaptive_alpha : bool
        Estimate α from Jacobian norms (product upper bound) and anneal it with ``alpha_decay``
        every ``alpha_update_every`` batches.
    tau : int
        Forcing interval (time steps) of sparse teacher forcing.
    n_epochs, batches_per_epoch, batch_size, seq_len : int
        Training length; ``seq_len`` in time steps.
    lr, lr_end : float
        RAdam learning rate, decayed exponentially per epoch to ``lr_end`` (``None``: constant).
    lambda_latent, lambda_obs : float
        L2 penalties on the latent-model and readout parameters.
    clip_grad_norm : float, optional
        Gradient-norm clipping (``None`` or 0: off).
    noise_level : float
        Std of Gaussian noise added to each training window (data augmentation).
    process_noise : float
        Std (latent units) of Gaussian noise added to the state carried from each training step to
        the next, after its prediction is scored: a Jacobian penalty in expectation, which favours
        contracting attractors (a stable limit cycle over chaos for a noisy oscillation).
    poisson_smoothing : float
        Poisson model: Gaussian smoothing (bins) of counts for the forcing signals.
    seed, progress, device
        Seed of window sampling and noise (same seed ⇒ same fit), progress bar, torch device.
    deterministic : bool
        One intra-op thread and deterministic torch algorithms (restored afterwards): the fit is
        then identical whatever thread count the caller uses (otherwise only at the same count).
    callback : callable ``(epoch, model) -> dict``, optional
        Called after each epoch (model in eval mode); returned numbers go into ``history``.
    backend : {"auto", "torch", "numba", "triton"}
        Forced rollout: ``"auto"`` runs a shallow PLRNN (plain or clipped), a PLRNN or an ALRNN
        fused on the CPU, forward and backpropagation through time with the forcing inside a Numba
        kernel (:func:`neurodyn.kernels.fused_states`; same losses to float tolerance), and a
        shallow PLRNN in Triton on a CUDA device (float32, at most 64 latent and 64 hidden units);
        every other model, and the PLRNN and ALRNN on a CUDA device, runs on torch; ``"torch"``
        forces the reference; ``"numba"`` and ``"triton"`` raise where they cannot run.
        ``result.config["backend"]`` records the one that ran.

    Returns
    -------
    FitResult
        ``status == "diverged"`` (with a ``RuntimeWarning`` saying where, and whether the data's
        scale is the likely cause) if the loss or a parameter became NaN/Inf; the model is then
        that of the last finished epoch.

    Raises
    ------
    TypeError
        If ``model`` is not a RecurrentModel.
    ValueError
        On mismatched channel or input counts, recordings shorter than ``seq_len + 1``, data that are
        not non-negative integer counts with ``observation="poisson"`` (integer-valued floats are),
        settings out of range (see also :class:`~neurodyn.training.TrainConfig`), ``method="sparse"``
        with ``tau`` longer than ``seq_len`` (no step of a window would be forced), a list of trials of
        different shapes, or training windows
        (batch_size x seq_len steps, with the rollout's states and gradients) that would exceed the
        memory available now.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.models import PLRNN
    >>> from neurodyn.training import fit_teacher_forcing, generate
    >>> t = np.arange(400) * 0.2
    >>> data = np.stack([np.sin(t), np.cos(t)], axis=1)  # (time, channel): a rotation
    >>> result = fit_teacher_forcing(PLRNN(0, 6, 2, seed=0), data, alpha=0.2, n_epochs=3, batches_per_epoch=4,
    ...                              batch_size=8, seq_len=25, lr=1e-2, seed=0, progress=False)
    >>> result.status, len(result.history["loss"]), result.history["alpha"][0]
    ('completed', 3, 0.2)
    >>> generate(result.model, data[0], 10, observation="identity").observations.shape
    (10, 2)
    """
    check_model(model, example="PLRNN(...)")
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    settings = dict(method=method, observation=observation, alpha=alpha, adaptive_alpha=adaptive_alpha,
                    alpha_decay=alpha_decay, alpha_update_every=alpha_update_every, tau=tau, seq_len=seq_len,
                    lambda_latent=lambda_latent, lambda_obs=lambda_obs, noise_level=noise_level,
                    process_noise=process_noise, poisson_smoothing=poisson_smoothing)
    for name in ("alpha", "alpha_decay"):
        check_setting(name, settings[name], 0, high=1)
    for name in ("process_noise", "noise_level", "lambda_latent", "lambda_obs", "poisson_smoothing"):
        check_setting(name, settings[name], 0)
    for name in ("tau", "seq_len", "alpha_update_every"):
        check_setting(name, settings[name], 1, integer=True)
    if method == "sparse" and int(tau) > int(seq_len):
        raise ValueError(f"tau={tau} is longer than seq_len={seq_len}: sparse teacher forcing would force no "
                         "step of a window; choose tau <= seq_len (or a longer seq_len)")
    cfg = TrainConfig(n_epochs=n_epochs, batches_per_epoch=batches_per_epoch, epoch_name="epoch",
                      batch_size=batch_size, lr=lr, optimizer="radam", lr_end=lr_end, eval_every=0,
                      clip_grad_norm=clip_grad_norm, seed=seed, progress=progress, device=device,
                      deterministic=deterministic, backend=backend)
    device = cfg.device
    x_np, u_np = _as_arrays(data)
    if observation == "poisson":
        obs.check_counts(x_np)
    n_trials, n_t, n_ch = x_np.shape
    if n_t < seq_len + 1:
        raise ValueError(f"trials have {n_t} time points but seq_len + 1 = {seq_len + 1} are needed; "
                         "lower seq_len")
    n_in = 0 if u_np is None else u_np.shape[-1]
    if model.n_inputs != n_in:
        raise ValueError(f"the model has {model.n_inputs} inputs but the data have {n_in}")
    itemsize = next(model.parameters()).element_size()
    _engine.check_rollout_memory(  # the windows' indices, observations and targets, then the rollout
        "fit_teacher_forcing", model, batch_size, seq_len, copies=_engine.TRAIN_COPIES, device=cfg.device,
        extra=float(batch_size) * (seq_len + 1) * (8 + (2 * n_ch + n_in) * itemsize),
        fix="lower batch_size or seq_len")
    model, gen = _engine.start(model, cfg)
    frozen = obs.prepare_observation(model, observation, n_ch)
    dtype = next(model.parameters()).dtype
    ran = fused_backend(model.params(), backend=cfg.backend, device=device, dtype=dtype, forcing=True)
    x = torch.as_tensor(x_np, dtype=dtype, device=device)
    targets = torch.as_tensor(obs.forcing_targets(x_np, observation, poisson_smoothing), dtype=dtype,
                              device=device)
    u = None if u_np is None else torch.as_tensor(u_np, dtype=dtype, device=device)
    mask = obs.forcing_mask(model, observation, n_ch)
    readout_names = set(obs.readout_parameter_names(model))
    named = dict(model.named_parameters())
    for n in frozen:
        named[n].requires_grad_(False)
    trainable = [p for n, p in named.items() if n not in frozen]
    latent_params = [p for n, p in named.items() if n not in readout_names and n != "h0"]
    readout_params = [p for n, p in named.items() if n in readout_names and n not in frozen]
    rng = numpy_rng(cfg.seed, 0)
    gen_state = torch_generator(cfg.seed, 2, device=device)
    a_cur = [float(alpha)]
    sparse_alphas = [1.0 if (t + 1) % tau == 0 else 0.0 for t in range(seq_len)]

    def windows(step):
        tr = rng.integers(0, n_trials, batch_size)
        st = rng.integers(0, n_t - seq_len, batch_size)
        idx = st[:, None] + np.arange(seq_len + 1)
        xb, yb = x[tr[:, None], idx], targets[tr[:, None], idx]
        ub = None if u is None else u[tr[:, None], idx][:, 1:]
        if noise_level > 0:
            xb = xb + noise_level * torch.randn(xb.shape, generator=gen, dtype=dtype, device=device)
            yb = xb if observation != "poisson" else yb
        return {"step": step, "x": xb, "y": yb, "u": ub}

    def objective(batch):
        xb, yb, ub = batch["x"], batch["y"], batch["u"]
        B, b = obs.affine_readout(model)
        zhat = obs.invert(B.detach(), b.detach(), yb)
        if method == "gtf" and adaptive_alpha and batch["step"] % alpha_update_every == 0:
            a_est = _alpha_product_bound(model, zhat[:, 1:], ub)
            a_cur[0] = a_est if a_est > a_cur[0] else alpha_decay * a_cur[0] + (1 - alpha_decay) * a_est
        alphas = [a_cur[0]] * seq_len if method == "gtf" else sparse_alphas
        z0 = obs.invert(B, b, yb[:, 0])
        eps = None
        if process_noise > 0:
            shape = (batch_size, seq_len, model.state_size)
            eps = process_noise * torch.randn(shape, generator=gen_state, dtype=dtype, device=device)
        preds = forced_rollout(model, z0, zhat[:, 1:], alphas, mask, ub, eps, backend=ran)
        loss = obs.observation_loss(obs.observe(model, preds, observation), xb[:, 1:], observation)
        total = loss
        if lambda_latent > 0:
            total = total + lambda_latent * sum((p ** 2).sum() for p in latent_params)
        if lambda_obs > 0 and readout_params:
            total = total + lambda_obs * sum((p ** 2).sum() for p in readout_params)
        return total, {"loss": loss.detach()}

    def on_epoch(epoch, lr_now, seconds):
        model.eval()
        logs = {"alpha": a_cur[0] if method == "gtf" else 1.0 / tau, "lr": lr_now, "seconds": seconds}
        if callback is not None:
            logs.update({k: float(v) for k, v in callback(epoch, model).items()})
        model.train()
        return logs

    hist, rec = _engine.run(trainable, objective, windows, cfg, on_epoch=on_epoch,
                      log_keys=("loss", "alpha", "lr", "seconds"),
                      desc=f"fit {type(model).__name__} ({method})", compiled=ran == "numba")
    for n in frozen:
        named[n].requires_grad_(True)
    return one_network_result(model, hist, rec, {"backend": ran, **settings}, kind=FitResult)
