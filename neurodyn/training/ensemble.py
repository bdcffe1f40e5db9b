"""Train many networks at once: stacked weights, batched matmuls, one optimiser step for all.

Network ``e`` of an ensemble gets the batches, noise and updates it would get from
:func:`neurodyn.training.train` with ``seed=seeds[e]`` (Adam is element-wise, gradient clipping and
weight decay are applied per network), so each trained network equals, to float rounding, the one
trained alone; the ensemble only shares the Python loop and the matrix kernels.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from neurodyn._seed import resolve_seed, torch_generator
from neurodyn.kernels._families import family_of, lift
from neurodyn.models._base import RecurrentModel
from neurodyn.tasks._base import Task
from neurodyn.training import regularizers as regs_mod
from neurodyn.training.ensemble_params import MASKED, effective, readout, stack_raw, unstack
from neurodyn.training.losses import LOSSES
from neurodyn.training.train import TrainingDivergedError, check_device, evaluate

#: per-network hyperparameters consumed by the trainer; every other key goes to the factory
TRAINER_KEYS = ("weight_decay", "n_active", "l1_weight", "l2_weight", "l1_rate", "l2_rate")


@dataclass(frozen=True)
class EnsembleResult:
    """What :func:`train_ensemble` returns.

    models : the trained networks (eval mode, CPU), one per seed
    histories : per-network dicts of lists (``iteration``, ``loss``, ``eval_<metric>``)
    config : shared training settings plus per-network ``seeds`` and ``hyperparameters``
    """

    models: list[RecurrentModel]
    histories: list[dict[str, list[float]]] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)

    def network_config(self, e: int) -> dict[str, Any]:
        """The training settings of network ``e`` as :func:`train` would record them."""
        cfg = {k: v for k, v in self.config.items() if k not in ("seeds", "hyperparameters")}
        hp = {k: v[e] for k, v in self.config.get("hyperparameters", {}).items()}
        return {**cfg, "seed": self.config["seeds"][e], "hyperparameters": hp, "ensemble_index": e}

    def to_xarray(self):
        """Training losses as an ``xarray.Dataset`` with dims (network, iteration)."""
        import xarray as xr

        n = max(len(h["loss"]) for h in self.histories)
        loss = np.full((len(self.histories), n), np.nan)
        for e, h in enumerate(self.histories):
            loss[e, : len(h["loss"])] = h["loss"]
        return xr.Dataset({"loss": (("network", "iteration"), loss)},
                          coords={"network": np.arange(len(self.histories)), "iteration": np.arange(n),
                                  "seed": ("network", np.asarray(self.config["seeds"]))})


def _per_network(hyper: Mapping[str, Any] | None, n: int) -> dict[str, list[Any]]:
    out = {}
    for k, v in (hyper or {}).items():
        vals = list(v) if isinstance(v, (list, tuple, np.ndarray, torch.Tensor)) else [v] * n
        if len(vals) != n:
            raise ValueError(f"hyperparameter {k!r} has {len(vals)} values for {n} networks")
        out[k] = [v.item() if hasattr(v, "item") else v for v in vals]
    return out


def _check_settings(n_iterations, batch_size, lr, eval_every, weight_decays, n_active, n_unit) -> None:
    if int(n_iterations) < 0 or int(batch_size) < 1 or int(eval_every) < 0 or not lr > 0:
        raise ValueError(
            f"need n_iterations >= 0, batch_size >= 1, eval_every >= 0 and lr > 0; got n_iterations="
            f"{n_iterations}, batch_size={batch_size}, eval_every={eval_every}, lr={lr}"
        )
    for e, wd in enumerate(weight_decays):
        if not (math.isfinite(float(wd)) and float(wd) >= 0):
            raise ValueError(f"weight_decay of network {e} must be finite and >= 0, got {wd}")
    for e, k in enumerate(n_active or ()):
        if not 1 <= int(k) <= n_unit:
            raise ValueError(f"n_active of network {e} must be in [1, n_units={n_unit}], got {k}")


def _build(models_or_factory, n_networks, seeds, hyper):
    if isinstance(models_or_factory, RecurrentModel) or not (
        callable(models_or_factory) or isinstance(models_or_factory, Sequence)
    ):
        raise TypeError("models_or_factory must be a list of models or a factory(seed=..., **hp)")
    given = None if callable(models_or_factory) else list(models_or_factory)
    n = len(given) if given is not None else (n_networks or (len(seeds) if seeds is not None else 0))
    if n < 1 or (n_networks is not None and n_networks != n):
        raise ValueError(f"give n_networks >= 1 matching the models/seeds (got {n_networks}, {n})")
    seeds = [resolve_seed(s) for s in (range(n) if seeds is None else seeds)]
    if len(seeds) != n:
        raise ValueError(f"{len(seeds)} seeds for {n} networks")
    hp = _per_network(hyper, n)
    init_keys = [k for k in hp if k not in TRAINER_KEYS]
    if given is None:
        given = [models_or_factory(seed=seeds[e], **{k: hp[k][e] for k in init_keys}) for e in range(n)]
    elif init_keys:
        raise ValueError(f"hyperparameters {init_keys} need a factory; trainer keys: {TRAINER_KEYS}")
    kinds = {(type(m), tuple((k, tuple(v.shape)) for k, v in m.state_dict().items())) for m in given}
    if len(kinds) > 1:
        raise ValueError("all networks of an ensemble must have the same class and parameter shapes")
    return given, seeds, hp


def train_ensemble(
    models_or_factory: Sequence[RecurrentModel] | Callable[..., RecurrentModel],
    task: Task,
    *,
    n_networks: int | None = None,
    seeds: Sequence[int] | None = None,
    hyperparameters: Mapping[str, Any] | None = None,
    n_iterations: int = 1000,
    batch_size: int = 64,
    lr: float = 1e-3,
    weight_decay: float = 0.0,
    clip_grad_norm: float | None = 1.0,
    loss: str | None = None,
    eval_every: int = 100,
    progress: bool = True,
    device: Any = "cpu",
) -> EnsembleResult:
    """Train an ensemble of same-architecture networks on ``task`` in one batched loop (BPTT, Adam).

    Parameters
    ----------
    models_or_factory : list of RecurrentModel, or callable ``factory(seed=..., **hp) -> model``
        Networks to train (copied), or a factory called once per network with its seed and the
        non-trainer hyperparameters (for instance ``gain`` = per-network initial weight scale).
    task : Task
    n_networks : int, optional
        Ensemble size (defaults to ``len(seeds)`` or the number of models).
    seeds : sequence of int, optional
        Per-network seed of the initialisation (factory), the batch stream and the noise; defaults
        to ``0 .. n_networks - 1``.
    hyperparameters : dict of name -> value or per-network sequence, optional
        Trainer keys: ``weight_decay`` (Adam L2), ``l1_weight``/``l2_weight``/``l1_rate``/``l2_rate``
        (regularisation strengths as in :func:`train`), ``n_active`` (size mask: only the first
        ``n_active`` units send output, so the network acts as one of that size). Other keys go
        to the factory.
    n_iterations, batch_size, lr, weight_decay, clip_grad_norm, loss, eval_every, progress, device
        As in :func:`neurodyn.training.train` (clipping is per network; no early stopping).

    Returns
    -------
    EnsembleResult

    Raises
    ------
    TrainingDivergedError
        If any network's loss becomes NaN/Inf (the message names the network and its seed).
    ValueError
        On mismatched sizes, models of different shapes, per-network value lists of the wrong
        length, an unknown loss, a negative or non-finite ``weight_decay``, ``n_active`` outside
        ``[1, n_units]``, or malformed settings (``lr <= 0``, ``batch_size < 1``); ``TypeError`` for
        an unknown model family.
    """
    device = check_device(device)
    models, seeds, hp = _build(models_or_factory, n_networks, seeds, hyperparameters)
    n = len(models)
    template = copy.deepcopy(models[0]).to(device).train()
    family = family_of(template.params())
    if family is None or family.name not in MASKED:  # stacked training knows these families only
        raise TypeError(f"train_ensemble does not know {type(template).__name__}; train it with train()")
    if template.n_inputs != task.n_inputs or template.n_outputs != task.n_outputs:
        raise ValueError(f"model has {template.n_inputs}/{template.n_outputs} inputs/outputs, "
                         f"task {task.name!r} needs {task.n_inputs}/{task.n_outputs}")
    loss_name = loss or task.loss
    if loss_name not in LOSSES:
        raise ValueError(f"unknown loss {loss_name!r}; choose one of {', '.join(LOSSES)}")
    _check_settings(n_iterations, batch_size, lr, eval_every, hp.get("weight_decay", [weight_decay] * n),
                    hp.get("n_active"), template.state_size)
    loss_fn = LOSSES[loss_name]
    raw, bufs = stack_raw(models, device)
    dtype = next(iter(raw.values())).dtype
    n_unit = template.state_size
    mask = None
    missing = [k for k in MASKED[family.name] if k not in raw and not (k == "B" and template.B is None)]
    if "n_active" in hp and missing:
        raise ValueError(f"n_active needs the raw weights {missing}, which {type(template).__name__} does "
                         "not have; train such networks with explicit sizes instead")
    if "n_active" in hp:
        mask = (torch.arange(n_unit, device=device)[None] < torch.tensor(hp["n_active"])[:, None]).to(dtype)
    wd = torch.tensor(hp.get("weight_decay", [weight_decay] * n), dtype=dtype, device=device)
    penalties = [regs_mod.make_regularizers({k: hp[k][e] for k in hp if k.endswith(("_weight", "_rate"))})
                 for e in range(n)]
    noise = torch.tensor([m.noise_scale for m in models], dtype=dtype, device=device)[:, None, None]
    gens = [torch_generator(s, 1, device=device) for s in seeds]
    opt = torch.optim.Adam(list(raw.values()), lr=lr)
    histories: list[dict[str, list[float]]] = [{"iteration": [], "loss": []} for _ in range(n)]
    from tqdm.auto import tqdm

    for it in tqdm(range(n_iterations), disable=not progress, desc=f"ensemble {task.name}"):
        batches = [task.sample(batch_size, seed=s, first_trial=it * batch_size) for s in seeds]
        x, y, m = (torch.stack(t) for t in zip(*(b.to_torch(device, dtype) for b in batches)))
        p, masked_raw = effective(template, raw, bufs, mask, family)
        lp = lift(p, family)
        h = (masked_raw["h0"][:, None, :].expand(n, batch_size, n_unit) if "h0" in raw
             else x.new_zeros((n, batch_size, n_unit)))
        states = []
        for t in range(x.shape[2]):
            h = family.step(lp, h, x[:, :, t])
            if bool((noise > 0).any()):
                xi = torch.stack([torch.randn((batch_size, n_unit), generator=g, device=device, dtype=dtype)
                                  for g in gens])
                h = h + noise * xi
            states.append(h)
        states_t = torch.stack(states, dim=2)
        out = readout(p, states_t)
        values = []
        for e in range(n):
            v = loss_fn(out[e], y[e], m[e])
            if penalties[e]:
                pe = type(p)(*(f[e] if isinstance(f, torch.Tensor) else f for f in p))
                v = v + sum(r(pe, states_t[e]) for r in penalties[e])
            values.append(v)
        total = torch.stack(values)
        bad = [e for e in range(n) if not math.isfinite(total[e].item())]
        if bad:
            raise TrainingDivergedError(f"networks {bad} (seeds {[seeds[e] for e in bad]}) diverged at "
                                        f"iteration {it}; lower lr (now {lr}) or set clip_grad_norm")
        opt.zero_grad(set_to_none=True)
        total.sum().backward()
        grads = [v.grad for v in raw.values() if v.grad is not None]
        if clip_grad_norm is not None:
            norms = torch.stack([g.reshape(n, -1).pow(2).sum(1) for g in grads]).sum(0).sqrt()
            coef = (clip_grad_norm / (norms + 1e-6)).clamp(max=1.0)
            for g in grads:
                g.mul_(coef.view(-1, *([1] * (g.ndim - 1))))
        if bool((wd != 0).any()):
            for v in raw.values():
                if v.grad is not None:
                    v.grad.add_(v.detach() * wd.view(-1, *([1] * (v.ndim - 1))))
        opt.step()
        for e in range(n):
            histories[e]["iteration"].append(it)
            histories[e]["loss"].append(float(total[e].item()))
        if eval_every and ((it + 1) % eval_every == 0 or it == n_iterations - 1):
            for e, model in enumerate(unstack(template, raw, bufs, mask, family)):
                batch = _eval_batch(task, batch_size, seeds[e])
                metrics = evaluate(model, task, batch, device=device, loss=loss_name)
                histories[e].setdefault("eval_iteration", []).append(it)
                for k, v in metrics.items():
                    histories[e].setdefault(f"eval_{k}", []).append(v)
    config = {"n_iterations": n_iterations, "batch_size": batch_size, "lr": lr,
              "weight_decay": weight_decay, "clip_grad_norm": clip_grad_norm, "loss": loss_name,
              "iterations_run": n_iterations, "seeds": seeds, "hyperparameters": hp,
              "n_networks": n}
    final = [mdl.cpu().eval() for mdl in unstack(template, raw, bufs, mask, family)]
    return EnsembleResult(final, histories, config)


def _eval_batch(task: Task, batch_size: int, seed: int):
    return task.sample(max(batch_size, 128), seed=seed, first_trial=10**9)
