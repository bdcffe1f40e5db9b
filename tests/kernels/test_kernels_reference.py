"""The torch reference rollout against ``RecurrentModel.forward`` and per-network runs."""

from __future__ import annotations

import subprocess
import sys
from typing import NamedTuple

import pytest
import torch
from problems import RotationModel

from neurodyn._seed import torch_generator
from neurodyn.kernels import FAMILIES, Family, register_family, rollout, stack_params
from neurodyn.models import GRU, LSTM, LeakyRNN


def _models():
    return [
        LeakyRNN(2, 8, 1, activation="tanh", alpha=0.2, noise_std=0.1, seed=1),
        LeakyRNN(2, 8, 1, activation="softplus", alpha=0.5, noise_std=0.1, seed=2),
        LeakyRNN(2, 8, 1, activation="relu", alpha=1.0, gain=0.5, seed=3),
        GRU(2, 8, 1, seed=4),
    ]


@pytest.mark.parametrize("model", _models(), ids=lambda m: type(m).__name__)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_reference_equals_forward_bit_for_bit(model, dtype):
    model = model.to(dtype)
    gen = torch.Generator().manual_seed(0)
    h0 = torch.randn(5, 8, generator=gen, dtype=dtype)
    x = torch.randn(5, 30, 2, generator=gen, dtype=dtype)
    res = rollout(model, h0=h0, inputs=x, backend="torch")
    assert res.backend == "torch"
    with torch.no_grad():
        want = model(x, h0, noise=False).states
    assert torch.equal(res.states, want)
    assert torch.equal(res.final, want[:, -1])


def test_reference_noise_equals_forward_with_same_generator():
    model = LeakyRNN(2, 8, 1, alpha=0.2, noise_std=0.3, seed=5)
    h0, x = torch.randn(4, 8), torch.randn(4, 20, 2)
    res = rollout(model, h0=h0, inputs=x, backend="torch", noise_std=None, seed=11)
    with torch.no_grad():
        want = model(x, h0, noise=True, generator=torch_generator(11)).states
    assert res.noise_std == pytest.approx(model.noise_scale) and res.seed == 11
    assert torch.equal(res.states, want)
    again = rollout(model, h0=h0, inputs=x, backend="torch", noise_std=None, seed=11)
    other = rollout(model, h0=h0, inputs=x, backend="torch", noise_std=None, seed=12)
    assert torch.equal(again.states, res.states)
    assert not torch.allclose(other.states, res.states)


def test_constant_inputs_and_every():
    model = LeakyRNN(2, 6, 1, alpha=0.3, seed=6)
    h0, u = torch.randn(3, 6), torch.randn(3, 2)
    res = rollout(model, h0=h0, inputs=u, n_steps=12, every=4, backend="torch")
    with torch.no_grad():
        want = model(u[:, None].expand(3, 12, 2), h0).states
    assert res.states.shape == (3, 3, 6)
    assert torch.equal(res.states, want[:, 3::4])
    assert torch.equal(res.final, want[:, -1])
    final_only = rollout(model, h0=h0, inputs=u, n_steps=12, return_trajectory=False, backend="torch")
    assert final_only.states is None


def test_ensemble_equals_each_network():
    models = [LeakyRNN(2, 6, 1, alpha=0.25, seed=s) for s in range(3)]
    h0, x = torch.randn(3, 4, 6), torch.randn(3, 4, 15, 2)
    res = rollout(stack_params(models), h0=h0, inputs=x, backend="torch", every=5)
    assert res.states.shape == (3, 4, 3, 6)
    for e, m in enumerate(models):
        with torch.no_grad():
            want = m(x[e], h0[e]).states[:, 4::5]
        torch.testing.assert_close(res.states[e], want, rtol=1e-6, atol=1e-7)


def test_family_without_a_compiled_kernel_runs_on_torch():
    model = LSTM(2, 5, 1, seed=0)
    h0, x = torch.randn(3, 10), torch.randn(3, 7, 2)
    res = rollout(model, h0=h0, inputs=x)
    assert res.backend == "torch"
    with torch.no_grad():
        assert torch.equal(res.states, model(x, h0).states)
    with pytest.raises(ValueError, match="no kernel for model family 'lstm'"):
        rollout(model, h0=h0, inputs=x, backend="numba")
    ens = rollout(stack_params([model, LSTM(2, 5, 1, seed=1)]), h0=torch.stack([h0, h0]), n_steps=4)
    assert ens.backend == "torch" and ens.final.shape == (2, 3, 10)


