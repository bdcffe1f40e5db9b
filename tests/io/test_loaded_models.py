"""What ``load_model`` returns: one dtype rule for every file, and ``find_fixed_points`` accepts it."""

import numpy as np
import pytest
import torch

from neurodyn.analysis import find_fixed_points
from neurodyn.io import load_model, save_checkpoint
from neurodyn.models import PLRNN, LeakyRNN
from neurodyn.tasks import FlipFlop


@pytest.fixture
def files(tmp_path):
    torch.manual_seed(0)
    torch.save(torch.nn.RNN(2, 4).double().state_dict(), tmp_path / "sd.pt")  # float64 weights
    linear = LeakyRNN(2, 4, 2, activation="linear", alpha=0.5, seed=0).double()
    with torch.no_grad():
        linear.w_rec.mul_(0.5)
    save_checkpoint(tmp_path / "ckpt.pt", linear, task=FlipFlop(n_bits=2, n_steps=6))
    return tmp_path, linear


def test_state_dicts_and_checkpoints_load_as_float32_unless_asked(files):
    path, linear = files
    for name, arch in (("sd.pt", "rnn_tanh"), ("ckpt.pt", None)):
        assert load_model(path / name, arch=arch).model.w_rec.dtype == torch.float32
        exact = load_model(path / name, arch=arch, dtype=torch.float64).model
        assert exact.w_rec.dtype == torch.float64
    exact = load_model(path / "ckpt.pt", dtype="float64").model  # float64 weights come back exactly
    assert torch.equal(exact.w_rec, linear.w_rec) and torch.equal(exact.b, linear.b)
    with pytest.raises(ValueError, match="dtype must be float32 or float64"):
        load_model(path / "ckpt.pt", dtype="float16")


def test_plrnn_arrays_keep_float64(tmp_path):
    np.savez(tmp_path / "p.npz", A=np.full(2, 0.5), W=np.zeros((2, 2)), h=np.ones(2))
    loaded = load_model(tmp_path / "p.npz", arch="plrnn")
    assert isinstance(loaded.model, PLRNN) and loaded.model.A.dtype == torch.float64
    assert loaded.description == "PLRNN, 2 latent dims"


def test_find_fixed_points_takes_what_load_model_returns(files):
    path, linear = files
    loaded = load_model(path / "ckpt.pt", dtype="float64")
    assert loaded.description == "LeakyRNN, 4 units"
    res = find_fixed_points(loaded, n_inits=8, seed=0)
    assert res.attrs["initial_state_source"] == "task"  # the checkpoint's task
    w, b = linear.w_rec.detach().numpy(), linear.b.detach().numpy()
    h_star = np.linalg.solve(np.eye(4) - w, b)  # linear leaky map: h = (1-a) h + a (W h + b)
    np.testing.assert_allclose(res.states[res.converged][0], h_star, atol=1e-10)
    foreign = load_model(path / "sd.pt", arch="rnn_tanh")
    assert foreign.description == "torch.nn.RNN (tanh), 4 units"
    assert find_fixed_points(foreign, n_inits=4, seed=0).attrs["initial_state_source"] == "free_rollouts"
