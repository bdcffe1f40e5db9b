"""neurodyn: train recurrent networks on tasks or fit them to recordings, then take their dynamics apart.

Sub-packages: ``tasks`` → ``models`` → ``kernels`` → ``training`` → ``analysis`` → ``plotting``;
``io`` holds checkpoints and data loaders, ``cli`` the command line.
"""

from neurodyn import analysis, io, models, tasks, training
from neurodyn._seed import SeedLike
from neurodyn._version import __version__
from neurodyn.training import train

__all__ = ["SeedLike", "__version__", "analysis", "io", "models", "plotting", "tasks", "train", "training"]


def __getattr__(name: str):
    if name == "plotting":
        import importlib

        return importlib.import_module("neurodyn.plotting")
    raise AttributeError(f"module 'neurodyn' has no attribute {name!r}")
