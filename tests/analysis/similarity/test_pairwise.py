"""Pairwise distance matrices equal the per-pair measures; symmetric with a neutral diagonal."""

import warnings

import numpy as np
import pytest

from neurodyn.analysis import cka, dsa_distance, embed_distances, pairwise_distances, procrustes_distance
from neurodyn.analysis.similarity import svcca


def _networks(n_networks=5, n_trials=6, n_steps=30, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n_networks):
        n = 3 + k % 3
        A = 0.9 * np.linalg.qr(rng.standard_normal((n, n)))[0]
        x = rng.standard_normal((n_trials, n))
        traj = []
        for _ in range(n_steps):
            traj.append(x)
            x = np.tanh(x @ A.T) + 0.05 * rng.standard_normal(x.shape)
        out.append(np.stack(traj, axis=1))
    return out


@pytest.mark.parametrize("metric, fn, kw", [
    ("procrustes", procrustes_distance, {}),
    ("procrustes", procrustes_distance, {"kind": "euclidean", "alpha": 0.5}),
    ("cka", cka, {}),
    ("cka", cka, {"debiased": True}),
    ("svcca", svcca, {"keep": 2}),
])
def test_matches_per_pair(metric, fn, kw):
    nets = _networks()
    D = pairwise_distances(nets, metric=metric, progress=False, **kw)
    assert D.dims == ("network", "network_")
    np.testing.assert_array_equal(D.values, D.values.T)
    flat = [n.reshape(-1, n.shape[-1]) for n in nets]
    for i in range(len(nets)):
        for j in range(i + 1, len(nets)):
            assert D.values[i, j] == pytest.approx(fn(flat[i], flat[j], **kw), abs=1e-9)
    assert np.all(np.diag(D.values) == (1.0 if metric != "procrustes" else 0.0))


