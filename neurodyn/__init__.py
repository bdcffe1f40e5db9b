"""neurodyn: train recurrent networks on tasks or fit them to recordings, then take their dynamics apart.

Sub-packages: ``tasks`` → ``models`` → ``kernels`` → ``training`` → ``analysis`` → ``plotting``;
``io`` holds checkpoints and data loaders, ``sweep`` runs populations of networks on Dask, ``cli`` the
command line. Sub-packages are imported on first use, so ``import neurodyn.tasks`` needs only NumPy.
"""

import importlib
from typing import TYPE_CHECKING

from neurodyn._version import __version__

if TYPE_CHECKING:
    from neurodyn import analysis, io, kernels, models, plotting, sweep, tasks, training
    from neurodyn._seed import SeedLike
    from neurodyn.training import train

_SUBPACKAGES = ("analysis", "io", "kernels", "models", "plotting", "sweep", "tasks", "training")
__all__ = [
    "SeedLike", "__version__", "analysis", "io", "kernels", "models", "plotting", "sweep", "tasks", "train",
    "training",
]


def __getattr__(name: str):
    if name in _SUBPACKAGES:
        return importlib.import_module(f"neurodyn.{name}")
    if name == "train":
        return importlib.import_module("neurodyn.training").train
    if name == "SeedLike":
        return importlib.import_module("neurodyn._seed").SeedLike
    raise AttributeError(f"module 'neurodyn' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
