"""Distribution matching of whole emitted sequences: HMM emulation by noise-driven RNNs
(Torre, Viscione, Pompe, Grewe & Mante 2025, NeurIPS, arXiv:2510.25674).

The network receives only Gaussian noise, emits one symbol per step through a hard
Gumbel-softmax readout with straight-through gradients (Jang, Gu & Poole 2017, ICLR), and is
trained so that the batch of emitted one-hot sequences matches a batch of HMM sequences under a
debiased Sinkhorn divergence (Genevay, Peyré & Cuturi 2018, AISTATS; Feydy et al. 2019,
AISTATS) or a Gaussian-kernel MMD (Gretton et al. 2012, JMLR).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from neurodyn._budget import check_memory
from neurodyn._checks import check_setting
from neurodyn._seed import SeedLike, resolve_seed, torch_generator
from neurodyn.models._base import RecurrentModel, eval_mode
from neurodyn.tasks._base import Task
from neurodyn.training import _engine
from neurodyn.training._config import TrainConfig
from neurodyn.training._results import TrainResult, one_network_result
from neurodyn.training.train import check_sizes

__all__ = ["sample_emissions", "train_distribution"]


def gumbel_softmax_hard(
    logits: torch.Tensor, *, tau: float = 1.0, generator: torch.Generator | None = None
) -> torch.Tensor:
    """One-hot samples from ``softmax(logits)`` with straight-through gradients.

    The forward value is ``one_hot(argmax(logits + g))`` with ``g`` standard Gumbel noise (an
    exact categorical sample); the gradient is that of ``softmax((logits + g) / tau)``.
    ``logits`` (..., class) → (..., class), same dtype and device. ``generator=None`` draws from a
    generator seeded with fresh OS entropy (never from torch's global generator).
    """
    if generator is None:
        generator = torch_generator(None, device=logits.device)
    u = torch.rand(logits.shape, generator=generator, device=logits.device, dtype=logits.dtype)
    g = -torch.log(-torch.log(u.clamp(1e-20, 1.0 - 1e-7)))
    soft = torch.softmax((logits + g) / tau, dim=-1)
    hard = torch.nn.functional.one_hot(soft.argmax(-1), logits.shape[-1]).to(soft.dtype)
    return hard - soft.detach() + soft


def _entropic_ot(x: torch.Tensor, y: torch.Tensor, epsilon: float, n_iter: int) -> torch.Tensor:
    """Entropic OT cost between uniform empirical measures (log-domain Sinkhorn, dual value).

    The Sinkhorn iterations run without autograd; one last differentiable update of ``f`` with
    the converged ``g`` held fixed gives the gradient of the entropic OT cost, the transport
    plan (envelope theorem, as in Feydy et al. 2019), so the backward pass costs one iteration.
    """
    sq = (x * x).sum(1)[:, None] + (y * y).sum(1)[None, :] - 2 * x @ y.T
    cost = sq.clamp_min(0.0) / 2
    log_a = torch.full((x.shape[0],), -math.log(x.shape[0]), dtype=x.dtype, device=x.device)
    log_b = torch.full((y.shape[0],), -math.log(y.shape[0]), dtype=x.dtype, device=x.device)

    def f_update(g, c):
        return -epsilon * torch.logsumexp(log_b[None, :] + (g[None, :] - c) / epsilon, dim=1)

    def g_update(f, c):
        return -epsilon * torch.logsumexp(log_a[:, None] + (f[:, None] - c) / epsilon, dim=0)

    with torch.no_grad():
        c0 = cost.detach()
        f, g = torch.zeros_like(log_a), torch.zeros_like(log_b)
        for _ in range(n_iter):
            f = f_update(g, c0)
            g = g_update(f, c0)
    f = f_update(g, cost)  # d/dcost of <a, f> is the transport plan; g stays fixed
    return (f * log_a.exp()).sum() + (g * log_b.exp()).sum()


def sinkhorn_divergence(
    x: torch.Tensor, y: torch.Tensor, *, epsilon: float = 0.1, n_iter: int = 50
) -> torch.Tensor:
    """Debiased Sinkhorn divergence ``OT_e(x, y) - (OT_e(x, x) + OT_e(y, y)) / 2``.

    Parameters
    ----------
    x, y : Tensor, shape (sample, feature)
        Two point clouds with uniform weights (e.g. flattened one-hot sequences).
    epsilon : float
        Entropic regularisation, in units of the cost ``|x - y|^2 / 2``.
    n_iter : int
        Log-domain Sinkhorn iterations (the gradient uses the converged potentials).

    Returns
    -------
    Tensor, scalar
        Non-negative up to the solver's accuracy; 0 when ``x`` and ``y`` coincide.

    Raises
    ------
    ValueError
        If ``x`` and ``y`` are not 2-D with the same number of features.
    """
    _check_clouds(x, y)
    return (_entropic_ot(x, y, epsilon, n_iter)
            - 0.5 * _entropic_ot(x, x, epsilon, n_iter) - 0.5 * _entropic_ot(y, y, epsilon, n_iter))


def mmd(x: torch.Tensor, y: torch.Tensor, *, bandwidths: tuple[float, ...] = (1.0, 2.0, 4.0)) -> torch.Tensor:
    """Biased squared maximum mean discrepancy with a sum of Gaussian kernels.

    ``k(a, b) = sum_s exp(-|a - b|^2 / (2 s^2))`` over ``bandwidths`` ``s``; ``x`` (sample,
    feature), ``y`` (sample, feature) → scalar.
    """
    _check_clouds(x, y)

    def k(a, b):
        d2 = torch.cdist(a, b) ** 2
        return sum(torch.exp(-d2 / (2 * s**2)) for s in bandwidths)

    return k(x, x).mean() + k(y, y).mean() - 2 * k(x, y).mean()


DIVERGENCES = {"sinkhorn": sinkhorn_divergence, "mmd": mmd}
#: (trial x trial) matrices a divergence and its gradient hold at once (costs, kernels, log-sum-exps)
_PAIRWISE_COPIES = 6


def _check_clouds(x: torch.Tensor, y: torch.Tensor) -> None:
    if x.ndim != 2 or y.ndim != 2 or x.shape[1] != y.shape[1]:
        raise ValueError(f"x and y must be (sample, feature) alike, got {tuple(x.shape)}, {tuple(y.shape)}")


def emit(model: RecurrentModel, inputs: torch.Tensor, *, tau: float = 1.0,
         generator: torch.Generator | None = None) -> torch.Tensor:
    """One-hot emissions (trial, time, symbol) of ``model`` driven by ``inputs`` (noise-free
    recurrence; the stochasticity is the input noise and the Gumbel sampling)."""
    logits = model(inputs, noise=False).outputs
    return gumbel_softmax_hard(logits, tau=tau, generator=generator)


@torch.no_grad()
def sample_emissions(model: RecurrentModel, task: Task, n_trials: int = 512, *,
                     seed: SeedLike = 0, device: Any = "cpu") -> tuple[np.ndarray, Any]:
    """Emit symbols for a fresh batch of ``task``; returns ``(one_hot (trial, time, symbol),
    batch)`` so that ``task.evaluate(one_hot, batch)`` compares them with the HMM samples.

    Examples
    --------
    >>> from neurodyn.models import LeakyRNN
    >>> from neurodyn.tasks import HMMEmulation
    >>> from neurodyn.training.distribution import sample_emissions
    >>> task = HMMEmulation(n_states=2, n_steps=12, n_noise=4)
    >>> one_hot, batch = sample_emissions(LeakyRNN(4, 8, 3, seed=0), task, n_trials=16, seed=0)
    >>> one_hot.shape, bool((one_hot.sum(axis=-1) == 1).all())  # (trial, time, symbol), one symbol per step
    ((16, 12, 3), True)
    >>> "accuracy" in task.evaluate(one_hot, batch)  # compared with the HMM's own sequences
    True
    """
    check_sizes(model, task)
    seed = resolve_seed(seed)
    batch = task.sample(n_trials, seed=seed)
    x, _, _ = batch.to_torch(device, next(model.parameters()).dtype)
    with eval_mode(model):
        out = emit(model, x, generator=torch_generator(seed, 2, device=device))
    return out.cpu().numpy(), batch


def train_distribution(
    model: RecurrentModel,
    task: Task,
    *,
    n_iterations: int = 500,
    batch_size: int = 256,
    lr: float = 3e-3,
    divergence: str = "sinkhorn",
    epsilon: float = 0.02,
    n_sinkhorn_iter: int = 30,
    tau: float = 1.0,
    clip_grad_norm: float | None = 1.0,
    seed: SeedLike = 0,
    eval_every: int = 100,
    callback: Callable[[int, RecurrentModel], dict[str, float]] | None = None,
    progress: bool = True,
    device: Any = "cpu",
) -> TrainResult:
    """Train a noise-driven ``model`` to emit sequences distributed like ``task``'s targets.

    Each step draws ``batch_size`` target sequences and noise inputs from the task's seeded
    trial stream, rolls the model out on the noise, samples one-hot emissions with
    :func:`gumbel_softmax_hard`, flattens both batches to (trial, time * symbol), and minimises
    the divergence between them with Adam (Torre et al. 2025).

    Parameters
    ----------
    model : RecurrentModel
        ``n_inputs == task.n_inputs`` noise channels, ``n_outputs == task.n_outputs`` symbol
        logits. Copied; the argument is not modified.
    task : Task
        Typically :class:`neurodyn.tasks.HMMEmulation`; targets are one-hot sequences.
    n_iterations, batch_size, lr, clip_grad_norm, seed, eval_every, progress, device
        As in :func:`neurodyn.training.train`; ``seed`` also seeds the Gumbel noise, and
        ``task.evaluate`` scores held-out emissions every ``eval_every`` iterations.
    divergence : {"sinkhorn", "mmd"}
    epsilon : float
        Sinkhorn regularisation in units of the per-step cost (the cost between two flattened
        sequences is divided by the number of steps, so two sequences that differ at ``k`` of
        ``T`` steps cost ``k / T``). Keep it below ``1 / n_steps``: a larger blur cannot tell
        persistent sequences from shuffled ones with the same symbol frequencies, and a vanilla
        network (``alpha = 1``), which has no built-in persistence, then learns the frequencies
        but not the dwell times (0.02 by default; at ``epsilon = 0.1`` dwell errors stayed near
        0.65 whatever the gain or learning rate, see docs/hmm_emulation.md).
    n_sinkhorn_iter : int
        Sinkhorn iterations per evaluation.
    tau : float
        Gumbel-softmax temperature of the straight-through gradient.
    callback : callable ``(iteration, model) -> dict``, optional
        Called after each iteration with the model in eval mode, as in
        :func:`~neurodyn.training.fit_teacher_forcing`; the numbers it returns go into ``history``
        (a key's list then holds one value per call that returned it). It must not draw from torch's
        global generator if the fit is to stay the same as without it: the training noise has its own.

    Returns
    -------
    TrainResult
        ``history`` has ``iteration``, ``loss`` and ``eval_<metric>`` lists; ``status ==
        "diverged"`` (with a ``RuntimeWarning``) if the loss or a parameter became NaN/Inf, with
        ``model`` at its last finite weights.

    Raises
    ------
    ValueError
        On size mismatch, unknown ``divergence``, settings out of range (``epsilon``, ``tau`` and
        ``n_sinkhorn_iter`` must be positive; see also :class:`~neurodyn.training.TrainConfig`), or a
        ``batch_size`` whose (trial, trial) pairwise costs or rollouts exceed the memory available.

    Examples
    --------
    >>> from neurodyn.models import LeakyRNN
    >>> from neurodyn.tasks import HMMEmulation
    >>> from neurodyn.training.distribution import train_distribution
    >>> task = HMMEmulation(n_states=2, n_steps=8, n_noise=4)
    >>> result = train_distribution(LeakyRNN(4, 8, 3, seed=0), task, n_iterations=3, batch_size=16,
    ...                             divergence="mmd", eval_every=0, progress=False)
    >>> result.status, len(result.history["loss"])
    ('completed', 3)
    """
    check_sizes(model, task)
    if divergence not in DIVERGENCES:
        raise ValueError(f"unknown divergence {divergence!r}; choose one of {', '.join(DIVERGENCES)}")
    check_setting("epsilon", epsilon, 0.0, strict=True)
    check_setting("tau", tau, 0.0, strict=True)
    check_setting("n_sinkhorn_iter", n_sinkhorn_iter, 1, integer=True)
    cfg = TrainConfig(n_epochs=n_iterations, batch_size=batch_size, lr=lr, clip_grad_norm=clip_grad_norm,
                      seed=seed, eval_every=eval_every, progress=progress, device=device)
    model, gen = _engine.start(model, cfg)
    dtype = next(model.parameters()).dtype
    itemsize = torch.finfo(dtype).bits // 8
    check_memory(f"train_distribution ({divergence})", float(batch_size) ** 2 * itemsize * _PAIRWISE_COPIES,
                 f"{batch_size} x {batch_size} pairwise costs x {itemsize} bytes x {_PAIRWISE_COPIES} copies",
                 "lower batch_size", device=cfg.device)
    n_steps = task.sample(1, seed=cfg.seed).inputs.shape[1]
    _engine.check_training_memory("train_distribution", model, n_steps, batch_size, max(batch_size, 256),
                                  device=cfg.device, fix="lower batch_size or the task's n_steps")

    def batches(it):
        batch = task.sample(batch_size, seed=cfg.seed, first_trial=it * batch_size)
        return batch.to_torch(cfg.device, dtype)[:2]

    def objective(batch):
        x, y = batch
        scale = 1.0 / math.sqrt(y.shape[1])  # cost per step
        fake = emit(model, x, tau=tau, generator=gen).reshape(batch_size, -1) * scale
        real = y.reshape(batch_size, -1) * scale
        if divergence == "sinkhorn":
            value = sinkhorn_divergence(fake, real, epsilon=epsilon, n_iter=int(n_sinkhorn_iter))
        else:
            value = mmd(fake, real)
        return value, {"loss": value}

    def held_out(it):
        emitted, batch = sample_emissions(model, task, max(batch_size, 256), seed=cfg.seed + 1,
                                          device=cfg.device)
        model.train()
        return task.evaluate(emitted, batch)

    def on_epoch(it, lr_now, seconds):
        with eval_mode(model):
            return {k: float(v) for k, v in callback(it, model).items()}

    hist, rec = _engine.run(list(model.parameters()), objective, batches, cfg, evaluate=held_out,
                            on_epoch=None if callback is None else on_epoch, desc=f"fit {task.name}")
    settings = {"loss": divergence, "epsilon": epsilon, "n_sinkhorn_iter": n_sinkhorn_iter, "tau": tau}
    return one_network_result(model, hist, rec, settings)
