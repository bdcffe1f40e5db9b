"""The ``neurodyn fixedpoints`` sub-command, called through its entry point."""

import numpy as np
import pytest
import torch
import xarray as xr

from neurodyn.cli.main import main
from neurodyn.io import load, save_checkpoint
from neurodyn.models import LeakyRNN


@pytest.fixture
def linear_ckpt(tmp_path):
    """A linear leaky RNN whose unique fixed point is (I - W)^-1 b (alpha cancels)."""
    m = LeakyRNN(2, 4, 1, activation="linear", alpha=0.5, seed=0).double()
    with torch.no_grad():
        m.w_rec.mul_(0.3 / torch.linalg.matrix_norm(m.w_rec, 2))
        m.b.copy_(torch.tensor([0.5, -1.0, 0.25, 2.0]))
    path = tmp_path / "lin.pt"
    save_checkpoint(path, m)
    w, b = m.w_rec.detach().numpy(), m.b.detach().numpy()
    return path, np.linalg.solve(np.eye(4) - w, b)


def run_cli(*args):
    return main(["fixedpoints", *map(str, args)])


def test_finds_the_linear_fixed_point_and_writes_netcdf(linear_ckpt, tmp_path, capsys):
    path, h_star = linear_ckpt
    out = tmp_path / "fps.nc"
    assert run_cli(path, "--n-inits", 16, "--seed", 0, "--out", out) == 0
    printed = capsys.readouterr().out
    assert "stable" in printed
    ds = xr.load_dataset(out, engine="h5netcdf")
    conv = ds.state.values[ds.converged.values]
    assert conv.shape[0] == 1
    np.testing.assert_allclose(conv[0], h_star, atol=1e-6)
    assert str(ds.stability.values[ds.converged.values][0]) == "stable"
    assert {"fixed_point", "unit", "eigenvalue"} <= set(ds.dims)
    back = load(out)  # the command's file is a result file like any other
    assert type(back).__name__ == "FixedPointResult" and back.attrs["model_file"] == str(path)
    np.testing.assert_array_equal(back.states, ds.state.values)


def test_constant_input_shifts_the_fixed_point(linear_ckpt, tmp_path):
    path, _ = linear_ckpt
    out = tmp_path / "fps.nc"
    assert run_cli(path, "--n-inits", 8, "--input", "1,-1", "--out", out) == 0
    from neurodyn.io import load_model

    m = load_model(path).model
    w, b, w_in = (t.detach().numpy() for t in (m.w_rec, m.b, m.w_in))
    expected = np.linalg.solve(np.eye(4) - w, b + w_in @ np.array([1.0, -1.0]))
    ds = xr.load_dataset(out, engine="h5netcdf")
    np.testing.assert_allclose(ds.state.values[ds.converged.values][0], expected, atol=1e-6)


def test_states_file_is_used(linear_ckpt, tmp_path):
    path, h_star = linear_ckpt
    states = tmp_path / "s.npy"
    np.save(states, np.random.default_rng(0).normal(size=(3, 5, 4)))
    out = tmp_path / "fps.nc"
    assert run_cli(path, "--states", states, "--n-inits", 10, "--out", out) == 0
    ds = xr.load_dataset(out, engine="h5netcdf")
    np.testing.assert_allclose(ds.state.values[ds.converged.values][0], h_star, atol=1e-6)


@pytest.mark.parametrize("case", ["missing", "text", "pickle", "nan", "input_length", "input_text",
                                  "states_shape", "states_nan", "states_complex"])
def test_bad_inputs_one_line_error_nonzero_exit(linear_ckpt, tmp_path, capsys, case):
    path, _ = linear_ckpt
    args = [path]
    if case == "missing":
        args = [tmp_path / "nope.pt"]
    elif case == "text":
        (tmp_path / "t.pt").write_text("hello")
        args = [tmp_path / "t.pt"]
    elif case == "pickle":
        torch.save({"module": torch.nn.Linear(2, 2)}, tmp_path / "p.pt")
        args = [tmp_path / "p.pt"]
    elif case == "nan":
        sd = torch.nn.GRU(2, 3).state_dict()
        sd["bias_hh_l0"][1] = float("inf")
        torch.save(sd, tmp_path / "n.pt")
        args = [tmp_path / "n.pt"]
    elif case == "input_length":
        args += ["--input", "0,0,0"]
    elif case == "input_text":
        args += ["--input", "a,b"]
    elif case == "states_shape":
        np.save(tmp_path / "s.npy", np.zeros((5, 7)))
        args += ["--states", tmp_path / "s.npy"]
    elif case == "states_nan":
        np.save(tmp_path / "s.npy", np.full((5, 4), np.nan))
        args += ["--states", tmp_path / "s.npy"]
    elif case == "states_complex":
        np.save(tmp_path / "s.npy", np.zeros((5, 4)) + 5j)
        args += ["--states", tmp_path / "s.npy"]
    assert run_cli(*args, "--out", tmp_path / "o.nc") == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("neurodyn fixedpoints: error:") and "\n" not in err
    assert not (tmp_path / "o.nc").exists()


def test_never_overwrites_without_flag(linear_ckpt, tmp_path, capsys):
    path, _ = linear_ckpt
    out = tmp_path / "fps.nc"
    out.write_text("precious")
    assert run_cli(path, "--out", out) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert out.read_text() == "precious"
    assert run_cli(path, "--n-inits", 4, "--out", out, "--overwrite") == 0
    assert xr.load_dataset(out, engine="h5netcdf").sizes["unit"] == 4


def test_exhaustive_plrnn_search_of_a_huge_order_is_a_one_line_input_error(tmp_path, capsys):
    model = tmp_path / "one.npz"
    np.savez(model, A=[0.5], W=[[-2.0]], h=[1.0])
    out = tmp_path / "x.nc"
    assert run_cli(model, "--arch", "plrnn", "--max-order", 1000000, "--exhaustive", "--out", out) == 2
    err = capsys.readouterr().err
    assert "too many region sequences" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x.nc").exists()


def test_a_huge_max_order_is_a_one_line_input_error(linear_ckpt, tmp_path, capsys):
    path, _ = linear_ckpt
    out = tmp_path / "x.nc"
    assert run_cli(path, "--n-inits", 4, "--max-order", 1000000, "--out", out) == 2
    err = capsys.readouterr().err
    assert "lower --max-order" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_a_huge_max_order_of_the_plrnn_cycle_search_is_a_one_line_input_error(tmp_path, capsys):
    model, out = tmp_path / "one.npz", tmp_path / "x.nc"
    np.savez(model, A=[0.5], W=[[-2.0]], h=[1.0])
    assert run_cli(model, "--arch", "plrnn", "--max-order", 1000000, "--out", out) == 2
    err = capsys.readouterr().err
    assert "lower --max-order (to 199 or less)" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()
