"""Adapter from neurogym environments (Molano-Mazón et al. 2022, "NeuroGym: an open resource
for developing and sharing neuroscience tasks") to padded, masked, seeded batches.

neurogym is optional (extra ``neurogym``); this module never imports it at package import.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from typing import Any

from neurodyn._lazy import numpy as np
from neurodyn._seed import numpy_rng
from neurodyn.tasks._base import Task, TaskBatch
from neurodyn.tasks._checks import at_least, rule

__all__ = ["NeurogymTask", "from_neurogym", "make_neurogym_task", "neurogym_available"]


def neurogym_available() -> bool:
    """Whether neurogym can be imported (checked without importing it).

    Examples
    --------
    >>> from neurodyn.tasks.neurogym_adapter import neurogym_available
    >>> isinstance(neurogym_available(), bool)
    True
    """
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

    Raises
    ------
    ValueError
        At construction, for a field that breaks its rule: no ``env``, or ``n_steps`` < 1; the count fields
        (``n_steps``) must be integers (a fraction, NaN, a bool or a string is refused; a whole float such as
        ``4.0`` is stored as ``4``).

    Examples
    --------
    Built by :func:`from_neurogym`; any object with the trial interface of a ``TrialEnv`` works:

    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> from neurodyn.tasks import NeurogymTask
    >>> class Env:  # a two-step trial: observe a cue, then report it
    ...     dt = 100
    ...     observation_space = SimpleNamespace(shape=(2,))
    ...     action_space = SimpleNamespace(n=3)
    ...     def seed(self, seed):
    ...         self.rng = np.random.default_rng(seed)
    ...     def new_trial(self):
    ...         cue = int(self.rng.integers(2))
    ...         self.ob = np.eye(2)[[cue, cue]]
    ...         self.gt = np.array([0, 1 + cue])
    >>> task = NeurogymTask(env=Env(), n_steps=4)
    >>> task.loss, task.n_inputs, task.n_outputs, task.dt
    ('cross_entropy', 2, 3, 100.0)
    >>> batch = task.sample(3, seed=0)
    >>> batch.inputs.shape, batch.targets.shape, batch.mask[0, :, 0].tolist()  # padded to 4 steps
    ((3, 4, 2), (3, 4, 1), [1.0, 1.0, 0.0, 0.0])
    """

    name = "neurogym"
    env: Any = field(compare=False, repr=False, default=None)
    n_steps: int = 100
    checks = (rule(lambda t: t.env is None, "give a neurogym environment: from_neurogym(env, n_steps=...)"),
              at_least("n_steps", 1))

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
        return self._batch(
            inputs, targets, mask, seed=seed, first_trial=first_trial, trial_params={"n_steps": lengths},
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

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> from neurodyn.tasks import from_neurogym
    >>> class Env:  # the trial interface of a neurogym TrialEnv, continuous actions
    ...     dt = 20
    ...     observation_space = SimpleNamespace(shape=(1,))
    ...     action_space = SimpleNamespace(shape=(1,))
    ...     def seed(self, seed):
    ...         self.rng = np.random.default_rng(seed)
    ...     def new_trial(self):
    ...         self.ob = self.rng.normal(size=(5, 1))
    ...         self.gt = np.cumsum(self.ob, axis=0)
    >>> task = from_neurogym(Env(), n_steps=5)
    >>> task.loss, task.sample(2, seed=1).targets.shape
    ('mse', (2, 5, 1))
    >>> from_neurogym(object(), n_steps=5)
    Traceback (most recent call last):
    ...
    TypeError: env lacks new_trial, observation_space, action_space, dt; pass a neurogym TrialEnv
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

    Examples
    --------
    Needs neurogym; without it the call raises ``ImportError`` naming the extra to install:

    >>> from neurodyn.tasks import make_neurogym_task
    >>> from neurodyn.tasks.neurogym_adapter import neurogym_available
    >>> if neurogym_available():
    ...     task = make_neurogym_task("PerceptualDecisionMaking-v0", n_steps=200)
    ...     loss = task.loss
    ... else:
    ...     loss = "cross_entropy"
    >>> loss
    'cross_entropy'
    """
    if not neurogym_available():
        raise ImportError('neurogym is not installed; pip install "neurodyn[neurogym]"')
    import neurogym

    return from_neurogym(neurogym.make(env_id, **env_kwargs), n_steps=n_steps)
