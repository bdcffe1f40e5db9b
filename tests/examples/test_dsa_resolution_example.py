"""The DSA-resolution example runs its gallery page at the site's small size: between-seed distances are
the degeneracy's, the floor is >= 0."""

import json
import warnings

import numpy as np
import pytest
from _example_module import load_example

import neurodyn


@pytest.mark.slow
def test_dsa_resolution_example_tiny(tmp_path):
    mod = load_example("dsa_resolution")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DSA below full rank
        rows = mod.main([], out_dir=str(tmp_path), tiny=True)
        assert [r["cell"] for r in rows] == [{"n_units": 4}]
        ds = neurodyn.io.load(tmp_path / "sweep" / "sweep.nc").dataset
        keys = [str(k) for k in ds["key"].sel(n_units=4).values]
        folder = tmp_path / "sweep" / "items"
        models = [neurodyn.io.load_checkpoint(folder / k / "model.pt").model for k in keys]
        task = neurodyn.tasks.FlipFlop(n_bits=1, n_steps=16)
        oracle = neurodyn.analysis.compute_solution_degeneracy(models, task, n_trials=8, seed=1,
                                                               dynamics_kwargs={"n_restarts": 4})
    assert rows[0]["n_networks"] == 3 and rows[0]["rank"] == oracle.settings["dynamics_kwargs"]["rank"]
    assert rows[0]["between_mean"] == pytest.approx(oracle.dynamics_degeneracy, abs=1e-10)
    assert all(r["floor_mean"] >= 0 and np.isfinite(r["between_sd"]) for r in rows)
    assert json.loads((tmp_path / "resolution.json").read_text()) == rows
    assert (tmp_path / "dsa_resolution.png").stat().st_size > 5_000
