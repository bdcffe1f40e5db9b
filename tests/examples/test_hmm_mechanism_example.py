"""The HMM-mechanism example runs its gallery page at tiny size on one HMM and records every measured
claim."""

import json

import pytest
from _example_module import load_example


@pytest.mark.slow
def test_hmm_mechanism_example_tiny(tmp_path):
    mod = load_example("hmm_mechanism")
    records = mod.main(tiny=True, out=str(tmp_path / "m.json"), hmms=(("cyclic", 3),))
    saved = json.loads((tmp_path / "m.json").read_text())
    assert saved == json.loads(json.dumps(records))
    rec = saved[0]
    assert rec["hmm"] == "3-state cyclic" and rec["n_stable"] + rec["n_fixed_points"] >= 1
    assert 0.0 <= rec["metrics"]["emission_error"] <= 1.0 and rec["period"] >= 0
    assert len(rec["kick_units"]) == 5 and rec["settings"]["alpha"] == 1.0
    assert (tmp_path / "mechanism.png").stat().st_size > 10_000


@pytest.mark.slow
def test_hmm_mechanism_example_large_scale_records_checkpoints(tmp_path, monkeypatch):
    # the large scale's settings, shrunk through the page's NEURODYN_<SETTING> overrides
    for key, value in {"N_UNITS": "8", "N_NOISE": "4", "N_STEPS": "16", "N_ITERATIONS": "6",
                       "BATCH_SIZE": "16", "N_CHECKPOINTS": "3"}.items():
        monkeypatch.setenv(f"NEURODYN_{key}", value)
    mod = load_example("hmm_mechanism")
    records = mod.main(out=str(tmp_path / "m.json"), hmms=(("linear", 3),), scale="large", seed=1)
    rec = records[0]
    assert rec["settings"] == {"scale": "large", "n_units": 8, "n_noise": 4, "n_steps": 16, "alpha": 1.0,
                               "gain": 1.5, "n_iterations": 6, "batch_size": 16, "epsilon": 0.02,
                               "lr": 1e-2, "seed": 1}
    assert [point["iteration"] for point in rec["checkpoints"]] == [2, 4, 6]
    last = rec["checkpoints"][-1]  # taken on the final weights with the same seeds as the record
    assert last["n_stable"] == rec["n_stable"] and last["dwell_error"] == rec["metrics"]["dwell_error"]
    assert rec["train_cpu_seconds"] > 0
