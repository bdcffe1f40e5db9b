"""The training engine: the one loop behind every training entry point (see docs/training.md).

An entry point gives :func:`run` its trainable leaf tensors, a batch source and an objective (the
loss of one batch, one per network when the tensors are stacked over an ensemble); the engine does
the rest, including the divergence policy: a network whose loss or parameters become NaN/Inf stops
with the weights of its last finite epoch, status ``"diverged"``, a diagnosis and a warning.
"""

from __future__ import annotations

import copy
import math
import os
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from neurodyn._budget import check_memory
from neurodyn._seed import torch_generator
from neurodyn.kernels._workspace import reuse_buffers
from neurodyn.training._config import OPTIMIZERS, TrainConfig, deterministic_mode
from neurodyn.training.early_stopping import EarlyStopping, metric_mode, reached

#: a batch whose largest |value| exceeds this makes the data's scale the likely cause of a divergence
DATA_SCALE_LIMIT = 1e3
_REASONS = {"target_reached": "target_metric", "stopped_early": "early_stopping",  # config["stop_reason"]
            "interrupted": "interrupted"}


#: (trial, step, unit) arrays a training rollout holds at once: states, slopes or gates, noise, their
#: gradients and the fused kernels' workspace (a lower bound: gated families hold more)
TRAIN_COPIES = 6
#: the same for a noise-free evaluation rollout (states and the readout's input)
EVAL_COPIES = 2


def check_rollout_memory(what: str, model: Any, n_trials: int, n_steps: int, *, copies: int, fix: str,
                         extra: float = 0.0, device: Any = None) -> None:
    """One-line ``ValueError`` (:func:`~neurodyn._budget.check_memory`) before a rollout of ``n_trials``
    trials x ``n_steps`` steps of ``model`` whose ``copies`` (trial, step, state) arrays, plus
    ``extra`` bytes, exceed the memory available now; ``fix`` says what to lower."""
    p = next(model.parameters(), None)
    itemsize = 4 if p is None else p.element_size()
    n_state = int(getattr(model, "state_size", 0) or getattr(model, "n_units", 0) or 1)
    nbytes = float(n_trials) * float(n_steps) * n_state * itemsize * copies + extra
    check_memory(what, nbytes, f"{n_trials} trials x {n_steps} steps x {n_state} units x {itemsize} bytes "
                 f"x {copies} copies", fix, device=device)



def check_training_memory(what: str, model: Any, n_steps: int, batch_size: int, eval_trials: int, *, fix: str,
                          device: Any = None, eval_what: str | None = None) -> None:
    """:func:`check_rollout_memory` before training starts: of the training batches (``TRAIN_COPIES``)
    and of the held-out evaluations (``EVAL_COPIES``, named ``eval_what`` when given; none when
    ``eval_trials`` is 0)."""
    runs = ((what, batch_size, TRAIN_COPIES), (eval_what or what, eval_trials, EVAL_COPIES))
    for label, trials, copies in runs:
        if trials:
            check_rollout_memory(label, model, trials, n_steps, copies=copies, fix=fix, device=device)

def to_device(model: Any, device: torch.device) -> Any:
    """A copy of ``model`` on ``device`` in train mode (the argument is never modified)."""
    return copy.deepcopy(model).to(device).train()


def start(model: Any, config: TrainConfig) -> tuple[Any, torch.Generator]:
    """The copy of ``model`` an entry point trains (:func:`to_device` on ``config.device``) and the
    generator of its training noise (sub-stream 1 of ``config.seed``, on that device)."""
    return to_device(model, config.device), torch_generator(config.seed, 1, device=config.device)


def run(params: Sequence[torch.Tensor], objective: Callable[[Any], tuple[torch.Tensor, dict[str, Any]]],
        batches: Callable[[int], Any], config: TrainConfig, **options: Any,
        ) -> tuple[list[dict[str, list[Any]]], dict[str, Any]]:
    """:func:`_run` inside :func:`deterministic_mode` when ``config.deterministic`` (see there), with
    the fused kernels reusing their large per-step buffers
    (:func:`~neurodyn.kernels._workspace.reuse_buffers`)."""
    with deterministic_mode(config.deterministic), reuse_buffers():
        return _run(params, objective, batches, config, **options)


#: what the progress bar shows during the first epoch of a run on the Numba kernels
FIRST_EPOCH_NOTE = "the first step compiles the Numba kernels on first use (about 20 s; cached after)"


