"""Modules imported on first use, so that defining tasks (and the command line's parsers) costs no NumPy.

``from neurodyn._lazy import numpy as np`` gives a stand-in that imports NumPy the first time one of
its attributes is read (``np.zeros``), then holds NumPy's attributes itself and becomes a plain module,
so later reads cost what they cost on NumPy. ``neurodyn.tasks`` uses it: its dataclasses, registry and option
defaults are plain Python, and ``neurodyn train TASK --help`` lists them without loading NumPy.
"""

from __future__ import annotations

import importlib
import types
from typing import Any

__all__ = ["LazyModule", "numpy"]


class LazyModule(types.ModuleType):
    """A module object that imports the module ``name`` when one of its attributes is first read.

    Parameters
    ----------
    name : str
        The module's import name (``"numpy"``).

    Examples
    --------
    >>> from neurodyn._lazy import LazyModule
    >>> m = LazyModule("fractions")
    >>> "Fraction" in vars(m)  # nothing imported yet
    False
    >>> m.Fraction(1, 3) + m.Fraction(1, 6)
    Fraction(1, 2)
    >>> "Fraction" in vars(m), type(m).__name__  # the module's attributes are now held here
    (True, 'module')
    """

    def __getattr__(self, attr: str) -> Any:
        module = importlib.import_module(self.__name__)
        held = vars(self)
        held.update(vars(module))

        def forward(name: str) -> Any:  # what the module hands out on request (numpy.random): kept here too
            held[name] = value = getattr(module, name)
            return value

        held["__getattr__"] = forward
        self.__class__ = types.ModuleType  # a plain module from now on: no lookup goes through here again
        return forward(attr)


#: NumPy, imported on first attribute access
numpy = LazyModule("numpy")
