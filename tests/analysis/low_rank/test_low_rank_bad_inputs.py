"""Low-rank fitting and max-ent inference refuse bad input in one line, and report a failed flow."""

import numpy as np
import pytest
import torch

from neurodyn.analysis.low_rank import fit_maxent_loadings
from neurodyn.models import LowRankRNN
from neurodyn.training import fit_teacher_forcing


def _rows(n_units=40, seed=0):
    g = torch.Generator().manual_seed(seed)
    m = torch.randn(n_units, 1, generator=g, dtype=torch.float64)
    return torch.cat([m, 2.0 * m, 0.1 * torch.randn(n_units, 1, generator=g, dtype=torch.float64)], 1)


def test_rank_larger_than_units_names_the_fix():
    with pytest.raises(ValueError, match=r"n_units=5\], got 6: .*lower rank or use more units"):
        LowRankRNN(0, 5, 5, rank=6)
    with pytest.raises(ValueError, match=r"rank must be in \[1, n_units=3\], got 4"):
        LowRankRNN.from_loadings(torch.zeros(3, 9), rank=4)


def test_recordings_too_short_or_with_nan_are_refused_before_fitting():
    x = 0.3 * np.random.default_rng(0).standard_normal((10, 5))
    model = LowRankRNN(0, 5, 5, rank=2)
    with pytest.raises(ValueError, match=r"10 time points but seq_len \+ 1 = 21 are needed; lower seq_len"):
        fit_teacher_forcing(model, x, seq_len=20, n_epochs=1, progress=False)
    x[3, 2] = np.nan
    with pytest.raises(ValueError, match=r"NaN at trial 0, time 3, channel 2\); interpolate or drop them"):
        fit_teacher_forcing(model, x, seq_len=5, n_epochs=1, progress=False)


def test_nan_loadings_and_too_few_neurons_for_the_flow_are_refused():
    rows = _rows()
    rows[4, 1] = float("nan")
    with pytest.raises(ValueError, match="loadings contain NaN or Inf; drop or repair those neurons"):
        LowRankRNN.from_loadings(rows, rank=1)
    model = LowRankRNN.from_loadings(_rows(5), rank=1, alpha=0.5)
    with pytest.raises(ValueError, match="need at least 2 \\* dim \\+ 2 = 6 samples .* use more neurons"):
        fit_maxent_loadings(model, n_check=2, n_epochs=1)


@pytest.mark.slow
def test_a_flow_that_does_not_converge_is_reported_in_the_result():
    rows = _rows()
    rows[:, 2] = rows[:, 0] + 0.05 * rows[:, 2]  # b tied to m: an untrained flow misses the correlation
    model = LowRankRNN.from_loadings(rows, rank=1, alpha=0.5)
    points = torch.linspace(-1, 1, 8, dtype=torch.float64)[:, None]
    with pytest.warns(RuntimeWarning, match="the flow did not converge"):
        fit = fit_maxent_loadings(model, points=points, n_check=2, n_epochs=1, batches_per_epoch=1, lr=1e-4,
                                  hidden=4, n_steps=2, seed=0)
    assert fit.status == "not_converged" and fit.flow.status == "not_converged"
    assert fit.flow.moment_error > 0.15 and np.all(fit.residual_scale == 0)
    assert fit.to_xarray().attrs["status"] == "not_converged"


def test_latent_maps_refuse_wrong_shapes_and_nan_in_one_line():
    from neurodyn.analysis.low_rank import compute_low_rank_statistics, latent_map, mean_field_latent_map

    model = LowRankRNN(1, 20, 1, rank=1, seed=0)
    with pytest.raises(ValueError, match=r"^kappa must have shape \(\.\.\., rank=1\), got \(3, 2\)$"):
        latent_map(model, np.zeros((3, 2)))
    with pytest.raises(ValueError, match=r"^inputs must have shape \(\.\.\., input=1\).* got \(3, 5\)$"):
        latent_map(model, np.zeros((3, 1)), np.zeros((3, 5)))
    with pytest.raises(ValueError, match=r"^kappa contains NaN or Inf"):
        latent_map(model, np.full((3, 1), np.nan))
    with pytest.raises(ValueError, match=r"^inputs contains NaN or Inf"):
        latent_map(model, np.zeros((3, 1)), np.full((3, 1), np.inf))
    stats = compute_low_rank_statistics(model)
    with pytest.raises(ValueError, match=r"^kappa must have shape \(\.\.\., rank=1\), got \(3, 4\)$"):
        mean_field_latent_map(stats, np.zeros((3, 4)))
    assert latent_map(model, np.zeros((3, 1)), np.zeros(1)).shape == (3, 1)  # (input,) still broadcasts


def test_nan_points_are_named_as_points():
    model = LowRankRNN.from_loadings(_rows(), rank=1, alpha=0.5)
    with pytest.raises(ValueError, match=r"^points contains NaN or Inf"):
        fit_maxent_loadings(model, points=np.full((3, 1), np.nan), n_check=2, n_epochs=1)