def _run(
    params: Sequence[torch.Tensor],
    objective: Callable[[Any], tuple[torch.Tensor, dict[str, Any]]],
    batches: Callable[[int], Any],
    config: TrainConfig,
    *,
    n_networks: int | None = None,
    network_weight_decay: torch.Tensor | None = None,
    evaluate: Callable[[int], Any] | None = None,
    hooks: Sequence[Callable[[int, dict[str, float]], str | None]] = (),
    early_stopping: EarlyStopping | None = None,
    target_metric: tuple[str, float] | None = None,
    on_epoch: Callable[[int, float, float], dict[str, float]] | None = None,
    log_keys: Sequence[str] = ("loss",),
    labels: Sequence[str] | None = None,
    hint: str = "",
    desc: str = "train",
    compiled: bool = False,
) -> tuple[list[dict[str, list[Any]]], dict[str, Any]]:
    """Minimise ``objective(batches(step)) -> (loss, logs)``, updating ``params`` in place.

    Returns one history per network (``logs`` averaged per epoch) and the config record.
    ``compiled`` (the rollout runs Numba kernels) shows, until the first epoch ends, that it may compile
    them (about 20 s on first use, loaded from Numba's cache afterwards), so the bar does not look hung.
    ``evaluate(epoch)`` (a list per network when stacked) is logged as ``eval_<name>``; then
    ``hooks`` (``"hold"`` skips the stopping rules, as a curriculum before its last stage does),
    ``target_metric`` and ``early_stopping`` decide. ``on_epoch(epoch, lr, seconds)`` adds logs.
    A ``KeyboardInterrupt`` (Ctrl-C) ends training with status ``"interrupted"`` and the weights of
    the last finished epoch (the best ones with early stopping) instead of propagating.
    """
    n, name, stacked = n_networks or 1, config.epoch_name, n_networks is not None
    wd = network_weight_decay
    if stacked and wd is None and config.weight_decay:
        wd = torch.full((n,), config.weight_decay, dtype=params[0].dtype, device=params[0].device)
    decay = 0.0 if stacked else config.weight_decay  # stacked: per network, below
    opt = make_optimizer(params, config, weight_decay=decay)
    sched = None if config.lr_decay is None else torch.optim.lr_scheduler.ExponentialLR(opt, config.lr_decay)
    good = [p.detach().clone() for p in params]  # the weights at the end of the last finite epoch
    hist = [{name: [], **{k: [] for k in log_keys}} for _ in range(n)]
    status, why, runs, alive = ["completed"] * n, [None] * n, [0] * n, [True] * n
    tracker = None if early_stopping is None else _Tracker(early_stopping)

    def restore(dead: list[int]) -> None:
        with torch.no_grad():
            for p, g in zip(params, good):
                for e in dead:
                    (p[e] if stacked else p).copy_(g[e] if stacked else g)

    def diverge(e: int, epoch: int, step: int, what: str, value: float, batch: Any) -> None:
        alive[e], status[e] = False, "diverged"  # its weights are restored once no graph needs them
        why[e] = _diagnose(epoch, step, what, value, batch, config, hint, labels[e] + " " if labels else "")
        warnings.warn(why[e]["message"], RuntimeWarning, stacklevel=_caller_level())

    from tqdm.auto import tqdm

    bar = tqdm(range(config.n_epochs), disable=not config.progress, desc=desc)
    if compiled and config.progress:
        bar.set_postfix_str(FIRST_EPOCH_NOTE, refresh=True)
    try:
        for epoch in bar:
            t0, logs = time.perf_counter(), [{} for _ in range(n)]
            for step in range(epoch * config.batches_per_epoch, (epoch + 1) * config.batches_per_epoch):
                batch = batches(step)
                loss, step_logs = objective(batch)
                for e, v in enumerate(loss.detach().reshape(-1).tolist()):
                    if alive[e] and not math.isfinite(v):
                        diverge(e, epoch, step, "the loss", v, batch)
                if not any(alive):
                    break
                opt.zero_grad(set_to_none=True)
                mask = None if all(alive) else torch.tensor(alive, dtype=loss.dtype, device=loss.device)
                (loss.sum() if mask is None else (loss * mask).sum()).backward()
                if not stacked and config.clip_grad_norm is not None:
                    torch.nn.utils.clip_grad_norm_(params, config.clip_grad_norm)
                elif stacked:
                    _clip_and_decay_per_network(params, mask, config.clip_grad_norm, wd, n)
                opt.step()
                with torch.no_grad():
                    finite = torch.stack([torch.isfinite(p).reshape(n, -1).all(1) for p in params]).all(0)
                for e in [e for e, ok in enumerate(finite.tolist()) if alive[e] and not ok]:
                    diverge(e, epoch, step, "a parameter", math.nan, batch)
                restore([e for e in range(n) if not alive[e]])  # also undoes Adam's momentum on them
                if not any(alive):
                    break
                for e in [e for e in range(n) if alive[e]]:
                    for k, v in step_logs.items():
                        v = v.reshape(-1)[e if stacked else 0].item() if isinstance(v, torch.Tensor) else v
                        logs[e].setdefault(k, []).append(v)
            if not any(alive):
                restore(list(range(n)))
                break
            if sched is not None:
                sched.step()
            with torch.no_grad():
                for p, g in zip(params, good):
                    g.copy_(p)
            for e in [e for e in range(n) if alive[e]]:
                runs[e] += 1
                hist[e][name].append(epoch)
                for k, vals in logs[e].items():
                    hist[e].setdefault(k, []).append(vals[0] if len(vals) == 1 else float(np.mean(vals)))
            lr_now = float(opt.param_groups[0]["lr"])
            for k, v in (on_epoch(epoch, lr_now, time.perf_counter() - t0) if on_epoch else {}).items():
                hist[0].setdefault(k, []).append(v)
            shown = {"loss": f"{hist[0]['loss'][-1]:.4f}"} if hist[0].get("loss") else {}
            if evaluate is not None and config.eval_every and (
                    (epoch + 1) % config.eval_every == 0 or epoch == config.n_epochs - 1):
                metrics = evaluate(epoch)
                for e, m in enumerate(metrics if stacked else [metrics]):
                    if alive[e]:
                        hist[e].setdefault(f"eval_{name}", []).append(epoch)
                        for k, v in m.items():
                            hist[e].setdefault(f"eval_{k}", []).append(v)
                if not stacked:
                    shown.update({k: f"{v:.3f}" for k, v in metrics.items()})
                    reason = _stopping_rules(epoch, metrics, hooks, target_metric, tracker, params)
                    if reason is not None:
                        status[0] = "target_reached" if reason == "target_metric" else "stopped_early"
                        bar.set_postfix({**shown, "stopped": status[0]}, refresh=True)  # not a stalled bar
                        break
            bar.set_postfix(shown, refresh=False)
    except KeyboardInterrupt:  # Ctrl-C: keep the weights of the last finished epoch, report "interrupted"
        bar.close()
        restore(list(range(n)))
        for e in [e for e in range(n) if alive[e]]:
            status[e] = "interrupted"
    if tracker is not None and tracker.best_state is not None:
        with torch.no_grad():
            for p, b in zip(params, tracker.best_state):
                p.copy_(b)
    one = (lambda v: v) if stacked else (lambda v: v[0])
    rec = {**config.record(), f"{name}s_run": one(runs), "status": one(status),
           "stop_reason": _REASONS.get(status[0], f"n_{name}s") if any(alive) else "diverged"}
    if any(why):
        rec["divergence"] = one(why)
    if target_metric:
        rec["target_metric"] = [target_metric[0], float(target_metric[1])]
    if tracker is not None:
        rule = tracker.rule
        rec["early_stopping"] = {"metric": rule.metric, "patience": rule.patience, "mode": rule.direction,
                                 "best_iteration": tracker.best_iteration, "best_value": tracker.best_value,
                                 "restored_best": rule.restore_best}
    return hist, rec


