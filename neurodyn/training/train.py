"""Backpropagation-through-time training of a model on a task."""

from __future__ import annotations

import copy
import math
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import torch

from neurodyn._seed import SeedLike, torch_generator
from neurodyn.kernels.fused import fused_backend
from neurodyn.models._base import RecurrentModel, Rollout, check_model, eval_mode
from neurodyn.tasks._base import Task, TaskBatch, check_task
from neurodyn.training import _engine
from neurodyn.training import forcing as forcing_mod
from neurodyn.training import regularizers as regs_mod
from neurodyn.training._config import TrainConfig, check_device
from neurodyn.training._fused_rollout import fused_rollout
from neurodyn.training._results import TrainingDivergedError, TrainResult, one_network_result
from neurodyn.training.curriculum import Curriculum
from neurodyn.training.early_stopping import EarlyStopping
from neurodyn.training.losses import LOSSES

__all__ = ["TrainResult", "TrainingDivergedError", "check_device", "evaluate", "train"]


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
    deterministic: bool = False,
    backend: str = "auto",
    forcing: str | None = None,
    forcing_strength: float = 0.5,
    forcing_anneal: str = "none",
    forcing_ridge: float = 1e-3,
    learning_rule: str = "bptt",
) -> TrainResult:
    """Train ``model`` on ``task`` with Adam and a masked loss (BPTT).

    Batch ``i`` holds trials ``i*batch_size .. (i+1)*batch_size-1`` of the task's seeded trial
    stream and the recurrent noise comes from a generator seeded from ``seed``: the same seed gives
    the same trained model, bit for bit. Metrics are evaluated without noise on a held-out batch
    (trials from index 10**9 of the stream) every ``eval_every`` iterations.

    Parameters
    ----------
    model : RecurrentModel
        Copied; the argument is not modified. Constraints (Dale's law, masks) live in ``params()``
        and hold after every optimiser step.
    task : Task
    n_iterations, batch_size, lr, weight_decay, clip_grad_norm, seed, eval_every, progress, device
        Optimiser steps, trials per step, Adam settings, gradient-norm clipping (``None`` or 0: off),
        seed of the batches and the noise, evaluation period (0: none, so no early stopping, target
        or curriculum), tqdm bar, torch device; see :class:`~neurodyn.training.TrainConfig`.
    loss : {"mse", "cross_entropy", ...}, optional
        A key of :data:`~neurodyn.training.LOSSES`; defaults to ``task.loss``.
    target_metric : (name, value), optional
        Stop (status ``"target_reached"``) once metric ``name`` reaches ``value`` (at most it for
        losses/errors, at least it otherwise).
    regularizers : dict of strengths or iterable of penalties, optional
        ``{"l1_weight", "l2_weight", "l1_rate", "l2_rate"}`` strengths or objects from
        :mod:`neurodyn.training.regularizers`, added to the loss (Yang et al. 2019).
    state_hook : callable ``(t, h) -> h``, optional
        Applied to each new state of the training rollouts (clamping, perturbations).
    early_stopping : (metric, patience) or EarlyStopping, optional
        Stop (status ``"stopped_early"``) after ``patience`` evaluations without improvement of
        ``metric``; the best weights are returned unless ``restore_best=False``.
    curriculum : Curriculum, optional
        Schedule of one task parameter, advanced when a metric reaches a threshold.
    deterministic : bool
        Train with one intra-op thread and deterministic torch algorithms (restored afterwards):
        the weights are then identical whatever thread count the caller uses. Without it they are
        bit-identical only at the same thread count.
    backend : {"auto", "torch", "numba", "triton"}
        Training rollout: ``"auto"`` runs the time loop and its backpropagation through time
        fused in Numba on the CPU for the leaky RNN, GRU, PLRNN, ALRNN and shallow PLRNN
        (:func:`neurodyn.kernels.fused_states`; same noise, same gradients to float tolerance)
        and falls back to torch for every other model (LSTM, low-rank, ...), a ``state_hook``,
        ``learning_rule="rflo"``, ``forcing`` of any model but the leaky RNN, GRU, PLRNN, ALRNN and shallow
        PLRNN or a
        dtype other than float32/float64. On a CUDA GPU ``"auto"`` runs a float32 leaky RNN, GRU,
        PLRNN, ALRNN or shallow PLRNN of at most 64 units (no hook; the leaky RNN also under
        ``forcing``, with at most 32 outputs; the other families run forced on torch there) in the fused
        Triton kernels and everything else on torch. ``"torch"`` forces the reference, ``"numba"`` and
        ``"triton"`` raise where they cannot run. Error and teacher forcing of a leaky RNN, GRU, PLRNN,
        ALRNN or shallow PLRNN with ``learning_rule="bptt"`` run inside the fused kernel (same forcing,
        same gradients to float tolerance; all but the leaky RNN in Numba only).
        ``result.config["backend"]`` records the one that ran.
    forcing : {"error", "teacher"}, optional
        Nudge each training state towards the targets through a ridge pseudo-inverse of the readout:
        error forcing ``h ← h + c W⁺ m ⊙ (y* - y)`` (Sağtekin, Bredenberg & Savin, NeurIPS 2025)
        or generalised teacher forcing ``h ← h + c m (W⁺ (y* - b) - h)``; masked by the loss mask,
        detached from the gradient, the loss taken before forcing, and absent at evaluation and
        from the returned model (see :mod:`neurodyn.training.forcing`). Needs a task with loss
        ``"mse"``.
    forcing_strength : float
        ``c`` in [0, 1] at the first iteration.
    forcing_anneal : {"none", "linear", "cosine"}
        Schedule of ``c`` over the iterations (linear and cosine reach 0 at the last one).
    forcing_ridge : float
        Tikhonov term of the readout's pseudo-inverse; a ``RuntimeWarning`` gives the readout's
        condition number when it exceeds 1e4.
    learning_rule : {"bptt", "rflo"}
        Backpropagation through time, or random feedback local online learning (Murray, eLife
        2019; a :class:`~neurodyn.models.LeakyRNN` and loss ``"mse"`` only): the same engine and
        loss, with errors fed back through a fixed random matrix seeded from ``seed`` and
        gradients through time along the leak only (RFLO's eligibility traces).

    Returns
    -------
    TrainResult
        ``status == "diverged"`` (with a ``RuntimeWarning`` saying where and why) if the loss or a
        parameter became NaN/Inf: ``model`` holds the last finite weights and nothing raises.

    Raises
    ------
    TypeError
        If ``model`` is not a RecurrentModel or ``task`` not a Task.
    ValueError
        If the model's input/output sizes do not match the task's, ``loss`` is unknown, a setting
        is out of range (:class:`~neurodyn.training.TrainConfig`), or a regulariser, early-stopping
        rule or curriculum is malformed, or ``forcing``/``learning_rule`` is unknown, its strength
        is outside [0, 1], or the model or task does not allow it, or the training rollouts (batch_size
        trials x the task's steps x the model's units, with their gradients) would exceed the memory
        available now.

    Examples
    --------
    >>> import torch
    >>> from neurodyn.models import LeakyRNN
    >>> from neurodyn.tasks import FlipFlop
    >>> from neurodyn.training import train
    >>> model, task = LeakyRNN(1, 8, 1, seed=0), FlipFlop(n_bits=1, n_steps=20)
    >>> result = train(model, task, n_iterations=5, batch_size=8, lr=1e-2, eval_every=5, seed=1,
    ...                progress=False)
    >>> result.status, len(result.history["loss"]), sorted(k for k in result.history if k.startswith("eval_"))
    ('completed', 5, ['eval_accuracy', 'eval_iteration', 'eval_loss', 'eval_mse'])
    >>> bool(torch.equal(model.w_rec, LeakyRNN(1, 8, 1, seed=0).w_rec))  # the argument is left untouched
    True
    >>> again = train(model, task, n_iterations=5, batch_size=8, lr=1e-2, eval_every=5, seed=1,
    ...               progress=False)
    >>> bool(torch.equal(again.model.w_rec, result.model.w_rec))  # same seed, same network, bit for bit
    True
    """
    check_sizes(model, task)
    if target_metric is not None and not (
        isinstance(target_metric, (tuple, list)) and len(target_metric) == 2
        and math.isfinite(float(target_metric[1]))
    ):
        raise ValueError(f"target_metric must be (metric, finite value), got {target_metric!r}")
    if not eval_every and (early_stopping is not None or curriculum is not None or target_metric):
        raise ValueError("early_stopping, curriculum and target_metric need evaluations; set eval_every > 0")
    if curriculum is not None and not isinstance(curriculum, Curriculum):
        raise ValueError(f"curriculum must be a Curriculum, got {type(curriculum).__name__}")
    cfg = TrainConfig(n_epochs=n_iterations, batch_size=batch_size, lr=lr, weight_decay=weight_decay,
                      clip_grad_norm=clip_grad_norm, seed=seed, eval_every=eval_every, progress=progress,
                      device=device, deterministic=deterministic, backend=backend)
    forcing_spec = forcing_mod.Forcing(forcing, strength=forcing_strength, anneal=forcing_anneal,
                                       ridge=forcing_ridge, rule=learning_rule)
    forcing_mod.check_forcing(model, task, forcing_spec)
    return train_on_task(model, task, cfg, loss=loss, penalties=regs_mod.make_regularizers(regularizers),
                         state_hook=state_hook, early_stopping=EarlyStopping.coerce(early_stopping),
                         curriculum=curriculum, target_metric=target_metric, forcing=forcing_spec)


