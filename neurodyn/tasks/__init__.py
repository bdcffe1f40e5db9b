"""Tasks that recurrent networks are trained on (needs only NumPy).

Every task is a frozen dataclass with a vectorised, seeded
``sample(n_trials, *, seed, first_trial=0) -> TaskBatch``.
"""

from neurodyn.tasks._base import Task, TaskBatch
from neurodyn.tasks._registry import TASKS, make_task, register_task
from neurodyn.tasks.flipflop import FlipFlop

__all__ = ["TASKS", "FlipFlop", "Task", "TaskBatch", "make_task", "register_task"]
