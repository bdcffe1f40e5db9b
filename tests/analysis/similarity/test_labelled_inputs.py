"""Labelled inputs (xarray.DataArray) are read by dim name; mixed layouts and a str of names are refused."""

import numpy as np
import pytest
import xarray as xr

from neurodyn.analysis import (
    cca_similarity,
    cka,
    dsa_distance,
    linear_predictivity,
    pairwise_distances,
    prepare_activity,
    procrustes_distance,
    rdm,
)


def _pair(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(30, 4))
    return X, np.tanh(X @ rng.normal(size=(4, 5))) + 0.1 * rng.normal(size=(30, 5))


MEASURES = {
    "cka": cka,
    "procrustes": procrustes_distance,
    "cca": cca_similarity,
    "predictivity": lambda X, Y: linear_predictivity(X, Y).r2,
}


@pytest.mark.parametrize("measure", MEASURES)
@pytest.mark.parametrize("dims", [("unit", "condition"), ("channel", "sample"), ("unit", "stimulus")])
def test_dataarray_with_named_dims_is_transposed_into_sample_by_unit(measure, dims):
    # a (unit, condition) DataArray was read as (condition, unit): 4 "samples" of 30 "units"
    X, Y = _pair()
    fn = MEASURES[measure]
    labelled = xr.DataArray(X.T, dims=dims)
    assert fn(labelled, Y) == pytest.approx(fn(X, Y), abs=1e-12)
    assert fn(xr.DataArray(X, dims=dims[::-1]), Y) == pytest.approx(fn(X, Y), abs=1e-12)  # already in order


def test_dataarray_with_unknown_dims_is_read_by_position():
    X, Y = _pair()
    assert cka(xr.DataArray(X), Y) == cka(X, Y)  # dim_0, dim_1
    assert cka(xr.DataArray(X, dims=("image", "neuron")), Y) == cka(X, Y)


def test_rdm_reads_conditions_by_name():
    X, _ = _pair()
    np.testing.assert_allclose(rdm(xr.DataArray(X.T, dims=("unit", "condition"))), rdm(X), atol=1e-12)


@pytest.mark.parametrize("dims, match", [
    (("unit", "channel"), r"both 'unit' and 'channel' would be its 'unit' axis of \(sample, unit\)"),
    (("trial", "time"), r"both 'trial' and 'time' would be its 'sample' axis"),
])
def test_contradictory_dims_are_refused_in_one_line(dims, match):
    X, Y = _pair()
    with pytest.raises(ValueError, match=rf"^X has dims \('{dims[0]}', '{dims[1]}'\).*{match}.*rename its "
                                         r"dims to \(sample, unit\).*or pass X\.values") as err:
        cka(xr.DataArray(X, dims=dims), Y)
    assert "\n" not in str(err.value)


def test_trajectories_are_transposed_by_name_for_dsa_and_pairwise():
    rng = np.random.default_rng(1)
    T = rng.normal(size=(3, 12, 4))  # (trial, time, unit)
    other = rng.normal(size=(3, 12, 5))
    labelled = xr.DataArray(T.transpose(2, 0, 1), dims=("unit", "trial", "time"))
    kw = {"n_delays": 2, "n_restarts": 4, "seed": 0}
    assert dsa_distance(labelled, other, **kw) == pytest.approx(dsa_distance(T, other, **kw), abs=1e-12)
    one_trial = xr.DataArray(T[0].T, dims=("unit", "time"))
    assert dsa_distance(one_trial, other, **kw) == pytest.approx(dsa_distance(T[0], other, **kw), abs=1e-12)
    dsa = {"n_delays": 2, "n_restarts": 4}
    for metric, opts in (("cka", {}), ("procrustes", {}), ("rsa", {}), ("dsa", dsa)):
        D = pairwise_distances([labelled, other], metric=metric, progress=False, device="cpu", **opts)
        D0 = pairwise_distances([T, other], metric=metric, progress=False, device="cpu", **opts)
        np.testing.assert_allclose(D.values, D0.values, atol=1e-12)
    p = prepare_activity(labelled, metric="procrustes")
    p0 = prepare_activity(T, metric="procrustes")
    np.testing.assert_array_equal(p.arrays["features"], p0.arrays["features"])


