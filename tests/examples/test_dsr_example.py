"""examples/fit_recordings.py runs the recordings' gallery pages (their one source) and tabulates their
scores (a page whose recording is absent fits its synthetic stand-in): checked here on a stand-in page
whose model is the exact generator of its data, so the fitted row's prediction error is 0. The real
pages run when the site is built (tests/examples/test_site.py). examples/dsr_seeds.py runs the seeds
page one fit at a time, storing each, and tabulates the seeds (Lorenz-63 only without the ECG recording)."""

import ast
import os

import numpy as np
import pytest
import xarray as xr
from _example_module import load_example
from _paths import DOCS

from neurodyn.io import find_recordings

STAND_IN = '''
import os
import numpy as np
from neurodyn.analysis import evaluate_reconstruction
from neurodyn.models import PLRNN
from neurodyn.plotting import plot_reconstruction

print("size", os.environ["NEURODYN_FULL"])
c, s = np.cos(0.2), np.sin(0.2)
model = PLRNN.from_arrays(A=[[c, -s], [s, c]], W=np.zeros((2, 2)), h=np.zeros(2))  # a rotation
t = 0.2 * np.arange(400)
x = np.c_[np.cos(t), np.sin(t)]
scores = evaluate_reconstruction(model, x[:200], x[200:], observation="identity", n_transient=50,
                                 pe_steps=1, n_bins=10)
axes = plot_reconstruction(scores, x[200:])
'''


@pytest.fixture
def runner():
    return load_example("fit_recordings")


def test_runner_runs_pages_and_writes_figure_and_table(runner, tmp_path, monkeypatch, capsys):
    import _gallery  # the shared page runner, importable once an example is loaded

    (tmp_path / "page.py").write_text(STAND_IN)
    monkeypatch.setattr(_gallery, "PAGES", tmp_path)
    monkeypatch.setattr(runner, "PAGES", {"ECG": "page", "fMRI": "page"})
    monkeypatch.delenv("NEURODYN_FULL", raising=False)
    out = tmp_path / "out"
    scores = runner.main(tiny=True, out_dir=out, pages=("ECG", "fMRI"))
    assert capsys.readouterr().out.count("size 0") == 2  # the pages ran at the site's small size
    assert "NEURODYN_FULL" not in os.environ  # and the size variable is set for them only
    assert sorted(p.name for p in out.iterdir()) == ["ecg_attractor.png", "scores.md"]
    assert (out / "ecg_attractor.png").stat().st_size > 10_000
    rows = (out / "scores.md").read_text().splitlines()[2:]
    assert [r.split(" | ")[:2] for r in rows] == [[f"| {n}", m] for n in ("ECG", "fMRI")
                                                  for m in ("fitted", "linear", "mean")]
    assert rows[0].endswith("| 0.000 |")  # the exact model predicts the held-out data
    assert list(scores) == ["ECG", "fMRI"]


def test_the_real_pages_define_what_the_runner_reads(runner):
    for name, page in runner.PAGES.items():
        tree = ast.parse((DOCS / "gallery" / f"{page}.py").read_text())
        names = {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets
                 if isinstance(t, ast.Name)}
        assert "scores" in names, page
        if name == "ECG":
            assert "axes" in names
        if name == "fMRI":
            assert "scores_inputs" in names


def test_seeds_runner_fits_lorenz_only_without_the_ecg_recording(tmp_path, monkeypatch):
    monkeypatch.setenv("NEURODYN_DATA", str(tmp_path))  # a recordings folder without the ECG
    runner = load_example("dsr_seeds")
    assert runner.data_sets() == ["Lorenz-63"] and runner.data_sets("Lorenz-63") == ["Lorenz-63"]
    with pytest.raises(SystemExit, match="the ECG recording was not found; set NEURODYN_DATA"):
        runner.data_sets("ECG")
    (tmp_path / "ecg_pecuzal5d").mkdir()
    assert runner.data_sets() == ["ECG", "Lorenz-63"] and runner.data_sets("ECG") == ["ECG"]


@pytest.mark.slow  # fits 2 seeds per data set at the seeds page's small size, reruns from the stored ones
def test_seeds_runner_tiny_stores_every_fit_and_tabulates_the_seeds(tmp_path):
    names = ["ECG", "Lorenz-63"] if find_recordings("ecg_pecuzal5d") is not None else ["Lorenz-63"]
    ds = load_example("dsr_seeds").main(tiny=True, out_dir=tmp_path, seeds=2)
    assert list(ds.data.values) == names and ds.sizes["seed"] == 2
    assert list(ds.model.values) == ["fitted", "linear", "mean"]
    stored = sorted(p.name for p in (tmp_path / "fits").iterdir())
    assert stored == sorted(f"{n}_{k}_tiny.json" for n in names for k in range(2))
    assert xr.load_dataset(tmp_path / "dsr_seeds.nc").identical(ds)
    assert len((tmp_path / "dsr_seeds.md").read_text().splitlines()) == 2 + 3 * len(names)
    assert (tmp_path / "dsr_seeds.png").stat().st_size > 10_000
    # The baselines do not depend on the seed; no free run scores above D_stsp's saturation value; at this
    # size every fit settles on a stable state (largest Lyapunov exponents per step, seeds 0-4: ECG -0.24,
    # -0.22, -0.30, -0.085, -0.25; Lorenz-63 -0.34, -0.30, -0.29, -0.31, -0.27).
    baselines = ds[["d_stsp", "d_h", "pe"]].sel(model=["linear", "mean"])
    for var in baselines.values():
        np.testing.assert_allclose(var.isel(seed=1), var.isel(seed=0), rtol=0, atol=1e-12)
    assert (ds.d_stsp <= ds.d_stsp_max + 1e-9).all()
    assert (ds.max_lyapunov < 0).all()
    # a rerun reuses every stored fit and tabulates the same scores
    times = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "fits").iterdir()}
    again = load_example("dsr_seeds").main(tiny=True, out_dir=tmp_path, seeds=2)
    assert again.identical(ds)
    assert {p.name: p.stat().st_mtime_ns for p in (tmp_path / "fits").iterdir()} == times
