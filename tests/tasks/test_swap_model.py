"""The swap (mixture) model: known parameters recovered from simulated reports, the likelihood it
maximises, the surrogate generator's proportions and seeds, and bad input."""

import numpy as np
import pytest

from neurodyn.tasks import MixtureFit, fit_mixture_model, sample_mixture_responses
from neurodyn.tasks.swap_model import _components, _wrap


def _items(n, m, seed):
    rng = np.random.default_rng(seed)
    return rng.uniform(-np.pi, np.pi, n), rng.uniform(-np.pi, np.pi, (n, m))


def _log_likelihood(r, t, nt, p):
    parts = _components(_wrap(r - t), _wrap(r[:, None] - nt), p["kappa"], p["p_target"], p["p_swap"],
                        p["p_guess"])
    return float(np.log(parts[0] + parts[1].sum(1) + parts[2]).sum())


@pytest.mark.parametrize("truth, n_non_targets", [
    ({"kappa": 8.0, "p_target": 0.7, "p_swap": 0.2, "p_guess": 0.1}, 1),
    ({"kappa": 20.0, "p_target": 0.55, "p_swap": 0.3, "p_guess": 0.15}, 3),
    ({"kappa": 4.0, "p_target": 0.9, "p_swap": 0.0, "p_guess": 0.1}, 1),
])
def test_known_parameters_are_recovered_from_simulated_reports(truth, n_non_targets):
    t, nt = _items(2500, n_non_targets, 0)
    r = sample_mixture_responses(truth, t, nt, seed=3)
    fit = fit_mixture_model(r, t, nt)
    assert fit.converged and fit.n_trials == 2500
    for k in ("p_target", "p_swap", "p_guess"):
        assert getattr(fit, k) == pytest.approx(truth[k], abs=0.03), k
    assert fit.p_target + fit.p_swap + fit.p_guess == pytest.approx(1.0)
    assert fit.kappa == pytest.approx(truth["kappa"], rel=0.12)
    # maximum likelihood: no worse than the generating parameters (up to Fisher's A1⁻¹ approximation)
    assert fit.log_likelihood >= _log_likelihood(r, t, nt, truth) - 1.0
    assert fit.log_likelihood == pytest.approx(_log_likelihood(r, t, nt, vars(fit)), abs=1e-6)


def test_reports_split_between_target_non_target_and_guesses_in_the_stated_proportions():
    t, nt = np.zeros(20000), np.full(20000, np.pi / 2)
    p = MixtureFit(kappa=400.0, p_target=0.6, p_swap=0.25, p_guess=0.15, log_likelihood=0.0, n_trials=0,
                   n_iterations=0, converged=True)
    r = sample_mixture_responses(p, t, nt, seed=0)
    near_t, near_nt = np.abs(r) < 0.2, np.abs(r - np.pi / 2) < 0.2
    assert near_t.mean() == pytest.approx(0.6 + 0.15 * 0.4 / (2 * np.pi), abs=0.01)
    assert near_nt.mean() == pytest.approx(0.25 + 0.15 * 0.4 / (2 * np.pi), abs=0.01)
    assert np.array_equal(r, sample_mixture_responses(p, t, nt, seed=0))
    assert not np.array_equal(r, sample_mixture_responses(p, t, nt, seed=1))
    assert r.min() >= -np.pi and r.max() < np.pi


@pytest.mark.parametrize("call, message", [
    (lambda r, t, nt: fit_mixture_model(np.degrees(r), t, nt), "look like degrees; pass radians"),
    (lambda r, t, nt: fit_mixture_model(r, t[:-1], nt), r"targets must have shape \(50,\)"),
    (lambda r, t, nt: fit_mixture_model(r, t, nt[:-1]), r"non_targets must have shape \(50,\)"),
    (lambda r, t, nt: fit_mixture_model(np.where(r > 0, np.nan, r), t, nt), "NaN or Inf"),
    (lambda r, t, nt: sample_mixture_responses({"kappa": 1.0, "p_target": 0.5, "p_swap": 0.2, "p_guess": 0.2},
                                               t, nt), "sum to 1"),
    (lambda r, t, nt: sample_mixture_responses({"kappa": 1.0, "p_target": 0.5, "p_swap": 0.5, "p_guess": 0.0},
                                               t, np.zeros((50, 0))), "p_swap > 0 needs"),
    (lambda r, t, nt: sample_mixture_responses({"kappa": 1.0, "p_target": 1.0}, t, nt),
     r"params lacks p_swap, p_guess; give kappa, p_target, p_swap and p_guess"),
])
def test_bad_input_raises_one_line_errors(call, message):
    t, nt = _items(50, 1, 1)
    with pytest.raises(ValueError, match=message):
        call(t + 0.1, t, nt)