def test_loading_structure_refuses_too_many_permutations_and_constant_loadings():
    from neurodyn.analysis.low_rank import compute_loading_structure

    rows = np.random.default_rng(0).standard_normal((50, 3))
    with pytest.raises(ValueError, match=r"^compute_loading_structure needs about 74\.5 GiB .*n_perm"):
        compute_loading_structure(rows, n_permutations=10**10)
    with pytest.raises(ValueError, match=r"^loadings has 0 non-constant component\(s\) of 3"):
        compute_loading_structure(np.ones((50, 3)))
    rows[:, 2] = 1.0  # one constant column among varying ones stays allowed (NaN correlations)
    assert np.isnan(compute_loading_structure(rows, n_permutations=20).corr.values[2]).all()


def test_latent_map_runs_under_torch_func_transforms():
    # the NaN checks must not branch on values inside vmap/jacfwd (the fixed-point search's fallback)
    from neurodyn.analysis.low_rank import latent_map

    m = LowRankRNN(1, 20, 1, rank=2, seed=0)
    kappa = torch.randn(5, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    mapped = torch.func.vmap(lambda k: latent_map(m, k))(kappa)
    assert torch.allclose(mapped, latent_map(m, kappa), rtol=0, atol=1e-12)
    jac = torch.func.vmap(torch.func.jacfwd(lambda k: latent_map(m, k)))(kappa)
    eps = 1e-6
    fd = (latent_map(m, kappa + eps * torch.tensor([1.0, 0.0], dtype=torch.float64))
          - latent_map(m, kappa - eps * torch.tensor([1.0, 0.0], dtype=torch.float64))) / (2 * eps)
    assert torch.allclose(jac[..., 0], fd, atol=1e-7)


def _small(seed=0):
    return LowRankRNN(n_inputs=0, n_units=12, n_outputs=0, rank=2, alpha=0.5, seed=seed)


def test_counts_of_maxent_and_loading_structure_must_be_integers_of_at_least_one():
    from neurodyn.analysis.low_rank import compute_loading_structure

    with pytest.raises(ValueError, match=r"^n_check must be an integer >= 1, got 0"):
        fit_maxent_loadings(_small(), n_check=0, n_epochs=1)
    with pytest.raises(ValueError, match=r"^n_permutations must be an integer >= 1, got 20\.5"):
        compute_loading_structure(_small(), n_permutations=20.5)


@pytest.mark.parametrize("kw, match", [
    ({"n_points": 0}, r"n_points must be an integer >= 1, got 0"),
    ({"n_points": -1}, r"n_points must be an integer >= 1, got -1"),
    ({"n_inits": 0}, r"n_inits must be an integer >= 1, got 0"),
    ({"n_inits": 2.5}, r"n_inits must be an integer >= 1, got 2\.5"),
    ({"n_steps": -1}, r"n_steps must be an integer >= 0, got -1"),
])
def test_latent_points_refuses_bad_counts(kw, match):
    from neurodyn.analysis.low_rank import latent_points

    with pytest.raises(ValueError, match="^" + match):
        latent_points(_small(), **kw)


def test_latent_points_and_dynamics_error_refuse_other_models_shapes_and_nan():
    from neurodyn.analysis.low_rank import dynamics_error, latent_map, latent_points
    from neurodyn.models import PLRNN

    with pytest.raises(TypeError, match="^expected a LowRankRNN, got PLRNN"):
        latent_points(PLRNN(0, 4, 2))
    model = _small()
    points = latent_points(model, n_inits=4, n_steps=3, n_points=10)
    ref = latent_map(model, points)
    with pytest.raises(ValueError, match=r"^reference and points must both have shape \(point, rank=2\), "
                                         r"got \(5, 2\) and \(10, 2\)$"):
        dynamics_error(model, ref[:5], points)
    bad = ref.clone()
    bad[0, 0] = float("nan")
    with pytest.raises(ValueError, match="^reference contains NaN or Inf"):
        dynamics_error(model, bad, points)
    assert dynamics_error(model, ref.numpy(), points.numpy()) == 0.0  # arrays are taken too


def test_nan_loadings_are_named_by_statistics_and_latent_map():
    from neurodyn.analysis.low_rank import compute_low_rank_statistics, latent_map, mean_field_latent_map

    model = _small()
    with pytest.raises(TypeError, match="^statistics must be the xarray.Dataset of compute_low_rank"):
        mean_field_latent_map({}, np.zeros((3, 2)))
    with torch.no_grad():
        model.m[0, 0] = float("nan")
    for call in (lambda: compute_low_rank_statistics(model), lambda: latent_map(model, np.zeros((3, 2)))):
        with pytest.raises(ValueError, match="^the model's loadings contain NaN or Inf; refit or repair"):
            call()
