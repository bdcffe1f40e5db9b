"""fixed_point_graph on a network whose fixed points are known exactly: h ↦ tanh(3h) per unit.

Each unit has fixed points 0 (unstable, slope 3) and ±h* (stable), so 3 units have 3**3 = 27 fixed
points: 8 attractors at the cube's corners, 12 index-1 saddles on its edges, 6 index-2 saddles on its
faces and the source at the centre. The saddles' unstable modes are the axes they sit at 0 on.
"""

import itertools

import networkx as nx
import numpy as np
import pytest
import torch

from neurodyn.analysis import compute_topology_classes, find_fixed_points, fixed_point_graph
from neurodyn.models import LeakyRNN


def cube_network(a: float = 3.0, n: int = 3) -> LeakyRNN:
    m = LeakyRNN(1, n, 1, alpha=1.0, seed=0)
    with torch.no_grad():
        m.w_rec.copy_(a * torch.eye(n))
        m.b.zero_()
    return m


@pytest.fixture(scope="module")
def cube():
    m = cube_network()
    corners = np.array(list(itertools.product([-1.0, 0.0, 1.0], repeat=3)))
    fps = find_fixed_points(m, initial_states=corners + 0.01, n_inits=27, seed=0)
    return m, fps, fixed_point_graph(fps, m)


def signs(g, node):
    return np.sign(np.round(g.nodes[node]["state"], 6)).astype(int)


def test_nodes_are_the_27_fixed_points(cube):
    _, _, g = cube
    assert g.number_of_nodes() == 27
    by_index = {k: sum(1 for n in g if g.nodes[n]["n_unstable"] == k) for k in range(4)}
    assert by_index == {0: 8, 1: 12, 2: 6, 3: 1}
    h_star = np.max(np.abs([g.nodes[n]["state"] for n in g]))
    assert h_star == pytest.approx(np.tanh(3 * h_star), abs=1e-12)  # closed form of the attractor


def test_attractors_and_index1_saddles_form_the_cube(cube):
    _, _, g = cube
    attractors = [n for n in g if g.nodes[n]["stability"] == "stable"]
    saddles = [n for n in g if g.nodes[n]["n_unstable"] == 1]
    assert len(attractors) == 8 and len(saddles) == 12
    cube_graph = nx.Graph()
    for s in saddles:
        targets = list(g.successors(s))
        assert len(targets) == 2 and all(g.nodes[t]["stability"] == "stable" for t in targets)
        a, b = (signs(g, t) for t in targets)
        assert np.sum(a != b) == 1  # the two corners differ in the one sign the saddle sits at 0 in
        zero = signs(g, s) == 0
        assert np.array_equal(a[~zero], signs(g, s)[~zero])
        cube_graph.add_edge(*(tuple(signs(g, t)) for t in targets))
    assert nx.is_isomorphic(cube_graph, nx.hypercube_graph(3))
    assert g.graph["n_unmatched"] == 0
    assert g.number_of_edges() == 12 * 2 + 6 * 4 + 6  # index-2 saddles reach index-1 ones, the source index-2


def test_topology_classes_are_invariant_to_relabelling(cube):
    m, fps, g = cube
    perm = torch.tensor([2, 0, 1])
    m2 = cube_network()
    with torch.no_grad():
        m2.w_rec.copy_(m.w_rec[perm][:, perm])
    fps2 = find_fixed_points(m2, initial_states=fps.states[:, perm.numpy()] + 0.01, n_inits=27, seed=1)
    g2 = fixed_point_graph(fps2, m2)
    line = find_fixed_points(cube_network(n=1), initial_states=[[-1.0], [0.01], [1.0]], seed=0)
    g3 = fixed_point_graph(line, cube_network(n=1))
    assert compute_topology_classes([g, g3, g2, None]).tolist() == [0, 1, 0, -1]


def test_bad_settings_raise(cube):
    m, fps, _ = cube
    with pytest.raises(ValueError, match="match_tol must be positive"):
        fixed_point_graph(fps, m, match_tol=0)
