"""Identifiable loading statistics of low-rank RNNs: exact latent map, closed forms, invariances."""

import numpy as np
import pytest
import torch

from neurodyn.analysis.low_rank import compute_low_rank_statistics, latent_map, mean_field_latent_map
from neurodyn.models import LeakyRNN, LowRankRNN


def _rows(n_units, overlap, *, seed, n_inputs=0, extra_n=0.0):
    """Gaussian loadings ``m ~ N(0, I)``, ``n = m overlap^T + extra_n * noise``, ``I ~ N(0, 1)``, b = 0."""
    g = torch.Generator().manual_seed(seed)
    rank = overlap.shape[0]
    m = torch.randn(n_units, rank, generator=g, dtype=torch.float64)
    n = m @ torch.as_tensor(overlap, dtype=torch.float64).T
    n = n + extra_n * torch.randn(n_units, rank, generator=g, dtype=torch.float64)
    i = torch.randn(n_units, n_inputs, generator=g, dtype=torch.float64)
    return torch.cat([m, n, i, torch.zeros(n_units, 1, dtype=torch.float64)], dim=1)


def test_latent_map_equals_projected_network_over_a_trajectory():
    model = LowRankRNN(2, 50, 0, rank=2, alpha=0.3, seed=1).double()
    with torch.no_grad():
        model.b.normal_(generator=torch.Generator().manual_seed(0))
    u = torch.randn(1, 12, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    h0 = torch.randn(1, 50, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    states = model(u, h0, noise=False).states[0]  # (time, unit): states[t] = F(states[t-1], u[t])
    kappa = torch.cat([h0, states]) @ model.n.detach() / 50
    pred = latent_map(model, kappa[:-1], u[0])
    assert torch.allclose(pred, kappa[1:], atol=1e-12)


def test_mean_field_is_exact_for_a_linear_network():
    """Linear phi: E[n x.v] = (Sigma_nx + mu_n mu_x^T) v holds for the empirical moments at any N."""
    model = LowRankRNN(1, 40, 0, rank=2, alpha=0.5, activation="linear", seed=4).double()
    with torch.no_grad():
        model.b.normal_(generator=torch.Generator().manual_seed(5))
    stats = compute_low_rank_statistics(model, labels=np.arange(40) % 2)
    kappa = torch.randn(7, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(6))
    u = torch.randn(7, 1, dtype=torch.float64, generator=torch.Generator().manual_seed(7))
    assert torch.allclose(mean_field_latent_map(stats, kappa, u), latent_map(model, kappa, u), atol=1e-10)
    rows = model.loadings().double()
    assert np.allclose(stats.overlap, (rows[:, 2:4].T @ rows[:, :2] / 40).numpy())


def test_mean_field_matches_a_large_tanh_network():
    """N = 20000 Gaussian loadings: the mean-field map is within 5 / sqrt(N) of the exact one."""
    rows = _rows(20000, np.array([[1.5, 0.3], [-0.4, 0.8]]), seed=0, n_inputs=1, extra_n=1.0)
    model = LowRankRNN.from_loadings(rows, rank=2, alpha=1.0)
    stats = compute_low_rank_statistics(model)
    kappa = torch.linspace(-2, 2, 9, dtype=torch.float64)[:, None].repeat(1, 2) * torch.tensor([1.0, -0.5])
    err = (mean_field_latent_map(stats, kappa, [0.3]) - latent_map(model, kappa, [0.3])).abs().max()
    assert err < 5 / np.sqrt(20000)
    # identifiable statistics against the generating ones (sampling error ~ 1 / sqrt(N))
    assert np.allclose(stats.cov_n_drive[0, :, :2], [[1.5, 0.3], [-0.4, 0.8]], atol=0.05)
    assert np.allclose(stats.residual_cov_n[0], np.eye(2), atol=0.05)


def test_unidentifiable_components_leave_the_latent_dynamics_unchanged():
    """Adding independent spread to n and a gauge transform: drives agree to 5 % at N = 1000,
    while changing an identifiable overlap changes them by order one."""
    overlap = np.diag([2.0, 0.5])  # bistable along kappa_0, decaying along kappa_1
    a = _rows(1000, overlap, seed=0)
    q = torch.tensor([[1.0, 0.7], [-0.3, 1.5]], dtype=torch.float64)
    noise = torch.randn(1000, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(9))
    b = a.clone()
    b[:, :2] = a[:, :2] @ q
    b[:, 2:4] = (a[:, 2:4] + noise) @ torch.linalg.inv(q).T
    c = _rows(1000, np.diag([0.8, 0.5]), seed=0)  # identifiable overlap changed: monostable
    nets = [LowRankRNN.from_loadings(r, rank=2, alpha=0.2).double() for r in (a, b, c)]
    # the latent map is the network's exact dynamics (test above); compare the gauge-invariant
    # recurrent drive m_i . kappa(t) of every neuron from the same initial states h0
    kappa0 = 1.5 * torch.randn(8, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    h0 = torch.tanh(kappa0 @ a[:, :2].T)  # states on the manifold of network a, off the saddle
    drives = []
    for net, rows in zip(nets, (a, b, c)):
        kappa, out = h0 @ rows[:, 2:4] / 1000, []
        for _ in range(40):
            kappa = latent_map(net, kappa)
            out.append(kappa @ rows[:, :2].T)
        drives.append(torch.stack(out))  # (time, batch, unit)
    sa, sb, sc = drives
    rel = lambda x, y: float((x - y).pow(2).mean().sqrt() / y.pow(2).mean().sqrt())  # noqa: E731
    assert rel(sb, sa) < 0.05
    assert rel(sc, sa) > 0.5
    sa_stats, sb_stats = compute_low_rank_statistics(nets[0]), compute_low_rank_statistics(nets[1])
    assert np.allclose(sa_stats.overlap_eigenvalues_real, sb_stats.overlap_eigenvalues_real, atol=0.1)
    assert float(sb_stats.unidentified_fraction.min()) > float(sa_stats.unidentified_fraction.max()) + 0.1


@pytest.mark.parametrize("bad, match", [
    (LowRankRNN(0, 10, 0, rank=1, random_gain=0.5), "random_gain"),
    (LeakyRNN(0, 10, 0), "expected a LowRankRNN"),
])
def test_bad_models_are_refused(bad, match):
    with pytest.raises((ValueError, TypeError), match=match):
        compute_low_rank_statistics(bad)


def test_bad_labels_and_loadings_are_refused():
    model = LowRankRNN(0, 10, 0, rank=1)
    with pytest.raises(ValueError, match="labels must be"):
        compute_low_rank_statistics(model, labels=np.zeros(9, dtype=int))
    with pytest.raises(ValueError, match="population 1 has 1 neurons"):
        compute_low_rank_statistics(model, labels=np.r_[np.zeros(9, dtype=int), 1])
    rows = model.loadings()
    rows[0, 0] = float("nan")
    with pytest.raises(ValueError, match="NaN"):
        LowRankRNN.from_loadings(rows, rank=1)
    with pytest.raises(ValueError, match="rank must be in"):
        LowRankRNN.from_loadings(torch.zeros(3, 9), rank=4)
