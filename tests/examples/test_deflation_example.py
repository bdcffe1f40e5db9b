"""The similarity-deflation example runs at tiny size: the deflated network solves the task, is less
predictable from network 0 than a second standard network and still encodes the bits."""

import json

import pytest
from _example_module import load_example


@pytest.mark.slow
def test_insd_example_tiny(tmp_path):
    mod = load_example("insd_flipflop")
    out = mod.main(tiny=True, out_dir=str(tmp_path), n_networks=2)  # one deflation step keeps it short
    assert out["deflated"]["predictivity"] < out["standard"]["predictivity"] - 0.2
    assert out["deflated"]["task_accuracy"] > 0.85
    assert out["network0"]["n_stable"] >= 1
    assert (tmp_path / "insd.png").stat().st_size > 10_000
    # the deflated network still carries both bits, and the cost is the MSE ratio to the standard one
    assert min(out["deflated"]["decodability_r2"]) > 0.5
    assert out["cost"]["mse_ratio"] == out["deflated"]["task_mse"] / out["standard"]["task_mse"]
    assert {"ood_accuracy", "ood_mse"} <= set(out["deflated"])
    assert json.loads((tmp_path / "insd.json").read_text()) == json.loads(json.dumps(out))
