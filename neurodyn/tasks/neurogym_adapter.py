"""Adapter from neurogym environments (Molano-Mazón et al. 2022, "NeuroGym: an open resource
for developing and sharing neuroscience tasks") to padded, masked, seeded batches.

neurogym is optional (extra ``neurogym``); this module never imports it at package import.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from neurodyn._seed import numpy_rng
from neurodyn.tasks._base import Task, TaskBatch

__all__ = ["NeurogymTask", "from_neurogym", "make_neurogym_task", "neurogym_available"]


def neurogym_available() -> bool:
    """Whether neurogym can be imported (checked without importing it)."""
    return importlib.util.find_spec("neurogym") is not None


@dataclass(frozen=True)
class NeurogymTask(Task):
    """A neurogym ``TrialEnv`` seen as a neurodyn task (built by :func:`from_neurogym`).

    Each trial ``i`` re-seeds the environment with an integer derived from ``(seed, i)`` and
    calls ``env.new_trial()``; its observations ``env.ob`` (``env.obs`` in old neurogym) and
    ground truth ``env.gt`` are copied and padded to ``n_steps`` (mask 0 on padding). So the
    same seed gives the same trials whatever the batch is split into. Discrete action spaces
    give class-index targets (``loss = "cross_entropy"``), continuous ones ``"mse"`` targets.

    Parameters
    ----------
    env : neurogym.TrialEnv
        Anything with ``seed(int)`` (or ``reset(seed=int)``), ``new_trial()``, ``ob``/``obs``,
        ``gt``, ``dt``, ``observation_space.shape`` and ``action_space`` (``.n`` or ``.shape``).
    n_steps : int
        Padded trial length in steps; longer trials raise ``ValueError``.
    """

    name = "neurogym"
    env: Any = field(compare=False, repr=False, default=None)
    n_steps: int = 100

    def __post_init__(self) -> None:
        if self.env is None:
            raise ValueError("give a neurogym environment: from_neurogym(env, n_steps=...)")
        if self.n_steps < 1:
            raise ValueError(f"n_steps must be >= 1, got {self.n_steps}")

    @property
    def loss(self) -> str:  # type: ignore[override]
        return "cross_entropy" if hasattr(self.env.action_space, "n") else "mse"

    @property
    def dt(self) -> float:
        return float(self.env.dt)

    @property
    def n_inputs(self) -> int:
        return int(np.prod(self.env.observation_space.shape))

    @property
    def n_outputs(self) -> int:
        space = self.env.action_space
        return int(space.n) if hasattr(space, "n") else int(np.prod(space.shape))

    def _trial(self, trial_seed: int) -> tuple[np.ndarray, np.ndarray]:
        env = self.env
        if hasattr(env, "seed"):
            env.seed(trial_seed)
        else:
            env.reset(seed=trial_seed)
        env.new_trial()
        ob = np.asarray(env.ob if hasattr(env, "ob") else env.obs, dtype=np.float64)
        gt = np.asarray(env.gt, dtype=np.float64)
        return ob.reshape(ob.shape[0], -1), gt.reshape(gt.shape[0], -1)

    def _sample(self, n_trials: int, seed: int, first_trial: int) -> TaskBatch:
        n_out = 1 if self.loss == "cross_entropy" else self.n_outputs
        inputs = np.zeros((n_trials, self.n_steps, self.n_inputs), dtype=np.float32)
        targets = np.zeros((n_trials, self.n_steps, n_out), dtype=np.float32)
        mask = np.zeros((n_trials, self.n_steps, 1), dtype=np.float32)
        lengths = np.empty(n_trials, dtype=np.int64)
        for i in range(n_trials):
            trial_seed = int(numpy_rng(seed, 0, first_trial + i).integers(0, 2**31 - 1))
            ob, gt = self._trial(trial_seed)
            if ob.shape[0] > self.n_steps:
                raise ValueError(
                    f"a trial of {ob.shape[0]} steps exceeds n_steps={self.n_steps}; "
                    "increase n_steps"
                )
            lengths[i] = ob.shape[0]
            inputs[i, : ob.shape[0]] = ob
            targets[i, : gt.shape[0]] = gt
            mask[i, : ob.shape[0]] = 1.0
        return TaskBatch(
            inputs=inputs, targets=targets, mask=mask, dt=self.dt, seed=seed,
            first_trial=first_trial, trial_params={"n_steps": lengths},
            periods={"trial": np.stack([np.zeros_like(lengths), lengths], axis=1)},
        )

    def evaluate(self, outputs: np.ndarray, batch: TaskBatch) -> dict[str, float]:
        """For discrete actions: ``accuracy`` over the masked steps whose ground truth is a
        response (class != 0) and ``step_accuracy`` over all masked steps; else the MSE."""
        if self.loss != "cross_entropy":
            return super().evaluate(outputs, batch)
        pred = np.asarray(outputs).argmax(-1)
        gt = batch.targets[..., 0]
        valid = batch.mask[..., 0] > 0
        respond = valid & (gt != 0)
        return {
            "accuracy": float((pred == gt)[respond].mean()) if respond.any() else float("nan"),
            "step_accuracy": float((pred == gt)[valid].mean()),
        }


def from_neurogym(env: Any, *, n_steps: int) -> NeurogymTask:
    """Wrap a neurogym environment (or any object with its trial interface) as a task.

    Raises
    ------
    TypeError
        If ``env`` lacks ``new_trial``, ``gt``-producing trials, ``observation_space`` or
        ``action_space``.
    """
    missing = [a for a in ("new_trial", "observation_space", "action_space", "dt")
               if not hasattr(env, a)]
    if missing:
        raise TypeError(f"env lacks {', '.join(missing)}; pass a neurogym TrialEnv")
    return NeurogymTask(env=env, n_steps=int(n_steps))


def make_neurogym_task(env_id: str, *, n_steps: int, **env_kwargs: Any) -> NeurogymTask:
    """``neurogym.make(env_id, **env_kwargs)`` wrapped by :func:`from_neurogym`.

    Raises
    ------
    ImportError
        If neurogym is not installed (``pip install "neurodyn[neurogym]"``).
    """
    if not neurogym_available():
        raise ImportError('neurogym is not installed; pip install "neurodyn[neurogym]"')
    import neurogym

    return from_neurogym(neurogym.make(env_id, **env_kwargs), n_steps=n_steps)
