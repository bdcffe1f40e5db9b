"""The similarity-deflation example runs at tiny size: the deflated network solves the task and is
less predictable from network 0 than a second standard network."""

import importlib.util

import pytest
from _paths import EXAMPLES

EXAMPLE = EXAMPLES / "insd_flipflop.py"


@pytest.mark.slow
def test_insd_example_tiny(tmp_path):
    spec = importlib.util.spec_from_file_location("insd_example", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = mod.main(tiny=True, out_dir=str(tmp_path))
    assert out["deflated"]["predictivity"] < out["standard"]["predictivity"] - 0.2
    assert out["deflated"]["task_accuracy"] > 0.85
    assert out["network0"]["n_stable"] >= 1
    assert (tmp_path / "insd.png").stat().st_size > 10_000
