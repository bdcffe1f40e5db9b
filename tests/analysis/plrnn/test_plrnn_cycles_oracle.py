"""The heuristic cycle search against exhaustive enumeration (the completeness oracle).

Random small PLRNNs, shallow PLRNNs (plain and clipped) and ALRNNs; the cases are seeds whose
maps have cycles beyond fixed points (orders 2-4), so the comparison is not trivial. Exhaustive
enumeration solves every non-empty region / primitive region sequence, so its list is complete;
the heuristic must return exactly the same cycles with its default settings.
"""

from __future__ import annotations

import numpy as np
import pytest

from neurodyn.analysis import find_cycles
from neurodyn.analysis.plrnn._cycle_algebra import same_cycle
from neurodyn.models import ALRNN, PLRNN, ShallowPLRNN, pl_system


def random_model(kind: str, seed: int):
    rng = np.random.default_rng(seed)
    if kind == "plrnn":
        n = 3
        return PLRNN.from_arrays(rng.uniform(-1, 1, n), rng.normal(size=(n, n)) * 3 / np.sqrt(n),
                                 rng.normal(size=n))
    if kind == "alrnn":
        n = 3
        return ALRNN.from_arrays(rng.uniform(-1, 1, n), rng.normal(size=(n, n)) * 3 / np.sqrt(n),
                                 rng.normal(size=n), n_relu=2)
    n, L = 2, (3 if kind == "clipped" else 4)
    return ShallowPLRNN.from_arrays(
        rng.uniform(-1, 1, n), rng.normal(size=(n, L)) * 2, rng.normal(size=(L, n)),
        rng.normal(size=n), rng.normal(size=L), clipped=kind == "clipped",
    )


CASES = [("plrnn", 12), ("plrnn", 0), ("shplrnn", 16), ("shplrnn", 17), ("clipped", 3), ("alrnn", 0)]


def cycles_by_order(result, max_order: int) -> dict[int, list[np.ndarray]]:
    return {k: result.cycles(k) for k in range(1, max_order + 1)}


@pytest.mark.parametrize(("kind", "seed"), CASES)
def test_heuristic_finds_exactly_the_enumerated_cycles(kind: str, seed: int) -> None:
    model = random_model(kind, seed)
    exact = find_cycles(model, max_order=4, exhaustive=True)
    heuristic = find_cycles(model, max_order=4, seed=0)
    assert exact.search["complete"].all()
    assert (exact.order > 1).any(), "the case should have cycles beyond fixed points"
    a, b = cycles_by_order(exact, 4), cycles_by_order(heuristic, 4)
    for k in range(1, 5):
        assert len(a[k]) == len(b[k]), f"order {k}: {len(a[k])} enumerated, {len(b[k])} found"
        for cyc in a[k]:
            assert any(same_cycle(cyc, other, 1e-9, 1e-8) for other in b[k])
    # identical canonical order and start points
    np.testing.assert_allclose(heuristic.states, exact.states, atol=1e-9)
    np.testing.assert_array_equal(heuristic.stability, exact.stability)
    # every point: F^k(z) = z with the true map, orbit consistent with its regions
    system = pl_system(model)
    for z, k, code in zip(exact.states, exact.order, exact.region_code):
        w = z.copy()
        for _ in range(k):
            w = system.step(w)
        assert np.linalg.norm(w - z) <= 1e-10 * (1 + np.linalg.norm(z))
        sign = np.where(code, 1.0, -1.0)
        assert np.all(sign * system.preactivation(z) >= -1e-9 * (1 + np.abs(z).max()))


def test_exhaustive_lp_regions_agree_with_sampling() -> None:
    """Every region met by dense random sampling is among the enumerated ones, and vice versa
    for a fine enough sample of a small arrangement."""
    from neurodyn.analysis.plrnn import enumerate_regions

    system = pl_system(random_model("clipped", 3))
    regions = {row.tobytes() for row in enumerate_regions(system)}
    rng = np.random.default_rng(0)
    sampled = {row.tobytes() for row in system.region_code(rng.normal(scale=5.0, size=(200_000, 2)))}
    assert sampled <= regions
    assert len(sampled) >= len(regions) - 2  # at most a couple of slivers missed by sampling


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["plrnn", "shplrnn", "clipped", "alrnn"])
def test_heuristic_never_reports_a_cycle_enumeration_lacks(kind: str) -> None:
    """Soundness over many seeds: every cycle the heuristic reports is an enumerated one, and the
    fixed points (order 1) are found completely."""
    for seed in range(10):
        model = random_model(kind, seed)
        exact = find_cycles(model, max_order=3, exhaustive=True)
        heuristic = find_cycles(model, max_order=3, seed=seed, n_restarts=30)
        for k in range(1, 4):
            for cyc in heuristic.cycles(k):
                assert any(same_cycle(cyc, other, 1e-9, 1e-8) for other in exact.cycles(k)), (seed, k)
        assert len(heuristic.cycles(1)) == len(exact.cycles(1)), seed
