"""The Examples sections of the plotting functions run as written."""

import doctest
import importlib

import matplotlib
import pytest

matplotlib.use("Agg")

MODULES = ["neurodyn.plotting._style", "neurodyn.plotting.fixed_points",
           "neurodyn.plotting.fixed_point_figure", "neurodyn.plotting.tasks"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    import matplotlib.pyplot as plt

    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    plt.close("all")
    assert result.attempted > 0 and result.failed == 0
