"""The flip-flop notebook executes top to bottom at tiny size, opened from examples/: it shows its figures
inline, writes its netCDF file and figure only to NEURODYN_OUT, and leaves nothing in the repository."""

import pytest
import xarray as xr
from _notebooks import execute, n_images, text_output, untracked_files
from _paths import EXAMPLES

NOTEBOOK = EXAMPLES / "flipflop_fixed_points.ipynb"


@pytest.mark.slow
def test_flipflop_notebook_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("NEURODYN_TINY", "1")
    monkeypatch.setenv("NEURODYN_OUT", str(tmp_path / "out"))
    monkeypatch.delenv("MPLBACKEND", raising=False)  # the kernel's own (inline) backend
    before = untracked_files()
    nb = execute(NOTEBOOK)
    outputs = text_output(nb)
    assert "distinct corners among" in outputs
    assert "identical" in outputs and "DIFFERENT" not in outputs
    assert n_images(nb) >= 4  # task, loss, outputs, fixed points: no backend forced in the notebook
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["fixedpoints.nc", "fixedpoints.png"]
    assert xr.load_dataset(tmp_path / "out" / "fixedpoints.nc", engine="h5netcdf").sizes["unit"] == 24
    assert untracked_files() == before
