"""Backpropagation-through-time training of a model on a task."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

from neurodyn._seed import SeedLike, resolve_seed, torch_generator
from neurodyn.models._base import RecurrentModel
from neurodyn.tasks._base import Task
from neurodyn.training import regularizers as regs_mod
from neurodyn.training.curriculum import Curriculum
from neurodyn.training.early_stopping import EarlyStopping, StopTracker, metric_mode, reached
from neurodyn.training.losses import LOSSES

__all__ = ["TrainResult", "TrainingDivergedError", "evaluate", "train"]


class TrainingDivergedError(FloatingPointError):
    """The training loss became NaN or infinite."""


def check_device(device: Any) -> torch.device:
    """``device`` as a ``torch.device``; a clear ``ValueError`` if it is malformed or unavailable."""
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as err:
        raise ValueError(f"device {device!r} is not a torch device; use e.g. 'cpu' or 'cuda:0'") from err
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} requested but CUDA is not available here; use device='cpu'")
    if dev.type == "mps" and not torch.backends.mps.is_available():
        raise ValueError(f"device {device!r} requested but MPS is not available here; use device='cpu'")
    return dev


@dataclass(frozen=True)
class TrainResult:
    """What :func:`train` returns.

    model : the trained copy (the model passed in is left untouched)
    history : dict of per-iteration lists: ``iteration``, ``loss`` (task loss plus penalties),
        ``task_loss``, ``reg_<name>`` per regulariser, ``stage`` with a curriculum, and the task
        metrics evaluated every ``eval_every`` iterations (``eval_iteration``, ``eval_<metric>``,
        ``eval_loss``).
    config : the training settings (stored in checkpoints), including the resolved ``seed``,
        ``iterations_run`` and the outcome of early stopping / the curriculum.
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
    regularizers: Mapping[str, float] | Iterable[Any] | None = None,
    state_hook: Callable[[int, torch.Tensor], torch.Tensor] | None = None,
    early_stopping: EarlyStopping | tuple | None = None,
    curriculum: Curriculum | None = None,
) -> TrainResult:
    """Train ``model`` on ``task`` with Adam and a masked loss (BPTT).

    Batch ``i`` holds trials ``i*batch_size .. (i+1)*batch_size-1`` of the task's seeded trial
    stream, and the recurrent noise comes from a generator seeded from ``seed``: the same seed
    gives the same trained model, bit for bit. Metrics are evaluated without noise on a held-out
    batch (trials from index 10**9 of the same stream) every ``eval_every`` iterations.

    Parameters
    ----------
    model : RecurrentModel
        Copied before training; the argument is not modified. Constraints (Dale's law, masks)
        live in the model's ``params()`` and therefore hold after every optimiser step.
    task : Task
    n_iterations : int
        Maximum number of optimiser steps.
    batch_size : int
        Trials per step.
    lr, weight_decay : float
        Adam settings.
    clip_grad_norm : float or None
        Gradient-norm clipping threshold.
    loss : {"mse", "cross_entropy", ...}, optional
        A key of :data:`~neurodyn.training.LOSSES`; defaults to ``task.loss``.
    seed : int, Generator or None
        Seed of the batch stream and of the noise.
    eval_every : int
        Evaluation period in iterations (0 disables evaluation, and with it early stopping,
        ``target_metric`` and curriculum advances).
    target_metric : (name, value), optional
        Stop once metric ``name`` reaches ``value`` (at most it for losses/errors, at least it
        otherwise).
    progress : bool
        Show a tqdm progress bar.
    device : torch device
    regularizers : dict of strengths or iterable of penalties, optional
        ``{"l1_weight", "l2_weight", "l1_rate", "l2_rate"}`` strengths or objects from
        :mod:`neurodyn.training.regularizers`, added to the loss (Yang et al. 2019).
    state_hook : callable ``(t, h) -> h``, optional
        Applied to each new state during training rollouts (clamping, perturbations).
    early_stopping : (metric, patience) or EarlyStopping, optional
        Stop after ``patience`` evaluations without improvement of ``metric``; the best weights
        are returned unless ``restore_best=False``.
    curriculum : Curriculum, optional
        Schedule of one task parameter, advanced when a metric reaches a threshold.

    Returns
    -------
    TrainResult

    Raises
    ------
    TrainingDivergedError
        If the loss becomes NaN or infinite (lower ``lr``, enable ``clip_grad_norm``, lower the
        initial ``gain`` / ``spectral_radius``).
    ValueError
        If the model's input/output sizes do not match the task's, ``loss`` is unknown, or a
        regulariser, early-stopping rule or curriculum is malformed, or if ``device`` is not a
        device string or names an unavailable accelerator (e.g. ``"cuda"`` without CUDA).
    """
    if model.n_inputs != task.n_inputs or model.n_outputs != task.n_outputs:
        raise ValueError(
            f"model has {model.n_inputs} inputs / {model.n_outputs} outputs but task "
            f"{task.name!r} needs {task.n_inputs} / {task.n_outputs}"
        )
    if int(n_iterations) < 0 or int(batch_size) < 1 or int(eval_every) < 0 or not lr > 0:
        raise ValueError(
            f"need n_iterations >= 0, batch_size >= 1, eval_every >= 0 and lr > 0; got n_iterations="
            f"{n_iterations}, batch_size={batch_size}, eval_every={eval_every}, lr={lr}"
        )
    if target_metric is not None and not (
        isinstance(target_metric, (tuple, list)) and len(target_metric) == 2
        and math.isfinite(float(target_metric[1]))
    ):
        raise ValueError(f"target_metric must be (metric, finite value), got {target_metric!r}")
    if not eval_every and (early_stopping is not None or curriculum is not None or target_metric):
        raise ValueError("early_stopping, curriculum and target_metric need evaluations; set eval_every > 0")
    loss_name = loss or task.loss
    if loss_name not in LOSSES:
        raise ValueError(f"unknown loss {loss_name!r}; choose one of {', '.join(LOSSES)}")
    loss_fn = LOSSES[loss_name]
    penalties = regs_mod.make_regularizers(regularizers)
    stopping = EarlyStopping.coerce(early_stopping)
    if curriculum is not None and not isinstance(curriculum, Curriculum):
        raise ValueError(f"curriculum must be a Curriculum, got {type(curriculum).__name__}")
    device = check_device(device)
    seed_int = resolve_seed(seed)
    stage = 0
    cur_task = task if curriculum is None else curriculum.task_at(task, 0)
    model = copy.deepcopy(model).to(device)
    model.train()
    dtype = next(model.parameters()).dtype
    gen = torch_generator(seed_int, 1, device=device)
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    eval_batch = _eval_batch(cur_task, batch_size, seed_int)
    tracker = None if stopping is None else StopTracker(stopping)
    history: dict[str, list[float]] = {"iteration": [], "loss": [], "task_loss": []}
    stop_reason = "n_iterations"

    from tqdm.auto import tqdm

    bar = tqdm(range(n_iterations), disable=not progress, desc=f"train {task.name}")
    for it in bar:
        batch = cur_task.sample(batch_size, seed=seed_int, first_trial=it * batch_size)
        x, y, m = batch.to_torch(device, dtype)
        rollout = model(x, generator=gen, state_hook=state_hook)
        task_loss = loss_fn(rollout.outputs, y, m)
        reg_values = []
        value = task_loss
        if penalties:
            p = model.params()
            reg_values = [r(p, rollout.states) for r in penalties]
            value = task_loss + sum(reg_values)
        if not math.isfinite(value.item()):
            raise TrainingDivergedError(
                f"training diverged: loss became {value.item()} at iteration {it} "
                f"(task loss {task_loss.item()}); lower lr (now {lr}), set clip_grad_norm "
                f"(now {clip_grad_norm}) or start from smaller recurrent weights"
            )
        opt.zero_grad(set_to_none=True)
        value.backward()
        if clip_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip_grad_norm)
        opt.step()
        _log_step(history, it, value, task_loss, penalties, reg_values, stage if curriculum else None)
        if not eval_every or not ((it + 1) % eval_every == 0 or it == n_iterations - 1):
            continue
        metrics = evaluate(model, cur_task, eval_batch, device=device, loss=loss_name)
        history.setdefault("eval_iteration", []).append(it)
        for k, v in metrics.items():
            history.setdefault(f"eval_{k}", []).append(v)
        bar.set_postfix({"train_loss": f"{value.item():.4f}", **{k: f"{v:.3f}" for k, v in metrics.items()}})
        if curriculum is not None and stage < curriculum.n_stages - 1:
            if curriculum.ready(metrics):
                stage += 1
                cur_task = curriculum.task_at(task, stage)
                eval_batch = _eval_batch(cur_task, batch_size, seed_int)
                history.setdefault("curriculum_advance_iteration", []).append(it)
            continue
        if target_metric and reached(_metric(metrics, target_metric[0], "target_metric"),
                                     target_metric[1], metric_mode(target_metric[0])):
            stop_reason = "target_metric"
            break
        if tracker is not None:
            value_now = _metric(metrics, stopping.metric, "early_stopping")
            if tracker.update(value_now, it, lambda: copy.deepcopy(model.state_dict())):
                stop_reason = "early_stopping"
                break
    if tracker is not None and tracker.best_state is not None:
        model.load_state_dict(tracker.best_state)
    model.eval()
    config = {
        "n_iterations": n_iterations, "batch_size": batch_size, "lr": lr,
        "weight_decay": weight_decay, "clip_grad_norm": clip_grad_norm, "loss": loss_name,
        "seed": seed_int, "eval_every": eval_every, "iterations_run": len(history["loss"]),
        "stop_reason": stop_reason, "regularizers": regs_mod.describe(penalties),
        "state_hook": state_hook is not None,
    }
    if target_metric:
        config["target_metric"] = [target_metric[0], float(target_metric[1])]
    if tracker is not None:
        config["early_stopping"] = {
            "metric": stopping.metric, "patience": stopping.patience, "mode": stopping.direction,
            "best_iteration": tracker.best_iteration, "best_value": tracker.best_value,
            "restored_best": stopping.restore_best,
        }
    if curriculum is not None:
        config["curriculum"] = {**curriculum.describe(), "final_stage": stage,
                                "final_value": curriculum.values[stage]}
    return TrainResult(model=model, history=history, config=config)


