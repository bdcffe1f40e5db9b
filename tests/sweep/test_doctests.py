"""The Examples sections of the sweep modules and of fixed_point_graph run as doctests."""

import doctest
import importlib

import pytest

FAST = ["neurodyn.sweep._spec", "neurodyn.analysis.fixed_points._graph"]
SLOW = ["neurodyn.sweep._run", "neurodyn.sweep._estimate"]  # they train networks


@pytest.mark.parametrize("name", FAST + [pytest.param(n, marks=pytest.mark.slow) for n in SLOW])
def test_examples_run(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
