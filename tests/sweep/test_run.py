"""Serial sweeps: values against direct training, resuming, failures, spec changes, bad output folders."""

import json
import shutil

import numpy as np
import pytest

import neurodyn
from neurodyn.sweep import run_sweep
from neurodyn.sweep._dataset import TIMING
from tests.sweep.conftest import TINY, tiny

pytestmark = pytest.mark.slow  # the shared tiny sweep takes ~10-20 s to train once


def same_values(a, b):
    """Every variable but the wall-clock times equal bit for bit (NaN equal to NaN)."""
    for name in a.data_vars:
        if name in TIMING:
            continue
        x, y = a[name].values, b[name].values
        assert np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), name


@pytest.fixture
def out_copy(serial_sweep, tmp_path):
    _, out = serial_sweep
    return shutil.copytree(out, tmp_path / "copy")


def test_item_metrics_equal_direct_training(serial_sweep):
    result, out = serial_sweep
    ds = result.dataset
    assert result.n_computed == 4 and result.n_skipped == 0 and result.n_failed == 0
    assert (ds["status"].values == "ok").all() and dict(ds.sizes) == {"gain": 2, "seed": 2, "seed_": 2}
    # the oracle: the same network trained and evaluated by hand
    task = neurodyn.tasks.FlipFlop(n_bits=1, n_steps=8)
    model = neurodyn.models.LeakyRNN(1, 8, 1, alpha=1.0, gain=1.0, seed=1)
    trained = neurodyn.train(model, task, n_iterations=20, batch_size=8, lr=0.01, eval_every=0, seed=1,
                             progress=False).model
    batch = task.sample(16, seed=12345)
    direct = neurodyn.training.evaluate(trained, task, batch)
    at = ds.sel(gain=1.0, seed=1)
    assert float(at["id_loss"]) == direct["loss"] and float(at["id_accuracy"]) == direct["accuracy"]
    ood = task.ood()
    ood_metrics = neurodyn.training.evaluate(trained, ood, ood.sample(16, seed=12345))
    assert float(at["ood_loss"]) == ood_metrics["loss"]
    saved = neurodyn.io.load_checkpoint(out / "items" / str(at["key"].values) / "model.pt").model
    assert all(np.array_equal(v, saved.state_dict()[k]) for k, v in trained.state_dict().items())


def test_cell_summaries_are_those_of_the_pairwise_matrices(serial_sweep):
    ds = serial_sweep[0].dataset
    for gain in (0.5, 1.0):
        c = ds.sel(gain=gain)
        W, D = c["weight_distance"].values, c["dynamics_distance"].values
        assert np.allclose(W, W.T) and np.all(np.diag(W) == 0) and W[0, 1] > 0
        assert float(c["weight_degeneracy"]) == W[0, 1] and float(c["dynamics_degeneracy"]) == D[0, 1]
        assert float(c["behaviour_degeneracy_id"]) == pytest.approx(np.std(c["id_loss"].values), abs=1e-15)
        assert 1 <= int(c["n_topologies"]) <= 2 and int(c["n_networks"]) == 2
    assert (ds["n_fixed_points"].values >= 1).all()


def test_untrained_baseline_per_cell(serial_sweep):
    """The baseline is the same measure on the networks at their initial weights."""
    ds = serial_sweep[0].dataset
    for gain in (0.5, 1.0):
        init = [neurodyn.models.LeakyRNN(1, 8, 1, alpha=1.0, gain=gain, seed=s) for s in (0, 1)]
        w = [m.params().w_rec.detach().double().numpy() for m in init]
        expected = neurodyn.analysis.weight_distance(w[0], w[1], kind="euclidean")
        assert float(ds["baseline_weight_degeneracy"].sel(gain=gain)) == pytest.approx(expected, rel=1e-12)
        assert np.isfinite(float(ds["baseline_dynamics_degeneracy"].sel(gain=gain)))


def test_sweep_file_reads_back(serial_sweep):
    result, out = serial_sweep
    back = neurodyn.io.load(out / "sweep.nc")
    assert type(back).__name__ == "SweepResult"
    same_values(back.dataset, result.dataset)
    assert json.loads(back.dataset.attrs["spec"]) == json.loads((out / "spec.json").read_text())


def test_rerun_recomputes_nothing_and_partial_out_recomputes_one(serial_sweep, out_copy):
    first = serial_sweep[0]
    again = run_sweep(TINY, out_copy, workers=0, progress=False)
    assert (again.n_computed, again.n_skipped) == (0, 4)
    key = str(first.dataset["key"].values[1, 0])
    shutil.rmtree(out_copy / "items" / key)
    resumed = run_sweep(TINY, out_copy, workers=0, progress=False)
    assert (resumed.n_computed, resumed.n_skipped, resumed.n_failed) == (1, 3, 0)
    same_values(resumed.dataset, first.dataset)


def test_an_item_whose_feature_file_is_damaged_is_computed_again(serial_sweep, out_copy):
    first = serial_sweep[0]
    key = str(first.dataset["key"].values[1, 0])
    damaged = out_copy / "items" / key / "features.nc"
    assert damaged.exists()
    damaged.write_text("junk")
    resumed = run_sweep(TINY, out_copy, workers=0, progress=False)
    assert (resumed.n_computed, resumed.n_skipped, resumed.n_failed) == (1, 3, 0)
    assert damaged.read_bytes()[:4] == b"\x89HDF"  # written again
    same_values(resumed.dataset, first.dataset)


