"""Tasks that recurrent networks are trained on (needs only NumPy).

Every task is a frozen dataclass with a vectorised, seeded
``sample(n_trials, *, seed, first_trial=0) -> TaskBatch``.
"""

from neurodyn._seed import trial_rngs
from neurodyn.tasks._base import Task, TaskBatch
from neurodyn.tasks._registry import TASKS, make_task, register_task
from neurodyn.tasks.continuous_report import ContinuousReport
from neurodyn.tasks.delayed_xor import DelayedXOR
from neurodyn.tasks.dms import DelayedMatchToSample
from neurodyn.tasks.evidence_integration import EvidenceIntegration
from neurodyn.tasks.flipflop import FlipFlop
from neurodyn.tasks.hmm import HMMParams, make_hmm, sample_hmm
from neurodyn.tasks.hmm_emulation import (
    HMMEmulation,
    compute_dwell_times,
    compute_emission_frequencies,
    compute_symbol_transitions,
)
from neurodyn.tasks.neurogym_adapter import NeurogymTask, from_neurogym, make_neurogym_task
from neurodyn.tasks.path_integration import PathIntegration
from neurodyn.tasks.romo import DelayedDiscrimination
from neurodyn.tasks.sine_wave import SineWave

__all__ = [
    "TASKS", "ContinuousReport", "DelayedDiscrimination", "DelayedMatchToSample", "DelayedXOR",
    "EvidenceIntegration", "FlipFlop", "HMMEmulation", "HMMParams", "MixtureFit", "NeurogymTask",
    "PathIntegration", "SineWave", "Task", "TaskBatch", "compute_dwell_times", "compute_emission_frequencies",
    "compute_symbol_transitions", "fit_mixture_model", "from_neurogym", "make_hmm", "make_neurogym_task",
    "make_task", "register_task", "sample_hmm", "sample_mixture_responses", "trial_rngs",
]

#: names whose module needs NumPy (and the result layer) at import; loaded on first access
_ON_ACCESS = {name: "neurodyn.tasks.swap_model"
              for name in ("MixtureFit", "fit_mixture_model", "sample_mixture_responses")}


def __getattr__(name: str):
    if name in _ON_ACCESS:
        import importlib

        return getattr(importlib.import_module(_ON_ACCESS[name]), name)
    raise AttributeError(f"module 'neurodyn.tasks' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
