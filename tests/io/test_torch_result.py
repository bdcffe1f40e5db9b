"""Flows and max-ent loading laws round-trip through .pt files: same seed => identical samples."""

import warnings

import numpy as np
import pytest
import torch

import neurodyn.io
from neurodyn.analysis.low_rank import MaxEntLoadings, fit_maxent_loadings
from neurodyn.io import ResultFileError
from neurodyn.models import LowRankRNN
from neurodyn.training import LoadingFlow, fit_flow_matching

TINY = {"n_epochs": 3, "hidden": 8, "n_steps": 4}


@pytest.fixture(scope="module")
def maxent():
    g = torch.Generator().manual_seed(0)
    m = torch.randn(60, 1, generator=g, dtype=torch.float64)
    rows = torch.cat([m, 2.0 * m + 0.3 * torch.randn(60, 1, generator=g, dtype=torch.float64),
                      0.1 * torch.randn(60, 1, generator=g, dtype=torch.float64)], 1)
    points = torch.linspace(-1, 1, 8, dtype=torch.float64)[:, None]
    with warnings.catch_warnings():  # three epochs may not converge: the status says so, and is saved
        warnings.simplefilter("ignore", RuntimeWarning)
        return fit_maxent_loadings(LowRankRNN.from_loadings(rows, rank=1, alpha=0.5), tolerance=0.5,
                                   points=points, n_check=2, seed=0, **TINY)


def test_maxent_round_trip_gives_identical_networks(maxent, tmp_path):
    path = maxent.save(tmp_path / "maxent.pt")
    raw = torch.load(path, weights_only=True)  # a plain dict: no pickled code
    assert raw["format"] == "neurodyn.maxent_loadings" and raw["version"] == 1
    for back in (MaxEntLoadings.load(path), neurodyn.io.load(path)):
        assert isinstance(back, MaxEntLoadings)
        assert back.status == maxent.status and back.constants == maxent.constants
        np.testing.assert_array_equal(back.coef, maxent.coef)
        assert torch.equal(back.sample_loadings(30, seed=5), maxent.sample_loadings(30, seed=5))
        w_back, w = back.sample_network(seed=2).connectivity(), maxent.sample_network(seed=2).connectivity()
        assert torch.equal(w_back, w)


def test_flow_round_trip_and_file_errors(maxent, tmp_path):
    flow = fit_flow_matching(torch.randn(40, 2, generator=torch.Generator().manual_seed(1)), seed=0, **TINY)
    path = flow.save(tmp_path / "flow.pt")
    back = neurodyn.io.load(path)
    assert isinstance(back, LoadingFlow) and back.names == flow.names and back.status == flow.status
    assert torch.equal(back.sample(7, seed=3), flow.sample(7, seed=3))
    assert torch.allclose(back.log_prob(flow.sample(3, seed=4)), flow.log_prob(flow.sample(3, seed=4)))
    with pytest.raises(FileExistsError, match="overwrite=True"):
        flow.save(path)  # refused by default
    with pytest.raises(ResultFileError, match="neurodyn.loading_flow file, not neurodyn.maxent_loadings"):
        MaxEntLoadings.load(path)
    newer = {**flow.to_dict(), "version": 99}
    torch.save(newer, tmp_path / "newer.pt")
    with pytest.raises(ResultFileError, match="newer than this neurodyn reads .*upgrade neurodyn"):
        neurodyn.io.load(tmp_path / "newer.pt")
    broken = maxent.to_dict()
    del broken["flow"]["state_dict"]["layers.0.weight"]
    torch.save(broken, tmp_path / "broken.pt")
    with pytest.raises(ResultFileError, match="do not fit its format"):
        neurodyn.io.load(tmp_path / "broken.pt")
    with pytest.raises(neurodyn.io.ModelFileError, match="read it with neurodyn.io.load"):
        neurodyn.io.load_checkpoint(path)
