"""Similarity deflation: train a network to solve a task unlike earlier networks (Qian & Pehlevan, 2025)."""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from typing import Any

import torch

from neurodyn._seed import SeedLike, resolve_seed, torch_generator
from neurodyn.models._base import RecurrentModel
from neurodyn.tasks._base import Task
from neurodyn.training.losses import LOSSES
from neurodyn.training.train import TrainingDivergedError, TrainResult, evaluate


def ridge_predictivity(source: torch.Tensor, target: torch.Tensor, ridge: float) -> torch.Tensor:
    """Closed-form, differentiable in-sample ridge ``R^2`` of ``target`` predicted from ``source``.

    Both are centred over samples; ``W = (S^T S / n + ridge * tr(S^T S / n) / d I)^{-1} S^T T / n`` and
    ``R^2 = 1 - ||T - S W||_F^2 / ||T||_F^2`` (variance weighted over target units).

    Parameters
    ----------
    source : Tensor, shape (sample, unit_source)
    target : Tensor, shape (sample, unit_target)
    ridge : float >= 0
        Penalty relative to the mean source variance (scale free).

    Returns
    -------
    Tensor, scalar
    """
    S = source - source.mean(0)
    T = target - target.mean(0)
    n, d = S.shape
    cov = S.T @ S / n
    reg = ridge * torch.trace(cov) / d + 1e-12
    W = torch.linalg.solve(cov + reg * torch.eye(d, dtype=S.dtype, device=S.device), S.T @ T / n)
    return 1.0 - torch.sum((T - S @ W) ** 2) / (torch.sum(T**2) + 1e-30)


@torch.no_grad()
def _reference_states(models: Sequence[RecurrentModel], x: torch.Tensor) -> torch.Tensor:
    out = []
    for m in models:
        was = m.training
        m.eval()
        out.append(m(x.to(next(m.parameters()).dtype), noise=False).states.to(x.dtype))
        m.train(was)
    return torch.cat(out, dim=-1).reshape(-1, sum(o.shape[-1] for o in out))


def train_deflated(
    model: RecurrentModel,
    task: Task,
    *,
    reference_models: Sequence[RecurrentModel],
    lam: float = 1.0,
    ridge: float = 0.1,
    activity_penalty: float = 1e-2,
    n_iterations: int = 1000,
    batch_size: int = 64,
    lr: float = 1e-3,
    clip_grad_norm: float | None = 1.0,
    seed: SeedLike = 0,
    eval_every: int = 100,
    progress: bool = True,
    device: Any = "cpu",
) -> TrainResult:
    """Train ``model`` on ``task`` while penalising how well earlier networks' activity predicts its own.

    The loss of each batch is ``task_loss + lam * R^2 + activity_penalty * mean(h^2)`` where ``R^2`` is the
    closed-form ridge predictivity (:func:`ridge_predictivity`) of the hidden states ``h`` of ``model``
    from the concatenated hidden states of ``reference_models`` (networks 0..k-1, run without noise and
    without gradient) on the same trials, samples = trials x time steps. The activity penalty closes
    the loophole of inflating task-irrelevant variance that no reference can predict; other measures
    (CKA, Procrustes) should be checked on held-out trials too, e.g. with
    :func:`neurodyn.analysis.compare_to_references`.

    Parameters
    ----------
    model : RecurrentModel
        Copied; the argument is not modified.
    task : Task
    reference_models : sequence of RecurrentModel
        Networks already trained (on the same task inputs); not modified.
    lam : float >= 0
        Weight of the predictivity term (0 gives plain training plus the activity penalty).
    ridge : float >= 0
        Ridge penalty relative to the mean reference variance.
    activity_penalty : float >= 0
        Weight of the mean squared hidden state.
    n_iterations, batch_size, lr, clip_grad_norm, seed, eval_every, progress, device
        As in :func:`neurodyn.training.train`: batch ``i`` holds trials ``i*batch_size ...`` of the seeded
        trial stream, so the same seed gives the same network.

    Returns
    -------
    TrainResult
        ``history`` adds ``predictivity`` (the in-batch ``R^2``) and ``activity`` per iteration;
        ``config`` records ``lam``, ``ridge``, ``activity_penalty`` and the number of references.

    Raises
    ------
    ValueError
        For no reference models, negative weights or mismatched input/output sizes.
    TrainingDivergedError
        If the loss becomes NaN or infinite.

    References
    ----------
    Qian & Pehlevan (2025). Discovering alternative solutions beyond the simplicity bias in recurrent
    neural networks (iterative neural similarity deflation, INSD).
    """
    if not reference_models:
        raise ValueError("reference_models is empty; give at least one trained network to deflate against")
    for name, v in (("lam", lam), ("ridge", ridge), ("activity_penalty", activity_penalty)):
        if not v >= 0:
            raise ValueError(f"{name} must be >= 0; got {v}")
    for m in (model, *reference_models):
        if m.n_inputs != task.n_inputs or m.n_outputs != task.n_outputs:
            raise ValueError(f"a model has {m.n_inputs} inputs / {m.n_outputs} outputs; task {task.name!r} "
                             f"needs {task.n_inputs} / {task.n_outputs}")
    seed_int = resolve_seed(seed)
    model = copy.deepcopy(model).to(device)
    refs = [copy.deepcopy(m).to(device) for m in reference_models]
    model.train()
    dtype = next(model.parameters()).dtype
    gen = torch_generator(seed_int, 1, device=device)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = LOSSES[task.loss]
    eval_batch = task.sample(max(batch_size, 128), seed=seed_int, first_trial=10**9)
    history: dict[str, list[float]] = {k: [] for k in ("iteration", "loss", "task_loss", "predictivity",
                                                       "activity")}
    from tqdm.auto import tqdm

    for it in tqdm(range(n_iterations), disable=not progress, desc=f"deflate {task.name}"):
        x, y, m = task.sample(batch_size, seed=seed_int, first_trial=it * batch_size).to_torch(device, dtype)
        roll = model(x, generator=gen)
        h = roll.states.reshape(-1, roll.states.shape[-1])
        task_loss = loss_fn(roll.outputs, y, m)
        r2 = ridge_predictivity(_reference_states(refs, x).to(torch.float64), h.to(torch.float64), ridge)
        activity = torch.mean(h**2)
        value = task_loss + lam * r2.to(dtype) + activity_penalty * activity
        if not math.isfinite(value.item()):
            raise TrainingDivergedError(f"deflated training diverged at iteration {it}; lower lr or lam")
        opt.zero_grad(set_to_none=True)
        value.backward()
        if clip_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip_grad_norm)
        opt.step()
        for key, v in (("iteration", it), ("loss", value.item()), ("task_loss", task_loss.item()),
                       ("predictivity", r2.item()), ("activity", activity.item())):
            history[key].append(float(v))
        if eval_every and ((it + 1) % eval_every == 0 or it == n_iterations - 1):
            history.setdefault("eval_iteration", []).append(it)
            for k, v in evaluate(model, task, eval_batch, device=device).items():
                history.setdefault(f"eval_{k}", []).append(v)
    model.eval()
    config = {
        "n_iterations": n_iterations, "batch_size": batch_size, "lr": lr, "clip_grad_norm": clip_grad_norm,
        "loss": task.loss, "seed": seed_int, "eval_every": eval_every, "iterations_run": n_iterations,
        "deflation": {"lam": float(lam), "ridge": float(ridge), "activity_penalty": float(activity_penalty),
                      "n_references": len(refs)},
    }
    return TrainResult(model=model, history=history, config=config)


__all__ = ["ridge_predictivity", "train_deflated"]
