"""The flip-flop notebook executes top to bottom at tiny size."""

import os

import pytest
from _paths import EXAMPLES

NOTEBOOK = EXAMPLES / "flipflop_fixed_points.ipynb"


@pytest.mark.slow
def test_flipflop_notebook_runs(tmp_path, monkeypatch):
    import nbclient
    import nbformat

    monkeypatch.setenv("NEURODYN_TINY", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    outputs = "".join(
        o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
    )
    assert "distinct corners among" in outputs
    assert os.listdir(tmp_path) == []