def train_on_task(model: RecurrentModel, task: Task, cfg: TrainConfig, *, loss: str | None = None,
                  penalties: tuple = (), state_hook=None, extra=None, early_stopping=None, curriculum=None,
                  target_metric=None, log_keys=("loss", "task_loss"), hint: str = "", desc: str = "train",
                  forcing: forcing_mod.Forcing | None = None) -> TrainResult:
    """:func:`train` with its settings checked; ``extra(x, rollout) -> (terms, logs)`` adds loss terms
    and logs them (similarity deflation); ``forcing`` (checked) changes the training rollouts."""
    loss_name = loss_key(loss or task.loss)
    loss_fn = LOSSES[loss_name]
    model, gen = _engine.start(model, cfg)
    dtype = next(model.parameters()).dtype
    now = {"stage": 0, "task": task if curriculum is None else curriculum.task_at(task, 0)}
    now["eval"] = held_out_batch(now["task"], cfg.batch_size, cfg.seed)
    named = {"target_metric": target_metric and target_metric[0],
             "early_stopping": early_stopping and early_stopping.metric,
             "curriculum": curriculum and curriculum.advance_when[0]}
    if cfg.eval_every and any(named.values()):  # a misspelt metric is named now, not at the first evaluation
        available = evaluated_metrics(now["task"], now["eval"])
        for what, name in named.items():
            if name:
                _engine.metric(available, name, what)
    _engine.check_training_memory(desc, model, now["eval"].inputs.shape[1], cfg.batch_size,
                                  len(now["eval"].inputs) if cfg.eval_every else 0, device=cfg.device,
                                  fix="lower batch_size or the task's n_steps")
    advances: list[int] = []
    forced = forcing is not None and forcing.active
    if forced and forcing.rule != "bptt" and cfg.backend in ("numba", "triton"):
        raise ValueError(f"learning_rule={forcing.rule!r} runs on the torch training rollout; "
                         "use backend='auto' or 'torch'")
    ran = "torch" if forced and forcing.rule != "bptt" else fused_backend(
        model.params(), backend=cfg.backend, device=cfg.device, dtype=dtype, state_hook=state_hook,
        forcing="readout" if forced else False)
    feedback = (forcing_mod.feedback_matrix(model, torch_generator(cfg.seed, 3, device=cfg.device))
                if forced and forcing.rule == "rflo" else None)

    def objective(batch):
        x, y, m = batch
        logs = {"loss": None, "task_loss": None}
        if forced:
            c = forcing_mod.forcing_strength_at(forcing.strength, forcing.anneal, now["it"], cfg.n_epochs)
            rollout = forcing_mod.forced_task_rollout(model, x, y, m, forcing=forcing, strength=c,
                                                      generator=gen, feedback=feedback, state_hook=state_hook,
                                                      backend=ran)
            logs["forcing_strength"] = c
        else:
            rollout = training_rollout(model, x, backend=ran, generator=gen, state_hook=state_hook)
        task_loss = loss_fn(rollout.outputs, y, m)
        logs["task_loss"], value = task_loss, task_loss
        if penalties:
            p = model.params()
            reg_values = [r(p, rollout.states) for r in penalties]
            value = task_loss + sum(reg_values)
            logs.update({f"reg_{r.name}": v for r, v in zip(penalties, reg_values)})
        for term in (terms := extra(x, rollout) if extra else ([], {}))[0]:
            value = value + term
        logs.update({"loss": value, **terms[1]})
        return value, ({**logs, "stage": now["stage"]} if curriculum else logs)

    def advance(it: int, metrics: dict[str, float]) -> str | None:
        if now["stage"] == curriculum.n_stages - 1:
            return None
        if curriculum.ready(metrics):
            now["stage"] += 1
            now["task"] = curriculum.task_at(task, now["stage"])
            now["eval"] = held_out_batch(now["task"], cfg.batch_size, cfg.seed)
            advances.append(it)
        return "hold"

    def batches(it: int):
        now["it"] = it
        batch = now["task"].sample(cfg.batch_size, seed=cfg.seed, first_trial=it * cfg.batch_size)
        return batch.to_torch(cfg.device, dtype)

    hist, rec = _engine.run(
        list(model.parameters()), objective, batches, cfg,
        evaluate=lambda it: evaluate(model, now["task"], now["eval"], device=cfg.device, loss=loss_name),
        hooks=[advance] if curriculum else [], early_stopping=early_stopping, target_metric=target_metric,
        log_keys=(*log_keys, "forcing_strength") if forced else log_keys,
        hint=hint or ", or start from smaller recurrent weights (gain, spectral_radius)",
        desc=f"{desc} {task.name}", compiled=ran == "numba",
    )
    if advances:
        hist[0]["curriculum_advance_iteration"] = advances
    settings = {"backend": ran, "loss": loss_name, "regularizers": regs_mod.describe(penalties),
                "state_hook": state_hook is not None}
    if forced:
        settings["forcing"] = forcing.record()
    if curriculum is not None:
        settings["curriculum"] = {**curriculum.describe(), "final_stage": now["stage"],
                                  "final_value": curriculum.values[now["stage"]]}
    return one_network_result(model, hist, rec, settings)