def test_unknown_model_falls_back_to_its_own_step():
    model = RotationModel()
    h0 = torch.ones(1, 2, dtype=torch.float64)
    res = rollout(model, h0=h0, n_steps=3)
    assert res.backend == "torch"
    torch.testing.assert_close(res.final[0], torch.linalg.matrix_power(model.w.detach(), 3) @ h0[0])
    with pytest.raises(ValueError, match="does not know this model family"):
        rollout(model, h0=h0, n_steps=3, backend="numba")


class ToyParams(NamedTuple):
    """A linear map ``h' = M h + c u``: a family registered after import."""

    M: torch.Tensor
    c: torch.Tensor


def _toy_drive(p, u):
    return torch.zeros(p.M.shape[-1], dtype=p.M.dtype) if u is None else u @ p.c.mT


def _toy_step(p, h, u):
    return h @ p.M.mT + _toy_drive(p, u)


@pytest.fixture
def toy_family():
    family = Family("toy_linear", "M", (), _toy_step, _toy_drive, lambda p: 0.0, lambda p: p.c.shape[-1])
    register_family(ToyParams, family)
    yield family
    FAMILIES.pop(ToyParams)


def test_registered_family_without_kernels_runs_on_torch_under_auto(toy_family):
    p = ToyParams(torch.tensor([[0.5, 0.1], [0.0, -0.8]]), torch.tensor([[1.0], [2.0]]))
    h0, x = torch.tensor([[1.0, 1.0]]), torch.ones(1, 4, 1)
    res = rollout(p, h0=h0, inputs=x)  # CPU, auto: numba has no kernel for it, so torch runs it
    assert res.backend == "torch"
    h = h0[0]
    for _ in range(4):  # oracle: the linear recursion by hand
        h = p.M @ h + p.c[:, 0]
    torch.testing.assert_close(res.final[0], h)
    with pytest.raises(ValueError, match="no kernel for model family 'toy_linear'"):
        rollout(p, h0=h0, inputs=x, backend="numba")