def make_optimizer(params: Sequence[torch.Tensor], config: TrainConfig, *, weight_decay: float
                   ) -> torch.optim.Optimizer:
    """``config.optimizer`` over ``params`` with one kernel per step where torch has one.

    Adam runs torch's fused implementation (``fused=True``: one kernel per step instead of about
    a dozen tensor operations per parameter, 3x cheaper per step on the CPU for a 64-unit RNN); it
    computes the same update elementwise, equal to the per-tensor loop to float round-off (the
    same bits at any thread count). RAdam, which has no fused form, runs its ``foreach`` form.
    """
    kind = OPTIMIZERS[config.optimizer]
    fusable = kind is torch.optim.Adam and all(
        p.device.type in ("cpu", "cuda") and p.is_floating_point() for p in params)
    one_kernel = {"fused": True} if fusable else {"foreach": True}
    return kind(params, lr=config.lr, weight_decay=weight_decay, **one_kernel)


class _Tracker:
    """Early-stopping bookkeeping: best value, its epoch and weights, evaluations without improvement."""

    def __init__(self, rule: EarlyStopping) -> None:
        self.rule, self.best_value, self.best_iteration, self.bad = rule, math.nan, -1, 0
        self.best_state: list[torch.Tensor] | None = None

    def stop(self, value: float, epoch: int, params: Sequence[torch.Tensor]) -> bool:
        best, delta = self.best_value, self.rule.min_delta
        if self.best_iteration < 0 or (not math.isnan(value) and (math.isnan(best) or (
                value < best - delta if self.rule.direction == "min" else value > best + delta))):
            self.best_value, self.best_iteration, self.bad = value, epoch, 0
            self.best_state = [p.detach().clone() for p in params] if self.rule.restore_best else None
            return False
        self.bad += 1
        return self.bad >= self.rule.patience


