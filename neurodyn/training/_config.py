"""The settings every training entry point shares, validated in one place."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, fields
from typing import Any

import torch

from neurodyn._checks import check_device, check_setting
from neurodyn._seed import SeedLike, resolve_seed
from neurodyn._threads import one_thread

OPTIMIZERS = {"adam": torch.optim.Adam, "radam": torch.optim.RAdam}
BACKENDS = ("auto", "torch", "numba", "triton")  # training rollouts; the entry point records the one that ran


@dataclass(frozen=True)
class TrainConfig:
    """Settings of the training engine, shared by every training entry point.

    ``n_epochs`` (>= 1) epochs of ``batches_per_epoch`` (>= 1) optimiser steps on batches of
    ``batch_size`` (>= 1) trials or windows; history rows, the learning-rate schedule, evaluations
    and the last-finite-weights snapshot are per epoch. Task training takes one batch per epoch and
    calls it an iteration (``epoch_name="iteration"``: settings, history and messages then say
    ``n_iterations``, ``iteration``). ``optimizer`` is ``"adam"`` or ``"radam"`` (torch.optim) with
    learning rate ``lr`` (> 0), decayed exponentially per epoch to reach ``lr_end`` (> 0; ``None``:
    constant), and (coupled) ``weight_decay`` (>= 0). ``clip_grad_norm`` clips the gradient norm (per
    network in an ensemble); ``None`` or 0 means no clipping, as ``--clip-grad-norm 0`` does.
    ``seed`` is resolved to an int and ``device`` checked at construction; ``eval_every`` (>= 0)
    is the evaluation period in epochs (0: none); ``progress`` shows a tqdm bar. ``deterministic``
    trains with one intra-op thread and ``torch.use_deterministic_algorithms`` (both restored
    afterwards; see :func:`deterministic_mode`), so the weights do not depend on the thread count.
``backend`` picks the training rollout: ``"auto"`` (the fused Numba forward + BPTT on the CPU or
the fused Triton one on a CUDA GPU where the model has one, see
:func:`neurodyn.kernels.fused_backend`, else torch), ``"torch"``, ``"numba"`` or ``"triton"``.

    Raises
    ------
    ValueError
        One line naming the setting, the value and the allowed range, for every value that would
        fail or silently stop learning (0 epochs, ``lr <= 0``, ``lr_end = 0``, a negative
        clipping threshold, ...), an unknown optimizer or an unavailable device.

    Examples
    --------
    >>> TrainConfig(n_epochs=10, clip_grad_norm=0).clip_grad_norm is None
    True
    >>> TrainConfig(n_epochs=0)
    Traceback (most recent call last):
    ...
    ValueError: n_iterations must be an integer >= 1, got 0
    """

    n_epochs: int = 1000
    batches_per_epoch: int = 1
    epoch_name: str = "iteration"
    batch_size: int = 64
    lr: float = 1e-3
    optimizer: str = "adam"
    lr_end: float | None = None
    weight_decay: float = 0.0
    clip_grad_norm: float | None = 1.0
    seed: SeedLike = 0
    eval_every: int = 100
    progress: bool = True
    device: Any = "cpu"
    deterministic: bool = False
    backend: str = "auto"

    def __post_init__(self) -> None:
        for name, low in (("n_epochs", 1), ("batches_per_epoch", 1), ("batch_size", 1), ("eval_every", 0)):
            shown = f"n_{self.epoch_name}s" if name == "n_epochs" else name
            check_setting(shown, getattr(self, name), low, integer=True)
            object.__setattr__(self, name, int(getattr(self, name)))
        check_setting("lr", self.lr, 0.0, strict=True)
        check_setting("weight_decay", self.weight_decay, 0.0)
        if self.lr_end is not None:
            check_setting("lr_end", self.lr_end, 0.0, strict=True,
                          hint="; an exponential decay never reaches 0, pass lr_end=None for a constant rate")
        if self.clip_grad_norm is not None:
            check_setting("clip_grad_norm", self.clip_grad_norm, 0.0, hint=" (0 or None: no clipping)")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"unknown optimizer {self.optimizer!r}; choose one of {', '.join(OPTIMIZERS)}")
        if self.backend not in BACKENDS:
            raise ValueError(f"unknown backend {self.backend!r}; choose one of {', '.join(BACKENDS)}")
        object.__setattr__(self, "clip_grad_norm", float(self.clip_grad_norm or 0.0) or None)
        object.__setattr__(self, "seed", resolve_seed(self.seed))
        object.__setattr__(self, "device", check_device(self.device))

    @property
    def lr_decay(self) -> float | None:
        """Per-epoch factor of the exponential learning-rate decay, or None."""
        return None if self.lr_end is None else (self.lr_end / self.lr) ** (1.0 / self.n_epochs)

    def record(self) -> dict[str, Any]:
        """The settings as plain values (stored in checkpoints), named as the entry point names them."""
        skip = {"progress", "device", "epoch_name", "backend"}
        skip |= set() if self.deterministic else {"deterministic"}
        skip |= {"batches_per_epoch"} if self.batches_per_epoch == 1 else set()
        return {(f"n_{self.epoch_name}s" if f.name == "n_epochs" else f.name): getattr(self, f.name)
                for f in fields(self) if f.name not in skip}


@contextlib.contextmanager
def deterministic_mode(enabled: bool = True) -> Iterator[None]:
    """Run the block with one intra-op thread and deterministic torch algorithms, then restore both.

    Reductions in torch split work by thread, so training with the same seed gives weights that
    differ in the last bits between thread counts (and drift apart over many steps). Inside this
    context the result is the same for every thread count the caller uses. ``enabled=False`` does
    nothing.

    Examples
    --------
    >>> import torch
    >>> before = torch.get_num_threads()
    >>> with deterministic_mode():
    ...     torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    (1, True)
    >>> torch.get_num_threads() == before
    True
    """
    if not enabled:
        yield
        return
    algorithms = torch.are_deterministic_algorithms_enabled()
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    with one_thread():
        torch.use_deterministic_algorithms(True)
        try:
            yield
        finally:
            torch.use_deterministic_algorithms(algorithms, warn_only=warn_only)