def test_registered_kernel_is_looked_up_and_names_are_unique(toy_family):
    from neurodyn.kernels._numba_backend import KERNELS

    calls = []

    def run(params, h, drive, noise, noise_std, n_steps, t0, every, out):
        calls.append((tuple(h.shape), tuple(drive.shape), n_steps))
        for t in range(n_steps):  # a plain-torch "kernel" with the chunk contract
            h.copy_(h @ params.M.mT + drive[:, :, t if drive.shape[2] > 1 else 0])
            if out is not None and (t0 + t + 1) % every == 0:
                out[:, :, (t0 + t + 1) // every - 1 - t0 // every] = h

    register_family(ToyParams, toy_family, kernels={"numba": run})
    try:
        p = ToyParams(torch.tensor([[0.5, 0.1], [0.0, -0.8]]), torch.tensor([[1.0], [2.0]]))
        h0, x = torch.randn(3, 2), torch.randn(3, 6, 1)
        got = rollout(p, h0=h0, inputs=x, every=2)
        want = rollout(p, h0=h0, inputs=x, every=2, backend="torch")
        assert got.backend == "numba" and calls == [((1, 3, 2), (1, 3, 6, 2), 6)]
        torch.testing.assert_close(got.states, want.states)
    finally:
        KERNELS.pop("toy_linear")
    with pytest.raises(ValueError, match="taken by LeakyRNNParams"):
        register_family(ToyParams, toy_family._replace(name="leaky"))


def test_bad_inputs_raise_clear_errors():
    model = LeakyRNN(2, 6, 1)
    with pytest.raises(ValueError, match="h0 must have shape"):
        rollout(model, h0=torch.zeros(3, 5), n_steps=2)
    with pytest.raises(ValueError, match="inputs must have shape"):
        rollout(model, h0=torch.zeros(3, 6), inputs=torch.zeros(3, 4, 3))
    with pytest.raises(ValueError, match="NaN or Inf"):
        rollout(model, h0=torch.full((3, 6), float("nan")), n_steps=2)
    with pytest.raises(ValueError, match="give n_steps"):
        rollout(model, h0=torch.zeros(3, 6))
    with pytest.raises(ValueError, match="n_steps=5 but inputs"):
        rollout(model, h0=torch.zeros(3, 6), inputs=torch.zeros(3, 4, 2), n_steps=5)
    with pytest.raises(ValueError, match="unknown backend"):
        rollout(model, h0=torch.zeros(3, 6), n_steps=2, backend="cuda")
    with pytest.raises(ValueError, match="ensemble params"):
        rollout(stack_params([model, model]), h0=torch.zeros(3, 6), n_steps=2)
    with pytest.raises(ValueError, match="float32 or float64"):
        rollout(model, h0=torch.zeros(3, 6, dtype=torch.float16), n_steps=2)
    with pytest.raises(ValueError, match="differs between networks"):
        stack_params([model, LeakyRNN(2, 6, 1, alpha=0.5)])


def test_to_xarray_round_trips_netcdf(tmp_path):
    import xarray as xr

    ens = stack_params([LeakyRNN(0, 4, 1, seed=s) for s in range(2)])
    res = rollout(ens, h0=torch.randn(2, 3, 4), n_steps=6, every=2, backend="torch")
    ds = res.to_xarray()
    assert dict(ds.sizes) == {"network": 2, "trial": 3, "time": 3, "unit": 4}
    assert list(ds.time.values) == [2, 4, 6]
    ds.to_netcdf(tmp_path / "r.nc", engine="h5netcdf")
    back = xr.load_dataset(tmp_path / "r.nc", engine="h5netcdf")
    assert (back.states.values == res.states.numpy()).all()
    assert not back.diverged.values.any()


def test_diverging_trajectories_are_reported_not_raised():
    model = LeakyRNN(0, 3, 1, activation="linear", alpha=1.0)
    with torch.no_grad():
        model.w_rec.copy_(torch.eye(3) * 1e30)
    h0 = torch.tensor([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    res = rollout(model, h0=h0, n_steps=5, backend="torch")
    assert res.diverged.tolist() == [True, False]


def test_import_neurodyn_does_not_import_numba_or_triton():
    code = "import sys, neurodyn, neurodyn.kernels; print('numba' in sys.modules, 'triton' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_missing_backend_raises_import_error_and_auto_falls_back(monkeypatch):
    import neurodyn.kernels._api as api

    monkeypatch.setattr(api, "backend_available", lambda name: name == "torch")
    model = LeakyRNN(0, 4, 1)
    with pytest.raises(ImportError, match="neurodyn\\[gpu\\]"):
        rollout(model, h0=torch.zeros(2, 4), n_steps=2, backend="triton")
    with pytest.raises(ImportError, match="pip install numba"):
        rollout(model, h0=torch.zeros(2, 4), n_steps=2, backend="numba")
    assert rollout(model, h0=torch.zeros(2, 4), n_steps=2).backend == "torch"


def test_keyword_order_matches_forward_and_positional_form_is_deprecated():
    """``rollout(model, inputs=x)`` is ``model(x)``; the older positional ``(model, h0, inputs)`` works."""
    model = LeakyRNN(2, 8, 1, alpha=0.3, seed=5).double()
    x = torch.randn(4, 12, 2, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    res = rollout(model, inputs=x, backend="torch")  # h0 from model.initial_state
    with torch.no_grad():
        want = model(x, noise=False).states
    assert torch.equal(res.states, want)
    h0 = torch.full((4, 8), 0.1, dtype=torch.float64)
    with pytest.warns(DeprecationWarning, match="inputs=..., h0="):
        old = rollout(model, h0, x, backend="torch")
    assert torch.equal(old.states, rollout(model, inputs=x, h0=h0, backend="torch").states)
    with pytest.raises(TypeError, match="as keywords"):
        rollout(model, h0, x, h0=h0)
    with pytest.raises(ValueError, match="needs h0="):
        rollout(model, n_steps=3)
