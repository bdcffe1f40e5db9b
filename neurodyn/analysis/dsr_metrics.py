"""Deprecated module path: use :mod:`neurodyn.analysis.reconstruction`."""

import warnings

from neurodyn.analysis.reconstruction._metrics import *  # noqa: F401,F403
from neurodyn.analysis.reconstruction._metrics import __all__  # noqa: F401

warnings.warn("neurodyn.analysis.dsr_metrics moved to neurodyn.analysis.reconstruction", DeprecationWarning,
              stacklevel=2)
