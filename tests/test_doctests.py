"""Every public function and class carries an ``Examples`` section, and every example runs as written.

The names are those in the ``__all__`` of each public module (see ``tests/_public.py``), resolved to the
object they name and kept once per object; an object is checked where it is defined, so a failure names
its defining module.
"""

from __future__ import annotations

import doctest
import inspect
import re
import warnings
from collections import defaultdict

import matplotlib
import pytest
import torch
from _public import exported_objects, import_module

matplotlib.use("Agg")

OPTIONFLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

#: names exempt from needing an Examples section (deprecated shims: none today; a shim added here
#: gets a comment saying what replaces it)
EXEMPT: set[str] = set()

#: names whose Examples section is still to be written (kept short; the test below fails when a name
#: in this set has gained an example, so it shrinks as they are written)
PENDING: set[str] = set()

OBJECTS = exported_objects()
BY_MODULE: dict[str, list[tuple[str, object]]] = defaultdict(list)
for _qualname, _obj in OBJECTS.values():
    BY_MODULE[_obj.__module__].append((_qualname, _obj))

_EXAMPLES = re.compile(r"^[ \t]*Examples[ \t]*\n[ \t]*-{3,}[ \t]*\n", re.M)


def own_doc(obj) -> str:
    """The object's own docstring (a dataclass's generated signature does not count)."""
    return (obj.__dict__.get("__doc__") if inspect.isclass(obj) else obj.__doc__) or ""


def has_examples(obj) -> bool:
    doc = own_doc(obj)
    match = _EXAMPLES.search(doc)
    return match is not None and ">>>" in doc[match.end():]


def test_the_walk_finds_the_exported_objects():
    names = {qualname for qualname, _ in OBJECTS.values()}
    assert len(names) == len(OBJECTS) > 150
    assert "neurodyn.io._load.load" in names and "neurodyn.tasks.flipflop.FlipFlop" in names


def test_every_public_function_and_class_has_an_examples_section():
    missing = sorted(q for q, obj in OBJECTS.values()
                     if not has_examples(obj) and q not in EXEMPT | PENDING)
    assert not missing, f"{len(missing)} public names have no Examples section with a >>> line: {missing}"


def test_pending_and_exempt_lists_are_current():
    names = {q for q, _ in OBJECTS.values()}
    # a module whose optional dependency is missing is not walked
    unknown = {q for q in (EXEMPT | PENDING) - names
               if import_module(q.rsplit(".", 1)[0], skip=False) is not None}
    assert not unknown, f"not public names: {sorted(unknown)}"
    done = sorted(q for q, obj in OBJECTS.values() if q in PENDING and has_examples(obj))
    assert not done, f"these have an Examples section now; remove them from PENDING: {done}"


@pytest.mark.slow
@pytest.mark.parametrize("module_name", sorted(BY_MODULE))
def test_examples_run(module_name):
    import matplotlib.pyplot as plt

    module = inspect.getmodule(BY_MODULE[module_name][0][1])
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=OPTIONFLAGS)
    attempted, seen = 0, set()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny examples: one thread is fastest, and results do not depend on it
    try:
        for qualname, obj in BY_MODULE[module_name]:
            for test in finder.find(obj, qualname, module=module, globs=dict(vars(module))):
                if test.name in seen:  # a method found through two classes
                    continue
                seen.add(test.name)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DeprecationWarning)
                    runner.run(test)
                attempted += len(test.examples)
    finally:
        torch.set_num_threads(threads)
        plt.close("all")
    results = runner.summarize(verbose=False)
    assert results.failed == 0, f"{results.failed} of {results.attempted} examples failed in {module_name}"
    if not all(q in PENDING | EXEMPT for q, _ in BY_MODULE[module_name]):
        assert attempted > 0, f"no examples ran in {module_name}"
