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
        assert method["n_networks"] == [1, 1] and all(k <= 1 for k in method["n_learned"])
        for f, (lo, hi) in zip(method["fraction_learned"], method["fraction_ci95"]):
            assert 0.0 <= lo <= f <= hi <= 1.0 and hi - lo > 0.5  # one network says little
    assert json.loads((tmp_path / "summary.json").read_text()) == summary
    assert (tmp_path / "error_forcing.png").stat().st_size > 10_000
    assert (tmp_path / "bptt" / "sweep.nc").exists() and (tmp_path / "rflo" / "sweep.nc").exists()
