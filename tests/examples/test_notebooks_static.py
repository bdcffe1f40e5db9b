"""What a reader of the two notebooks relies on, checked in their code without running them: one
tiny-mode variable and one output variable, no forced backend, nothing deleted after it is written, and
every figure laid out so that its labels do not overlap."""

import json
import re

import pytest
from _paths import EXAMPLES

NOTEBOOKS = ["flipflop_fixed_points.ipynb", "fit_recordings.ipynb"]


def code(name: str) -> list[str]:
    nb = json.loads((EXAMPLES / name).read_text())
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_one_tiny_and_one_output_variable_and_no_forced_backend(name):
    text = "\n".join(code(name))
    variables = set(re.findall(r"environ\.get\(\"(\w+)\"", text))
    assert {"NEURODYN_TINY", "NEURODYN_OUT"} <= variables and not {v for v in variables if "TINY" in v} - {
        "NEURODYN_TINY"}
    assert "matplotlib.use(" not in text  # figures show inline in Jupyter
    assert not re.search(r"\.unlink\(|os\.remove\(|rmtree\(", text)  # results stay where they are written
    for cell in code(name):  # the output folder is made where a file is written into it, not up front
        if ".mkdir(" in cell:
            assert re.search(r"\.(savefig|save|write_text|to_netcdf)\(", cell.split(".mkdir(", 1)[1]), cell


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_figure_is_laid_out(name):
    for cell in code(name):
        for call in re.findall(r"plt\.(?:subplots|figure)\(.*", cell):
            assert "layout=" in call or "tight_layout()" in cell, call
