"""The swap-errors example runs at tiny size and writes its summary, fits and figure."""

import importlib.util
import json

import pytest
from _paths import EXAMPLES

import neurodyn.io
from neurodyn.tasks import MixtureFit

EXAMPLE = EXAMPLES / "swap_errors.py"


@pytest.mark.slow
def test_swap_errors_example_tiny(tmp_path):
    spec = importlib.util.spec_from_file_location("swap_errors_example", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    summary = mod.main(tiny=True, out_dir=str(tmp_path))
    assert set(summary["fits"]) == {"data", "diffusion", "task_optimal"}
    for fit in summary["fits"].values():
        assert sum(fit[k] for k in ("p_target", "p_swap", "p_guess")) == pytest.approx(1.0)
    n_steps = summary["periods_steps"]["response"][1]
    for net in ("diffusion", "task_optimal"):
        assert len(summary["decodability_r2"][net]["cued"]) == n_steps
    assert json.loads((tmp_path / "summary.json").read_text()) == summary
    back = neurodyn.io.load(tmp_path / "fit_data.nc")
    assert isinstance(back, MixtureFit) and back.p_swap == summary["fits"]["data"]["p_swap"]
    assert (tmp_path / "swap_errors.png").stat().st_size > 10_000
