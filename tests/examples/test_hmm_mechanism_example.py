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