def test_a_fit_saved_and_loaded_is_the_same_fit(tmp_path):
    import neurodyn.io
    from neurodyn.io import ResultFileError

    t, nt = _items(400, 1, 2)
    truth = {"kappa": 6.0, "p_target": 0.6, "p_swap": 0.3, "p_guess": 0.1}
    r = sample_mixture_responses(truth, t, nt, seed=4)
    fit = fit_mixture_model(r, t, nt, max_iter=3)  # stopped early: the status must survive too
    assert fit.status == "not_converged"
    back = neurodyn.io.load(fit.save(tmp_path / "fit.nc"))
    assert type(back) is MixtureFit and back == fit  # every float bit for bit, counts and convergence
    assert MixtureFit.load(tmp_path / "fit.nc") == fit
    with pytest.raises(FileExistsError, match="overwrite=True"):
        fit.save(tmp_path / "fit.nc", overwrite=False)
    other = fit.to_xarray().drop_vars("p_swap")
    other.to_netcdf(tmp_path / "bad.nc", engine="h5netcdf")
    with pytest.raises(ResultFileError, match="without the variables p_swap"):
        neurodyn.io.load(tmp_path / "bad.nc")


@pytest.mark.parametrize("n_trials, n_non_targets, message", [
    (1, 1, r"needs at least 4 trials to fit its 3 free parameters \(kappa, p_target, p_swap;.*\), got 1"),
    (3, 1, r"needs at least 4 trials .* got 3"),
    (2, 0, r"needs at least 3 trials to fit its 2 free parameters \(kappa, p_target;.*\), got 2"),
])
def test_too_few_trials_are_refused_with_the_minimum(n_trials, n_non_targets, message):
    t, nt = _items(n_trials, n_non_targets, 0)
    with pytest.raises(ValueError, match=message) as err:
        fit_mixture_model(t + 0.1, t, nt)
    assert "\n" not in str(err.value)
    minimum = 4 if n_non_targets else 3
    t, nt = _items(minimum, n_non_targets, 0)  # the minimum itself fits
    fit = fit_mixture_model(t + 0.1, t, nt)
    assert np.isfinite(fit.log_likelihood) and fit.n_trials == minimum


def test_kappa_update_survives_a_resultant_length_just_below_one():
    from neurodyn.tasks.swap_model import _a1_inverse

    r = 0.9999999999999999  # r**3 - 4 r**2 + 3 r rounds to 0 here
    assert _a1_inverse(r) == 1e6 and _a1_inverse(1.0) == 1e6
    assert _a1_inverse(0.9) == pytest.approx(1 / (0.9**3 - 4 * 0.9**2 + 3 * 0.9), rel=1e-12)


@pytest.mark.parametrize("kw, message", [
    ({"max_iter": 0}, r"max_iter must be an integer >= 1, got 0"),
    ({"max_iter": 2.5}, r"max_iter must be an integer >= 1"),
    ({"tol": float("nan")}, r"tol must be a finite number >= 0, got nan"),
    ({"tol": -1e-3}, r"tol must be a finite number >= 0"),
    ({"tol": float("inf")}, r"tol must be a finite number >= 0"),
])
def test_bad_em_settings_are_refused(kw, message):
    t, nt = _items(50, 1, 1)
    with pytest.raises(ValueError, match=message) as err:
        fit_mixture_model(t + 0.1, t, nt, **kw)
    assert "\n" not in str(err.value)
