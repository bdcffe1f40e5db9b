"""certify_stable on matrices with known spectra, and compute_stability(labels_only=True) against
the full-spectrum path."""

import numpy as np
import pytest
import torch

from neurodyn.analysis import compute_stability
from neurodyn.analysis.fixed_points._stability import certify_stable, classify

TOL = 1e-3


def _rotation_blocks(radii: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """Block-diagonal matrix (2m, 2m) of rotations scaled by ``radii``: eigenvalues r e^{±iθ}."""
    m = len(radii)
    out = np.zeros((2 * m, 2 * m))
    for i, (r, a) in enumerate(zip(radii, angles)):
        c, s = np.cos(a), np.sin(a)
        out[2 * i:2 * i + 2, 2 * i:2 * i + 2] = r * np.array([[c, -s], [s, c]])
    return out


def _similar(a: np.ndarray, rng: np.random.Generator, cond: float) -> np.ndarray:
    """``S a S⁻¹`` for a random S of condition number about ``cond``: same spectrum, non-normal."""
    n = a.shape[0]
    q1, _ = np.linalg.qr(rng.normal(size=(n, n)))
    q2, _ = np.linalg.qr(rng.normal(size=(n, n)))
    s = q1 @ np.diag(np.geomspace(1.0, cond, n)) @ q2
    return s @ a @ np.linalg.inv(s)


def _full_labels(jac: np.ndarray) -> np.ndarray:
    return classify(np.linalg.eigvals(jac), TOL)[0]


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_known_spectra_below_the_band_are_certified_with_a_true_bound(dtype):
    rng = np.random.default_rng(0)
    diag = np.diag([0.9, -0.5, 0.2, 0.0])
    upper = np.triu(rng.normal(size=(4, 4)), 1) + np.diag([0.8, 0.1, -0.3, 0.6])
    rot = _rotation_blocks(np.array([0.95, 0.3]), np.array([0.4, 2.0]))
    jordan = 0.5 * np.eye(3) + 4.0 * np.eye(3, k=1)  # ‖J‖ > 8, ρ = 0.5
    mats = [diag, upper, rot, jordan]
    radii = [0.9, 0.8, 0.95, 0.5]
    for a, rho in zip(mats, radii):
        ok, bound = certify_stable(torch.as_tensor(a[None]).to(dtype), TOL)
        assert bool(ok[0]), (a, rho)
        assert rho <= bound[0].item() < 1 - TOL
    assert np.linalg.norm(jordan, 2) > 1


def test_squarings_in_float64_where_float32_products_may_be_coarse():
    jordan = torch.tensor([[[0.5, 4.0], [0.0, 0.5]], [[1.0, 0.1], [0.0, 0.2]]])
    before = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("medium")
    try:
        ok, bound = certify_stable(jordan, TOL)
    finally:
        torch.set_float32_matmul_precision(before)
    assert ok.tolist() == [True, False] and 0.5 <= bound[0].item() < 1 - TOL


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_marginal_and_unstable_spectra_are_never_certified(dtype):
    rng = np.random.default_rng(1)
    mats = []
    for r in (1 - TOL, 1 - TOL / 2, 1.0, 1 + TOL / 2, 1 + TOL, 1.5):
        mats.append(np.diag([r, 0.1, -0.2, 0.3]))
        mats.append(_rotation_blocks(np.array([r, 0.2]), np.array([0.7, 1.1])))
        mats.append(_similar(np.diag([r, 0.5, -0.5, 0.0]), rng, 10.0))
        mats.append(r * np.eye(4) + 0.5 * np.eye(4, k=1))
    ok, bound = certify_stable(torch.as_tensor(np.stack(mats)).to(dtype), TOL)
    assert not bool(ok.any())
    assert bool(torch.isnan(bound).all())
    # a band wider than the unit disc leaves no room for stable points
    assert not bool(certify_stable(torch.zeros(2, 3, 3, dtype=dtype), 1.0)[0].any())
    assert certify_stable(torch.zeros(0, 3, 3, dtype=dtype), TOL)[0].shape == (0,)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_no_unstable_or_marginal_matrix_is_certified_brute_force(dtype):
    # spectra placed just around the band's lower edge, with large non-normal parts, in many sizes
    rng = np.random.default_rng(2)
    for n in (2, 3, 5, 8, 16):
        a = rng.normal(size=(600, n, n))
        a += rng.uniform(0, 3, size=(600, 1, 1)) * np.triu(rng.normal(size=(600, n, n)), 1)
        rho = np.abs(np.linalg.eigvals(a)).max(-1)
        target = (1 - TOL) * np.exp(rng.uniform(-0.3, 0.3, size=600))
        a *= (target / rho)[:, None, None]
        jac = torch.as_tensor(a).to(dtype)
        ok, bound = certify_stable(jac, TOL)
        true_rho = np.abs(np.linalg.eigvals(jac.double().numpy())).max(-1)
        ok = ok.numpy()
        assert ok.any() and not ok.all()
        assert (true_rho[ok] < 1 - TOL).all()
        assert (bound.numpy()[ok] >= true_rho[ok] * (1 - 1e-12)).all()
        assert (_full_labels(jac.double().numpy())[ok] == "stable").all()


def test_labels_only_matches_the_full_path_on_states_with_saddles():
    from neurodyn.models import GRU, LeakyRNN

    rng = np.random.default_rng(3)
    for model in (LeakyRNN(0, 12, 1, alpha=0.5, gain=1.6, seed=4), GRU(1, 6, 1, seed=5)):
        states = torch.as_tensor(rng.normal(scale=1.5, size=(300, model.state_size)))
        u = None if model.n_inputs == 0 else torch.tensor([0.2], dtype=torch.float64)
        full = compute_stability(model, states, u)
        fast = compute_stability(model, states, u, labels_only=True, max_memory=16 * 12 * 12 * 50)
        assert fast.stability.values.tolist() == full.stability.values.tolist()
        assert fast.n_unstable.values.tolist() == full.n_unstable.values.tolist()
        assert {"stable", "saddle"} <= set(full.stability.values)
        proven = np.isnan(fast.spectral_radius.values)
        assert proven.any() and (full.stability.values[proven] == "stable").all()
        np.testing.assert_allclose(fast.spectral_radius.values[~proven], full.spectral_radius.values[~proven],
                                   rtol=1e-12)
        bound = fast.spectral_radius_bound.values
        assert (bound >= full.spectral_radius.values * (1 - 1e-12)).all()
        assert (bound[proven] < 1 - TOL).all()
        assert "spectral_radius_bound" not in full


def test_labels_only_in_float32_and_with_the_marginal_band():
    # h -> 0.5 h + diag(d) h: eigenvalues 0.5 + d at every state, one of them inside the band
    from neurodyn.models import LeakyRNN

    model = LeakyRNN(0, 3, 1, alpha=0.5, activation="linear", seed=0)
    cases = (((0.2, 0.3, 0.4), "stable"), ((0.2, 0.4995, -0.1), "marginal"), ((0.2, 1.6, 0.1), "saddle"))
    for d, label in cases:
        with torch.no_grad():
            model.w_rec.copy_(torch.diag(2 * torch.tensor(d)))
        ds = compute_stability(model, torch.zeros(2, 3), labels_only=True)
        assert ds.attrs["dtype"] == "float32" and set(ds.stability.values) == {label}
        assert np.isnan(ds.spectral_radius.values).all() == (label == "stable")


def test_float32_squarings_left_uncertified_are_repeated_in_float64():
    """A random 128 x 128 matrix with spectral radius 0.92 and Frobenius norm about 9.7: the float32
    squarings' error bound outgrows the norms' decay, so they certify nothing; the float64 pass that
    follows certifies it with a bound between the true radius (LAPACK) and 1 − marginal_tol."""
    from neurodyn.analysis.fixed_points import _stability

    rng = np.random.default_rng(0)
    A = rng.normal(size=(128, 128))
    A *= 0.92 / np.abs(np.linalg.eigvals(A)).max()
    J = torch.as_tensor(A[None])
    limit = 1.0 - 1e-3
    single, _, blocked = _stability._certify_blocks(J, limit, _stability.MAX_SQUARINGS, torch.float32)
    assert not single[0] and blocked[0]
    certified, bound = certify_stable(J, 1e-3)
    rho = np.abs(np.linalg.eigvals(A)).max()
    assert certified[0] and rho <= bound[0].item() < limit


def test_unstable_matrices_take_no_float64_pass(monkeypatch):
    """Unstable matrices (an orthogonal matrix times 1.05, every |λ| = 1.05) are never blocked only by
    the rounding bound, so certify_stable squares them in float32 only and certifies none."""
    from neurodyn.analysis.fixed_points import _stability

    q, _ = np.linalg.qr(np.random.default_rng(1).normal(size=(64, 64)))
    J = torch.as_tensor(np.stack([1.05 * q, 1.05 * q.T]))
    passes = []
    real = _stability._certify_blocks

    def spy(jac, limit, max_squarings, work):
        passes.append(work)
        return real(jac, limit, max_squarings, work)

    monkeypatch.setattr(_stability, "_certify_blocks", spy)
    certified, bound = certify_stable(J, 1e-3)
    assert not certified.any() and torch.isnan(bound).all() and passes == [torch.float32]