def test_dsa_matches_per_pair_and_is_symmetric():
    nets = _networks(n_networks=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        D = pairwise_distances(nets, metric="dsa", n_delays=2, rank=3, progress=False, names=list("abcd"))
        for i in range(4):
            for j in range(i + 1, 4):
                assert D.values[i, j] == pytest.approx(dsa_distance(nets[i], nets[j], n_delays=2, rank=3),
                                                       abs=1e-7)
    np.testing.assert_array_equal(D.values, D.values.T)
    assert np.all(np.diag(D.values) == 0.0)
    assert list(D.network.values) == list("abcd")
    assert D.attrs["metric"] == "dsa" and D.attrs["rank"] == 3


def test_dsa_warns_once_below_full_rank():
    with pytest.warns(UserWarning, match="4 networks"):
        pairwise_distances(_networks(n_networks=4), metric="dsa", n_delays=2, rank=2, progress=False)


def test_netcdf_round_trip_and_embedding(tmp_path):
    import xarray as xr

    D = pairwise_distances(_networks(n_networks=6), metric="procrustes", progress=False)
    D.to_netcdf(tmp_path / "d.nc", engine="h5netcdf")
    back = xr.open_dataarray(tmp_path / "d.nc", engine="h5netcdf")
    np.testing.assert_array_equal(back.values, D.values)
    E = embed_distances(D, seed=0)
    assert E.shape == (6, 2)
    np.testing.assert_array_equal(E, embed_distances(D, seed=0))


def test_embedding_recovers_planar_distances():
    pts = np.random.default_rng(0).standard_normal((8, 2))
    D = np.linalg.norm(pts[:, None] - pts[None], axis=-1)
    E = embed_distances(D, seed=1)
    np.testing.assert_allclose(np.linalg.norm(E[:, None] - E[None], axis=-1), D, atol=0.03)


def test_errors():
    nets = _networks(n_networks=3)
    with pytest.raises(ValueError, match="at least 2"):
        pairwise_distances(nets[:1])
    with pytest.raises(ValueError, match="unknown metric"):
        pairwise_distances(nets, metric="nope", progress=False)
    with pytest.raises(ValueError, match="same samples"):
        pairwise_distances([nets[0], nets[1][:, :10]], progress=False)
    with pytest.raises(ValueError, match="symmetric"):
        embed_distances(np.array([[0.0, 1.0], [2.0, 0.0]]))


@pytest.mark.parametrize("metric, kw", [
    ("cka", {"kernal": "rbf"}),                # the fast linear-CKA path
    ("procrustes", {"kindd": "euclidean"}),    # the prepared Procrustes path
    ("rsa", {"rdm": "euclidean"}),
    ("dsa", {"n_delays": 2, "scor": "euclidean"}),
    ("svcca", {"kep": 2}),
])
def test_unknown_options_are_refused_on_every_path(metric, kw):
    nets = _networks(n_networks=2, n_trials=2, n_steps=8)
    bad = next(k for k in kw if k != "n_delays")
    with pytest.raises(TypeError, match=f"metric='{metric}' got an unexpected keyword argument '{bad}'; its "
                                        "options are") as err:
        pairwise_distances(nets, metric=metric, progress=False, **kw)
    assert "\n" not in str(err.value)


def test_linear_cka_refuses_sigma_like_cka():
    nets = _networks(n_networks=2, n_trials=2, n_steps=8)
    with pytest.raises(ValueError, match="sigma is the RBF bandwidth"):
        pairwise_distances(nets, metric="cka", sigma=1.0, progress=False)


@pytest.mark.parametrize("metric", ["cka", "procrustes", "rsa", "cca", cka])
def test_different_trial_time_layouts_are_refused_for_paired_measures(metric):
    rng = np.random.default_rng(0)
    acts = [rng.normal(size=(3, 10, 5)), rng.normal(size=(5, 6, 4))]  # both 30 samples
    with pytest.raises(ValueError, match=r"same samples.*activity\[0\] has \(trial, time\) = \(3, 10\) but "
                                         r"activity\[1\] has \(5, 6\)") as err:
        pairwise_distances(acts, metric=metric, progress=False)
    assert "\n" not in str(err.value)
    flat = [a.reshape(30, -1) for a in acts]  # flattened by the caller: their pairing, accepted
    assert pairwise_distances(flat, metric="cka", progress=False).shape == (2, 2)


def test_dsa_without_n_delays_says_so():
    from neurodyn.analysis.similarity import prepare_activity

    nets = _networks(n_networks=2, n_trials=2, n_steps=8)
    with pytest.raises(TypeError, match=r"metric='dsa' needs n_delays= .*e\.g\. n_delays=5") as err:
        pairwise_distances(nets, metric="dsa", progress=False)
    assert "\n" not in str(err.value)
    with pytest.raises(TypeError, match=r"metric='dsa' needs n_delays="):
        prepare_activity(nets[0], metric="dsa")


def test_networks_given_as_a_dict_or_an_iterator_and_names_must_be_unique():
    nets = _networks(n_networks=3)
    # a dict was iterated over its keys ("activity[0] must be a numeric array ...; got ndarray")
    with pytest.raises(TypeError, match=r"^activity must be a sequence of arrays, got a dict; pass "):
        pairwise_distances({"a": nets[0], "b": nets[1]}, progress=False, device="cpu")
    # an iterator (e.g. a generator over stored networks) failed with "has no len()"
    D = pairwise_distances(iter(nets), progress=False, device="cpu")
    np.testing.assert_array_equal(D.values, pairwise_distances(nets, progress=False, device="cpu").values)
    # duplicate labels made D.sel(network=...) ambiguous
    with pytest.raises(ValueError, match=r"^names must be unique; 'a' appears 2 times"):
        pairwise_distances(nets, names=["a", "b", "a"], progress=False, device="cpu")


def test_a_malformed_device_is_refused_in_one_line():
    # "tpu" fell through to torch's long RuntimeError
    with pytest.raises(ValueError, match="device 'tpu' is not a torch device"):
        pairwise_distances(_networks(n_networks=2), device="tpu", progress=False)


def test_batched_linear_cka_warns_of_few_samples_like_cka():
    # 10 samples of 50 unrelated units: biased CKA ~0.8; cka warned, the batched path did not
    rng = np.random.default_rng(0)
    acts = [rng.normal(size=(10, 50)) for _ in range(3)]
    with pytest.warns(UserWarning, match=r"biased CKA: 10 samples <= 50 units"):
        D = pairwise_distances(acts, metric="cka", progress=False, device="cpu")
    with pytest.warns(UserWarning, match=r"biased CKA: 10 samples <= 50 units"):
        assert D.values[0, 1] == pytest.approx(cka(acts[0], acts[1]), rel=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pairwise_distances([a[:, :5] for a in acts], metric="cka", progress=False, device="cpu")


def test_batched_pairs_stay_within_the_memory_budget(monkeypatch):
    # every block gathered (pair, sample, unit) copies of both networks for 2048 pairs at once: 50
    # networks of (2000, 100) float64 activity (76 MB) peaked at 4.4 GB
    from neurodyn.analysis.similarity import pairwise

    n_samples, n_units = 2000, 100
    per_pair = 8.0 * (2 * n_samples * n_units + 3 * n_units**2)
    assert pairwise.pair_block(n_samples, n_units) * per_pair <= pairwise.MAX_MEMORY
    assert pairwise.pair_block(10, 3) == 2048 and pairwise.pair_block(10**6, 10**4) == 1
    # a budget of three pairs per block gives the same matrices as one block
    acts = _networks(n_networks=5)
    full = {m: pairwise_distances(acts, metric=m, progress=False, device="cpu").values
            for m in ("procrustes", "cka")}
    monkeypatch.setattr(pairwise, "MAX_MEMORY", 3 * 8.0 * (2 * 180 * 5 + 3 * 25))
    assert pairwise.pair_block(180, 5) == 3
    for metric, D in full.items():
        again = pairwise_distances(acts, metric=metric, progress=False, device="cpu").values
        np.testing.assert_array_equal(again, D)


def test_embedding_a_similarity_matrix_says_to_turn_it_into_distances():
    # pairwise_distances(metric="cka") is a similarity (ones on the diagonal); the refusal did not say so
    S = pairwise_distances(_networks(n_networks=3), metric="cka", progress=False, device="cpu")
    message = (r"^D has ones on its diagonal, like a similarity \(e.g. cka, rsa\), where distances have a "
               r"zero diagonal; pass 1 - S$")
    with pytest.raises(ValueError, match=message):
        embed_distances(S)
    assert embed_distances(1 - S, seed=0).shape == (3, 2)
