"""PLRNN, shallow PLRNN and ALRNN: recursions, region maps, Jacobians, constructors, training."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neurodyn.models import ALRNN, MODELS, PLRNN, ShallowPLRNN, make_model, pl_system
from neurodyn.tasks import FlipFlop
from neurodyn.training import train


def _random_models(seed: int) -> list:
    rng = np.random.default_rng(seed)
    n, L = 4, 6
    return [
        PLRNN.from_arrays(rng.uniform(0.2, 0.9, n), rng.normal(size=(n, n)), rng.normal(size=n)),
        PLRNN.from_arrays(rng.normal(size=(n, n)) * 0.5, rng.normal(size=(n, n)), rng.normal(size=n),
                          C=rng.normal(size=(n, 2))),
        ShallowPLRNN.from_arrays(rng.uniform(0.2, 0.9, n), rng.normal(size=(n, L)),
                                 rng.normal(size=(L, n)), rng.normal(size=n), rng.normal(size=L)),
        ShallowPLRNN.from_arrays(rng.uniform(0.2, 0.9, n), rng.normal(size=(n, L)),
                                 rng.normal(size=(L, n)), rng.normal(size=n), rng.normal(size=L),
                                 clipped=True, C=rng.normal(size=(n, 1))),
        ALRNN.from_arrays(rng.uniform(0.2, 0.9, n), rng.normal(size=(n, n)), rng.normal(size=n),
                          n_relu=2, C=rng.normal(size=(n, 3))),
        PLRNN(2, 5, 3, seed=seed).double(),
        ShallowPLRNN(1, 3, 2, n_hidden=7, clipped=True, seed=seed).double(),
        ALRNN(2, 5, 5, n_relu=3, observation="identity", seed=seed).double(),
    ]


def _explicit_step(model, z: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The model equations written out directly, as the oracle for ``step``."""
    p = model.params()
    t = {k: (v.detach().numpy() if isinstance(v, torch.Tensor) else v) for k, v in p._asdict().items()}
    relu = lambda x: np.maximum(x, 0.0)  # noqa: E731
    if isinstance(model, ShallowPLRNN):
        act = relu(t["W2"] @ z + t["h2"])
        if model.clipped:
            act = act - relu(t["W2"] @ z)
        out = t["a"] * z + t["W1"] @ act + t["h1"]
    elif isinstance(model, ALRNN):
        phi = z.copy()
        phi[z.size - model.n_relu:] = relu(phi[z.size - model.n_relu:])
        out = t["A"] @ z + t["W"] @ phi + t["h"]
    else:
        out = t["A"] @ z + t["W"] @ relu(z) + t["h"]
    return out + t["C"] @ u


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_step_matches_equations_and_region_maps(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    for model in _random_models(seed):
        n = model.n_latent
        u = rng.normal(size=model.n_inputs)
        system = pl_system(model, u=u if model.n_inputs else None)
        zs = rng.normal(size=(50, n)) * 2.0
        torch_next = model.step(torch.as_tensor(zs), torch.as_tensor(u).expand(50, -1)).detach().numpy()
        oracle = np.stack([_explicit_step(model, z, u) for z in zs])
        np.testing.assert_allclose(torch_next, oracle, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(system.step(zs), oracle, rtol=1e-12, atol=1e-12)
        J, c = system.affine_map(system.region_code(zs))
        np.testing.assert_allclose(np.einsum("bij,bj->bi", J, zs) + c, oracle, rtol=1e-11, atol=1e-11)


@pytest.mark.parametrize("seed", [0, 1])
def test_analytic_jacobian_matches_autograd(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for model in _random_models(seed):
        system = pl_system(model)
        for z in rng.normal(size=(10, model.n_latent)) * 2.0:
            auto = torch.autograd.functional.jacobian(model.step, torch.as_tensor(z))
            np.testing.assert_allclose(system.jacobian(z), auto.numpy(), rtol=1e-12, atol=1e-12)


def test_hyperplanes_follow_the_agreed_layout() -> None:
    rng = np.random.default_rng(3)
    W1, W2, h2 = rng.normal(size=(3, 4)), rng.normal(size=(4, 3)), rng.normal(size=4)
    clipped = pl_system(ShallowPLRNN.from_arrays(np.full(3, 0.5), W1, W2, np.zeros(3), h2, clipped=True))
    np.testing.assert_array_equal(clipped.normals, np.vstack([W2, W2]))
    np.testing.assert_array_equal(clipped.offsets, np.concatenate([h2, np.zeros(4)]))
    plrnn = pl_system(PLRNN.from_arrays(np.full(3, 0.5), W1[:, :3], np.zeros(3)))
    np.testing.assert_array_equal(plrnn.normals, np.eye(3))
    z = np.array([1.0, -2.0, 0.0])
    np.testing.assert_array_equal(plrnn.region_code(z), [True, False, False])
    alrnn = pl_system(ALRNN.from_arrays(np.full(3, 0.5), W1[:, :3], np.zeros(3), n_relu=1))
    np.testing.assert_array_equal(alrnn.normals, [[0.0, 0.0, 1.0]])


def test_alrnn_without_relu_is_linear() -> None:
    rng = np.random.default_rng(4)
    A, W, h = rng.uniform(0, 1, 3), rng.normal(size=(3, 3)), rng.normal(size=3)
    system = pl_system(ALRNN.from_arrays(A, W, h, n_relu=0))
    assert system.n_hyperplanes == 0
    np.testing.assert_allclose(system.jacobian(rng.normal(size=3)), np.diag(A) + W)


def test_from_arrays_forms_of_A_and_W_diagonal() -> None:
    W = np.array([[0.3, 1.0], [-1.0, 0.2]])
    vec = PLRNN.from_arrays([0.5, 0.6], W, [0.0, 0.1])
    diag = PLRNN.from_arrays(np.diag([0.5, 0.6]), W, [0.0, 0.1])
    full = PLRNN.from_arrays([[0.5, 0.1], [0.0, 0.6]], W, [0.0, 0.1])
    assert not vec.full_A and not diag.full_A and full.full_A and vec.w_diagonal
    for m in (vec, diag):
        np.testing.assert_array_equal(m.params().A.detach().numpy(), np.diag([0.5, 0.6]))
    np.testing.assert_array_equal(vec.params().W.detach().numpy(), W)
    np.testing.assert_array_equal(full.params().A.detach().numpy(), [[0.5, 0.1], [0.0, 0.6]])
    trained = PLRNN(0, 3, 3, seed=0)
    assert np.all(np.diag(trained.params().W.detach().numpy()) == 0)


def test_from_arrays_rejects_bad_arrays() -> None:
    with pytest.raises(ValueError, match="W must have shape"):
        PLRNN.from_arrays(np.ones(3), np.ones((3, 2)), np.zeros(3))
    with pytest.raises(ValueError, match="NaN"):
        PLRNN.from_arrays(np.ones(2), np.full((2, 2), np.nan), np.zeros(2))
    with pytest.raises(ValueError, match="diagonal A"):
        ShallowPLRNN.from_arrays(np.ones((2, 2)), np.ones((2, 3)), np.ones((3, 2)), np.zeros(2),
                                 np.zeros(3))
    with pytest.raises(ValueError, match="W2 must have shape"):
        ShallowPLRNN.from_arrays(np.ones(2), np.ones((2, 3)), np.ones((2, 2)), np.zeros(2), np.zeros(3))
    with pytest.raises(ValueError, match="n_relu"):
        ALRNN.from_arrays(np.ones(2), np.ones((2, 2)), np.zeros(2), n_relu=3)
    with pytest.raises(ValueError, match="identity"):
        PLRNN(0, 3, 2, observation="identity")
    with pytest.raises(ValueError, match="u must have shape"):
        pl_system(PLRNN(2, 3, 1), u=np.zeros(3))
    with pytest.raises(TypeError, match="PLRNN"):
        pl_system(MODELS["LeakyRNN"](1, 3, 1))


@pytest.mark.parametrize("cls", [PLRNN, ShallowPLRNN, ALRNN])
def test_config_round_trip_and_seed(cls) -> None:
    model = cls(2, 6, 3, seed=7)
    rebuilt = make_model(cls.__name__, **model.config())
    for a, b in zip(model.state_dict().values(), rebuilt.state_dict().values()):
        assert torch.equal(a, b)
    assert cls(2, n_units=6, n_outputs=3, seed=7).n_latent == 6
    other = cls(2, 6, 3, seed=8)
    assert not torch.equal(next(model.parameters()), next(other.parameters()))


def test_clipped_shplrnn_stays_bounded() -> None:
    model = ShallowPLRNN(0, 4, 4, n_hidden=12, clipped=True, seed=1).double()
    system = pl_system(model)
    z = np.random.default_rng(0).normal(size=(20, 4)) * 1e3
    for _ in range(500):
        z = system.step(z)
    # |a| < 1 and the clipped term is bounded by sum|W1| |h2|, so ||z|| -> O(bound / (1 - max a))
    bound = np.abs(system.mixing).sum(axis=1).max() * np.abs(system.offsets).max() / (1 - 0.9)
    assert np.abs(z).max() < bound + 1e-6


@pytest.mark.parametrize("cls", [PLRNN, ShallowPLRNN, ALRNN])
def test_trains_with_neurodyn_train(cls) -> None:
    task = FlipFlop(n_bits=2, n_steps=20)
    model = cls(task.n_inputs, 8, task.n_outputs, seed=0)
    result = train(model, task, n_iterations=60, batch_size=16, lr=1e-2, progress=False,
                   eval_every=1000, seed=0)
    losses = result.history["loss"]
    assert np.isfinite(losses).all()
    assert np.mean(losses[-10:]) < 0.8 * np.mean(losses[:5])
    assert result.model is not model


def _arrays(arch: str, rng: np.random.Generator) -> dict[str, np.ndarray]:
    n, L = 3, 5
    if arch in ("shplrnn", "clipped-shplrnn"):
        return {"A": rng.uniform(0, 1, n), "W1": rng.normal(size=(n, L)), "W2": rng.normal(size=(L, n)),
                "h1": rng.normal(size=n), "h2": rng.normal(size=L)}
    out = {"A": np.diag(rng.uniform(0, 1, n)), "W": rng.normal(size=(n, n)), "h": rng.normal(size=n)}
    if arch == "alrnn":
        out["n_relu"] = np.array(2)
    return out


@pytest.mark.parametrize("arch", ["plrnn", "shplrnn", "clipped-shplrnn", "alrnn"])
@pytest.mark.parametrize("suffix", [".npz", ".mat"])
def test_load_plrnn_arrays_round_trip(tmp_path, arch: str, suffix: str) -> None:
    from scipy.io import savemat

    from neurodyn.io import load_model
    from neurodyn.io.plrnn_arrays import load_plrnn_arrays

    arrays = _arrays(arch, np.random.default_rng(0))
    path = tmp_path / f"model{suffix}"
    if suffix == ".npz":
        np.savez(path, **arrays)
    else:
        savemat(path, arrays)  # vectors become 1 x n matrices
    model = load_plrnn_arrays(path, arch)
    assert type(model).__name__ == {"plrnn": "PLRNN", "alrnn": "ALRNN"}.get(arch, "ShallowPLRNN")
    assert getattr(model, "clipped", False) == (arch == "clipped-shplrnn")
    z = np.random.default_rng(1).normal(size=(4, 3))
    a = arrays["A"] if arrays["A"].ndim == 1 else np.diag(arrays["A"])
    relu = np.maximum
    if arch in ("shplrnn", "clipped-shplrnn"):
        act = relu(z @ arrays["W2"].T + arrays["h2"], 0)
        if arch == "clipped-shplrnn":
            act = act - relu(z @ arrays["W2"].T, 0)
        expected = a * z + act @ arrays["W1"].T + arrays["h1"]
    else:
        phi = relu(z, 0) if arch == "plrnn" else np.concatenate([z[:, :1], relu(z[:, 1:], 0)], axis=1)
        expected = a * z + phi @ arrays["W"].T + arrays["h"]
    np.testing.assert_allclose(pl_system(model).step(z), expected, rtol=1e-12, atol=1e-12)
    loaded = load_model(path, arch=arch)
    assert loaded.source == "arrays" and type(loaded.model) is type(model)


def test_load_plrnn_arrays_errors(tmp_path) -> None:
    from neurodyn.io.plrnn_arrays import load_plrnn_arrays

    rng = np.random.default_rng(0)
    arrays = _arrays("plrnn", rng)
    np.savez(tmp_path / "missing.npz", A=arrays["A"], W=arrays["W"])
    with pytest.raises(ValueError, match="missing h"):
        load_plrnn_arrays(tmp_path / "missing.npz", "plrnn")
    np.savez(tmp_path / "nan.npz", **{**arrays, "W": np.full((3, 3), np.nan)})
    with pytest.raises(ValueError, match="W contains NaN"):
        load_plrnn_arrays(tmp_path / "nan.npz", "plrnn")
    np.savez(tmp_path / "shape.npz", **{**arrays, "h": np.zeros(4)})
    with pytest.raises(ValueError, match=r"h must have shape \(3,\)"):
        load_plrnn_arrays(tmp_path / "shape.npz", "plrnn")
    with pytest.raises(ValueError, match="unknown arch"):
        load_plrnn_arrays(tmp_path / "shape.npz", "lstm")
    with pytest.raises(FileNotFoundError):
        load_plrnn_arrays(tmp_path / "absent.npz", "plrnn")


def test_checkpoint_keeps_float64_models_exact(tmp_path) -> None:
    from neurodyn.io import load_checkpoint, save_checkpoint

    rng = np.random.default_rng(5)
    model = PLRNN.from_arrays(rng.uniform(0, 1, 3), rng.normal(size=(3, 3)), rng.normal(size=3) / 3)
    assert model.config()["dtype"] == "float64"
    save_checkpoint(tmp_path / "m.pt", model)
    back = load_checkpoint(tmp_path / "m.pt").model
    assert type(back) is PLRNN and back.W.dtype == torch.float64
    for a, b in zip(pl_system(model), pl_system(back)):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="dtype"):
        PLRNN(0, 3, 3, dtype="float16")
