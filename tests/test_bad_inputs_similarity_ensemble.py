import numpy as np
import pytest

from neurodyn.analysis import dsa_distance
from neurodyn.analysis.similarity.pairwise import embed_distances
from neurodyn.training import load_ensemble


def test_dsa_refuses_constant_activity():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="constant over time"):
        dsa_distance(np.ones((4, 30, 3)), rng.normal(size=(4, 30, 3)), n_delays=2)


@pytest.mark.parametrize("bad", [np.ones((3, 3)), -np.ones((3, 3)) + np.eye(3)])
def test_embedding_needs_a_distance_matrix(bad):
    with pytest.raises(ValueError, match="zero diagonal"):
        embed_distances(bad)


@pytest.mark.parametrize("content", ["print('hello')", "[1, 2]"])
def test_load_ensemble_rejects_other_files(tmp_path, content):
    p = tmp_path / "ensemble.json"
    p.write_text(content)
    with pytest.raises(ValueError, match="not a neurodyn ensemble index"):
        load_ensemble(p)
