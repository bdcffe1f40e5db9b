"""Similarity deflation: train a network to solve a task unlike earlier networks (Qian & Pehlevan, 2025)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import torch

from neurodyn._checks import check_setting
from neurodyn._seed import SeedLike, resolve_seed
from neurodyn.models._base import RecurrentModel, eval_mode
from neurodyn.tasks._base import Task
from neurodyn.training._config import TrainConfig
from neurodyn.training._engine import to_device
from neurodyn.training._results import TrainResult
from neurodyn.training.train import check_sizes, train_on_task


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
        In the dtype both inputs promote to (float64 for a float32 and a float64 input).

    Raises
    ------
    ValueError
        If ``source`` or ``target`` is not 2-D, their sample counts differ or are below 2 (no variance
        to predict), or ``ridge`` is negative or not finite.

    Examples
    --------
    >>> import torch
    >>> from neurodyn.training import ridge_predictivity
    >>> s = torch.randn(200, 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    >>> round(ridge_predictivity(s, s @ torch.randn(3, 2, dtype=torch.float64), 0.0).item(), 6)  # linear
    1.0
    >>> noise = torch.randn(200, 2, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    >>> bool(ridge_predictivity(s, noise, 0.1) < 0.1)  # unrelated: close to 0
    True
    """
    if source.ndim != 2 or target.ndim != 2 or source.shape[0] != target.shape[0] or source.shape[0] < 2:
        raise ValueError(f"source and target must be (sample, unit) with the same number (>= 2) of samples, "
                         f"got {tuple(source.shape)} and {tuple(target.shape)}")
    check_setting("ridge", ridge, 0.0)
    dtype = torch.promote_types(source.dtype, target.dtype)
    S = source.to(dtype) - source.to(dtype).mean(0)
    T = target.to(dtype) - target.to(dtype).mean(0)
    n, d = S.shape
    cov = S.T @ S / n
    reg = ridge * torch.trace(cov) / d + 1e-12
    W = torch.linalg.solve(cov + reg * torch.eye(d, dtype=S.dtype, device=S.device), S.T @ T / n)
    return 1.0 - torch.sum((T - S @ W) ** 2) / (torch.sum(T**2) + 1e-30)


