"""generate: free runs checked against the closed form of a linear map, and bad arguments refused."""

import numpy as np
import pytest

from neurodyn.models import PLRNN
from neurodyn.training import generate


def _halving(n_inputs=0):
    """z' = 0.5 z + h (+ C u): the closed form of the run is known."""
    return PLRNN.from_arrays(A=[0.5, 0.5], W=np.zeros((2, 2)), h=[1.0, 0.0],
                             C=np.eye(2)[:, :n_inputs] if n_inputs else None)


def test_free_run_matches_closed_form():
    run = generate(_halving(), np.array([0.0, 4.0]), 4, observation="identity")
    z = np.array([0.0, 4.0])
    expected = []
    for _ in range(4):
        z = 0.5 * z + np.array([1.0, 0.0])
        expected.append(z)
    np.testing.assert_allclose(run.observations, expected, atol=1e-6)


@pytest.mark.parametrize("n_steps", [-1, 2.5, float("nan"), "3"])
def test_bad_n_steps_is_refused(n_steps):
    # -1 gave an empty run and 2.5 a run of 2 steps, without a word
    with pytest.raises(ValueError, match="n_steps must be an integer >= 0"):
        generate(_halving(), np.zeros(2), n_steps, observation="identity")


def test_run_too_large_for_memory_is_refused_before_allocating():
    with pytest.raises(ValueError, match="generate needs about .* GiB .*lower n_steps"):
        generate(_halving(), np.zeros((1000, 2)), 10**12, observation="identity")


@pytest.mark.parametrize("x0", [np.array([np.nan, 0.0]), np.array([np.inf, 0.0])])
def test_non_finite_start_is_refused(x0):
    with pytest.raises(ValueError, match="x0 contains NaN or Inf"):
        generate(_halving(), x0, 3, observation="identity")


@pytest.mark.parametrize("x0", [np.zeros((1, 1, 2)), np.zeros(3), 0.0])
def test_bad_start_shape_is_refused(x0):
    with pytest.raises(ValueError, match=r"x0 must have shape \(channel,\) or \(batch, channel\) with 2"):
        generate(_halving(), x0, 3, observation="identity")


@pytest.mark.parametrize("inputs", [np.zeros(3), np.zeros((3, 3, 2))])
def test_bad_input_shape_is_refused(inputs):
    # a 1-D array raised an IndexError, a batch of 3 for 2 starts a torch expand error
    with pytest.raises(ValueError, match=r"inputs must have shape \(time, input\) or \(batch, time, input\)"):
        generate(_halving(2), np.zeros((2, 2)), 3, observation="identity", inputs=inputs)


def test_non_finite_inputs_are_refused():
    with pytest.raises(ValueError, match="inputs contains NaN or Inf"):
        generate(_halving(2), np.zeros(2), 3, observation="identity", inputs=np.full((3, 2), np.nan))


def test_inputs_drive_the_run():
    u = np.ones((3, 2))
    with_inputs = generate(_halving(2), np.zeros(2), 3, observation="identity", inputs=u).observations
    without = generate(_halving(2), np.zeros(2), 3, observation="identity").observations
    batch = generate(_halving(2), np.zeros((2, 2)), 3, observation="identity", inputs=u[None]).observations
    assert not np.allclose(with_inputs, without)
    np.testing.assert_allclose(batch[1], with_inputs)
