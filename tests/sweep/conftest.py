"""A tiny sweep shared by the tests of this folder: 2 grid values × 2 seeds of 8-unit flip-flop networks."""

import copy

import pytest

TINY = {
    "task": {"name": "flipflop", "n_bits": 1, "n_steps": 8},
    "model": {"n_units": 8, "alpha": 1.0},
    "training": {"n_iterations": 20, "batch_size": 8, "lr": 0.01, "eval_every": 0},
    "analysis": {"n_trials": 16, "n_inits": 16, "max_iters": 100, "dynamics_metric": "procrustes"},
    "grid": {"model.gain": [0.5, 1.0]},
    "seeds": 2,
}

TINY_TOML = """seeds = 2

[task]
name = "flipflop"
n_bits = 1
n_steps = 8

[model]
n_units = 8
alpha = 1.0

[training]
n_iterations = 20
batch_size = 8
lr = 0.01
eval_every = 0

[analysis]
n_trials = 16
n_inits = 16
max_iters = 100
dynamics_metric = "procrustes"

[grid]
"model.gain" = [0.5, 1.0]
"""


def tiny(**changes):
    """A copy of the tiny spec with options merged into its sections (``grid`` and ``seeds`` replaced)."""
    spec = copy.deepcopy(TINY)
    for section, value in changes.items():
        merge = isinstance(value, dict) and section in spec and section != "grid"
        spec[section] = {**spec[section], **value} if merge else value
    return spec


@pytest.fixture(scope="session")
def serial_sweep(tmp_path_factory):
    """The tiny sweep run serially once: (SweepResult, out folder)."""
    from neurodyn.sweep import run_sweep

    out = tmp_path_factory.mktemp("sweep") / "out"
    return run_sweep(TINY, out, workers=0, progress=False), out
