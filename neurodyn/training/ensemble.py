"""Train many networks at once: stacked weights, batched matmuls, one optimiser step for all.

Network ``e`` of an ensemble gets the batches, noise and updates it would get from
:func:`neurodyn.training.train` with ``seed=seeds[e]`` (Adam is element-wise, gradient clipping and
weight decay are applied per network), so each trained network equals, to float rounding, the one
trained alone; the ensemble only shares the Python loop and the matrix kernels. With
``backend="auto"`` an ensemble of any fused family (leaky RNN, GRU, PLRNN, ALRNN, shallow PLRNN) on
the CPU runs its time loop and backpropagation through time in one fused Numba call for all networks
(:func:`neurodyn.kernels.fused_states`, one network per parallel item), the same per-network kernel
body a lone ``train(..., backend="auto")`` runs; the optimiser step stays the engine's one batched step.
Error and teacher forcing (:mod:`neurodyn.training.forcing`) force each network through its own
readout, in the fused kernel for leaky RNNs, GRUs, PLRNNs, ALRNNs and shallow PLRNNs and in the batched
torch loop for
the other families.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import torch

from neurodyn._seed import torch_generator
from neurodyn.kernels._families import check_shared, family_of, lift
from neurodyn.kernels.fused import ReadoutForcing, finite_targets, fused_backend, fused_states, fuses_outputs
from neurodyn.kernels.reference import draw_noise
from neurodyn.models._base import RecurrentModel
from neurodyn.tasks._base import Task, _resolve_seeds, check_task
from neurodyn.training import _engine
from neurodyn.training import forcing as forcing_mod
from neurodyn.training import regularizers as regs_mod
from neurodyn.training._config import TrainConfig, check_setting
from neurodyn.training._results import EnsembleResult
from neurodyn.training.ensemble_params import MASKED, effective, readout, stack_raw, unstack
from neurodyn.training.losses import LOSSES
from neurodyn.training.train import check_sizes, evaluate, held_out_batch, loss_key

__all__ = ["EnsembleResult", "train_ensemble"]

#: per-network hyperparameters consumed by the trainer; every other key goes to the factory
TRAINER_KEYS = ("weight_decay", "n_active", "l1_weight", "l2_weight", "l1_rate", "l2_rate")


def _per_network(hyper: Mapping[str, Any] | None, n: int) -> dict[str, list[Any]]:
    out = {}
    for k, v in (hyper or {}).items():
        many = isinstance(v, (list, tuple)) or (isinstance(v, (np.ndarray, torch.Tensor)) and v.ndim > 0)
        vals = list(v) if many else [v] * n
        if len(vals) != n:
            raise ValueError(f"hyperparameter {k!r} has {len(vals)} values for {n} networks")
        if any(hasattr(x, "item") and (x.numel() if isinstance(x, torch.Tensor) else np.size(x)) != 1
               for x in vals):
            got = (f"an array of shape {tuple(np.shape(v))}" if isinstance(v, (np.ndarray, torch.Tensor))
                   else f"a {type(v).__name__} with a non-scalar entry")
            raise ValueError(f"hyperparameter {k!r} must be a scalar or one value per network ({n}), "
                             f"got {got}")
        out[k] = [x.item() if hasattr(x, "item") else x for x in vals]
    return out


def _build(models_or_factory, n_networks, seeds, hyper):
    if isinstance(models_or_factory, RecurrentModel) or not (
        callable(models_or_factory) or isinstance(models_or_factory, Sequence)
    ):
        raise TypeError("models_or_factory must be a list of models or a factory(seed=..., **hp)")
    if n_networks is not None and (isinstance(n_networks, bool)
                                   or not isinstance(n_networks, (int, np.integer))):
        raise TypeError(f"n_networks must be an int, got {type(n_networks).__name__} {n_networks!r}")
    seeds = None if seeds is None else _resolve_seeds(seeds)  # a sequence, each entry a seed
    given = None if callable(models_or_factory) else list(models_or_factory)
    n = len(given) if given is not None else (n_networks or (len(seeds) if seeds is not None else 0))
    if n < 1 or (n_networks is not None and n_networks != n):
        raise ValueError(f"give n_networks >= 1 matching the models/seeds (got {n_networks}, {n})")
    seeds = list(range(n)) if seeds is None else seeds
    if len(seeds) != n:
        raise ValueError(f"{len(seeds)} seeds for {n} networks")
    hp = _per_network(hyper, n)
    init_keys = [k for k in hp if k not in TRAINER_KEYS]
    if given is None:
        given = [models_or_factory(seed=seeds[e], **{k: hp[k][e] for k in init_keys}) for e in range(n)]
    elif init_keys:
        raise ValueError(f"hyperparameters {init_keys} need a factory; trainer keys: {TRAINER_KEYS}")
    for e, m in enumerate(given):
        if not isinstance(m, RecurrentModel):
            source = "the factory returned" if callable(models_or_factory) else "models_or_factory holds"
            raise TypeError(f"network {e}: {source} an object of type {type(m).__name__}, not a "
                            "RecurrentModel (e.g. lambda seed: LeakyRNN(1, 8, 1, seed=seed))")
    kinds = {(type(m), tuple((k, tuple(v.shape)) for k, v in m.state_dict().items())) for m in given}
    if len(kinds) > 1:
        raise ValueError("all networks of an ensemble must have the same class and parameter shapes")
    # the trained models are copies of the first: every setting outside the weights must be shared
    check_shared([m.params() for m in given], what="train_ensemble",
                 extra={"noise_std": [getattr(m, "noise_std", None) for m in given]},
                 fix="train networks with different settings in separate ensembles")
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
    backend: str = "auto",
    forcing: str | None = None,
    forcing_strength: float = 0.5,
    forcing_anneal: str = "none",
    forcing_ridge: float = 1e-3,
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
        to ``0 .. n_networks - 1``. Each step's batches of all networks come from one
        :meth:`~neurodyn.tasks.Task.sample_networks` call, network ``e``'s the trials ``task.sample``
        gives with ``seed=seeds[e]``.
    hyperparameters : dict of name -> value or per-network sequence, optional
        Trainer keys: ``weight_decay`` (Adam L2), ``l1_weight``/``l2_weight``/``l1_rate``/``l2_rate``
        (regularisation strengths as in :func:`train`), ``n_active`` (size mask: only the first
        ``n_active`` units send output, so the network acts as one of that size). Other keys go
        to the factory.
    n_iterations, batch_size, lr, weight_decay, clip_grad_norm, loss, eval_every, progress, device
        As in :func:`neurodyn.training.train` (clipping is per network; no early stopping).
    backend : {"auto", "torch", "numba", "triton"}
        Training rollout, as in :func:`~neurodyn.training.train`: ``"auto"`` runs an ensemble of
        leaky RNNs, GRUs, PLRNNs, ALRNNs or shallow PLRNNs on the CPU (float32/float64) in the fused
        Numba kernels and an ensemble of any of these families on a CUDA GPU (float32, at most 64
        units; the shallow PLRNN at most 64 latent and 64 hidden) in the fused Triton kernels, all
        networks in one call per step
        (:func:`neurodyn.kernels.fused_backend`), and every other case on torch; ``"numba"`` and
        ``"triton"`` raise where they cannot run. ``result.config["backend"]`` records the one that ran.
        Under ``forcing`` a leaky-RNN, GRU, PLRNN, ALRNN or shallow-PLRNN ensemble runs fused, the forcing
        inside the kernels: in Numba on the CPU, and a leaky-RNN one in Triton on a CUDA GPU (float32, at
        most 64 units and 32 outputs); every other family, or a larger ensemble or another family on CUDA,
        runs the batched torch loop.
    forcing : {"error", "teacher"}, optional
        Nudge each training state towards the targets through a ridge pseudo-inverse of its own
        network's readout: error forcing ``h ← h + c W⁺ m ⊙ (y* - y)`` (Sağtekin, Bredenberg &
        Savin, NeurIPS 2025) or generalised teacher forcing ``h ← h + c m (W⁺ (y* - b) - h)``;
        masked by the loss mask, detached from the gradient, the loss taken before forcing, and
        absent at evaluation and from the returned models (see :mod:`neurodyn.training.forcing`).
        Needs a task with loss ``"mse"``. Backpropagation through time only (no RFLO).
    forcing_strength : float
        ``c`` in [0, 1] at the first iteration.
    forcing_anneal : {"none", "linear", "cosine"}
        Schedule of ``c`` over the iterations (linear and cosine reach 0 at the last one).
    forcing_ridge : float
        Tikhonov term of the readout's pseudo-inverse; a ``RuntimeWarning`` gives the largest
        condition number of the networks' readouts when it exceeds 1e4.

    Returns
    -------
    EnsembleResult
        ``status`` per network: a network whose loss or parameters become NaN/Inf stops with its last
        finite weights (``"diverged"``, with a ``RuntimeWarning`` naming it and its seed), exactly as
        it would alone, while the others train on.

    Raises
    ------
    ValueError
        On mismatched sizes, models of different shapes or settings (``alpha``, ``activation``,
        ``noise_std``, ``n_relu``, ...: every non-tensor field of the params), per-network value
        lists of the wrong length, a hyperparameter array that is neither a scalar (0-d counts as one)
        nor one value per network, an unknown loss, a negative or non-finite ``weight_decay``,
        ``n_active`` outside ``[1, n_units]``, malformed settings (see
        :class:`~neurodyn.training.TrainConfig`), ``backend="numba"`` for an ensemble the fused
        kernel cannot train, or ``forcing`` unknown, its strength outside [0, 1], or a model or task
        that does not allow it (as in :func:`~neurodyn.training.train`), or the training rollouts
        (networks x batch_size trials x the task's steps x units, with their gradients) would exceed
        the memory available now.
    TypeError
        For an unknown model family, ``seeds`` that is not a sequence of seeds (an int, a
        generator), ``n_networks`` that is not an int, a factory or list giving something other than
        a RecurrentModel, or a ``task`` that is not a Task.

    Examples
    --------
    >>> from neurodyn.models import LeakyRNN
    >>> from neurodyn.tasks import FlipFlop
    >>> from neurodyn.training import train_ensemble
    >>> result = train_ensemble(lambda seed, gain: LeakyRNN(1, 6, 1, gain=gain, seed=seed),
    ...                         FlipFlop(n_bits=1, n_steps=10), n_networks=3,
    ...                         hyperparameters={"gain": [0.5, 1.0, 1.5]}, n_iterations=2, batch_size=4,
    ...                         eval_every=0, progress=False)
    >>> len(result.models), result.config["seeds"], result.config["hyperparameters"]["gain"]
    (3, [0, 1, 2], [0.5, 1.0, 1.5])
    >>> result.config["backend"]  # all three networks' rollouts ran in one fused Numba call per step
    'numba'
    >>> forced = train_ensemble(lambda seed: LeakyRNN(1, 6, 1, seed=seed), FlipFlop(n_bits=1, n_steps=10),
    ...                         n_networks=2, forcing="error", forcing_anneal="linear", n_iterations=3,
    ...                         batch_size=4, eval_every=0, progress=False)
    >>> forced.config["forcing"]["method"], forced.config["backend"], forced.histories[0]["forcing_strength"]
    ('error', 'numba', [0.5, 0.25, 0.0])
    """
    cfg = TrainConfig(n_epochs=n_iterations, batch_size=batch_size, lr=lr, weight_decay=weight_decay,
                      clip_grad_norm=clip_grad_norm, eval_every=eval_every, progress=progress, device=device,
                      backend=backend)
    device = cfg.device
    check_task(task)  # before the factory builds any network
    models, seeds, hp = _build(models_or_factory, n_networks, seeds, hyperparameters)
    n = len(models)
    template = _engine.to_device(models[0], device)
    family = family_of(template.params())
    if family is None or family.name not in MASKED:  # stacked training knows these families only
        raise TypeError(f"train_ensemble does not know {type(template).__name__}; train it with train()")
    check_sizes(template, task)
    spec = forcing_mod.Forcing(forcing, strength=forcing_strength, anneal=forcing_anneal, ridge=forcing_ridge)
    forcing_mod.check_forcing(template, task, spec)
    forced = spec.method is not None
    loss_name = loss_key(loss or task.loss)
    n_unit, loss_fn = template.state_size, LOSSES[loss_name]
    for e, (wd_e, k) in enumerate(zip(hp.get("weight_decay", [0] * n), hp.get("n_active", [1] * n))):
        check_setting(f"weight_decay of network {e}", wd_e, 0)
        check_setting(f"n_active of network {e}", k, 1, high=n_unit, integer=True)
    task._trial_range(batch_size, 0, n, "sample_networks")  # the batches' own estimate comes first
    _engine.check_rollout_memory(f"train_ensemble of {n} networks", template, n * batch_size,
                                 task.sample(1, seed=seeds[0]).inputs.shape[1], copies=_engine.TRAIN_COPIES,
                                 device=device, fix="lower batch_size, n_networks or the task's n_steps")
    raw, bufs = stack_raw(models, device)
    dtype = next(iter(raw.values())).dtype
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
    batched_loss = torch.vmap(loss_fn)  # (network, trial, time, output) -> (network,)
    with torch.no_grad():
        ran = fused_backend(effective(template, raw, bufs, mask, family)[0], backend=cfg.backend,
                            device=device, dtype=dtype, forcing="readout" if forced else False)
    now = {"it": 0}

    def batches(it):
        now["it"] = it
        # every network's batch in one call, (network, trial, time, channel), as task.sample draws it
        arrays = task.sample_networks(batch_size, seeds, first_trial=it * batch_size)
        return tuple(torch.as_tensor(a, dtype=dtype, device=device) for a in arrays)

    def objective(batch):
        x, y, m = batch
        p, masked_raw = effective(template, raw, bufs, mask, family)
        h = (masked_raw["h0"][:, None, :].expand(n, batch_size, n_unit) if "h0" in raw
             else x.new_zeros((n, batch_size, n_unit)))
        noisy = bool((noise > 0).any())
        logs, c = {}, 0.0
        if forced:
            c = logs["forcing_strength"] = forcing_mod.forcing_strength_at(spec.strength, spec.anneal,
                                                                           now["it"], n_iterations)
        if c > 0:  # each network forced through its own readout, as train forces one network
            W, b, pinv = forcing_mod._readout_inverse(_affine_readouts(p, n, n_unit, x), spec.ridge)
            y = finite_targets(y, m)  # once, not per step
        if ran != "torch":  # one fused call for all networks; noise drawn as the torch loop draws it
            xi = (noise[..., None] * torch.stack([draw_noise(g, (batch_size, n_unit), x.shape[2], dtype)
                                                  for g in gens]) if noisy else None)
            spec_t = ReadoutForcing(spec.method, c, y, m, W, b, pinv) if c > 0 else None
            # on the backend fused_backend chose; the transposes are views, no copies
            if fuses_outputs(p, ran):  # the readout inside the loops (leaky RNNs on Numba)
                states_t, out = fused_states(p, h, x, noise=xi, forcing=spec_t, backend=ran, outputs=True)
            else:
                time_major = fused_states(p, h, x, noise=xi, forcing=spec_t, backend=ran).transpose(1, 2)
                out = readout(p, time_major).transpose(1, 2)  # and its gradient arrives time-major
                states_t = time_major.transpose(1, 2)
        else:
            states, lp = [], lift(p, family)
            for t in range(x.shape[2]):
                h = family.step(lp, h, x[:, :, t])
                if noisy:
                    xi = torch.stack([torch.randn((batch_size, n_unit), generator=g, device=device,
                                                  dtype=dtype) for g in gens])
                    h = h + noise * xi
                states.append(h)
                if c > 0:
                    h = forcing_mod.forcing_step(h, h.detach() @ W.mT + b[:, None], y[:, :, t], m[:, :, t],
                                                 method=spec.method, strength=c, pinv=pinv, bias=b[:, None])
            states_t = torch.stack(states, dim=2)
            out = readout(p, states_t)
        # every network's loss in one mapped call: indexing out[e] once per network would give the
        # backward one full-size zero-filled gradient per network to sum
        total = batched_loss(out, y, m)
        extra = [sum(r(type(p)(*(f[e] if isinstance(f, torch.Tensor) else f for f in p)), states_t[e])
                     for r in penalties[e]) if penalties[e] else None for e in range(n)]
        if any(v is not None for v in extra):
            total = total + torch.stack([v if v is not None else total.new_zeros(()) for v in extra])
        return total, {"loss": total, **logs}

    def evaluate_all(it):
        models = unstack(template, raw, bufs, mask, family)
        return [evaluate(m, task, held_out_batch(task, batch_size, s), device=device, loss=loss_name)
                for m, s in zip(models, seeds)]

    hist, rec = _engine.run(list(raw.values()), objective, batches, cfg, n_networks=n,
                            network_weight_decay=wd, evaluate=evaluate_all, desc=f"ensemble {task.name}",
                            labels=[f"network {e} (seed {s})" for e, s in enumerate(seeds)],
                            log_keys=("loss", "forcing_strength") if forced else ("loss",),
                            compiled=ran == "numba")
    config = {**{k: v for k, v in rec.items() if k != "seed"}, "backend": ran, "loss": loss_name,
              "seeds": seeds, "hyperparameters": hp, "n_networks": n}
    if forced:
        config["forcing"] = spec.record()
    final = [mdl.cpu().eval() for mdl in unstack(template, raw, bufs, mask, family)]
    return EnsembleResult(final, hist, config, rec["status"])


def _affine_readouts(p, n: int, n_unit: int, like: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Each network's readout ``(W (network, output, unit), b (network, output))``, found as
    :func:`~neurodyn.training.observation.affine_readout` finds one model's: the readout at 0 and at
    the unit vectors."""
    probe = torch.cat([like.new_zeros((1, n_unit)), torch.eye(n_unit, dtype=like.dtype, device=like.device)])
    with torch.no_grad():
        y = readout(p, probe.expand(n, 1, n_unit + 1, n_unit))[:, 0]  # (network, 1 + unit, output)
    return (y[:, 1:] - y[:, :1]).mT, y[:, 0]