def training_rollout(model: RecurrentModel, x: torch.Tensor, *, backend: str,
                     generator: torch.Generator | None, state_hook=None) -> Rollout:
    """``model(x, generator=generator, state_hook=state_hook)`` on ``backend`` (from ``fused_backend``).

    ``"numba"`` draws the same noise as the model's own forward (the ``t``-th standard-normal draw
    of shape (batch, state) for step ``t``) and runs the recurrence in :func:`fused_states`
    (:func:`~neurodyn.training._fused_rollout.fused_rollout`).
    """
    if backend == "torch":
        return model(x, generator=generator, state_hook=state_hook)
    return fused_rollout(model, x, generator=generator, backend=backend)


def check_sizes(model: RecurrentModel, task: Task, *, name: str = "model") -> None:
    """Raise ``ValueError`` unless ``model`` has the task's numbers of inputs and outputs.

    ``name`` is how the message refers to the model (``"models[2]"`` for one of several); a one-line
    ``TypeError`` unless ``task`` is a Task and ``model`` a RecurrentModel.
    """
    check_task(task)
    check_model(model, name)
    if model.n_inputs != task.n_inputs or model.n_outputs != task.n_outputs:
        raise ValueError(
            f"{name} has {model.n_inputs} inputs / {model.n_outputs} outputs but task "
            f"{task.name!r} needs {task.n_inputs} / {task.n_outputs}"
        )


