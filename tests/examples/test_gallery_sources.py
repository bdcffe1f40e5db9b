"""Each gallery page is the one source of its example: a jupytext percent-format script that the site
executes and `make notebooks` turns into a notebook. Checked here without running them: the notebook
has the page's cells, at most one size variable (NEURODYN_FULL), no forced backend, no files written,
and every figure laid out so that its labels do not overlap."""

import re

import pytest
from _paths import DOCS, REPO

PAGES = sorted((DOCS / "gallery").glob("*.py"))


def code_cells(nb) -> list[str]:
    return [cell.source for cell in nb.cells if cell.cell_type == "code"]


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_page_converts_to_a_notebook_cell_for_cell(page):
    jupytext = pytest.importorskip("jupytext", reason="the docs extra is missing: pip install -e '.[docs]'")
    text = page.read_text()
    nb = jupytext.reads(jupytext.writes(jupytext.reads(text, fmt="py:percent"), fmt="ipynb"), fmt="ipynb")
    assert len(nb.cells) == len(re.findall(r"^# %%", text, flags=re.M))
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# ")  # the page title
    compile("\n".join(code_cells(nb)), str(page), "exec")


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_one_size_variable_no_backend_no_files(page):
    text = page.read_text()
    sizes = {v for v in re.findall(r"environ\.get\(\"(\w+)\"", text) if v.endswith(("_FULL", "_TINY"))}
    assert sizes <= {"NEURODYN_FULL"}  # a page that is small enough at full size has none
    assert "matplotlib.use(" not in text  # figures are embedded by the notebook's inline backend
    assert not re.search(r"\.(savefig|to_netcdf|write_text|unlink)\(|os\.remove\(", text)
    for call in re.findall(r"plt\.(?:subplots|figure)\(.*", text):
        assert "layout=" in call, call


def test_make_notebooks_converts_every_page():
    rule = re.search(r"^notebooks:.*?(?=^\S|\Z)", (REPO / "Makefile").read_text(), flags=re.M | re.S).group(0)
    assert "docs/gallery/*.py" in rule and "jupytext" in rule and "--to ipynb" in rule
    assert "notebooks/" in (REPO / ".gitignore").read_text().splitlines()
