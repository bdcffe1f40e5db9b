"""Every result type: save -> neurodyn.io.load gives the same arrays and attributes; status on known cases."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
import torch
import xarray as xr
from problems import FlipTanh, SlowDrift

import neurodyn.io
from neurodyn.analysis import (
    compute_basins,
    compute_solution_degeneracy,
    evaluate_reconstruction,
    find_cycles,
    find_fixed_points,
    find_homoclinic_points,
    find_manifolds,
    load_fixed_points,
    lyapunov_spectrum,
)
from neurodyn.analysis.lyapunov import LyapunovResult
from neurodyn.io import ResultFileError, load
from neurodyn.kernels import RolloutResult, rollout
from neurodyn.models import PLRNN, LeakyRNN, PLSystem
from neurodyn.tasks import FlipFlop
from neurodyn.training import Generated, generate


def two_cycle_saddle() -> PLRNN:
    """Saddle (0.4, -2) and the stable 2-cycle {(6/7, -2), (-2/7, -2)} (see tests/analysis/plrnn)."""
    return PLRNN.from_arrays([0.5, 0.5], [[-2.0, 0.0], [0.0, 0.0]], [1.0, -1.0])


def lozi() -> PLRNN:
    return PLRNN.from_arrays(np.array([[1.7, 1.0], [0.5, 0.0]]), np.array([[-3.4, 0.0], [0.0, 0.0]]),
                             np.array([1.0, 0.0]))


LOZI_SADDLE = np.array([1 / 2.2, 0.5 / 2.2])


def round_trip(result, path):
    """Save, read back with neurodyn.io.load, and require the same dataset (values, dtypes, attrs)."""
    result.save(path)
    back = neurodyn.io.load(path)
    assert type(back) is type(result)
    xr.testing.assert_identical(back.to_xarray(), result.to_xarray())
    with xr.open_dataset(path, engine="h5netcdf") as ds:
        assert ds.attrs["format"] == result.FORMAT and ds.attrs["format_version"] == result.FORMAT_VERSION
    return back


def test_fixed_points_round_trip_and_status(tmp_path):
    res = find_fixed_points(FlipTanh(2.0), state_size=1, initial_states=np.linspace(-1, 1, 9)[:, None],
                            max_order=2, seed=7)
    back = round_trip(res, tmp_path / "fp.nc")
    np.testing.assert_array_equal(back.states, res.states)
    np.testing.assert_array_equal(back.eigenvalues, res.eigenvalues)
    assert back.attrs == res.attrs  # settings survive, lists, None and inf included
    assert list(back.status) == ["converged"] * 3
    assert load_fixed_points(tmp_path / "fp.nc").summary() == res.summary()


def test_fixed_point_status_of_a_slow_point_and_of_a_search_out_of_iterations(tmp_path):
    problem = SlowDrift(0.05)
    slow = find_fixed_points(problem, state_size=1, initial_states=np.linspace(-1, 1, 9)[:, None],
                             max_iters=2000)
    assert list(slow.status) == ["slow_point"] and slow.q[0] == pytest.approx(problem.q_min, rel=1e-6)
    short = find_fixed_points(problem, state_size=1, initial_states=np.array([[-1.0], [1.0]]), max_iters=2)
    assert set(short.status) == {"not_converged"} and (short.iterations == 2).all()
    assert "out of iterations" in short.summary()
    back = round_trip(slow, tmp_path / "slow.nc")
    assert list(back.status) == ["slow_point"]
    # without the stored status (files of the previous layout) it is derived from iterations
    ds = short.to_xarray().drop_vars("status")
    assert set(type(short).from_xarray(ds).status) == {"not_converged"}
    assert list(type(slow).from_xarray(slow.to_xarray().drop_vars("status")).status) == ["slow_point"]


def test_cycles_round_trip_status_and_fixed_points_member(tmp_path):
    res = find_cycles(two_cycle_saddle(), max_order=2, seed=5)
    back = round_trip(res, tmp_path / "cycles.nc")
    np.testing.assert_array_equal(back.region_code, res.region_code)
    np.testing.assert_array_equal(back.search["complete"], res.search["complete"])
    assert list(back.status) == ["converged"] * 3
    # fixed_points(...) is a method in both point results, returning the same type
    fp = res.fixed_points()
    assert type(fp) is type(res) and fp.n_points == 1
    np.testing.assert_allclose(fp.states, [[0.4, -2.0]])
    with pytest.warns(DeprecationWarning, match="method now"):
        old = np.asarray(res.fixed_points + 0.0)  # its use as an array before it became a method
    np.testing.assert_allclose(old, [[0.4, -2.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res.fixed_points(converged_only=False)
    # the general loader reads the shared fields of a cycle file
    assert load_fixed_points(tmp_path / "cycles.nc").n_points == 3


def test_cycle_on_a_switching_hyperplane_has_status_on_boundary():
    # z' = 0.5 z + 0.2 relu(z): the fixed point 0 lies on the hyperplane z = 0 of the ReLU
    res = find_cycles(PLRNN.from_arrays([0.5], [[0.2]], [0.0]), max_order=1)
    assert res.n_points == 1 and res.region_margin[0] == 0.0
    assert list(res.status) == ["on_boundary"]


def test_manifolds_round_trip_and_piece_status(tmp_path):
    res = find_manifolds(lozi(), [LOZI_SADDLE], box=3.0, max_depth=4, max_pieces=30)
    back = round_trip(res, tmp_path / "m.nc")
    assert back.n_pieces == res.n_pieces and set(back.status) == {"ok"}
    assert list(back.saddle_status) == ["ok"] and back.attrs == res.attrs
    bad = dataclasses.replace(res.pieces[0], residual=1.0)  # maps far from its parent
    assert dataclasses.replace(res, pieces=(bad, *res.pieces[1:])).status[0] == "inconsistent"


def test_homoclinic_round_trip_and_status(tmp_path):
    manifolds = find_manifolds(lozi(), [LOZI_SADDLE], box=3.0, max_depth=5, max_pieces=40)
    res = find_homoclinic_points(lozi(), manifolds)
    back = round_trip(res, tmp_path / "h.nc")
    assert back.proves_chaos and "transversal" in set(back.status)  # Misiurewicz (1980)
    np.testing.assert_array_equal(back.points, res.points)


def test_basins_round_trip_and_status(tmp_path):
    model = two_cycle_saddle()
    res = compute_basins(model, find_cycles(model, max_order=2), grid=([(-1.0, 1.0), (-3.0, -1.0)], 3),
                         max_steps=400)
    back = round_trip(res, tmp_path / "b.nc")
    assert set(back.status) == {"attracted"} and back.labels_grid().shape == (3, 3)
    odd = compute_basins(model, find_cycles(model, max_order=2), states=[[0.5, -2.0], [100.0, 0.0]],
                         max_steps=3, diverge_radius=50.0)
    assert list(odd.status) == ["undecided", "diverged"]
    assert list(round_trip(odd, tmp_path / "odd.nc").status) == ["undecided", "diverged"]


def test_lyapunov_round_trip_and_status(tmp_path):
    res = lyapunov_spectrum(lozi(), n_steps=300, n_transient=20, seed=3)
    back = round_trip(res, tmp_path / "l.nc")
    np.testing.assert_array_equal(back.exponents, res.exponents)
    assert list(back.status) == ["finite"]
    grow = PLSystem(np.zeros((0, 2)), np.zeros(0), np.diag([3.0, 0.5]), np.zeros(2), np.zeros((2, 0)))
    diverged = lyapunov_spectrum(grow, h0=[1.0, 1.0], n_steps=2000, n_transient=0)
    assert list(round_trip(diverged, tmp_path / "d.nc").status) == ["diverged"]


def test_reconstruction_round_trip(tmp_path):
    t = np.arange(120) * 0.3
    x = np.stack([np.sin(t), np.cos(t)], axis=1)
    model = PLRNN.from_arrays([0.9, 0.9], [[0.0, -0.3], [0.3, 0.0]], [0.0, 0.0])
    res = evaluate_reconstruction(model, x[:60], x[60:], observation="identity", n_transient=5, pe_steps=2,
                                  n_bins=4, seed=1)
    back = round_trip(res, tmp_path / "r.nc")
    assert back.status == res.status == ("ok", "ok", "collapsed") and back.settings == res.settings


def test_degeneracy_round_trip(tmp_path):
    nets = [LeakyRNN(1, 4, 1, seed=s) for s in (0, 1)]
    res = compute_solution_degeneracy(nets, FlipFlop(n_bits=1, n_steps=20), n_trials=4, seed=2,
                                      dynamics_metric="cka")
    back = round_trip(res, tmp_path / "deg.nc")
    assert back.status == ("ok", "ok") and back.settings == res.settings


@pytest.mark.parametrize("lead", [(), (2,), (3, 2)])
def test_rollout_round_trip_and_status(tmp_path, lead):
    states = torch.arange(np.prod(lead, dtype=int) * 4 * 3, dtype=torch.float64).reshape(*lead, 4, 3)
    res = RolloutResult(states, states[..., -1, :], "torch", every=2, seed=5)
    back = round_trip(res, tmp_path / "roll.nc")
    assert torch.equal(back.states, res.states) and back.seed == 5 and back.every == 2
    assert back.status.shape == lead


def test_rollout_of_a_diverging_network_has_status_diverged(tmp_path):
    model = PLRNN.from_arrays([[2.0, 0.0], [0.0, 0.5]], np.zeros((2, 2)), [0.0, 0.0])
    res = rollout(model, h0=torch.tensor([[1.0, 1.0], [0.0, 1.0]]), n_steps=300, backend="torch")
    assert list(res.status) == ["diverged", "finite"]
    assert list(round_trip(res, tmp_path / "roll.nc").status) == ["diverged", "finite"]


def test_generated_is_a_view_of_a_rollout(tmp_path):
    model = PLRNN.from_arrays([0.9, 0.9], [[0.0, -0.3], [0.3, 0.0]], [0.0, 0.0])
    gen = generate(model, np.array([1.0, 0.5]), 6, observation="identity")
    observations, states = gen  # unpacks as the NamedTuple it was
    assert observations.shape == (6, 2) and states.shape == (6, 2) and gen.status == "finite"
    gen.save(tmp_path / "g.nc")
    run = neurodyn.io.load(tmp_path / "g.nc")
    assert isinstance(run, RolloutResult)
    np.testing.assert_array_equal(run.outputs.numpy(), gen.observations)
    np.testing.assert_array_equal(run.states.numpy(), gen.states)
    back = Generated.load(tmp_path / "g.nc")
    np.testing.assert_array_equal(back.observations, gen.observations)
    np.testing.assert_array_equal(back.states, gen.states)


def test_save_replaces_a_file_only_when_complete(tmp_path, monkeypatch):
    res = find_cycles(two_cycle_saddle(), max_order=1)
    path = tmp_path / "c.nc"
    res.save(path)
    before = path.read_bytes()

    def broken(self, target, **kwargs):
        open(target, "wb").write(b"half")
        raise OSError("disk full")

    monkeypatch.setattr(xr.Dataset, "to_netcdf", broken)
    with pytest.raises(OSError, match="disk full"):
        res.save(path, overwrite=True)
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["c.nc"]
    with pytest.raises(FileExistsError, match="overwrite=True"):
        res.save(path)  # every result type refuses an existing file by default


def test_every_result_type_refuses_an_existing_file_by_default():
    import inspect

    import neurodyn.analysis  # noqa: F401  (registers the result types)
    import neurodyn.training  # noqa: F401
    from neurodyn._result import FORMATS, Result, TorchResult

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    kinds = [*subclasses(Result), *subclasses(TorchResult)]
    assert len(kinds) >= 5 and FORMATS
    defaults = {k.__name__: inspect.signature(k.save).parameters["overwrite"].default for k in kinds}
    assert set(defaults.values()) == {False}, defaults


def _fixed_points():
    from neurodyn.analysis import find_fixed_points
    from neurodyn.models import PLRNN

    model = PLRNN.from_arrays([0.5, 0.2], [[0.0, 0.3], [-0.4, 0.0]], [1.0, -0.5])
    return find_fixed_points(model, initial_states=np.random.default_rng(0).normal(size=(8, 2)), seed=0)


def test_a_value_changed_on_disk_is_refused_not_returned(tmp_path):
    import struct

    import h5py

    res = _fixed_points()
    path = res.save(tmp_path / "fp.nc")
    with h5py.File(path) as f:
        offset = f["state"].id.get_offset()  # the raw bytes of the first state value
        assert f["stability"].dtype == np.dtype("S1")  # text as char arrays, not HDF5 variable-length strings
    raw = bytearray(path.read_bytes())
    raw[offset:offset + 8] = struct.pack("<d", 123.0)
    (tmp_path / "bad.nc").write_bytes(bytes(raw))
    with pytest.raises(ResultFileError, match="is damaged: its values no longer match the checksum") as err:
        load(tmp_path / "bad.nc")
    assert "\n" not in str(err.value)
    back = load(path)
    assert np.array_equal(back.states, res.states) and list(back.stability) == list(res.stability)


def test_a_file_edited_with_xarray_is_refused_until_its_checksum_is_dropped(tmp_path):
    path = _fixed_points().save(tmp_path / "fp.nc")
    ds = xr.load_dataset(path, engine="h5netcdf")
    ds["q"] = ds["q"] + 1.0
    ds.to_netcdf(tmp_path / "edited.nc", engine="h5netcdf")
    with pytest.raises(ResultFileError, match="delete its content_sha256 attribute to read it"):
        load(tmp_path / "edited.nc")
    del ds.attrs["content_sha256"]
    ds.to_netcdf(tmp_path / "edited.nc", engine="h5netcdf", mode="w")
    assert np.array_equal(load(tmp_path / "edited.nc").q, load(path).q + 1.0)


def test_damaged_files_never_hang_or_load_changed_values(tmp_path):
    # flip 8 bytes at every 64th offset of a small result file: each copy loads unchanged or is refused
    res = _fixed_points()
    raw = res.save(tmp_path / "fp.nc").read_bytes()
    for offset in range(0, len(raw), 64):
        damaged = bytearray(raw)
        damaged[offset:offset + 8] = bytes(b ^ 0xA5 for b in damaged[offset:offset + 8])
        (tmp_path / "d.nc").write_bytes(bytes(damaged))
        try:
            back = load(tmp_path / "d.nc")
        except ResultFileError:
            continue
        assert np.array_equal(back.states, res.states) and np.array_equal(back.q, res.q)
        assert list(back.stability) == list(res.stability) and list(back.status) == list(res.status)


def test_an_edited_setting_is_refused_like_an_edited_value(tmp_path):
    path = _fixed_points().save(tmp_path / "fp.nc")
    ds = xr.load_dataset(path, engine="h5netcdf")
    ds.attrs["tol_q"] = 0.5
    ds.to_netcdf(tmp_path / "edited.nc", engine="h5netcdf")
    with pytest.raises(ResultFileError, match="no longer match the checksum"):
        load(tmp_path / "edited.nc")


@pytest.mark.parametrize("text, match", [("a\x00b", "NUL character"), ("a\udcffb", "not valid Unicode")])
def test_text_a_file_cannot_hold_is_refused_before_writing(tmp_path, text, match):
    res = dataclasses.replace(_fixed_points(), attrs={"note": text})
    with pytest.raises(ValueError, match=f"setting 'note' holds {'a' if 'NUL' in match else 'text'}"):
        res.save(tmp_path / "fp.nc")
    assert list(tmp_path.iterdir()) == []


def test_a_result_that_would_not_read_back_is_not_saved(tmp_path):
    res = _fixed_points()
    bad = dataclasses.replace(res, q=np.full_like(res.q, np.nan))  # converged points with NaN q
    with pytest.raises(ValueError, match="cannot be saved: it would not read back"):
        bad.save(tmp_path / "fp.nc")
    assert list(tmp_path.iterdir()) == []


def test_save_refuses_checkpoint_suffixes_folders_and_names_the_users_path(tmp_path):
    from neurodyn.analysis import find_fixed_points
    from neurodyn.analysis.fixed_points._examples import bistable_unit

    fps = find_fixed_points(bistable_unit(), n_inits=8, seed=0)
    for name in ("fps.pt", "fps.PTH"):
        with pytest.raises(ValueError, match=r"is read as a model checkpoint; end the name in .nc"):
            fps.save(tmp_path / name)
        assert not (tmp_path / name).exists()
    (tmp_path / "ro").mkdir()
    with pytest.raises(IsADirectoryError, match="ro is a folder; give a file name inside it"):
        fps.save(tmp_path / "ro", overwrite=True)
    (tmp_path / "other.txt").write_text("x")
    with pytest.raises(NotADirectoryError, match=r"cannot write .*x.nc: .*other.txt is a file, not a folder"):
        fps.save(tmp_path / "other.txt" / "x.nc")
    assert (tmp_path / "other.txt").read_text() == "x"
    assert fps.save(tmp_path / "fps.nc") == tmp_path / "fps.nc"


def test_every_result_type_has_a_short_one_line_repr():
    import neurodyn.analysis  # noqa: F401  (registers the result types)
    import neurodyn.training  # noqa: F401
    from neurodyn._result import Result

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    for kind in subclasses(Result):
        assert kind.__repr__ is Result.__repr__ or "__repr__" in vars(kind), kind  # not the dataclass one
    res = _fixed_points()
    text = repr(res)
    assert "\n" not in text and len(text) < 200, text
    assert text.startswith(f"FixedPointResult({res.n_points} point") and "2 units" in text
    lyap = LyapunovResult(np.zeros((1, 3)), np.zeros((1, 10, 3)), np.arange(10), np.ones(1, bool),
                          jacobian="analytic", n_steps=10, n_transient=0, seed=0)
    assert "running=float64 (1, 10, 3)" in repr(lyap) and "\n" not in repr(lyap)
    outputs = LeakyRNN(2, 8, 1, seed=0)(torch.zeros(3, 5, 2))
    assert repr(outputs) == "Rollout(outputs=Tensor float32 (3, 5, 1), states=Tensor float32 (3, 5, 8))"


def test_ipython_display_adds_the_summary():
    pretty = pytest.importorskip("IPython.lib.pretty")
    res = _fixed_points()
    text = pretty.pretty(res)
    assert text.splitlines()[0] == repr(res) and res.summary() in text


def test_lyapunov_variables_carry_their_units():
    lyap = LyapunovResult(np.zeros((1, 3)), np.zeros((1, 10, 3)), np.arange(10), np.ones(1, bool),
                          jacobian="analytic", n_steps=10, n_transient=0, seed=0)
    ds = lyap.to_xarray()
    assert ds["exponents"].attrs["units"] == ds["running"].attrs["units"] == "nats per time step"
    assert ds.attrs["units"] == "nats per time step" and ds["steps"].attrs["units"] == "time steps"
