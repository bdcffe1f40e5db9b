"""time_slice and split refuse out-of-range requests in one line naming the argument and the valid range."""

import numpy as np
import pytest

from neurodyn.io import TimeSeries

TS = TimeSeries.from_arrays(np.random.default_rng(0).normal(size=(50, 3)))


@pytest.mark.parametrize("start, stop, match", [
    (0, 10**9, r"stop must be an integer in \[0, 50\], got 1000000000"),
    (-10, 50, r"start must be an integer in \[0, 50\], got -10 .*negative indices"),
    (40, 10, r"time_slice\(start=40, stop=10\) keeps 0 time points; need start \+ 2 <= stop <= 50"),
    (5, 6, r"keeps 1 time points"),
    (0, 10.5, r"stop must be an integer"),
])
def test_time_slice_refuses_out_of_range(start, stop, match):
    with pytest.raises(ValueError, match=match) as err:
        TS.time_slice(start, stop)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("fraction, match", [
    (0.9999, r"fraction=0.9999 splits the 50 time points into 50 and 0; .*\[0.04, 0.96\]"),
    (0.01, r"into 0 and 50"),
    (1.0, r"fraction must be a number in \(0, 1\)"),
    ("0.8", r"fraction must be a number in \(0, 1\)"),
])
def test_split_refuses_fractions_leaving_a_part_too_short(fraction, match):
    with pytest.raises(ValueError, match=match):
        TS.split(fraction)


def test_valid_slices_are_unchanged():
    assert TS.time_slice(np.int64(10), 20).n_steps == 10 and TS.time_slice(0, 50).n_steps == 50
    head, tail = TS.split(0.8)
    assert (head.n_steps, tail.n_steps) == (40, 10)
    assert head.preprocessing[-1] == {"step": "time_slice", "start": 0, "stop": 40}
