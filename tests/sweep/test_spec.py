"""Sweep specs: parsing, expansion, keys, and the one-line errors of bad specs."""

import pytest

from neurodyn.sweep import SpecError, load_spec
from tests.sweep.conftest import TINY, TINY_TOML, tiny


def test_toml_and_dict_give_the_same_items(tmp_path):
    path = tmp_path / "spec.toml"
    path.write_text(TINY_TOML)
    a, b = load_spec(path).items(), load_spec(TINY).items()
    assert [i.key for i in a] == [i.key for i in b]
    assert [(i.cell, i.seed) for i in a] == [((0.5,), 0), ((0.5,), 1), ((1.0,), 0), ((1.0,), 1)]
    assert len({i.key for i in a}) == 4


def test_key_depends_on_the_resolved_configuration_only():
    base = load_spec(TINY).items()[0]
    # spelling out a default changes nothing; changing a value changes the key
    assert load_spec(tiny(task={"p_pulse": 0.1})).items()[0].key == base.key
    assert load_spec(tiny(task={"p_pulse": 0.2})).items()[0].key != base.key
    assert load_spec(tiny(training={"lr": 0.02})).items()[0].key != base.key
    assert base.config["model"]["config"]["gain"] == 0.5 and base.config["model"]["config"]["seed"] == 0


def test_grid_dims_and_cells():
    spec = tiny(grid={"model.n_units": [8, 16], "training.l2_rate": [0, 1e-3], "task.n_bits": [1, 2]},
                seeds=[3, 5])
    del spec["model"]["n_units"], spec["task"]["n_bits"]
    spec = load_spec(spec)
    assert spec.dims == ("n_units", "l2_rate", "n_bits")
    assert spec.grid["training.l2_rate"] == [0.0, 0.001]
    assert len(spec.cells) == 8 and len(spec.items()) == 16
    assert spec.items()[-1].config["task"]["config"]["n_bits"] == 2


@pytest.mark.parametrize("changes, message", [
    ({"grid": {}}, "the grid is empty"),
    ({"grid": {"model.gain": []}}, "grid model.gain must be a non-empty list"),
    ({"grid": {"n_units": [8]}}, "grid key 'n_units' must be 'section.name'"),
    ({"grid": {"model.n_unit": [8]}}, "unknown option model.n_unit; known: n_units"),
    ({"grid": {"model.gain": [1, 1.0]}}, "repeats a value"),
    ({"grid": {"model.output_scale": ["rich", "richer"]}}, "unknown output_scale 'richer'"),
    ({"grid": {"training.clip_grad_norm": [1.0, -1.0]}}, "clip_grad_norm must be a finite number >= 0"),
    ({"grid": {"training.l2_rate": [0.0, -1.0]}}, "strength must be finite and >= 0"),
    ({"grid": {"model.alpha": [0.5]}}, "model.alpha is both a fixed option and a grid key"),
    ({"task": {"name": "flipflops"}}, "task name 'flipflops' is not a task"),
    ({"task": {"n_bit": 2}}, "unknown option task.n_bit; known: n_bits"),
    ({"task": {"n_bits": 0}}, "n_bits must be an integer >= 1, got 0"),
    ({"task": {"n_bits": 1.5}}, "task options at grid cell (model.gain=0.5): n_bits must be an integer >= 1, "
                                "got 1.5"),
    ({"model": {"n_units": 4.5}}, "model options at grid cell (model.gain=0.5): n_units must be an integer "
                                  ">= 1, got 4.5"),
    ({"model": {"n_units": 10**6}}, "model options at grid cell (model.gain=0.5): LeakyRNN needs about"),
    ({"model": {"n_units": 10**6}}, "GiB are available; lower n_units"),
    ({"model": {"name": "Transformer"}}, "model name 'Transformer' is not a model"),
    ({"model": {"seed": 1}}, "seeds come from the top-level 'seeds' list"),
    ({"model": {"n_inputs": 2}}, "model.n_inputs is set by the task"),
    ({"training": {"epochs": 3}}, "unknown option training.epochs"),
    ({"training": {"ensemble": "yes"}}, "ensemble must be true or false"),
    ({"analysis": {"n_init": 3}}, "unknown option analysis.n_init"),
    ({"analysis": {"dynamics_metric": "dtw"}}, "dynamics_metric 'dtw' is unknown"),
    ({"seeds": []}, "seeds must be a count or a non-empty list"),
    ({"seeds": [0, 0]}, "seeds repeat a value"),
    ({"tasks": {}}, "unknown section(s) ['tasks']"),
])
def test_bad_specs_raise_one_line_errors(changes, message):
    with pytest.raises(SpecError) as info:
        load_spec(tiny(**changes))
    text = str(info.value)
    assert message in text and "\n" not in text


def test_bad_toml_and_missing_file(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("seeds = [0,\n[task")
    with pytest.raises(SpecError, match="is not valid TOML"):
        load_spec(bad)
    with pytest.raises(FileNotFoundError, match="no such sweep spec"):
        load_spec(tmp_path / "none.toml")
