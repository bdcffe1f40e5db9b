"""The Lozi map that the PLRNN docstrings' examples share."""

from __future__ import annotations

from typing import Any

from neurodyn.analysis.plrnn.cycles import find_cycles
from neurodyn.analysis.plrnn.manifold_result import ManifoldResult
from neurodyn.analysis.plrnn.manifolds import find_manifolds
from neurodyn.models import PLRNN


def lozi_map() -> PLRNN:
    """The Lozi map ``x' = 1 + y − 1.7|x|, y' = 0.5 x`` as a 2-unit PLRNN (``|x| = 2 relu(x) − x``).

    It has two saddle fixed points (the second at ``x = 1 / 2.2``) and one saddle 2-cycle, and
    transversal homoclinic points of its saddles prove it chaotic (see
    :func:`~neurodyn.analysis.find_cycles`, where the map is built by hand).

    Examples
    --------
    >>> lozi = lozi_map()
    >>> lozi.A.detach().tolist(), lozi.W.detach().tolist(), lozi.h.detach().tolist()
    ([[1.7, 1.0], [0.5, 0.0]], [[-3.4, 0.0], [0.0, 0.0]], [1.0, 0.0])
    """
    return PLRNN.from_arrays([[1.7, 1.0], [0.5, 0.0]], [[-3.4, 0.0], [0.0, 0.0]], [1.0, 0.0])


def lozi_manifolds(**options: Any) -> ManifoldResult:
    """The manifolds of the fixed points of :func:`lozi_map` in the box ``[-3, 3]²``:
    ``find_manifolds(lozi, find_cycles(lozi, exhaustive=True), box=3.0, **options)``.

    Examples
    --------
    >>> manifolds = lozi_manifolds(kind="unstable", max_depth=1)
    >>> len(manifolds.saddles), {p.kind for p in manifolds.pieces}
    (2, {'unstable'})
    """
    lozi = lozi_map()
    return find_manifolds(lozi, find_cycles(lozi, exhaustive=True), box=3.0, **options)
