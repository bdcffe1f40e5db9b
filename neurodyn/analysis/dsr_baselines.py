"""Deprecated module path: use :mod:`neurodyn.analysis.reconstruction`."""

import warnings

from neurodyn.analysis.reconstruction._baselines import *  # noqa: F401,F403
from neurodyn.analysis.reconstruction._baselines import __all__  # noqa: F401

warnings.warn("neurodyn.analysis.dsr_baselines moved to neurodyn.analysis.reconstruction", DeprecationWarning,
              stacklevel=2)