@torch.no_grad()
def _reference_states(models: Sequence[RecurrentModel], x: torch.Tensor) -> torch.Tensor:
    out = []
    for m in models:
        with eval_mode(m):
            out.append(m(x.to(next(m.parameters()).dtype), noise=False).states.to(x.dtype))
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
        ``status == "diverged"`` (with a ``RuntimeWarning``) if the loss or a parameter became
        NaN/Inf; ``model`` then holds the last finite weights.

    Raises
    ------
    ValueError
        For no reference models, negative weights, mismatched input/output sizes or settings out of
        range (see :class:`~neurodyn.training.TrainConfig`).

    References
    ----------
    Qian & Pehlevan (2025). Discovering alternative solutions beyond the simplicity bias in recurrent
    neural networks (iterative neural similarity deflation, INSD).

    Examples
    --------
    >>> from neurodyn.models import LeakyRNN
    >>> from neurodyn.tasks import FlipFlop
    >>> from neurodyn.training import train_deflated
    >>> task = FlipFlop(n_bits=1, n_steps=10)
    >>> first = LeakyRNN(1, 6, 1, seed=0)
    >>> result = train_deflated(LeakyRNN(1, 6, 1, seed=1), task, reference_models=[first], lam=1.0,
    ...                         n_iterations=3, batch_size=4, eval_every=0, progress=False)
    >>> result.status, len(result.history["predictivity"])
    ('completed', 3)
    """
    if not reference_models:
        raise ValueError("reference_models is empty; give at least one trained network to deflate against")
    for name, v in (("lam", lam), ("ridge", ridge), ("activity_penalty", activity_penalty)):
        check_setting(name, v, 0.0)
    if isinstance(reference_models, RecurrentModel):
        raise ValueError("reference_models must be a sequence of networks; wrap one in a list: "
                         "reference_models=[model]")
    for m in (model, *reference_models):
        check_sizes(m, task)
    cfg = TrainConfig(n_epochs=n_iterations, batch_size=batch_size, lr=lr, clip_grad_norm=clip_grad_norm,
                      seed=seed, eval_every=eval_every, progress=progress, device=device)
    refs = [to_device(m, cfg.device) for m in reference_models]

    def deflate(x, roll):
        h = roll.states.reshape(-1, roll.states.shape[-1])
        r2 = ridge_predictivity(_reference_states(refs, x).to(torch.float64), h.to(torch.float64), ridge)
        activity = torch.mean(h**2)
        return [lam * r2.to(h.dtype), activity_penalty * activity], {"predictivity": r2, "activity": activity}

    res = train_on_task(model, task, cfg, extra=deflate, desc="deflate", hint=" or lower lam",
                        log_keys=("loss", "task_loss", "predictivity", "activity"))
    deflation = {"lam": float(lam), "ridge": float(ridge), "activity_penalty": float(activity_penalty),
                 "n_references": len(refs)}
    return replace(res, config={**res.config, "deflation": deflation})


#: the options train_deflation_sequence passes to every network's training (train and train_deflated)
SEQUENCE_OPTIONS = ("n_iterations", "batch_size", "lr", "clip_grad_norm", "eval_every", "progress", "device")


def train_deflation_sequence(
    make_model: Callable[[int], RecurrentModel],
    task: Task,
    *,
    n_networks: int = 3,
    lam: float = 1.0,
    ridge: float = 0.1,
    activity_penalty: float = 1e-2,
    seed: SeedLike = 0,
    **options: Any,
) -> list[TrainResult]:
    """Iterated similarity deflation (INSD): network ``k`` is deflated against networks ``0..k-1``.

    Network 0 is trained normally (:func:`neurodyn.training.train`, no target stop); network ``k >= 1``
    with :func:`train_deflated` against every earlier network, so each new solution is pushed away
    from all solutions found so far (Qian & Pehlevan 2025).

    Parameters
    ----------
    make_model : callable ``seed -> RecurrentModel``
        Builds an untrained network; called with ``seed + k`` for network ``k``.
    task : Task
    n_networks : int
        Networks in the sequence (>= 2).
    lam, ridge, activity_penalty
        As in :func:`train_deflated` (network 0 is trained without them).
    seed : int, Generator or None
        Network ``k`` is built and trained with ``seed + k``.
    **options
        ``n_iterations``, ``batch_size``, ``lr``, ``clip_grad_norm``, ``eval_every``, ``progress``,
        ``device``, passed to every network's training.

    Returns
    -------
    list of TrainResult
        One per network, in order; ``config["deflation"]["n_references"]`` is ``k`` for network ``k``.

    Raises
    ------
    ValueError
        For ``n_networks < 2``, an option not among those above (checked before network 0 trains) or
        any setting :func:`train_deflated` refuses.

    Examples
    --------
    >>> from neurodyn.models import LeakyRNN
    >>> from neurodyn.tasks import FlipFlop
    >>> from neurodyn.training import train_deflation_sequence
    >>> runs = train_deflation_sequence(lambda s: LeakyRNN(1, 6, 1, seed=s), FlipFlop(n_bits=1, n_steps=10),
    ...                                 n_networks=3, n_iterations=2, batch_size=4, eval_every=0,
    ...                                 progress=False)
    >>> [r.config.get("deflation", {}).get("n_references", 0) for r in runs]
    [0, 1, 2]
    """
    from neurodyn.training.train import train

    check_setting("n_networks", n_networks, 2, integer=True, hint=" (a standard network, then deflated ones)")
    unknown = sorted(set(options) - set(SEQUENCE_OPTIONS))
    if unknown:  # refused before network 0 trains, not after
        raise ValueError(f"train_deflation_sequence does not take {', '.join(unknown)}; its training options "
                         f"are {', '.join(SEQUENCE_OPTIONS)}")
    base = resolve_seed(seed)
    runs = [train(make_model(base), task, seed=base, **options)]
    for k in range(1, int(n_networks)):
        runs.append(train_deflated(make_model(base + k), task, reference_models=[r.model for r in runs],
                                   lam=lam, ridge=ridge, activity_penalty=activity_penalty, seed=base + k,
                                   **options))
    return runs


__all__ = ["ridge_predictivity", "train_deflated", "train_deflation_sequence"]