def test_trial_axis_given_to_a_single_trajectory_is_refused():
    X = np.random.default_rng(2).normal(size=(12, 3))
    with pytest.raises(ValueError, match=r"^X has dims \('trial', 'unit'\), but 'trial' is not an axis of a "
                                         r"\(time, unit\) array; rename") as err:
        dsa_distance(xr.DataArray(X, dims=("trial", "unit")), X, n_delays=2)
    assert "\n" not in str(err.value)


def test_labelled_layouts_are_compared_after_transposing():
    rng = np.random.default_rng(3)
    a = xr.DataArray(rng.normal(size=(4, 3, 10)), dims=("unit", "trial", "time"))  # (3, 10) after transposing
    b = rng.normal(size=(5, 6, 4))  # also 30 samples, but (5, 6)
    with pytest.raises(ValueError, match=r"activity\[0\] has \(trial, time\) = \(3, 10\) but activity\[1\] "
                                         r"has \(5, 6\)"):
        pairwise_distances([a, b], metric="cka", progress=False)


@pytest.mark.parametrize("metric", ["cka", "procrustes", "rsa", "cca"])
def test_trajectories_next_to_flat_activity_are_refused(metric):
    # a (trial, time, unit) network next to a (sample, unit) one was accepted when the sample counts agreed
    rng = np.random.default_rng(4)
    acts = [rng.normal(size=(3, 10, 4)), rng.normal(size=(30, 5))]
    with pytest.raises(ValueError, match=r"^all networks need the same layout .*activity\[0\] is \(trial, "
                                         r"time, unit\) with \(trial, time\) = \(3, 10\) but activity\[1\] "
                                         r"is flat \(sample, unit\) with 30 samples; reshape both the same "
                                         r"way") as err:
        pairwise_distances(acts, metric=metric, progress=False, device="cpu")
    assert "\n" not in str(err.value)
    flat = [acts[0].reshape(-1, 4), acts[1]]
    assert pairwise_distances(flat, metric=metric, progress=False, device="cpu").shape == (2, 2)
    D = pairwise_distances(acts, metric="dsa", n_delays=2, n_restarts=2,
                           progress=False, device="cpu")  # dsa does not pair samples: accepted
    assert D.shape == (2, 2)


def test_names_given_as_one_string_are_refused():
    X, Y = _pair()
    with pytest.raises(TypeError, match=r"^names must be a list .*not the str 'ab'.*pass a list") as err:
        pairwise_distances([X, Y], names="ab", progress=False, device="cpu")
    assert "\n" not in str(err.value)
    D = pairwise_distances([X, Y], names=["ab", "cd"], progress=False, device="cpu")
    assert list(D["network"].values) == ["ab", "cd"]


def test_prepared_procrustes_activity_of_other_layouts_is_refused():
    # prepared separately, a (trial, time, unit) network and a flat or differently shaped one were paired
    rng = np.random.default_rng(5)
    traj, flat, other = rng.normal(size=(3, 10, 4)), rng.normal(size=(30, 5)), rng.normal(size=(5, 6, 4))
    prep = [prepare_activity(a, metric="procrustes") for a in (traj, flat, other)]
    with pytest.raises(ValueError, match=r"^all networks need the same layout .*activity\[1\] is flat"):
        pairwise_distances(prep[:2], metric="procrustes", progress=False, device="cpu")
    with pytest.raises(ValueError, match=r"activity\[0\] has \(trial, time\) = \(3, 10\) but activity\[1\] "
                                         r"has \(5, 6\)"):
        pairwise_distances([prep[0], prep[2]], metric="procrustes", progress=False, device="cpu")
    stored = [type(p).from_xarray(p.to_xarray()) for p in prep[:2]]  # the layout survives storing
    with pytest.raises(ValueError, match=r"^all networks need the same layout"):
        pairwise_distances(stored, metric="procrustes", progress=False, device="cpu")
    same = [prepare_activity(a, metric="procrustes") for a in (traj, rng.normal(size=(3, 10, 6)))]
    assert pairwise_distances(same, metric="procrustes", progress=False, device="cpu").shape == (2, 2)
