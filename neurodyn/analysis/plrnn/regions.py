"""The linear regions of a piecewise-affine map: enumeration and one-step transitions.

Regions are the full-dimensional cells of the hyperplane arrangement ``N z + o = 0``. Every point
lies in the closure of at least one of them, so enumerating them (and, for k-cycles, sequences of
them) covers the whole state space. Non-emptiness is decided by a linear programme (scipy's HiGHS):
maximise the slack ``t`` with ``s_i (n_i z + o_i) / ||n_i|| >= t``; the cell is open-non-empty when
``t > 0``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from neurodyn.analysis.plrnn._polytope import chebyshev, feasible_point
from neurodyn.models.piecewise import PLSystem

__all__ = ["cyclic_sequences", "enumerate_regions", "transition_graph"]


def enumerate_regions(system: PLSystem, *, max_regions: int = 1_000_000, slack_tol: float = 1e-9
                      ) -> np.ndarray:
    """All non-empty (full-dimensional) regions of the map, as region codes.

    Parameters
    ----------
    system : PLSystem
    max_regions : int
        Stop with an error beyond this many regions.
    slack_tol : float
        A cell whose largest inscribed slack is below this is treated as empty.

    Returns
    -------
    ndarray of bool, shape (region, hyperplane)
        Sorted lexicographically (False < True). With linearly independent normals all ``2**H``
        codes are returned without any LP; otherwise the arrangement is built one hyperplane at a
        time, checking each new cell by an LP.

    Raises
    ------
    ValueError
        If the number of regions exceeds ``max_regions``.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.plrnn import enumerate_regions
    >>> from neurodyn.models import PLRNN, pl_system
    >>> system = pl_system(PLRNN.from_arrays(A=[0.5, 0.5], W=np.eye(2), h=[0.0, 0.0]))
    >>> enumerate_regions(system).astype(int).tolist()  # 2 ReLUs: 2**2 regions
    [[0, 0], [0, 1], [1, 0], [1, 1]]
    """
    N, o = system.normals, system.offsets
    H, n = N.shape
    norms = np.linalg.norm(N, axis=1)
    if H == 0:
        return np.zeros((1, 0), dtype=bool)
    if np.all(norms > 0) and np.linalg.matrix_rank(N) == H:
        if 2**H > max_regions:
            raise ValueError(f"2**{H} regions exceed max_regions={max_regions}; use the heuristic search")
        return np.array(list(itertools.product([False, True], repeat=H)), dtype=bool)
    unit = N / np.where(norms > 0, norms, 1.0)[:, None]
    off = o / np.where(norms > 0, norms, 1.0)
    cells: list[tuple[list[bool], np.ndarray]] = [([], np.zeros(n))]
    for i in range(H):
        grown: list[tuple[list[bool], np.ndarray]] = []
        for code, centre in cells:
            if norms[i] == 0:
                grown.append((code + [bool(o[i] > 0)], centre))
                continue
            side = float(unit[i] @ centre + off[i])
            for bit in (False, True):
                if abs(side) > slack_tol and (side > 0) == bit:
                    grown.append((code + [bit], centre))  # the parent's interior point is on this side
                    continue
                rows = [j for j in range(i + 1) if norms[j] > 0]
                sign = np.array([1.0 if (code + [bit])[j] else -1.0 for j in rows])
                # largest slack t <= 1 with s (n z + o) >= t over the unit normals: a Chebyshev ball
                z, t = chebyshev(-sign[:, None] * unit[rows], sign * off[rows], radius_bounds=(None, 1.0))
                if t > slack_tol:
                    grown.append((code + [bit], z))
        cells = grown
        if len(cells) > max_regions:
            raise ValueError(f"more than max_regions={max_regions} regions; use the heuristic search")
    codes = np.array([c for c, _ in cells], dtype=bool)
    return codes[np.lexsort(codes.T[::-1])]


def transition_graph(system: PLSystem, codes: np.ndarray, J: np.ndarray, c: np.ndarray,
                     *, tol: float = 1e-9) -> np.ndarray:
    """Which region can map into which: ``adj[a, b]`` is True when some ``z`` in the closure of
    region ``a`` has ``J_a z + c_a`` in the closure of region ``b``.

    A necessary condition for a cycle to visit ``a`` then ``b``, so restricting region sequences
    to walks of this graph keeps the exhaustive search complete. ``codes`` (region, hyperplane),
    ``J`` (region, latent, latent), ``c`` (region, latent) → bool (region, region). The closures are
    relaxed by ``tol`` (in units of distance), which can only add edges.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.plrnn.regions import enumerate_regions, transition_graph
    >>> from neurodyn.models import PLRNN, pl_system
    >>> system = pl_system(PLRNN.from_arrays(A=[0.5], W=[[0.0]], h=[1.0]))  # z' = z / 2 + 1
    >>> codes = enumerate_regions(system)
    >>> J, c = system.affine_map(codes)
    >>> transition_graph(system, codes, J, c).astype(int).tolist()  # z > 0 never maps below 0
    [[1, 1], [0, 1]]
    """
    N, o = system.normals, system.offsets
    norms = np.linalg.norm(N, axis=1)
    keep = norms > 0
    unit, off = N[keep] / norms[keep, None], o[keep] / norms[keep]
    signs = np.where(codes[:, keep], 1.0, -1.0)
    R = codes.shape[0]
    adj = np.zeros((R, R), dtype=bool)
    for a in range(R):
        here = signs[a][:, None] * unit
        image = unit @ J[a]
        for b in range(R):
            there = signs[b][:, None] * image
            A_ub = -np.vstack([here, there])
            b_ub = np.concatenate([signs[a] * off, signs[b] * (unit @ c[a] + off)]) + tol
            adj[a, b] = feasible_point(A_ub, b_ub) is not None
    return adj


def cyclic_sequences(adj: np.ndarray, k: int, *, max_sequences: int) -> np.ndarray:
    """Closed walks ``r_1 -> ... -> r_k -> r_1`` of the graph, one per rotation class.

    Only primitive sequences (not a repetition of a shorter one) in their lexicographically
    smallest rotation are returned: (sequence, k) int64 indices.

    Raises
    ------
    ValueError
        If there are more than ``max_sequences``.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.plrnn.regions import cyclic_sequences
    >>> adj = np.array([[True, True], [True, False]])  # 0 -> 0, 0 -> 1, 1 -> 0
    >>> [cyclic_sequences(adj, k, max_sequences=10).tolist() for k in (1, 2)]
    [[[0]], [[0, 1]]]
    >>> cyclic_sequences(adj, 3, max_sequences=10).tolist()  # one rotation class, primitive only
    [[0, 0, 1]]
    """
    R = adj.shape[0]
    if adj.all() and k * math.log(max(R, 1)) <= math.log(2_000_000):  # logs: no overflow
        return _all_necklaces(R, k, max_sequences)
    nbrs = [np.flatnonzero(adj[a]) for a in range(R)]
    out: list[tuple[int, ...]] = []

    def minimal(seq: tuple[int, ...]) -> bool:
        rots = [seq[r:] + seq[:r] for r in range(1, k)]
        return all(seq < rot for rot in rots)  # strict: also rejects periodic sequences

    def close(seq: list[int]) -> None:
        if adj[seq[-1], seq[0]] and minimal(tuple(seq)):
            out.append(tuple(seq))
            if len(out) > max_sequences:
                raise ValueError(
                    f"more than max_sequences={max_sequences} region sequences of order {k}; "
                    "lower max_order or use the heuristic search (exhaustive=False)"
                )

    for s in range(R):  # depth-first walks from s over regions >= s, with an explicit stack (any k)
        seq, stack = [s], [iter(nbrs[s])]
        if k == 1:
            close(seq)
            continue
        while stack:
            b = next(stack[-1], None)
            if b is None:
                stack.pop()
                seq.pop()
                continue
            if b < s:
                continue
            seq.append(int(b))
            if len(seq) == k:
                close(seq)
                seq.pop()
            else:
                stack.append(iter(nbrs[int(b)]))
    return np.array(out, dtype=np.int64).reshape(-1, k)


def _all_necklaces(R: int, k: int, max_sequences: int) -> np.ndarray:
    """Primitive sequences over ``R`` symbols in minimal rotation, vectorised (complete graph)."""
    seqs = np.stack(np.unravel_index(np.arange(R**k), (R,) * k), axis=1).astype(np.int64)
    weights = R ** np.arange(k - 1, -1, -1, dtype=np.int64)
    value = seqs @ weights
    keep = np.ones(seqs.shape[0], dtype=bool)
    for r in range(1, k):
        keep &= value < np.roll(seqs, -r, axis=1) @ weights
    out = seqs[keep]
    if out.shape[0] > max_sequences:
        raise ValueError(
            f"more than max_sequences={max_sequences} region sequences of order {k}; "
            "lower max_order or use the heuristic search (exhaustive=False)"
        )
    return out
