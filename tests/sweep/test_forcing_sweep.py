"""Sweeps over forcing and learning rule: validated up front, passed to training, other keys unchanged."""

import pytest

from neurodyn.sweep import SpecError, load_spec
from neurodyn.sweep._item import train_item

BASE = {"task": {"name": "delayed_xor", "delay_ms": 20.0}, "model": {"n_units": 4, "alpha": 0.5},
        "training": {"n_iterations": 2, "batch_size": 2, "eval_every": 0}, "seeds": 1}


def test_a_grid_over_forcing_reaches_training_and_leaves_plain_sweeps_keys_alone():
    spec = load_spec({**BASE, "grid": {"training.forcing": ["none", "error"]},
                      "training": {**BASE["training"], "learning_rule": "rflo", "forcing_strength": 0.3}})
    plain, forced = spec.items()
    assert spec.dims == ("forcing",) and plain.key != forced.key
    _, result = train_item(forced.config)
    assert result.config["forcing"] == {"method": "error", "strength": 0.3, "anneal": "none", "ridge": 1e-3,
                                        "rule": "rflo"}
    _, result = train_item(plain.config)
    assert result.config["forcing"]["method"] is None and result.config["forcing"]["rule"] == "rflo"
    untouched = load_spec({**BASE, "grid": {"model.gain": [1.0]}}).items()[0]
    assert not {"forcing", "learning_rule"} & set(untouched.config["training"])  # resumable as before


@pytest.mark.parametrize("change, message", [
    ({"grid": {"training.forcing_strength": [0.5, 2.0]}},
     r"forcing_strength must be a finite number in \[0, 1\]"),
    ({"grid": {"training.forcing": ["errors"]}},
     "unknown forcing 'errors'; choose one of none, error, teacher$"),  # TOML's spelling of no forcing
    ({"grid": {"training.forcing": ["error"]}, "training": {**BASE["training"], "ensemble": True}},
     "ensemble = true trains by plain BPTT"),
])
def test_bad_forcing_options_fail_before_any_work(change, message):
    with pytest.raises(SpecError, match=message):
        load_spec({**BASE, **change})