def loss_key(name: str) -> str:
    """``name`` if it is a key of :data:`LOSSES`; a ``ValueError`` listing them otherwise."""
    if name not in LOSSES:
        raise ValueError(f"unknown loss {name!r}; choose one of {', '.join(LOSSES)}")
    return name


def evaluated_metrics(task: Task, batch: TaskBatch) -> dict[str, float]:
    """The metrics :func:`evaluate` reports for ``task`` on ``batch``, by name (their values are
    those of zero outputs, without a rollout: only the names are meant). A copy of ``task`` is asked,
    so a task that keeps state across evaluations is left as it was."""
    zeros = np.zeros((*np.shape(batch.inputs)[:2], task.n_outputs))
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return {**copy.deepcopy(task).evaluate(zeros, batch), "loss": 0.0}


def held_out_batch(task: Task, batch_size: int, seed: int):
    """The evaluation batch: ``max(batch_size, 128)`` trials from index 10**9 of the seeded stream."""
    return task.sample(max(batch_size, 128), seed=seed, first_trial=10**9)


@torch.no_grad()
def evaluate(model: RecurrentModel, task: Task, batch=None, *, n_trials: int = 256,
             seed: SeedLike = 12345, device: Any = "cpu", loss: str | None = None) -> dict[str, float]:
    """Noise-free task performance of ``model`` on a fresh or given batch.

    Returns ``task.evaluate``'s metrics plus ``"loss"``, the masked training loss (``loss`` or
    ``task.loss``) on the batch, unless the task already reports a metric of that name.

    Raises
    ------
    TypeError
        If ``batch`` is neither None nor a TaskBatch.
    ValueError
        If the rollout's states (trials x steps x units) would exceed the memory available now;
        the message names what to lower.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.models import LeakyRNN
    >>> from neurodyn.tasks import FlipFlop
    >>> from neurodyn.training import evaluate
    >>> metrics = evaluate(LeakyRNN(1, 8, 1, seed=0), FlipFlop(n_bits=1, n_steps=20), n_trials=8)
    >>> sorted(metrics)  # the task's metrics plus the masked training loss
    ['accuracy', 'loss', 'mse']
    >>> 0.0 <= metrics["accuracy"] <= 1.0
    True
    """
    if batch is not None and not isinstance(batch, TaskBatch):
        raise TypeError(f"batch must be a TaskBatch (e.g. task.sample(n_trials)) or None, got "
                        f"{type(batch).__name__}")
    if batch is None:
        batch = task.sample(n_trials, seed=seed)
    _engine.check_rollout_memory("evaluate", model, *batch.inputs.shape[:2], copies=_engine.EVAL_COPIES,
                                 device=device, fix="lower n_trials or the task's n_steps (or pass a smaller "
                                 "batch)")
    x, y, m = batch.to_torch(device, next(model.parameters()).dtype)
    with eval_mode(model):
        out = model(x, noise=False).outputs
    metrics = dict(task.evaluate(out.cpu().numpy(), batch))
    loss_fn = LOSSES.get(loss or task.loss)
    if loss_fn is not None and "loss" not in metrics:
        metrics["loss"] = float(loss_fn(out, y, m).item())
    return metrics
