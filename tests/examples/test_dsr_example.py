"""The recordings-fitting example runs at tiny size, and its notebook matches the script."""

import json
import os
import subprocess
import sys

import pytest
from _paths import REPO

ROOT = REPO
SCRIPT = ROOT / "examples" / "fit_recordings.py"
NOTEBOOK = ROOT / "examples" / "fit_recordings.ipynb"


def script_cells(text: str) -> list[tuple[str, str]]:
    """(kind, source) of the ``# %%`` cells of a percent-format script."""
    cells, kind, lines = [], None, []
    for line in text.splitlines():
        if line.startswith("# %%"):
            if kind is not None:
                cells.append((kind, "\n".join(lines).strip("\n")))
            kind, lines = ("markdown" if "[markdown]" in line else "code"), []
        elif kind == "markdown":
            lines.append(line[2:] if line.startswith("# ") else line.lstrip("#"))
        else:
            lines.append(line)
    cells.append((kind, "\n".join(lines).strip("\n")))
    return cells


def test_notebook_matches_script():
    nb = json.loads(NOTEBOOK.read_text())
    got = [(c["cell_type"], "".join(c["source"])) for c in nb["cells"]]
    assert got == script_cells(SCRIPT.read_text())


@pytest.mark.slow
def test_example_runs_tiny(shared_data, tmp_path):
    # the study's .mat (no stated licence) is read here, in a test, through the example's opt-in variable
    env = {**os.environ, "TINY": "1", "NEURODYN_DATA": str(shared_data), "NEURODYN_OUT": str(tmp_path),
           "OMP_NUM_THREADS": "1",
           "NEURODYN_FMRI_INPUTS": str(shared_data / "fmri_koppe_nback" / "NBKO_PLRNN_dataset.mat")}
    proc = subprocess.run([sys.executable, str(SCRIPT)], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    table = (tmp_path / "scores.md").read_text()
    for name in ("ECG", "EEG", "M1 spikes", "fMRI", "fMRI + inputs"):
        assert sum(line.startswith(f"| {name} |") for line in table.splitlines()) == 3
    kind = [line for line in proc.stdout.splitlines() if line.startswith("ECG attractor: ")]
    assert len(kind) == 1 and kind[0].split("; ")[0].split(": ", 1)[1].startswith(
        ("fixed point", "limit cycle", "chaotic attractor", "quasi-periodic orbit")), proc.stdout[-2000:]
    assert "(method orbits;" in proc.stdout  # the exact search for the attractor's cycle ran
    assert (tmp_path / "ecg_attractor.png").stat().st_size > 10_000