def test_failed_item_is_recorded_and_the_sweep_goes_on(serial_sweep, out_copy, monkeypatch):
    import neurodyn.sweep._item as item_mod

    key = str(serial_sweep[0].dataset["key"].values[0, 1])
    shutil.rmtree(out_copy / "items" / key)

    def broken(*args, **kwargs):
        raise RuntimeError("analysis broke")

    monkeypatch.setattr(item_mod, "analyse", broken)
    result = run_sweep(TINY, out_copy, workers=0, progress=False)
    assert (result.n_computed, result.n_skipped, result.n_failed) == (0, 3, 1)
    ds = result.dataset
    assert ds["status"].values[0, 1] == "failed"
    assert ds["error"].values[0, 1] == "RuntimeError: analysis broke"
    assert json.loads((out_copy / "items" / key / "error.json").read_text())["error"].endswith("broke")
    assert ds["cell_status"].values[0] == "too few networks" and ds["cell_status"].values[1] == "ok"
    assert (out_copy / "sweep.nc").exists()
    monkeypatch.undo()
    fixed = run_sweep(TINY, out_copy, workers=0, progress=False)  # a rerun retries the failed item
    assert (fixed.n_computed, fixed.n_failed) == (1, 0)
    assert not (out_copy / "items" / key / "error.json").exists()
    same_values(fixed.dataset, serial_sweep[0].dataset)


def test_a_different_spec_is_refused_unless_forced(out_copy):
    with pytest.raises(ValueError, match=r"different spec \(differs in: training\); pass force=True"):
        run_sweep(tiny(training={"lr": 0.02}), out_copy, workers=0, progress=False)
    subset = tiny(grid={"model.gain": [1.0]})
    result = run_sweep(subset, out_copy, workers=0, progress=False, force=True)
    assert (result.n_computed, result.n_skipped) == (0, 2)  # its items were finished under the old spec
    assert json.loads((out_copy / "spec.json").read_text())["grid"] == {"model.gain": [1.0]}


@pytest.mark.parametrize("text", ['{"task": {"name": "flip', "[1, 2]", "\udcff"])
def test_a_damaged_spec_file_is_named_as_such_unless_forced(out_copy, text):
    (out_copy / "spec.json").write_text(text, errors="surrogateescape")
    with pytest.raises(ValueError, match=r"spec.json is not a readable sweep spec \(damaged or not JSON\)"):
        run_sweep(TINY, out_copy, workers=0, progress=False)
    result = run_sweep(TINY, out_copy, workers=0, progress=False, force=True)
    assert (result.n_computed, result.n_skipped) == (0, 4)  # the finished items are kept
    assert json.loads((out_copy / "spec.json").read_text())["grid"] == TINY["grid"]


def test_ensemble_training_matches_single_training(serial_sweep, tmp_path):
    """training.ensemble trains a cell's seeds in one train_ensemble call: the same networks to float
    rounding (so new keys), the same layout."""
    result = run_sweep(tiny(training={"ensemble": True}), tmp_path / "ens", workers=0, progress=False)
    ref = serial_sweep[0].dataset
    assert (result.n_computed, result.n_failed) == (4, 0)
    assert not set(result.dataset["key"].values.ravel()) & set(ref["key"].values.ravel())
    np.testing.assert_allclose(result.dataset["final_train_loss"], ref["final_train_loss"], rtol=1e-4)
    np.testing.assert_allclose(result.dataset["id_loss"], ref["id_loss"], rtol=1e-3)


def test_cells_from_stored_features_equal_degeneracy_from_scratch(serial_sweep):
    """Items store their degeneracy features; the cell stage's pairwise-only result equals the whole
    computation from the checkpoints (and from the untrained networks for the baseline)."""
    result, out = serial_sweep
    ds = result.dataset
    task = neurodyn.tasks.FlipFlop(n_bits=1, n_steps=8)
    for gain in (0.5, 1.0):
        keys = [str(k) for k in ds["key"].sel(gain=gain).values]
        files = ("features.nc", "baseline_features.nc")
        assert all((out / "items" / k / f).exists() for k in keys for f in files)
        trained = [neurodyn.io.load_checkpoint(out / "items" / k / "model.pt").model for k in keys]
        untrained = [neurodyn.models.LeakyRNN(1, 8, 1, alpha=1.0, gain=gain, seed=s) for s in (0, 1)]
        for prefix, models in (("", trained), ("baseline_", untrained)):
            scratch = neurodyn.analysis.compute_solution_degeneracy(
                models, task, n_trials=16, seed=12345, dynamics_metric="procrustes")
            for level in ("dynamics_degeneracy", "weight_degeneracy", "behaviour_degeneracy_id",
                          "behaviour_degeneracy_ood"):
                assert float(ds[prefix + level].sel(gain=gain)) == pytest.approx(getattr(scratch, level),
                                                                                  abs=1e-10), prefix + level


def test_sweep_result_refuses_a_dataset_of_another_result():
    from neurodyn.analysis import find_fixed_points
    from neurodyn.analysis.fixed_points._examples import bistable_unit
    from neurodyn.io import ResultFileError
    from neurodyn.sweep import SweepResult

    fps = find_fixed_points(bistable_unit(), n_inits=8, seed=0)
    with pytest.raises(ResultFileError, match="read it with neurodyn.io.load"):
        SweepResult.from_xarray(fps.to_xarray())
    with pytest.raises(ResultFileError, match="not a neurodyn.sweep dataset: it lacks the variables key"):
        SweepResult.from_xarray(fps.to_xarray().drop_attrs())
