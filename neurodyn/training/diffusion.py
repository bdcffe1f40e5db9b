"""Fitting a whole response distribution with a diffusion objective: the network's response-period
dynamics run the reverse diffusion that turns noise into a ring-coded report, as proposed by Radmard,
Bays & Lengyel ("Setting up for failure", arXiv:2512.04808) for swap errors in working memory.

Denoising diffusion (Ho, Jain & Abbeel 2020, NeurIPS; Sohl-Dickstein et al. 2015, ICML) with the
cosine schedule of Nichol & Dhariwal (2021, ICML), trained by denoising score matching (Vincent 2011,
Neural Comput.): the least-squares estimate ``x̂_0`` of the clean sample from
``x_k = sqrt(ᾱ_k) x_0 + sqrt(1 - ᾱ_k) ε`` gives the score of the noised data,
``(sqrt(ᾱ_k) x̂_0 - x_k) / (1 - ᾱ_k)`` (Tweedie's formula); the network predicts ``x̂_0`` (the clean
ring code, so its output ring shows the report it is converging on) rather than ``ε``, which would
ask a tanh network for a gain ``1 / sqrt(1 - ᾱ_k)`` on its input at the last, least noisy steps.

The ``K`` steps of the task's response period are the ``K`` noise levels, noisiest first. The network
gets the task's inputs plus ``N`` sample channels (``N = task.output_ring``), silent before the
response; at response step ``j`` they show ``x_{K-j}`` and the ``N`` outputs estimate ``x_0``. In
training the ``x_k`` are one forward-chain trajectory of the report's ring code ``x_0``, so that the
higher-noise samples seen earlier tell nothing about ``x_0`` beyond ``x_k`` (the chain is Markov);
in sampling (:func:`sample_diffusion`) each estimate makes the next sample by the DDPM update, fed
back as the next input, and the last one is decoded by the population vector.

This is the third distribution-matching objective beside the Sinkhorn and MMD ones of
:mod:`neurodyn.training.distribution`, on the same training engine.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from neurodyn._checks import check_setting
from neurodyn._seed import SeedLike, numpy_rng, resolve_seed, torch_generator
from neurodyn.models._base import RecurrentModel, eval_mode
from neurodyn.tasks._base import Task, TaskBatch
from neurodyn.tasks._timeline import decode_ring, ring_code
from neurodyn.tasks.swap_model import MixtureFit, fit_mixture_model, sample_mixture_responses
from neurodyn.training import _engine
from neurodyn.training._config import TrainConfig
from neurodyn.training._results import TrainResult, one_network_result

__all__ = ["noise_schedule", "denoising_loss", "sample_diffusion", "train_diffusion"]


def noise_schedule(n_levels: int, *, offset: float = 0.008, max_beta: float = 0.999) -> np.ndarray:
    """Per-level noise variances ``β_k`` (k = 1..K) of the cosine schedule (Nichol & Dhariwal 2021).

    ``ᾱ_k = f(k) / f(0)`` with ``f(k) = cos²(π/2 · (k/K + s) / (1 + s))``, ``β_k = 1 - ᾱ_k / ᾱ_{k-1}``
    clipped at ``max_beta``; ``ᾱ_k = Π_{i ≤ k} (1 - β_i)``.

    Parameters
    ----------
    n_levels : int
        ``K >= 1`` noise levels (here: response steps).
    offset : float
        The schedule's ``s``, which keeps ``β_1`` away from 0.
    max_beta : float
        Upper clip of ``β_k`` in (0, 1] (``β_K`` of the unclipped schedule is 1).

    Returns
    -------
    ndarray, shape (level,), float64
        ``β_1 .. β_K``, increasing, in (0, max_beta].

    Raises
    ------
    ValueError
        If ``n_levels < 1``, ``offset < 0`` or ``max_beta`` is outside (0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.training.diffusion import noise_schedule
    >>> beta = noise_schedule(4)
    >>> np.round(beta, 3)
    array([0.153, 0.417, 0.708, 0.999])
    >>> round(float(np.prod(1 - beta)), 4)  # ᾱ_K: x_K is (almost) pure noise
    0.0001
    """
    if int(n_levels) != n_levels or n_levels < 1:
        raise ValueError(f"n_levels must be an integer >= 1, got {n_levels}")
    if not (offset >= 0 and 0 < max_beta <= 1):
        raise ValueError(f"need offset >= 0 and 0 < max_beta <= 1, got {offset}, {max_beta}")
    k = np.arange(int(n_levels) + 1) / n_levels
    f = np.cos(0.5 * np.pi * (k + offset) / (1 + offset)) ** 2
    return np.minimum(1 - f[1:] / f[:-1], max_beta)


def forward_chain(x0: torch.Tensor, beta: torch.Tensor, generator: torch.Generator | None
                  ) -> tuple[torch.Tensor, torch.Tensor]:
    """One forward-diffusion trajectory per sample: ``x_k = sqrt(1 - β_k) x_{k-1} + sqrt(β_k) z_k``.

    ``x0`` (batch, unit), ``beta`` (level,) → ``(x, eps)``, both (batch, level, unit), level ``k - 1``
    holding ``x_k`` and ``ε_k = (x_k - sqrt(ᾱ_k) x_0) / sqrt(1 - ᾱ_k)`` (standard normal per level).
    """
    z = torch.randn((x0.shape[0], beta.shape[0], x0.shape[1]), generator=generator, dtype=x0.dtype,
                    device=x0.device)
    xs, x = [], x0
    for k in range(beta.shape[0]):
        x = torch.sqrt(1 - beta[k]) * x + torch.sqrt(beta[k]) * z[:, k]
        xs.append(x)
    x = torch.stack(xs, 1)
    abar = torch.cumprod(1 - beta, 0)[None, :, None]
    return x, (x - abar.sqrt() * x0[:, None]) / (1 - abar).sqrt()


def posterior_mean(x: torch.Tensor, x0: torch.Tensor, k: torch.Tensor, beta: torch.Tensor) -> torch.Tensor:
    """Mean of ``x_{k-1}`` given ``x_k`` and ``x_0`` (Ho et al. 2020, eq. 7), the DDPM step's mean.

    ``(sqrt(ᾱ_{k-1}) β_k x_0 + sqrt(1 - β_k) (1 - ᾱ_{k-1}) x_k) / (1 - ᾱ_k)``; ``x``, ``x0`` (batch, unit),
    ``k`` (batch,) level indices (0 for ``x_1``, where it returns ``x_0``), ``beta`` (level,).
    """
    abar = torch.cumprod(1 - beta, 0)
    prev = torch.cat([abar.new_ones(1), abar[:-1]])[k][:, None]
    b, a = beta[k][:, None], abar[k][:, None]
    return (prev.sqrt() * b * x0 + (1 - b).sqrt() * (1 - prev) * x) / (1 - a)


def denoising_loss(predicted: torch.Tensor, clean: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Denoising score-matching loss: mean of ``(x̂_0 - x_0)²`` over the masked steps and the units.

    ``predicted``, ``clean`` (trial, time, unit); ``mask`` (trial, time, 1) of 0/1 → scalar. Zero only
    for the exact clean sample; the mean of ``x_0²`` for a network that predicts 0.

    Examples
    --------
    >>> import torch
    >>> from neurodyn.training.diffusion import denoising_loss
    >>> x0 = torch.tensor([[[1.0, -1.0], [3.0, 3.0]]])  # one trial, two steps, two units
    >>> float(denoising_loss(torch.zeros(1, 2, 2), x0, torch.tensor([[[1.0], [0.0]]])))
    1.0
    """
    sq = ((predicted - clean) ** 2 * mask).sum()
    return sq / (mask.sum() * predicted.shape[-1]).clamp_min(1)


# -- the task side -----------------------------------------------------------------------------------
def _check(model: RecurrentModel, task: Task) -> int:
    n = int(getattr(task, "output_ring", 0) or 0)
    if n < 3 or not hasattr(task, "items"):
        raise ValueError(f"task {task.name!r} has no ring-coded report; use e.g. "
                         "ContinuousReport(output_ring=12)")
    if model.n_inputs != task.n_inputs + n or model.n_outputs != n:
        raise ValueError(f"model has {model.n_inputs} inputs / {model.n_outputs} outputs but diffusion "
                         f"on {task.name!r} needs {task.n_inputs} task inputs + {n} sample channels / "
                         f"{n} outputs")
    dtype = next(model.parameters()).dtype
    if dtype != torch.float32:
        raise ValueError(f"diffusion runs in float32 (the task's inputs and the noise are) but the model is "
                         f"{dtype}; convert it with model.float()")
    return n


def _response_steps(batch: TaskBatch) -> tuple[np.ndarray, int]:
    start, end = batch.periods["response"][:, 0], batch.periods["response"][:, 1]
    return start, int((end - start).min())


def _reports(task: Task, batch: TaskBatch, behaviour: Any, rng: np.random.Generator) -> np.ndarray:
    """Reports (trial,) to fit: the cued angle, or surrogate behaviour drawn from ``behaviour``."""
    targets, non_targets = task.items(batch)
    if behaviour is None:
        return targets
    return sample_mixture_responses(behaviour, targets, non_targets, seed=rng)


def standard_code(angles: np.ndarray, n_units: int, kappa: float) -> np.ndarray:
    """The ring code of ``angles`` (trial,) on ``n_units`` units, shifted and scaled to mean 0 and variance 1
    over units and angles (the noise's scale); the population vector decodes it as the raw code."""
    grid = ring_code(2 * np.pi * np.arange(64) / 64, n_units, kappa)
    return (ring_code(angles, n_units, kappa) - grid.mean()) / grid.std()


def _training_batch(task: Task, batch: TaskBatch, reports: np.ndarray, beta: torch.Tensor,
                    generator: torch.Generator, device: Any):
    """Inputs (task + sample channels), clean-code targets and the response mask of one batch."""
    n = task.output_ring
    start, k_levels = _response_steps(batch)
    x0 = torch.as_tensor(standard_code(reports, n, task.kappa), dtype=torch.float32, device=device)
    x, _ = forward_chain(x0, beta, generator)
    inputs = torch.as_tensor(batch.inputs, device=device)
    n_trials, n_steps = inputs.shape[:2]
    rows = torch.arange(n_trials, device=device)[:, None]
    cols = torch.as_tensor(start, device=device)[:, None] + torch.arange(k_levels, device=device)[None]
    samples = torch.zeros(n_trials, n_steps, n, device=device)
    clean = torch.zeros_like(samples)
    mask = torch.zeros(n_trials, n_steps, 1, device=device)
    samples[rows, cols], clean[rows, cols], mask[rows, cols] = x.flip(1), x0[:, None], 1.0
    return torch.cat([inputs, samples], -1), clean, mask


@torch.no_grad()
def sample_diffusion(model: RecurrentModel, task: Task, n_trials: int = 256, *, seed: SeedLike = 0,
                     device: Any = "cpu") -> tuple[np.ndarray, np.ndarray, TaskBatch]:
    """Reports sampled by the network's reverse diffusion on a fresh batch of ``task``.

    The sample channels start from ``x_K ~ N(0, I)`` at the first response step; after each step the
    network's estimate ``x̂_0`` gives the next sample, drawn from the posterior of ``x_{k-1}`` given
    ``x_k`` and ``x̂_0`` (Ho et al. 2020, eqs. 6–7: mean :func:`posterior_mean`, variance ``β̃_k``),
    shown at the next step; the sample after the last response step is decoded by the population
    vector. The recurrent state noise is off: the stochasticity is the diffusion's. The model must
    be float32 (the task's inputs are); its train/eval mode is restored on return.

    Parameters
    ----------
    model : RecurrentModel
        Trained by :func:`train_diffusion` (``task.n_inputs + N`` inputs, ``N`` outputs).
    task : Task
        With a ring-coded report (``output_ring = N >= 3``) and a ``"response"`` period.
    n_trials : int
    seed : int, numpy or torch Generator, or None
        Seeds the trials and the diffusion noise: same seed ⇒ same reports.
    device : str or torch.device

    Returns
    -------
    reports : ndarray, shape (trial,), float64
        Radians in ``[-π, π]``.
    states : ndarray, shape (trial, time, state), float32
        The network's states (for decoding the items over the delay).
    batch : TaskBatch
        The trials (``trial_params`` hold ``angles``, ``cue``, ``target_angle``).

    Raises
    ------
    ValueError
        If the task has no ring-coded report, the model's sizes do not fit it or the model is not
        float32.

    Examples
    --------
    >>> from neurodyn.models import LeakyRNN
    >>> from neurodyn.tasks import ContinuousReport
    >>> from neurodyn.training.diffusion import sample_diffusion
    >>> task = ContinuousReport(n_items=2, n_ring=6, output_ring=8, delay_min_ms=100.0, delay_max_ms=100.0)
    >>> model = LeakyRNN(task.n_inputs + 8, 16, 8, seed=0)
    >>> reports, states, batch = sample_diffusion(model, task, 5, seed=0)
    >>> reports.shape, states.shape  # (trial,), (trial, time, unit)
    ((5,), (5, 45, 16))
    >>> bool((reports == sample_diffusion(model, task, 5, seed=0)[0]).all())
    True
    """
    n = _check(model, task)
    seed = resolve_seed(seed)
    batch = task.sample(n_trials, seed=seed)
    start, k_levels = _response_steps(batch)
    beta = torch.as_tensor(noise_schedule(k_levels), dtype=torch.float32, device=device)
    abar = torch.cumprod(1 - beta, 0)
    abar_prev = torch.cat([abar.new_ones(1), abar[:-1]])
    sd = ((1 - abar_prev) / (1 - abar) * beta).sqrt()  # posterior standard deviation; 0 at k = 1
    gen = torch_generator(seed, 4, device=device)
    inputs = torch.as_tensor(batch.inputs, device=device)
    start_t = torch.as_tensor(start, device=device)
    x = torch.randn(n_trials, n, generator=gen, device=device)
    with eval_mode(model):
        h, states = model.initial_state(n_trials), []
        for t in range(inputs.shape[1]):
            j = t - start_t
            active = ((j >= 0) & (j < k_levels))[:, None]
            h = model.step(h, torch.cat([inputs[:, t], x * active], -1))
            states.append(h)
            k = (k_levels - 1 - j).clamp(0, k_levels - 1)  # level index of the sample just shown
            z = torch.randn(x.shape, generator=gen, device=device)
            x = torch.where(active, posterior_mean(x, model.readout(h), k, beta) + sd[k][:, None] * z, x)
    reports = decode_ring(x.double().cpu().numpy())
    return reports, torch.stack(states, 1).cpu().numpy(), batch


def train_diffusion(
    model: RecurrentModel,
    task: Task,
    *,
    behaviour: MixtureFit | Mapping[str, float] | None = None,
    n_iterations: int = 500,
    batch_size: int = 64,
    lr: float = 3e-3,
    clip_grad_norm: float | None = 1.0,
    seed: SeedLike = 0,
    eval_every: int = 100,
    n_eval_trials: int = 256,
    progress: bool = True,
    device: Any = "cpu",
) -> TrainResult:
    """Train ``model``'s response-period dynamics to sample reports distributed like ``behaviour``'s.

    Each step draws ``batch_size`` trials from the task's seeded stream, a report per trial (the cued
    angle, or a surrogate one drawn by :func:`~neurodyn.tasks.sample_mixture_responses` from
    ``behaviour`` given the trial's items), codes it on the task's output ring, noises it along one
    forward-diffusion trajectory over the response steps and minimises :func:`denoising_loss` of the
    network's estimates of the clean code (denoising score matching; Radmard, Bays & Lengyel,
    arXiv:2512.04808), with Adam on the training engine.

    Parameters
    ----------
    model : RecurrentModel
        ``task.n_inputs + N`` inputs (the task's, then ``N`` sample channels) and ``N`` outputs, with
        ``N = task.output_ring``. Copied; the argument is not modified.
    task : Task
        With a ring-coded report and a ``"response"`` period of ``K`` steps (the noise levels), e.g.
        ``ContinuousReport(n_items=2, output_ring=12)``.
    behaviour : MixtureFit or mapping, optional
        Swap-model parameters (``kappa``, ``p_target``, ``p_swap``, ``p_guess``) of the behaviour to
        reproduce; None fits the error-free reports (the cued angle).
    n_iterations, batch_size, lr, clip_grad_norm, seed, progress, device
        As in :func:`neurodyn.training.train`; ``seed`` also seeds the surrogate reports and the
        diffusion noise: same seed ⇒ same trained model.
    eval_every, n_eval_trials
        Every ``eval_every`` iterations (0: never) the network samples ``n_eval_trials`` reports
        (:func:`sample_diffusion`, held-out trials) and the swap model fitted to them is logged as
        ``eval_kappa``, ``eval_p_target``, ``eval_p_swap``, ``eval_p_guess``.

    Returns
    -------
    TrainResult
        ``history`` has ``iteration``, ``loss`` and the ``eval_*`` lists; ``config`` records
        ``loss = "diffusion"``, ``n_levels`` and ``behaviour``.

    Raises
    ------
    ValueError
        If the task has no ring-coded report, the model's sizes do not fit or it is not float32,
        ``behaviour`` is invalid (see :func:`~neurodyn.tasks.sample_mixture_responses`), or evaluations
        are asked for with fewer ``n_eval_trials`` than the swap model's fit needs (4 with two items,
        3 with one), or the rollouts of ``batch_size`` or ``n_eval_trials`` trials exceed the memory
        available.

    Examples
    --------
    >>> from neurodyn.models import LeakyRNN
    >>> from neurodyn.tasks import ContinuousReport
    >>> from neurodyn.training.diffusion import train_diffusion
    >>> task = ContinuousReport(n_items=2, n_ring=6, output_ring=8, delay_min_ms=100.0, delay_max_ms=100.0)
    >>> swaps = {"kappa": 8.0, "p_target": 0.7, "p_swap": 0.2, "p_guess": 0.1}
    >>> result = train_diffusion(LeakyRNN(task.n_inputs + 8, 16, 8, seed=0), task, behaviour=swaps,
    ...                          n_iterations=3, batch_size=8, eval_every=0, progress=False)
    >>> result.status, len(result.history["loss"]), result.config["n_levels"]  # 300 ms response / 20 ms
    ('completed', 3, 15)
    """
    _check(model, task)
    if behaviour is not None:  # validated once, up front, with the generator's one-line errors
        sample_mixture_responses(behaviour, np.zeros(1), np.zeros(1))
    cfg = TrainConfig(n_epochs=n_iterations, batch_size=batch_size, lr=lr, clip_grad_norm=clip_grad_norm,
                      seed=seed, eval_every=eval_every, progress=progress, device=device)
    if cfg.eval_every:  # the swap model's fit needs one trial more than its free parameters
        need = 4 if getattr(task, "n_items", 2) > 1 else 3
        check_setting("n_eval_trials", n_eval_trials, need, integer=True,
                      hint=f" (the swap model fitted at each evaluation needs at least {need} reports)")
    model, gen = _engine.start(model, cfg)
    probe = task.sample(1, seed=cfg.seed)
    k_levels = _response_steps(probe)[1]
    _engine.check_training_memory("train_diffusion", model, probe.inputs.shape[1], batch_size,
                                  n_eval_trials if cfg.eval_every else 0, device=cfg.device,
                                  fix="lower batch_size or n_eval_trials",
                                  eval_what="train_diffusion's evaluations")
    beta = torch.as_tensor(noise_schedule(k_levels), dtype=torch.float32, device=cfg.device)

    def batches(it):
        batch = task.sample(batch_size, seed=cfg.seed, first_trial=it * batch_size)
        reports = _reports(task, batch, behaviour, numpy_rng(cfg.seed, 3, it))
        return _training_batch(task, batch, reports, beta, gen, cfg.device)

    def objective(batch):
        inputs, clean, mask = batch
        value = denoising_loss(model(inputs, generator=gen).outputs, clean, mask)  # seeded state noise
        return value, {"loss": value}

    def held_out(it):
        reports, _, batch = sample_diffusion(model, task, n_eval_trials, seed=cfg.seed + 1, device=cfg.device)
        fit = fit_mixture_model(reports, *task.items(batch))
        return {k: getattr(fit, k) for k in ("kappa", "p_target", "p_swap", "p_guess")}

    hist, rec = _engine.run(list(model.parameters()), objective, batches, cfg, evaluate=held_out,
                            desc=f"diffusion {task.name}")
    given = vars(behaviour) if isinstance(behaviour, MixtureFit) else behaviour
    names = ("kappa", "p_target", "p_swap", "p_guess")
    stored = None if given is None else {k: float(given[k]) for k in names}
    settings = {"loss": "diffusion", "n_levels": k_levels, "behaviour": stored}
    return one_network_result(model, hist, rec, settings)