def _stopping_rules(epoch, metrics, hooks, target_metric, tracker, params) -> str | None:
    """After an evaluation: the hooks (a curriculum may hold), the target metric, early stopping."""
    if any(hook(epoch, metrics) == "hold" for hook in hooks):
        return None
    if target_metric and reached(metric(metrics, target_metric[0], "target_metric"), target_metric[1],
                                 metric_mode(target_metric[0])):
        return "target_metric"
    if tracker and tracker.stop(metric(metrics, tracker.rule.metric, "early_stopping"), epoch, params):
        return "early_stopping"
    return None


def metric(metrics: dict[str, float], name: str, what: str) -> float:
    """``metrics[name]``; a ``ValueError`` listing the evaluated metrics if it is missing."""
    if name not in metrics:
        raise ValueError(f"{what} metric {name!r} is not evaluated; available: {', '.join(metrics)}")
    return metrics[name]


def _clip_and_decay_per_network(params, mask, clip, wd, n) -> None:
    """Per network of a stack: zero a stopped one's gradients, clip the norm, add weight decay."""
    grads = [p.grad for p in params if p.grad is not None]
    for g in grads if mask is not None else ():
        g[mask == 0] = 0  # a stopped network's NaN gradients must not reach the optimiser state
    if clip is not None:
        norms = torch.stack([g.reshape(n, -1).pow(2).sum(1) for g in grads]).sum(0).sqrt()
        coef = (clip / (norms + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.view(-1, *([1] * (g.ndim - 1))))
    if wd is not None and bool((wd != 0).any()):
        for p in params:
            if p.grad is not None:
                p.grad.add_(p.detach() * wd.view(-1, *([1] * (p.ndim - 1))))


def _caller_level() -> int:
    """``stacklevel`` that points a warning at the first caller outside ``neurodyn.training``."""
    frame, level = sys._getframe(1), 1  # level 1: the function that warns
    while frame is not None and frame.f_code.co_filename.startswith(os.path.dirname(__file__)):
        frame, level = frame.f_back, level + 1
    return level


def data_scale(batch: Any) -> tuple[float, bool]:
    """Largest finite |value| among the floating-point arrays of ``batch`` and whether any is NaN/Inf."""
    if isinstance(batch, (dict, list, tuple)):
        parts = [data_scale(b) for b in (batch.values() if isinstance(batch, dict) else batch)]
        return max((p[0] for p in parts), default=0.0), any(p[1] for p in parts)
    x = torch.as_tensor(batch) if isinstance(batch, np.ndarray) else batch
    if not isinstance(x, torch.Tensor) or not x.is_floating_point() or not x.numel():
        return 0.0, False
    finite = torch.isfinite(x)
    return float(x[finite].abs().max()) if bool(finite.any()) else 0.0, not bool(finite.all())


def _diagnose(epoch, step, what, value, batch, config, hint, label) -> dict[str, Any]:
    """Where training diverged, the likely cause and the advice, as recorded and warned."""
    name, (scale, nonfinite) = config.epoch_name, data_scale(batch)
    if nonfinite:
        cause, advice = "data_not_finite", "the batch holds NaN/Inf values: clean the data"
    elif scale > DATA_SCALE_LIMIT:
        cause, advice = "data_scale", (f"the batch reaches |x| = {scale:.3g}: standardise the data (their "
                                       "scale, more likely than the learning rate, is the cause)")
    else:
        clip = ("set clip_grad_norm" if config.clip_grad_norm is None
                else f"lower clip_grad_norm (now {config.clip_grad_norm})")
        cause, advice = "optimisation", f"lower lr (now {config.lr}), {clip}{hint}"
    where = f"{name} {epoch}" + (f" (step {step})" if config.batches_per_epoch > 1 else "")
    kept = f"the weights after {name} {epoch - 1}" if epoch else "the initial weights"
    message = f"{label}training diverged at {where}: {what} became {value}; kept {kept}; {advice}"
    return {name: epoch, "step": step, "where": "loss" if what == "the loss" else "parameters",
            "value": value, "cause": cause, "data_max_abs": scale, "message": message}
