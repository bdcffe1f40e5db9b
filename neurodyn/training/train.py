"""Backpropagation-through-time training of a model on a task."""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from neurodyn._seed import SeedLike, resolve_seed, torch_generator
from neurodyn.models._base import RecurrentModel
from neurodyn.tasks._base import Task
from neurodyn.training.losses import LOSSES


class TrainingDivergedError(FloatingPointError):
    """The training loss became NaN or infinite."""


@dataclass(frozen=True)
class TrainResult:
    """What :func:`train` returns.

    model : the trained copy (the model passed in is left untouched)
    history : dict of per-iteration lists: ``iteration``, ``loss``, and any task metrics
        evaluated every ``eval_every`` iterations (``eval_iteration``, ``eval_<metric>``).
    config : the training settings (stored in checkpoints), including the resolved ``seed``.
    """

    model: RecurrentModel
    history: dict[str, list[float]] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)


def train(
    model: RecurrentModel,
    task: Task,
    *,
    n_iterations: int = 1000,
    batch_size: int = 64,
    lr: float = 1e-3,
    weight_decay: float = 0.0,
    clip_grad_norm: float | None = 1.0,
    loss: str | None = None,
    seed: SeedLike = 0,
    eval_every: int = 100,
    target_metric: tuple[str, float] | None = None,
    progress: bool = True,
    device: Any = "cpu",
) -> TrainResult:
    """Train ``model`` on ``task`` with Adam and a masked loss (BPTT).

    Batch ``i`` holds trials ``i*batch_size .. (i+1)*batch_size-1`` of the task's seeded trial
    stream, and the recurrent noise comes from a generator seeded from ``seed``: the same seed
    gives the same trained model.

    Parameters
    ----------
    model : RecurrentModel
        Copied before training; the argument is not modified.
    task : Task
    n_iterations : int
        Number of optimiser steps.
    batch_size : int
        Trials per step.
    lr, weight_decay : float
        Adam settings.
    clip_grad_norm : float or None
        Gradient-norm clipping threshold.
    loss : {"mse", "cross_entropy"}, optional
        Defaults to ``task.loss``.
    seed : int, Generator or None
        Seed of the batch stream and of the noise.
    eval_every : int
        Evaluate ``task.evaluate`` on a held-out batch every this many iterations.
    target_metric : (name, value), optional
        Stop early once the evaluated metric ``name`` reaches ``value``.
    progress : bool
        Show a tqdm progress bar.
    device : torch device

    Returns
    -------
    TrainResult

    Raises
    ------
    TrainingDivergedError
        If the loss becomes NaN or infinite (lower ``lr`` or enable ``clip_grad_norm``).
    ValueError
        If the model's input/output sizes do not match the task's or ``loss`` is unknown.
    """
    if model.n_inputs != task.n_inputs or model.n_outputs != task.n_outputs:
        raise ValueError(
            f"model has {model.n_inputs} inputs / {model.n_outputs} outputs but task "
            f"{task.name!r} needs {task.n_inputs} / {task.n_outputs}"
        )
    loss_name = loss or task.loss
    if loss_name not in LOSSES:
        raise ValueError(f"unknown loss {loss_name!r}; choose one of {', '.join(LOSSES)}")
    loss_fn = LOSSES[loss_name]
    seed_int = resolve_seed(seed)
    model = copy.deepcopy(model).to(device)
    model.train()
    gen = torch_generator(seed_int, 1, device=device)
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    eval_batch = task.sample(max(batch_size, 128), seed=seed_int, first_trial=10**9)
    history: dict[str, list[float]] = {"iteration": [], "loss": []}

    from tqdm.auto import tqdm

    bar = tqdm(range(n_iterations), disable=not progress, desc=f"train {task.name}")
    for it in bar:
        batch = task.sample(batch_size, seed=seed_int, first_trial=it * batch_size)
        x, y, m = batch.to_torch(device)
        out = model(x, generator=gen).outputs
        value = loss_fn(out, y, m)
        if not math.isfinite(value.item()):
            raise TrainingDivergedError(
                f"loss became {value.item()} at iteration {it}; lower lr (now {lr}) "
                "or set clip_grad_norm"
            )
        opt.zero_grad(set_to_none=True)
        value.backward()
        if clip_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip_grad_norm)
        opt.step()
        history["iteration"].append(it)
        history["loss"].append(float(value.item()))
        if eval_every and ((it + 1) % eval_every == 0 or it == n_iterations - 1):
            metrics = evaluate(model, task, eval_batch, device=device)
            history.setdefault("eval_iteration", []).append(it)
            for k, v in metrics.items():
                history.setdefault(f"eval_{k}", []).append(v)
            bar.set_postfix(loss=f"{value.item():.4f}", **{k: f"{v:.3f}" for k, v in metrics.items()})
            if target_metric and metrics.get(target_metric[0], -np.inf) >= target_metric[1]:
                break
    model.eval()
    config = {
        "n_iterations": n_iterations, "batch_size": batch_size, "lr": lr,
        "weight_decay": weight_decay, "clip_grad_norm": clip_grad_norm, "loss": loss_name,
        "seed": seed_int, "iterations_run": len(history["loss"]),
    }
    return TrainResult(model=model, history=history, config=config)


@torch.no_grad()
def evaluate(model: RecurrentModel, task: Task, batch=None, *, n_trials: int = 256,
             seed: SeedLike = 12345, device: Any = "cpu") -> dict[str, float]:
    """Noise-free task performance of ``model`` (``task.evaluate`` on a fresh or given batch)."""
    if batch is None:
        batch = task.sample(n_trials, seed=seed)
    was_training = model.training
    model.eval()
    x, _, _ = batch.to_torch(device)
    out = model(x, noise=False).outputs.cpu().numpy()
    model.train(was_training)
    return task.evaluate(out, batch)