def _eval_batch(task: Task, batch_size: int, seed: int):
    return task.sample(max(batch_size, 128), seed=seed, first_trial=10**9)


def _metric(metrics: dict[str, float], name: str, what: str) -> float:
    if name not in metrics:
        raise ValueError(f"{what} metric {name!r} is not evaluated; available: {', '.join(metrics)}")
    return metrics[name]


def _log_step(history, it, value, task_loss, penalties, reg_values, stage) -> None:
    history["iteration"].append(it)
    history["loss"].append(float(value.item()))
    history["task_loss"].append(float(task_loss.item()))
    for r, v in zip(penalties, reg_values):
        history.setdefault(f"reg_{r.name}", []).append(float(v.item()))
    if stage is not None:
        history.setdefault("stage", []).append(stage)


@torch.no_grad()
def evaluate(model: RecurrentModel, task: Task, batch=None, *, n_trials: int = 256,
             seed: SeedLike = 12345, device: Any = "cpu", loss: str | None = None) -> dict[str, float]:
    """Noise-free task performance of ``model`` on a fresh or given batch.

    Returns ``task.evaluate``'s metrics plus ``"loss"``, the masked training loss (``loss`` or
    ``task.loss``) on the batch, unless the task already reports a metric of that name.
    """
    if batch is None:
        batch = task.sample(n_trials, seed=seed)
    was_training = model.training
    model.eval()
    x, y, m = batch.to_torch(device, next(model.parameters()).dtype)
    out = model(x, noise=False).outputs
    model.train(was_training)
    metrics = dict(task.evaluate(out.cpu().numpy(), batch))
    loss_fn = LOSSES.get(loss or task.loss)
    if loss_fn is not None and "loss" not in metrics:
        metrics["loss"] = float(loss_fn(out, y, m).item())
    return metrics
