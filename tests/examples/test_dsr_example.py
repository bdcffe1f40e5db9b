"""The recordings-fitting notebook runs at tiny size opened from examples/, and matches its script."""

import json

import pytest
from _notebooks import execute, n_images, text_output, untracked_files
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
def test_notebook_runs_tiny_from_its_folder(shared_data, tmp_path, monkeypatch):
    """Opened from examples/ with no data folder given: the recordings are found by walking up."""
    # the study's .mat (no stated licence) is read here, in a test, through the example's opt-in variable
    monkeypatch.setenv("NEURODYN_TINY", "1")
    monkeypatch.setenv("NEURODYN_OUT", str(tmp_path))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    mat = shared_data / "fmri_koppe_nback" / "NBKO_PLRNN_dataset.mat"
    monkeypatch.setenv("NEURODYN_FMRI_INPUTS", str(mat))
    monkeypatch.delenv("NEURODYN_DATA", raising=False)
    monkeypatch.delenv("MPLBACKEND", raising=False)
    before = untracked_files()
    nb = execute(NOTEBOOK)
    stdout = text_output(nb)
    table = (tmp_path / "scores.md").read_text()
    for name in ("ECG", "EEG", "M1 spikes", "fMRI", "fMRI + inputs"):
        assert sum(line.startswith(f"| {name} |") for line in table.splitlines()) == 3
    kind = [line for line in stdout.splitlines() if line.startswith("ECG attractor: ")]
    assert len(kind) == 1 and kind[0].split("; ")[0].split(": ", 1)[1].startswith(
        ("fixed point", "limit cycle", "chaotic attractor", "quasi-periodic orbit")), stdout[-2000:]
    assert "(method orbits;" in stdout  # the exact search for the attractor's cycle ran
    assert (tmp_path / "ecg_attractor.png").stat().st_size > 10_000
    assert n_images(nb) >= 1  # the figure is shown inline: no backend forced
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ecg_attractor.png", "scores.md"]
    assert untracked_files() == before
