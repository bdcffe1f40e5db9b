"""The error-forcing example runs at tiny size and writes its summary and figure."""

import json

import pytest
from _example_module import load_example


@pytest.mark.slow
def test_error_forcing_example_tiny(tmp_path):
    mod = load_example("error_forcing")
    summary = mod.main(tiny=True, out_dir=str(tmp_path))
    assert set(summary["methods"]) == {"BPTT", "TF-BPTT", "EF-BPTT", "RFLO", "EF-RFLO"}
    for method in summary["methods"].values():
        assert len(method["fraction_learned"]) == len(method["median_test_mse"]) == 2
        assert all(0.0 <= f <= 1.0 for f in method["fraction_learned"])
    assert json.loads((tmp_path / "summary.json").read_text()) == summary
    assert (tmp_path / "error_forcing.png").stat().st_size > 10_000
    assert (tmp_path / "bptt" / "sweep.nc").exists() and (tmp_path / "rflo" / "sweep.nc").exists()
