"""The public modules of neurodyn and the objects they export, shared by the API and doctest tests."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import warnings

import pytest

import neurodyn

#: optional dependencies whose absence skips importing a module (its __all__ is still checked)
OPTIONAL = ("triton", "numba", "pynwb", "neurogym", "ot")


def public_modules() -> list[str]:
    """Dotted names of ``neurodyn`` and every module below it with no ``_private`` part, sorted."""
    names = ["neurodyn"]
    for info in pkgutil.walk_packages(neurodyn.__path__, "neurodyn."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return sorted(names)


def import_module(name: str, *, skip: bool = True):
    """Import ``name``, hiding deprecation warnings; a missing optional dependency skips the test
    (or, with ``skip=False``, returns None)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # deprecated module paths
            return importlib.import_module(name)
    except ImportError as err:
        if err.name and err.name.split(".")[0] in OPTIONAL:
            if skip:
                pytest.skip(f"{name} needs {err.name}")
            return None
        raise


def exported_objects(modules: list[str] | None = None) -> dict[int, tuple[str, object]]:
    """Every function or class named in a public ``__all__`` and defined in neurodyn, keyed by ``id``
    (re-exports resolve to one object), with its qualified name ``module.name`` where it is defined.

    A compiled kernel (a Numba dispatcher or a Triton JIT function) stands for the Python function it
    compiles, whose docstring it shows."""
    found: dict[int, tuple[str, object]] = {}
    for name in modules or public_modules():
        module = import_module(name, skip=False)
        if module is None:
            continue
        for attr in getattr(module, "__all__", []):
            obj = getattr(module, attr, None)
            if not (inspect.isfunction(obj) or inspect.isclass(obj)):
                obj = getattr(obj, "py_func", None) or getattr(obj, "fn", None)  # a compiled kernel
                if not inspect.isfunction(obj):
                    continue
            home = getattr(obj, "__module__", "") or ""
            if home.split(".")[0] != "neurodyn" or id(obj) in found:
                continue
            found[id(obj)] = (f"{home}.{obj.__qualname__}", obj)
    return found
