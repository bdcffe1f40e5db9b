"""The low-rank max-ent example on the M1 recording runs its gallery page at the site's small size and
writes its outputs; without the recording it stops with a message."""

import json
import math

import pytest
from _example_module import load_example

import neurodyn.io
from neurodyn.analysis.low_rank import MaxEntLoadings


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:the flow did not converge", "ignore:tolerance .* is below the error")
def test_low_rank_recording_example_tiny(shared_data, tmp_path):
    out = load_example("low_rank_recording").main(tiny=True, data_dir=str(shared_data), out_dir=str(tmp_path))
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["scale"]["n_units"] == 30 and saved["scale"]["rank"] == 2 and len(saved["samples"]) == 2
    assert isinstance(neurodyn.io.load(tmp_path / "maxent.pt"), MaxEntLoadings)
    assert (tmp_path / "low_rank_recording.png").stat().st_size > 10_000
    # persistence is a valid oracle for R^2: one-step prediction of a smoothed signal from itself
    assert 0.5 < out["persistence_r2"][1] <= 1 and saved["persistence_r2"]["1"] == out["persistence_r2"][1]
    assert all(math.isfinite(s["r2"][1]) for s in out["samples"])


def test_low_rank_recording_example_stops_cleanly_without_data(tmp_path):
    mod = load_example("low_rank_recording")
    with pytest.raises(SystemExit, match="recording not found .* pass --data-dir or set NEURODYN_DATA"):
        mod.main(tiny=True, data_dir=str(tmp_path), out_dir=str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()
