"""The front door: every public module declares ``__all__``, its names resolve, and the package
namespaces document what they export."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest
from _public import import_module, public_modules


def source_path(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    return Path(spec.origin)


def declared_all(name: str) -> list[str] | None:
    """``__all__`` as written in the module's source (a list of strings or an import of one)."""
    tree = ast.parse(source_path(name).read_text())
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            return ast.literal_eval(node.value)
        if isinstance(node, ast.ImportFrom) and any(a.name == "__all__" for a in node.names):
            return []  # re-exported from the module it names (deprecated module paths)
    return None


MODULES = public_modules()


def test_the_walk_finds_the_sub_packages():
    assert {"neurodyn.analysis", "neurodyn.io", "neurodyn.kernels", "neurodyn.models", "neurodyn.tasks",
            "neurodyn.training", "neurodyn.plotting", "neurodyn.cli"} <= set(MODULES)
    assert "neurodyn.analysis.fixed_points._result" not in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_public_module_declares_all_and_every_name_resolves(name):
    declared = declared_all(name)
    assert declared is not None, f"{name} has no __all__"
    module = import_module(name)
    names = list(module.__all__)
    assert all(isinstance(n, str) for n in names) and len(names) == len(set(names)), name
    missing = [n for n in names if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ names what it does not define: {missing}"


PACKAGES = [m for m in MODULES if source_path(m).name == "__init__.py"]


def documented(obj) -> bool:
    """An own docstring (not one a dataclass or NamedTuple writes from the fields)."""
    doc = (obj.__dict__.get("__doc__") if inspect.isclass(obj) else obj.__doc__) or ""
    return bool(doc.strip()) and not doc.startswith(f"{getattr(obj, '__name__', '')}(")


@pytest.mark.parametrize("name", PACKAGES)
def test_package_exports_are_documented(name):
    module = import_module(name)
    undocumented = [n for n in module.__all__ if (inspect.isfunction(obj := getattr(module, n))
                                                  or inspect.isclass(obj)) and not documented(obj)]
    assert not undocumented, f"{name} exports names without a docstring: {undocumented}"


def test_accidental_helpers_are_not_exported():
    from neurodyn.analysis import similarity
    from neurodyn.analysis.similarity._compare_rdms import upper_triangle

    assert "upper_triangle" not in similarity.__all__ and not hasattr(similarity, "upper_triangle")
    assert callable(upper_triangle)  # still importable from its private module
