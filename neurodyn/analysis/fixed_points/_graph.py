"""The topology of a network's fixed points: which attractors each saddle's unstable directions lead to."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from neurodyn.analysis.fixed_points._find import _input_conditions, _one_step_map
from neurodyn.analysis.fixed_points._stability import batch_jacobian

__all__ = ["compute_topology_classes", "fixed_point_graph"]

#: node attributes that must agree for two graphs to count as the same topology
TOPOLOGY_LABELS = ("stability", "n_unstable")


def fixed_point_graph(
    result: Any,
    model: Any,
    *,
    perturbation: float = 1e-3,
    max_steps: int = 5000,
    settle_tol: float = 1e-10,
    match_tol: float = 1e-2,
    marginal_tol: float | None = None,
    state_size: int | None = None,
):
    """The fixed points of ``model`` as a directed graph: saddle → the fixed points its unstable modes reach.

    Nodes are the converged fixed points (order 1) of ``result``. From every saddle (and every fully
    unstable point) the state is started at ``x* ± perturbation · v`` for each unstable eigenvector ``v``
    of the Jacobian (real part, unit length; one per complex pair) and the map is iterated until it
    settles (``‖F(h) − h‖ < settle_tol``) or ``max_steps`` pass; an edge goes to the fixed point the
    state settles at if one lies within ``match_tol`` in every unit (Maheswaranathan, Williams, Golub,
    Ganguli & Sussillo 2019, "Universality and individuality in neural dynamics across large populations
    of recurrent networks", NeurIPS). For an n-bit flip-flop network the attractors and index-1 saddles
    form the n-cube.

    Parameters
    ----------
    result : FixedPointResult
        From :func:`~neurodyn.analysis.find_fixed_points` (or a file read back); its constant input
        ``attrs["input"]`` is the input of the map followed.
    model : RecurrentModel or callable ``F(h, u)``
        The model the points belong to (not modified; a float64 copy is iterated).
    perturbation : float
        Length of the initial step along each unstable direction (state units).
    max_steps : int
        Iterations at most per trajectory; a trajectory that has not settled gets no edge.
    settle_tol : float
        A trajectory has settled once its step length is below this.
    match_tol : float
        Largest distance in any unit between a settled state and the fixed point it is matched to.
    marginal_tol : float, optional
        Eigenvalues with modulus above ``1 + marginal_tol`` are unstable; default the search's.
    state_size : int, optional
        State length of a plain callable (default: that of the points).

    Returns
    -------
    networkx.DiGraph
        Node ``i`` (row ``i`` of ``result.fixed_points()``) with attributes ``stability``,
        ``n_unstable`` (int), ``state`` (tuple of floats, the coordinates) and ``q``; edge ``(s, a)``
        with ``n_paths`` (how many of the ± unstable directions of ``s`` reach ``a``). Graph attributes:
        ``n_unmatched`` (trajectories that settled away from every listed point or did not settle)
        and the settings.

    Raises
    ------
    ValueError
        For a non-positive ``perturbation``, ``max_steps``, ``settle_tol`` or ``match_tol``.

    Examples
    --------
    A 1-unit bistable map ``h ↦ tanh(3h)``: the unstable point at 0 leads to both attractors.

    >>> import torch
    >>> from neurodyn.analysis import find_fixed_points
    >>> F = lambda h, u: torch.tanh(3 * h)
    >>> fps = find_fixed_points(F, state_size=1, initial_states=[[-1.0], [0.01], [1.0]], seed=0)
    >>> g = fixed_point_graph(fps, F)
    >>> sorted(g.nodes[n]["stability"] for n in g), g.number_of_edges()
    (['stable', 'stable', 'unstable'], 2)
    """
    import networkx as nx

    for name, value in (("perturbation", perturbation), ("max_steps", max_steps), ("settle_tol", settle_tol),
                        ("match_tol", match_tol)):
        if not value > 0:
            raise ValueError(f"{name} must be positive, got {value}")
    fps = result.fixed_points()
    tol = float(result.attrs.get("marginal_tol", 1e-3) if marginal_tol is None else marginal_tol)
    n_state = fps.states.shape[1] if state_size is None else int(state_size)
    step, n_state, n_in, device, _ = _one_step_map(model, n_state, torch.float64, "cpu")
    u_attr = result.attrs.get("input", [])
    if result.attrs.get("per_candidate_inputs"):
        raise ValueError("fixed_point_graph needs points found under one constant input; search with "
                         "inputs of shape (input,) rather than one per initial state")
    u_star, _ = _input_conditions(np.asarray(u_attr, float) if len(u_attr) else None, n_in, torch.float64,
                                  device)

    def F(h: torch.Tensor) -> torch.Tensor:
        return step(h, None if u_star is None else u_star[None].expand(h.shape[0], -1))

    graph = nx.DiGraph(perturbation=perturbation, max_steps=int(max_steps), settle_tol=settle_tol,
                       match_tol=match_tol, marginal_tol=tol, n_unmatched=0,
                       reference="Maheswaranathan et al. (2019), NeurIPS")
    for i in range(fps.n_points):
        graph.add_node(i, stability=str(fps.stability[i]), n_unstable=int(fps.n_unstable[i]),
                       state=tuple(float(v) for v in fps.states[i]), q=float(fps.q[i]))
    sources = [i for i in range(fps.n_points) if fps.stability[i] in ("saddle", "unstable")]
    if not sources:
        return graph
    x = torch.as_tensor(fps.states, dtype=torch.float64)
    starts, owners = [], []
    with torch.no_grad():
        jac = batch_jacobian(F, x[sources]).numpy()
    for s, J in zip(sources, jac):
        lam, vec = np.linalg.eig(J)
        seen_pair = set()
        for k in np.flatnonzero(np.abs(lam) > 1.0 + tol):
            if lam[k].imag != 0:
                pair = (round(lam[k].real, 12), round(abs(lam[k].imag), 12))
                if pair in seen_pair:
                    continue
                seen_pair.add(pair)
            v = vec[:, k].real
            v = v / np.linalg.norm(v)
            for sign in (1.0, -1.0):
                starts.append(fps.states[s] + sign * perturbation * v)
                owners.append(s)
    ends, settled = _settle(F, torch.as_tensor(np.array(starts), dtype=torch.float64), int(max_steps),
                            settle_tol)
    dist = np.abs(ends[:, None, :] - fps.states[None, :, :]).max(-1)  # (trajectory, fixed point)
    for t, s in enumerate(owners):
        target = int(np.argmin(dist[t]))
        if not settled[t] or dist[t, target] > match_tol or target == s:
            graph.graph["n_unmatched"] += 1
            continue
        if graph.has_edge(s, target):
            graph.edges[s, target]["n_paths"] += 1
        else:
            graph.add_edge(s, target, n_paths=1)
    return graph


@torch.no_grad()
def _settle(F, h: torch.Tensor, max_steps: int, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """Iterate rows of ``h`` until each moves less than ``tol`` per step (or ``max_steps`` pass)."""
    done = torch.zeros(h.shape[0], dtype=torch.bool)
    for _ in range(max_steps):
        active = ~done
        if not active.any():
            break
        new = F(h[active])
        moved = (new - h[active]).norm(dim=-1)
        h[active] = new
        idx = torch.nonzero(active).squeeze(-1)
        done[idx[moved < tol]] = True
        bad = ~torch.isfinite(new).all(-1)
        done[idx[bad]] = True
    finite = torch.isfinite(h).all(-1)
    return h.numpy(), (done & finite).numpy()


def compute_topology_classes(graphs: Sequence[Any], *, labels: Sequence[str] = TOPOLOGY_LABELS) -> np.ndarray:
    """Group fixed-point graphs into isomorphism classes whose node labels agree.

    Two graphs share a class when a bijection of their nodes preserves the edges and the node
    attributes ``labels`` (stability and number of unstable directions by default), the comparison of
    dynamical topology across networks of Maheswaranathan et al. (2019).

    Parameters
    ----------
    graphs : sequence of networkx.DiGraph
        For instance from :func:`fixed_point_graph`; ``None`` entries (no graph) get class -1.
    labels : sequence of str
        Node attributes that must match.

    Returns
    -------
    ndarray of int64, shape (graph,)
        Class of each graph, numbered 0, 1, ... in order of first appearance; the number of distinct
        topologies is ``classes.max() + 1``.

    Examples
    --------
    >>> import networkx as nx
    >>> a = nx.DiGraph([(0, 1)]); b = nx.DiGraph([(5, 4)]); c = nx.DiGraph([(0, 1), (0, 2)])
    >>> for g in (a, b, c):
    ...     nx.set_node_attributes(g, "stable", "stability")
    >>> compute_topology_classes([a, b, c], labels=("stability",)).tolist()
    [0, 0, 1]
    """
    import networkx as nx
    from networkx.algorithms.isomorphism import categorical_node_match

    match = categorical_node_match(list(labels), [None] * len(labels))
    reps: list[tuple[tuple, Any]] = []
    out = np.full(len(graphs), -1, dtype=np.int64)
    for i, g in enumerate(graphs):
        if g is None:
            continue
        h = _invariant(g, labels)
        for c, (h_rep, rep) in enumerate(reps):
            if h_rep == h and nx.is_isomorphic(g, rep, node_match=match):
                out[i] = c
                break
        else:
            out[i] = len(reps)
            reps.append((h, g))
    return out


def _invariant(g, labels: Sequence[str]) -> tuple:
    """Labels and in/out degrees of the nodes, sorted: equal for isomorphic graphs (a cheap pre-check)."""
    return tuple(sorted((tuple(str(g.nodes[n].get(k)) for k in labels), g.in_degree(n), g.out_degree(n))
                        for n in g))
