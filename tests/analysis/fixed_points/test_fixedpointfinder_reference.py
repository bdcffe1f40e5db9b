"""The default search against FixedPointFinder's output (tests/reference/fixedpointfinder_reference.npz,
made by tests/reference/make_fixedpointfinder_reference.py): on the same trained 16-unit flip-flop
network and the same 256 initial states, every point FixedPointFinder converged is found, with its
stability and eigenvalues."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from neurodyn.analysis import find_fixed_points
from neurodyn.models import LeakyRNN

REFERENCE = Path(__file__).resolve().parents[2] / "reference" / "fixedpointfinder_reference.npz"


@pytest.fixture(scope="module")
def reference():
    ref = dict(np.load(REFERENCE))
    model = LeakyRNN(3, ref["w_rec"].shape[0], 3, alpha=1.0).double()
    model.load_state_dict({name: torch.as_tensor(ref[name]) for name in model.state_dict()})
    result = find_fixed_points(model.eval().requires_grad_(False), initial_states=ref["initial_states"],
                               n_inits=ref["initial_states"].shape[0])
    return ref, result


def _nearest(points: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each target row, the index of the nearest row of ``points`` and its max-abs distance."""
    d = np.abs(targets[:, None] - points[None]).max(-1)
    return d.argmin(1), d.min(1)


def test_every_fixedpointfinder_point_is_found(reference):
    ref, result = reference
    converged = ref["qstar"] < 1e-10
    assert converged.sum() >= 20  # the reference is not trivial: FixedPointFinder converged 25 points
    points = result.fixed_points()
    idx, dist = _nearest(points.states, ref["xstar"][converged])
    # FixedPointFinder stops at q < 1e-12 without a Newton polish: its points are located to about
    # ||(J - I)^-1|| sqrt(2 q), well inside 1e-4 here, while distinct points lie > 1e-2 apart
    assert dist.max() < 1e-4
    assert len(np.unique(idx)) == converged.sum()
    apart = np.abs(points.states[:, None] - points.states[None]).max(-1)
    assert apart[~np.eye(points.n_points, dtype=bool)].min() > 1e-2


def test_stability_and_eigenvalues_agree(reference):
    ref, result = reference
    converged = ref["qstar"] < 1e-10
    points = result.fixed_points()
    idx, _ = _nearest(points.states, ref["xstar"][converged])
    np.testing.assert_array_equal(points.stability[idx] == "stable", ref["is_stable"][converged])
    ours = points.eigenvalues[idx]
    theirs = ref["eigenvalues"][converged]
    np.testing.assert_allclose(np.abs(ours), np.abs(theirs), atol=1e-4)
    # the same spectra as multisets (order within equal moduli may differ)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(np.sort_complex(np.round(a, 6)), np.sort_complex(np.round(b, 6)),
                                   atol=2e-5)
