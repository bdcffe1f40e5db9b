"""neurogym adapter, checked on a minimal stand-in with neurogym's trial interface (neurogym
itself pins numpy/matplotlib versions that conflict with the project's environment)."""

import numpy as np
import pytest

from neurodyn.tasks.neurogym_adapter import (
    from_neurogym,
    make_neurogym_task,
    neurogym_available,
)


class _Discrete:
    def __init__(self, n):
        self.n = n


class _Box:
    def __init__(self, shape):
        self.shape = shape


class FakeTrialEnv:
    """Variable-length trials: fixate, then respond 1 if the cue is positive else 2."""

    dt = 100

    def __init__(self):
        self.observation_space = _Box((2,))
        self.action_space = _Discrete(3)
        self.rng = np.random.RandomState(0)

    def seed(self, seed):
        self.rng = np.random.RandomState(seed)

    def new_trial(self):
        n = int(self.rng.randint(3, 8))
        cue = self.rng.choice([-1.0, 1.0])
        self.ob = np.zeros((n, 2))
        self.ob[:-1, 0] = 1.0
        self.ob[:, 1] = cue + 0.1 * self.rng.randn(n)
        self.gt = np.zeros(n, dtype=int)
        self.gt[-1] = 1 if cue > 0 else 2
        return {"cue": cue}


def test_batches_are_padded_masked_and_split_invariant():
    task = from_neurogym(FakeTrialEnv(), n_steps=10)
    assert (task.n_inputs, task.n_outputs, task.loss, task.dt) == (2, 3, "cross_entropy", 100.0)
    whole = task.sample(6, seed=4)
    parts = [task.sample(2, seed=4), task.sample(4, seed=4, first_trial=2)]
    for name in ("inputs", "targets", "mask"):
        np.testing.assert_array_equal(getattr(whole, name),
                                      np.concatenate([getattr(p, name) for p in parts]))
    assert not np.array_equal(whole.inputs, task.sample(6, seed=5).inputs)
    lengths = whole.trial_params["n_steps"]
    np.testing.assert_array_equal(whole.mask[..., 0].sum(1), lengths)
    for i, n in enumerate(lengths):
        assert np.all(whole.inputs[i, n:] == 0)
        # oracle: the last valid step holds the choice given by the sign of the cue
        assert whole.targets[i, n - 1, 0] == (1 if whole.inputs[i, 0, 1] > 0 else 2)


def test_evaluate_counts_response_steps():
    task = from_neurogym(FakeTrialEnv(), n_steps=10)
    batch = task.sample(20, seed=0)
    perfect = 5.0 * np.eye(3)[batch.targets[..., 0].astype(int)]
    assert task.evaluate(perfect, batch) == {"accuracy": 1.0, "step_accuracy": 1.0}
    always_fixate = np.zeros((20, 10, 3)) + np.array([1.0, 0.0, 0.0])
    assert task.evaluate(always_fixate, batch)["accuracy"] == 0.0


def test_errors_name_the_fix():
    with pytest.raises(ValueError, match="increase n_steps"):
        from_neurogym(FakeTrialEnv(), n_steps=3).sample(20, seed=0)
    with pytest.raises(TypeError, match="TrialEnv"):
        from_neurogym(object(), n_steps=5)


def test_make_neurogym_task_without_neurogym_names_the_extra():
    if neurogym_available():
        task = make_neurogym_task("PerceptualDecisionMaking-v0", n_steps=60)
        assert task.sample(2, seed=0).inputs.shape[1] == 60
    else:
        with pytest.raises(ImportError, match=r"neurodyn\[neurogym\]"):
            make_neurogym_task("PerceptualDecisionMaking-v0", n_steps=60)
