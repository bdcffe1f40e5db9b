"""The fitted Lorenz-63 example runs at tiny size and writes its summary and figure."""

import json

import numpy as np
import pytest
from _example_module import load_example


@pytest.mark.slow
def test_plrnn_lorenz_example_tiny(tmp_path):
    mod = load_example("plrnn_lorenz")
    summary = mod.main(tiny=True, out_dir=str(tmp_path))
    assert set(summary["scores"]) == {"fitted", "linear", "mean"}
    assert summary["status"] == "completed"
    assert len(summary["lyapunov_per_step"]) == summary["sizes"]["n_latent"]
    true = np.asarray(summary["true_fixed_points"])  # standardised: C+ and C- share their z
    assert true.shape == (3, 3) and true[1, 2] == true[2, 2] and true[1, 0] > 0 > true[2, 0]
    assert len(summary["fixed_points"]["states"]) == len(summary["fixed_points"]["stability"])
    assert summary["homoclinic"]["proves_chaos"] in (True, False)
    stored = json.loads((tmp_path / "summary.json").read_text())
    assert json.dumps(stored) == json.dumps(summary)  # exponents of a diverged tiny fit are NaN
    assert (tmp_path / "plrnn_lorenz.png").stat().st_size > 10_000
