"""The low-rank max-ent example runs its gallery page at tiny size (limit-cycle case) and writes its
results, its figure and the comparison at equal dynamics error."""

import json

import numpy as np
import pytest
from _example_module import load_example


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:the flow did not converge")
def test_low_rank_maxent_example_tiny(tmp_path):
    mod = load_example("low_rank_maxent")
    out = mod.main(tiny=True, out_dir=str(tmp_path), cases=("cycle",), plain_epochs=1, seeds=(0,))
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved[0]["case"] == "cycle" and len(saved[0]["samples"]) == 3
    truth = out[0]["truth"]["period"]
    assert np.isfinite(truth) and truth > 10  # an oscillation, not a fixed point
    plain = saved[0]["plain"]  # a one-epoch plain fit: the comparison runs end to end
    assert plain["epochs"] == 1 and set(plain["excess_kurtosis"]) == {"m0", "m1", "n0", "n1", "b"}
    assert np.isfinite(plain["latent_error"]) and "spurious_pairs" in saved[0]["maxent_sample"]
    assert (tmp_path / "low_rank_maxent.png").stat().st_size > 10_000
    equal = json.loads((tmp_path / "equal_error.json").read_text())
    assert [(r["case"], r["seed"]) for r in equal] == [("cycle", 0)]
    assert np.isfinite(equal[0]["plain_error"]) and np.isfinite(equal[0]["plain_entropy"])
    assert equal[0]["status"] in ("completed", "tolerance_too_tight", "not_converged")
