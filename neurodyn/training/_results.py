"""What training returns: one family of results with a common ``status`` (one per network for an
ensemble): ``"completed"``, ``"diverged"`` (NaN/Inf met: the model holds the weights of the last epoch
that ended finite, the history stops there, ``config["divergence"]`` says where and why),
``"stopped_early"`` (early stopping), ``"target_reached"`` (target metric met) or ``"interrupted"``
(Ctrl-C / ``KeyboardInterrupt``: the model holds the weights of the last finished epoch, or the best
ones under early stopping)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from neurodyn.models._base import RecurrentModel

STATUSES = ("completed", "diverged", "stopped_early", "target_reached", "interrupted")


class TrainingDivergedError(FloatingPointError):
    """Training met a NaN/Inf loss or parameter; raised only by ``result.raise_if_diverged()``.

    Examples
    --------
    Training does not raise on NaN/Inf; the result says so and raises only when asked:

    >>> from neurodyn.models import LeakyRNN
    >>> from neurodyn.training import TrainingDivergedError, TrainResult
    >>> divergence = {"message": "loss is NaN at iteration 7"}
    >>> result = TrainResult(LeakyRNN(1, 4, 1), config={"divergence": divergence}, status="diverged")
    >>> try:
    ...     result.raise_if_diverged()
    ... except TrainingDivergedError as err:
    ...     print(err)
    loss is NaN at iteration 7
    >>> issubclass(TrainingDivergedError, FloatingPointError)
    True
    """


class _Outcome:
    config: dict[str, Any]

    def raise_if_diverged(self) -> None:
        """Raise :class:`TrainingDivergedError` (with where and why) if training diverged."""
        info = self.config.get("divergence")
        messages = [d["message"] for d in (info if isinstance(info, list) else [info]) if d]
        if messages:
            raise TrainingDivergedError("; ".join(messages))


@dataclass(frozen=True)
class TrainResult(_Outcome):
    """What :func:`~neurodyn.training.train` and the other task trainers return.

    model : the trained copy (the model passed in is left untouched), in eval mode
    history : per-iteration lists ``iteration``, ``loss`` (task loss plus penalties), ``task_loss``,
        ``reg_<name>`` per regulariser, ``stage`` with a curriculum, and the evaluations
        (``eval_iteration``, ``eval_<metric>``, ``eval_loss``)
    config : the settings (stored in checkpoints) with the resolved ``seed``, ``iterations_run``,
        ``status``, ``stop_reason``, early stopping / curriculum outcomes and ``divergence``

    Examples
    --------
    >>> from neurodyn.models import LeakyRNN
    >>> from neurodyn.tasks import FlipFlop
    >>> from neurodyn.training import train
    >>> result = train(LeakyRNN(1, 8, 1, seed=0), FlipFlop(n_bits=1, n_steps=20), n_iterations=4,
    ...                batch_size=4, eval_every=2, progress=False)
    >>> result.status, result.divergence, result.config["iterations_run"]
    ('completed', None, 4)
    >>> result.history["iteration"], result.history["eval_iteration"]  # 0-based; evaluated every 2nd
    ([0, 1, 2, 3], [1, 3])
    >>> result.raise_if_diverged()  # nothing to raise
    """

    model: RecurrentModel
    history: dict[str, list[float]] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    status: str = "completed"

    @property
    def divergence(self) -> dict[str, Any] | None:
        """Where and why training diverged (``None`` unless ``status == "diverged"``)."""
        return self.config.get("divergence")


@dataclass(frozen=True)
class FitResult(TrainResult):
    """What :func:`~neurodyn.training.fit_teacher_forcing` returns: history per epoch (``epoch``,
    ``loss``, ``alpha``, ``lr``, ``seconds`` and the ``callback`` values), ``config["epochs_run"]``.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.models import PLRNN
    >>> from neurodyn.training import fit_teacher_forcing
    >>> t = np.arange(300) * 0.1
    >>> data = np.stack([np.sin(t), np.cos(t)], axis=1)  # (time, channel)
    >>> result = fit_teacher_forcing(PLRNN(0, 4, 2, seed=0), data, n_epochs=2, batches_per_epoch=2,
    ...                              batch_size=4, seq_len=20, progress=False)
    >>> result.status, result.config["epochs_run"], result.history["epoch"]
    ('completed', 2, [0, 1])
    """


def one_network_result(model: RecurrentModel, histories: list[dict[str, list[Any]]], record: dict[str, Any],
                       settings: Mapping[str, Any] | None = None, *,
                       kind: type[TrainResult] = TrainResult) -> TrainResult:
    """The result of training one network on the engine (:func:`neurodyn.training._engine.run`).

    ``model`` is set to eval mode; ``histories`` (one per network, here one) and ``record`` are what
    the engine returned; ``config`` is ``record`` followed by the entry point's own ``settings``
    (which win on a shared key) and ``status`` is the one ``record`` holds. ``kind`` is
    :class:`TrainResult` or a subclass such as :class:`FitResult`.
    """
    return kind(model=model.eval(), history=histories[0], config={**record, **(settings or {})},
                status=record["status"])


#: config entries of an ensemble that hold one value per network
PER_NETWORK = ("status", "iterations_run", "divergence")


@dataclass(frozen=True)
class EnsembleResult(_Outcome):
    """What :func:`~neurodyn.training.train_ensemble` returns.

    models : the trained networks (eval mode, CPU), one per seed
    histories : per-network dicts of lists (``iteration``, ``loss``, ``eval_<metric>``)
    config : shared settings plus per-network ``seeds``, ``hyperparameters`` and :data:`PER_NETWORK`
    status : per network (a diverged network keeps its last finite weights, the others train on)

    Examples
    --------
    >>> from neurodyn.models import LeakyRNN
    >>> from neurodyn.tasks import FlipFlop
    >>> from neurodyn.training import train_ensemble
    >>> result = train_ensemble(lambda seed: LeakyRNN(1, 6, 1, seed=seed), FlipFlop(n_bits=1, n_steps=10),
    ...                         seeds=[3, 4], n_iterations=3, batch_size=4, eval_every=0, progress=False)
    >>> len(result.models), result.status
    (2, ['completed', 'completed'])
    >>> result.network_config(1)["seed"]
    4
    >>> dict(result.to_xarray().sizes)
    {'network': 2, 'iteration': 3}
    """

    models: list[RecurrentModel]
    histories: list[dict[str, list[float]]] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)
    status: list[str] = field(default_factory=list)

    def network_config(self, e: int) -> dict[str, Any]:
        """The training settings of network ``e`` as :func:`train` would record them."""
        cfg = {k: v for k, v in self.config.items() if k not in ("seeds", "hyperparameters", *PER_NETWORK)}
        per = {k: self.config[k][e] for k in PER_NETWORK if k in self.config}
        hp = {k: v[e] for k, v in self.config.get("hyperparameters", {}).items()}
        return {**cfg, **per, "seed": self.config["seeds"][e], "hyperparameters": hp, "ensemble_index": e}

    def to_xarray(self):
        """Training losses as an ``xarray.Dataset`` with dims (network, iteration) and each status."""
        import xarray as xr

        n = max(len(h["loss"]) for h in self.histories)
        loss = np.full((len(self.histories), n), np.nan)
        for e, h in enumerate(self.histories):
            loss[e, : len(h["loss"])] = h["loss"]
        return xr.Dataset({"loss": (("network", "iteration"), loss)},
                          coords={"network": np.arange(len(self.histories)), "iteration": np.arange(n),
                                  "seed": ("network", np.asarray(self.config["seeds"])),
                                  "status": ("network", np.asarray(self.status or ["completed"] * len(loss),
                                                                   dtype=str))})
