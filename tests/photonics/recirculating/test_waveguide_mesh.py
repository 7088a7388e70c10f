import math
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar

from photonics import MZIImperfections, PortError, SettingsError, ShapeError
from photonics.devices.mzi import imperfect_transfer
from photonics.recirculating import mesh_scattering
from photonics.recirculating.lattices import (
    KINDS,
    hexagonal_mesh,
    lattice_mesh,
    square_mesh,
    triangular_mesh,
)
from photonics.recirculating.mesh_scattering import (
    insertion_loss_db,
    link_transmission,
    mesh_solver,
    port_powers,
    scattering,
)
from photonics.recirculating.switch_geometry import switch_6x6_mesh
from photonics.recirculating.waveguide_mesh import (
    BAR,
    CROSS,
    SIDES,
    WaveguideMesh,
    lattice_counts,
    reach,
    theta_of_states,
    through,
    trace,
)
from tests.strategies import seeds

A = 811.0  # default unit length, um
SIDES_OF_FACE = {"hexagonal": 6, "square": 4, "triangular": 3}
SMALL = [(k, r, c) for k in KINDS for r, c in [(1, 1), (1, 2), (2, 2), (2, 3), (3, 2)]]
MESHES = {spec: lattice_mesh(*spec) for spec in SMALL}
SWITCH = switch_6x6_mesh()
meshes = st.sampled_from([*MESHES.values(), SWITCH])


def amp(loss_db: float) -> float:
    return 10 ** (-loss_db / 20)


def link_loss_db(mesh: WaveguideMesh, db_per_cm: float = 2.0) -> float:
    return mesh.unit_length_um * 1e-4 * db_per_cm


def cell_at(mesh: WaveguideMesh, x: float, y: float) -> int:
    """The cell at (x, y), in unit lengths."""
    d = np.hypot(*(mesh.cell_positions_um - np.array([x, y]) * mesh.unit_length_um).T)
    assert d.min() < 1e-6
    return int(d.argmin())


def random_theta(mesh: WaveguideMesh, rng: np.random.Generator) -> np.ndarray:
    """Any angle, with some cells exactly bar or exactly cross."""
    theta = rng.uniform(-np.pi, np.pi, mesh.n_cells)
    pick = rng.integers(0, 3, mesh.n_cells)
    return np.where(pick == 0, 0.0, np.where(pick == 1, np.pi / 2, theta))


# --- lattices ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "rows", "cols", "cells", "links", "ports"),
    [
        # one hexagon: 6 edges, one link per vertex, each edge an outer arm with two ports
        ("hexagonal", 1, 1, 6, 6, 12),
        # two hexagons share one edge: 11 edges, 10 of them on the boundary
        ("hexagonal", 1, 2, 11, 12, 20),
        # four hexagons in offset rows share 5 edges: 24 - 5 = 19, boundary 19 - 5 = 14
        ("hexagonal", 2, 2, 19, 24, 28),
        ("square", 1, 1, 4, 4, 8),
        # 2 x 3 horizontal + 3 x 2 vertical edges, 8 on the boundary
        ("square", 2, 2, 12, 16, 16),
        ("square", 2, 3, 17, 24, 20),
        ("triangular", 1, 1, 3, 3, 6),
        # an up and a down triangle share one edge
        ("triangular", 1, 2, 5, 6, 8),
        # four triangles share 3 edges: 12 - 3 = 9, boundary 6
        ("triangular", 2, 2, 9, 12, 12),
    ],
)
def test_counts_of_small_meshes(kind, rows, cols, cells, links, ports) -> None:
    mesh = lattice_mesh(kind, rows, cols)
    assert (mesh.n_cells, mesh.n_links, mesh.n_ports) == (cells, links, ports)
    assert mesh.n_faces == rows * cols
    assert mesh.kind == kind


@pytest.mark.parametrize(("rows", "cols"), [(1, 5), (4, 1), (3, 4), (5, 5)])
def test_count_formulas(rows: int, cols: int) -> None:
    hexa = hexagonal_mesh(rows, cols)
    assert hexa.n_cells == (3 * rows + 2) * cols + 2 * rows - 1
    assert (hexa.n_links, hexa.n_ports) == (6 * rows * cols, 8 * (rows + cols) - 4)
    sq = square_mesh(rows, cols)
    assert sq.n_cells == 2 * rows * cols + rows + cols
    assert (sq.n_links, sq.n_ports) == (4 * rows * cols, 4 * (rows + cols))
    assert lattice_counts(sq)["west"] == 2 * rows and lattice_counts(sq)["north"] == 2 * cols


@pytest.mark.parametrize("spec", [*SMALL, "switch"], ids=str)
def test_every_port_end_is_linked_once_or_an_edge_port(spec) -> None:
    mesh = SWITCH if spec == "switch" else MESHES[spec]
    m = SIDES_OF_FACE[mesh.kind]
    uses = np.bincount(np.r_[mesh.links.ravel(), mesh.edge_ports], minlength=4 * mesh.n_cells)
    assert np.all(uses == 1)
    cells = mesh.links // 4
    assert np.all(cells[:, 0] != cells[:, 1])
    # a link joins the arms of one face on two edges meeting at a vertex: the cells' midpoints
    # are a cos(pi / m) apart (adjacent sides of a regular m-gon of side a)
    arm_face = mesh.cell_faces[mesh.links // 4, mesh.links % 2]
    assert np.all(arm_face[:, 0] == arm_face[:, 1]) and np.all(arm_face >= 0)
    gap = np.hypot(*(mesh.cell_positions_um[cells[:, 0]] - mesh.cell_positions_um[cells[:, 1]]).T)
    assert np.allclose(gap, mesh.unit_length_um * math.cos(math.pi / m))
    # edge ports are the outside's arms, both ends of each: one outer arm per boundary cell
    assert np.all(mesh.cell_faces[mesh.edge_ports // 4, mesh.edge_ports % 2] == -1)
    other = mesh.outer_arm_partner()
    assert np.all(other >= 0) and np.all(other[other] == np.arange(mesh.n_ports))
    assert np.all(mesh.edge_port_sides[other] == mesh.edge_port_sides)
    assert mesh.n_ports == 2 * np.sum(np.any(mesh.cell_faces == -1, axis=1))


@pytest.mark.parametrize("spec", SMALL, ids=str)
def test_faces_circulate_and_adjacency_is_the_links(spec) -> None:
    mesh = MESHES[spec]
    m = SIDES_OF_FACE[mesh.kind]
    seen = np.zeros(mesh.n_cells, int)
    for f in range(mesh.n_faces):
        ring = mesh.face_cells(f)
        assert len(ring) == m == len(set(ring.tolist()))
        assert np.all(np.any(mesh.cell_faces[ring] == f, axis=1))
        assert np.allclose(mesh.cell_positions_um[ring].mean(axis=0), mesh.face_centers_um[f])
        seen[ring] += 1
    assert np.array_equal(seen, np.sum(mesh.cell_faces >= 0, axis=1))
    pairs = mesh.cell_adjacency()
    assert np.all(pairs[:, 0] < pairs[:, 1])
    assert len(np.unique(pairs, axis=0)) == len(pairs)
    assert {tuple(p) for p in pairs} == {tuple(sorted(c)) for c in (mesh.links // 4).tolist()}


def test_one_hexagon_is_a_six_cycle() -> None:
    mesh = hexagonal_mesh(1, 1)
    ring = mesh.face_cells(0).tolist()
    expected = {tuple(sorted((ring[i], ring[(i + 1) % 6]))) for i in range(6)}
    assert {tuple(p) for p in mesh.cell_adjacency()} == expected
    # cells sorted by position, south to north then west to east
    y, x = mesh.cell_positions_um[:, 1], mesh.cell_positions_um[:, 0]
    assert np.all(np.diff(y) >= 0) and x[0] < x[1] and x[-2] < x[-1]


@pytest.mark.parametrize("spec", [*SMALL, "switch"], ids=str)
def test_edge_ports_go_counterclockwise_from_the_north_west(spec) -> None:
    mesh = SWITCH if spec == "switch" else MESHES[spec]
    pos = mesh.edge_port_positions_um
    step = np.hypot(*(np.roll(pos, -1, axis=0) - pos).T)
    assert np.all(step <= mesh.unit_length_um / 2 + 1e-9)
    x, y = pos.T
    assert 0.5 * np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y) > 0  # counter-clockwise
    cx, cy = (pos.max(axis=0) + pos.min(axis=0)) / 2
    assert x[0] < cx and y[0] > cy  # starts in the north-west ...
    assert mesh.edge_port_sides[0] in ("west", "north")  # ... and goes down the west side
    sides = mesh.edge_port_sides
    assert np.all(x[sides == "west"] < cx) and np.all(x[sides == "east"] > cx)
    assert np.all(y[sides == "south"] < cy) and np.all(y[sides == "north"] > cy)
    for side in ("west", "east"):
        assert np.all(np.diff(y[mesh.side_ports(side)]) <= 0)
    for side in ("north", "south"):
        assert np.all(np.diff(x[mesh.side_ports(side)]) >= 0)
    assert sorted(np.concatenate([mesh.side_ports(s) for s in SIDES])) == list(range(mesh.n_ports))


def test_construction_is_deterministic_and_scales_with_the_unit_length() -> None:
    a, b = hexagonal_mesh(2, 3), hexagonal_mesh(2, 3)
    for field in ("links", "edge_ports", "cell_faces", "cell_positions_um", "edge_port_sides"):
        assert np.array_equal(getattr(a, field), getattr(b, field))
    half = hexagonal_mesh(2, 3, unit_length_um=A / 2)
    assert np.allclose(half.cell_positions_um, a.cell_positions_um / 2)
    assert np.array_equal(half.links, a.links)
    assert half.unit_length_um == A / 2
    with pytest.raises(ValueError, match="read-only"):
        a.links[0, 0] = 1


def test_reachability() -> None:
    # squares (and triangles) are two-colourable: ports fall in two classes reaching each other
    R = square_mesh(2, 2).reachability()
    assert R.sum() == 16 * 8 and np.array_equal(R, R.T) and not R.diagonal().any()
    assert triangular_mesh(2, 3).reachability().sum() == 16 * 8
    assert hexagonal_mesh(2, 2).reachability().all()
    west, east = SWITCH.side_ports("west"), SWITCH.side_ports("east")
    assert SWITCH.reachability()[np.ix_(east, west)].all()


@given(meshes, seeds)
def test_trace_exits_are_reachable_and_reciprocal(mesh: WaveguideMesh, seed: int) -> None:
    rng = np.random.default_rng(seed)
    states = rng.integers(0, 2, mesh.n_cells)
    port = int(rng.integers(mesh.n_ports))
    path = trace(mesh, states, port)
    assert mesh.reachability()[path.exit_port, port]
    back = trace(mesh, states, path.exit_port)
    assert back.exit_port == port and back.cells == path.cells[::-1]
    assert path.n_links == len(path.cells) - 1
    for k in range(0, len(path.port_ends), 2):
        a, b = path.port_ends[k : k + 2]
        assert through(a, int(states[a // 4])) == b


def _reach_plainly(partner, starts, allowed):
    """The breadth-first search written out in Python, depth by depth, bar before cross."""
    pred = np.full(partner.size, -2)
    pred[starts] = -1
    frontier = list(starts)
    while frontier:
        nxt = []
        for e in frontier:
            if allowed[e // 4]:
                for state in (BAR, CROSS):
                    y = int(partner[through(int(e), state)])
                    if y >= 0 and pred[y] == -2:
                        pred[y] = e
                        nxt.append(y)
        frontier = nxt
    return pred


@given(meshes, seeds)
def test_the_compiled_search_over_port_ends_finds_the_plain_searchs_tree(mesh, seed) -> None:
    rng = np.random.default_rng(seed)
    partner = mesh.partner()
    ends = np.flatnonzero(partner < 0)  # where light enters from the edge
    starts = rng.choice(ends, size=int(rng.integers(1, ends.size + 1)), replace=False)
    allowed = rng.random(mesh.n_cells) < 0.8
    tree = reach(partner, starts, allowed)
    assert np.array_equal(tree, _reach_plainly(partner, starts, allowed))
    assert set(np.flatnonzero(tree == -1)) == set(starts)


# --- scattering ----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_all_bar_light_stays_on_the_outer_arm(kind: str) -> None:
    mesh = lattice_mesh(kind, 2, 3)
    S = scattering(mesh, np.zeros(mesh.n_cells), cell_loss_db=0.5)
    expected = np.zeros((mesh.n_ports, mesh.n_ports))
    expected[mesh.outer_arm_partner(), np.arange(mesh.n_ports)] = amp(0.5)
    # bar is the identity T(0, 0): each outer arm is one cell, real and lossy by 0.5 dB
    assert np.allclose(S, expected, atol=1e-12)


def test_hand_built_path_through_a_square_row() -> None:
    mesh = square_mesh(1, 3)
    # west edge -> top of square 0 -> middle edge -> bottom of square 1 -> ... -> east edge
    path = {(0, 0.5): CROSS, (0.5, 1): BAR, (1, 0.5): CROSS, (1.5, 0): BAR, (2, 0.5): CROSS}
    path |= {(2.5, 1): BAR, (3, 0.5): CROSS}
    theta = np.array([0.3, 0.7, 1.1, 0.2, 0.9, 1.3, 0.4, 0.5, 0.6, 0.8])  # cells off the path
    for (x, y), state in path.items():
        theta[cell_at(mesh, x, y)] = theta_of_states(state)
    port_of = mesh.port_of_end()
    # vertical edges: end A south, arm 0-2 west; enter the west edge's outer arm at its south
    # end, leave by the east edge's outer (east) arm 1-3 at its south end
    p_in = port_of[4 * cell_at(mesh, 0, 0.5) + 0]
    p_out = port_of[4 * cell_at(mesh, 3, 0.5) + 1]
    assert mesh.edge_port_sides[p_in] == "west" and mesh.edge_port_sides[p_out] == "east"
    assert np.allclose(mesh.edge_port_positions_um[[p_in, p_out]], [[0, A / 4], [3 * A, A / 4]])
    S = scattering(mesh, theta, cell_loss_db=0.5, waveguide_loss_db_per_cm=2.0)
    expected_db = 7 * 0.5 + 6 * A * 1e-4 * 2.0
    assert insertion_loss_db(S, p_in, p_out) == pytest.approx(expected_db, abs=1e-9)
    powers = port_powers(S, p_in)
    assert powers[p_out] == pytest.approx(powers.sum(), rel=1e-12)
    states = np.where(np.isclose(theta, np.pi / 2), CROSS, BAR)
    traced = trace(mesh, states, p_in)
    assert traced.exit_port == p_out and len(traced.cells) == 7 and traced.n_links == 6


def test_hand_built_path_around_a_hexagon() -> None:
    mesh = hexagonal_mesh(1, 1)
    ring = mesh.face_cells(0)
    theta = np.full(6, 0.4)
    theta[ring[[0, 3]]] = np.pi / 2  # in at ring[0], bar through ring[1], ring[2], out at ring[3]
    theta[ring[[1, 2]]] = 0.0
    pos = mesh.edge_port_positions_um
    own = np.flatnonzero(mesh.edge_ports // 4 == ring[0])
    p_in = own[np.argmax(np.hypot(*(pos[own] - mesh.cell_positions_um[ring[1]]).T))]
    own = np.flatnonzero(mesh.edge_ports // 4 == ring[3])
    p_out = own[np.argmin(np.hypot(*(pos[own] - mesh.cell_positions_um[ring[4]]).T))]
    S = scattering(mesh, theta, cell_loss_db=0.5, waveguide_loss_db_per_cm=2.0)
    assert insertion_loss_db(S, p_in, p_out) == pytest.approx(4 * 0.5 + 3 * link_loss_db(mesh))
    assert port_powers(S, p_in)[p_out] == pytest.approx(port_powers(S, p_in).sum(), rel=1e-12)


@given(meshes, seeds)
def test_scattering_follows_traced_paths(mesh: WaveguideMesh, seed: int) -> None:
    rng = np.random.default_rng(seed)
    states = rng.integers(0, 2, mesh.n_cells)
    S = scattering(mesh, theta_of_states(states), cell_loss_db=0.5, waveguide_loss_db_per_cm=2.0)
    for port in rng.choice(mesh.n_ports, size=3, replace=False):
        path = trace(mesh, states, int(port))
        expected = np.zeros(mesh.n_ports)
        expected[path.exit_port] = amp(len(path.cells) * 0.5 + path.n_links * link_loss_db(mesh))
        assert np.allclose(np.abs(S[:, port]), expected, atol=1e-12)


@given(meshes, seeds, st.booleans())
def test_reciprocal_and_passive(mesh: WaveguideMesh, seed: int, imperfect: bool) -> None:
    rng = np.random.default_rng(seed)
    imp = None
    if imperfect:
        imp = MZIImperfections.sample(mesh.n_cells, rng, 0.05, rng.uniform(0, 1), rng.uniform(0, 1))
    S = scattering(
        mesh,
        random_theta(mesh, rng),
        wavelength_nm=rng.uniform(1500, 1600),
        cell_loss_db=rng.uniform(0, 1),
        waveguide_loss_db_per_cm=rng.uniform(0, 3),
        imperfections=imp,
        phi=rng.uniform(0, 2 * np.pi, mesh.n_cells),
    )
    assert S.shape == (mesh.n_ports, mesh.n_ports)
    assert np.abs(S - S.T).max() <= 1e-12
    assert np.linalg.svd(S, compute_uv=False).max() <= 1 + 1e-12


@given(meshes, seeds)
def test_lossless_mesh_is_unitary(mesh: WaveguideMesh, seed: int) -> None:
    rng = np.random.default_rng(seed)
    imp = MZIImperfections.sample(mesh.n_cells, rng, splitter_sigma=0.05, loss_db=0.0)
    S = scattering(
        mesh,
        random_theta(mesh, rng),
        wavelength_nm=rng.uniform(1500, 1600),
        waveguide_loss_db_per_cm=0.0,
        imperfections=imp,
        phi=rng.uniform(0, 2 * np.pi, mesh.n_cells),
    )
    assert np.abs(S @ S.conj().T - np.eye(mesh.n_ports)).max() < 1e-9
    lossy = scattering(mesh, random_theta(mesh, rng), cell_loss_db=0.5)
    assert np.linalg.svd(lossy, compute_uv=False).max() < 1


def dense_scattering(mesh: WaveguideMesh, T: np.ndarray, link: complex) -> np.ndarray:
    """The edge-port scattering written out densely: ``b = S_c (P b + E e)`` with ``S_c`` the
    cells' 4x4 blocks (``T`` from end A to B, ``T^T`` back), ``P`` the links and ``E`` the
    edge ports, solved by ``numpy.linalg.solve``."""
    N = 4 * mesh.n_cells
    Sc = np.zeros((N, N), complex)
    for c in range(mesh.n_cells):
        for i in (0, 1):
            for j in (0, 1):
                Sc[4 * c + 2 + i, 4 * c + j] = Sc[4 * c + j, 4 * c + 2 + i] = T[c, i, j]
    P = np.zeros((N, N), complex)
    for a, b in mesh.links:
        P[a, b] = P[b, a] = link
    E = np.zeros((N, mesh.n_ports))
    E[mesh.edge_ports, np.arange(mesh.n_ports)] = 1
    b = np.linalg.solve(np.eye(N) - Sc @ P, Sc @ E)
    return b[mesh.edge_ports]


@given(st.sampled_from([*MESHES.values(), hexagonal_mesh(2, 2, unit_length_um=300.0)]), seeds)
def test_scattering_is_the_dense_solve(mesh: WaveguideMesh, seed: int) -> None:
    rng = np.random.default_rng(seed)
    imp = MZIImperfections.sample(mesh.n_cells, rng, 0.05, rng.uniform(0, 1), rng.uniform(0, 1))
    theta, phi = random_theta(mesh, rng), rng.uniform(0, 2 * np.pi, mesh.n_cells)
    wavelength = rng.uniform(1500, 1600)
    S = scattering(mesh, theta, wavelength_nm=wavelength, imperfections=imp, phi=phi)
    link = link_transmission(mesh.unit_length_um, wavelength)
    expected = dense_scattering(mesh, imperfect_transfer(theta, phi, imp), link)
    assert np.abs(S - expected).max() < 1e-12


@settings(max_examples=30)
@given(meshes, seeds, st.integers(1, 5), st.integers(0, 2))
def test_a_batch_of_states_is_solved_as_each_state_alone(mesh, seed, batch, split) -> None:
    rng = np.random.default_rng(seed)
    imp = MZIImperfections.sample(mesh.n_cells, rng, 0.05, 0.5)
    theta = rng.uniform(0, np.pi, (batch, mesh.n_cells))
    # any cells, a common phase of their own included (as the emulated chip's)
    T = imperfect_transfer(theta, 0.0, imp) * np.exp(1j * theta)[..., None, None]
    link = link_transmission(mesh.unit_length_um, 1550.0, 2.0)
    outs = rng.permutation(mesh.n_ports)[: rng.integers(1, mesh.n_ports + 1)]
    ins = rng.permutation(mesh.n_ports)[: rng.integers(1, mesh.n_ports + 1)]
    solver = mesh_solver(mesh)
    assert mesh_solver(mesh) is solver  # analysed once per mesh
    # split=1: every state in a block of its own; 2: a few at a time; 0: the default
    per_state = 16 * 4 * mesh.n_cells * (len(ins) + mesh_scattering.FILL_PER_ROW)
    budget = {0: mesh_scattering.BLOCK_BYTES, 1: 1, 2: 2 * per_state}[split]
    with mock.patch.object(mesh_scattering, "BLOCK_BYTES", budget):
        together = solver.solve(T, link, outs, ins)
    assert together.shape == (batch, len(outs), len(ins))
    for b in range(batch):
        alone = dense_scattering(mesh, T[b], link)
        assert np.abs(together[b] - alone[np.ix_(outs, ins)]).max() < 1e-12


@settings(max_examples=20)
@given(seeds, st.integers(1, 6), st.integers(1, 3))
def test_states_near_a_factorised_one_are_solved_as_its_low_rank_updates(
    seed, batch, calls
) -> None:
    mesh = hexagonal_mesh(3, 3, unit_length_um=300.0)
    rng = np.random.default_rng(seed)
    imp = MZIImperfections.sample(mesh.n_cells, rng, 0.05, 0.5)
    link = link_transmission(mesh.unit_length_um, 1550.0, 2.0)
    solver = mesh_scattering.MeshSolver(mesh)
    base = rng.uniform(0, np.pi, mesh.n_cells)
    for _ in range(calls):  # later calls reuse the factorised state when they are near it
        theta = np.repeat(base[None], batch, axis=0)
        for c in rng.choice(mesh.n_cells, size=rng.integers(1, 5), replace=False):
            theta[rng.integers(0, batch) :, c] = rng.uniform(0, np.pi)  # a sweep of some cells
        T = imperfect_transfer(theta, 0.0, imp) * np.exp(1j * theta)[..., None, None]
        outs = rng.permutation(mesh.n_ports)[: rng.integers(1, mesh.n_ports + 1)]
        ins = rng.permutation(mesh.n_ports)[: rng.integers(1, 4)]
        found = solver.solve(T, link, outs, ins)
        for b in range(batch):
            alone = dense_scattering(mesh, T[b], link)[np.ix_(outs, ins)]
            assert np.abs(found[b] - alone).max() < 1e-12


def _minimum(f, grid: np.ndarray, i: int) -> float:
    """Minimiser of ``f`` between grid[i - 1] and grid[i + 1], to ~1e-12 nm (optimising the
    offset from grid[i]: the bounded method's tolerance is relative to |x|)."""
    step = grid[1] - grid[0]
    res = minimize_scalar(
        lambda u: f(grid[i] + u), bounds=(-step, step), method="bounded", options={"xatol": 1e-13}
    )
    return float(grid[i] + res.x)


@pytest.mark.slow  # ~10-50 s; `make test-all`
def test_ring_synthesised_in_the_mesh_has_the_expected_fsr() -> None:
    mesh = SWITCH
    ring = mesh.face_cells(0)  # the south-west hexagon: a ring of 6 cells and 6 links
    boundary = [int(c) for c in ring if -1 in mesh.cell_faces[c]]
    bus, drop = boundary[0], boundary[-1]
    port_of = mesh.port_of_end()
    outer = {c: int(np.flatnonzero(mesh.cell_faces[c] == -1)[0]) for c in (bus, drop)}
    p_in, p_through = port_of[4 * bus + outer[bus]], port_of[4 * bus + outer[bus] + 2]
    drop_ports = port_of[4 * drop + outer[drop] + np.array([0, 2])]
    theta = np.zeros(mesh.n_cells)  # everything bar ...
    theta[[bus, drop]] = np.arcsin(np.sqrt(0.3))  # ... but two couplers: an add-drop ring

    def column(wl: float) -> np.ndarray:  # low-loss cells (0.1 dB) for a deep notch
        S = scattering(mesh, theta, wavelength_nm=float(wl), cell_loss_db=0.1)
        return np.abs(S[:, p_in]) ** 2

    ring_nm = 6 * mesh.unit_length_um * 1e3
    fsr0 = 1550.0**2 / (4.2 * ring_nm)
    grid = np.linspace(1550.0, 1550.0 + 2.4 * fsr0, 240)
    spectra = np.array([column(wl) for wl in grid])
    thru, dropped = spectra[:, p_through], spectra[:, drop_ports].sum(axis=1)
    notches = [i for i in range(1, len(grid) - 1) if thru[i] < min(thru[i - 1], thru[i + 1])]
    peaks = [i for i in range(1, len(grid) - 1) if dropped[i] > max(dropped[i - 1], dropped[i + 1])]
    assert len(notches) == len(peaks) >= 2
    assert thru.min() < 0.2 * thru.max() and dropped.max() > 10 * dropped.min()
    res = [_minimum(lambda w: column(w)[p_through], grid, i) for i in notches[:2]]
    top = [_minimum(lambda w: -column(w)[drop_ports].sum(), grid, i) for i in peaks[:2]]
    # exact for a linear n_eff(lambda): 6 L n_g (1 / l2 - 1 / l1) = 1
    fsr = res[1] - res[0]
    assert fsr == pytest.approx(res[0] * res[1] / (4.2 * ring_nm), rel=1e-6)
    assert fsr == pytest.approx(fsr0, rel=2e-3)  # lambda^2 / (n_g L), 0.1176 nm
    assert np.allclose(top, res, atol=1e-6 * fsr0)


def test_link_transmission() -> None:
    g = link_transmission(A, 1550.0, waveguide_loss_db_per_cm=2.0, n_eff=2.4, n_g=4.2)
    assert abs(g) == pytest.approx(amp(2.0 * A * 1e-4))
    assert np.angle(g) == pytest.approx(np.angle(np.exp(2j * np.pi * 2.4 * A * 1e3 / 1550)))
    # one unit of group delay: d(phase)/d(omega) = n_g L / c = 11.36 ps at 811 um
    dl = 1e-4
    g2 = link_transmission(A, 1550.0 + dl, 0.0)
    dphi = np.angle(g2 / g)
    domega = 2 * np.pi * 299_792_458e9 * (1 / (1550.0 + dl) - 1 / 1550.0)
    assert dphi / domega * 1e12 == pytest.approx(4.2 * A * 1e-6 / 299_792_458 * 1e12, rel=1e-6)


def test_hand_made_mesh() -> None:
    # two cells in a line: cell 0's end B arms joined to cell 1's end A arms
    mesh = WaveguideMesh(
        kind="line",
        cell_positions_um=[[0.0, 0.0], [A, 0.0]],
        links=[[2, 4], [3, 5]],
        edge_ports=[0, 1, 6, 7],
        edge_port_sides=["west", "west", "east", "east"],
        unit_length_um=A,
    )
    S = scattering(mesh, [np.pi / 2, np.pi / 2], cell_loss_db=0.0, waveguide_loss_db_per_cm=0.0)
    g = link_transmission(A, waveguide_loss_db_per_cm=0.0)
    # cross twice: 0 -> 3 -> 5 -> 6 with T[1, 0] = 1, T[0, 1] = -1
    assert S[2, 0] == pytest.approx(-g) and S[3, 1] == pytest.approx(-g)
    assert mesh.side_ports("east").tolist() == [2, 3]
    with pytest.raises(SettingsError, match="cell_faces"):
        mesh.face_cells(0)


# --- bad inputs ----------------------------------------------------------------------------


def test_bad_inputs_name_the_value() -> None:
    mesh = hexagonal_mesh(1, 1)
    with pytest.raises(ShapeError, match=r"theta has shape \(5,\); expected \(6,\)"):
        scattering(mesh, np.zeros(5))
    with pytest.raises(ShapeError, match=r"phi has shape \(7,\)"):
        scattering(mesh, np.zeros(6), phi=np.zeros(7))
    with pytest.raises(SettingsError, match="theta must be finite"):
        scattering(mesh, [0, 0, 0, np.nan, 0, 0])
    with pytest.raises(SettingsError, match=r"cell_loss_db must be .*>= 0, got -0.5"):
        scattering(mesh, np.zeros(6), cell_loss_db=-0.5)
    with pytest.raises(SettingsError, match=r"waveguide_loss_db_per_cm .* got -1"):
        scattering(mesh, np.zeros(6), waveguide_loss_db_per_cm=-1)
    with pytest.raises(SettingsError, match=r"wavelength_nm .*> 0, got 0"):
        scattering(mesh, np.zeros(6), wavelength_nm=0)
    with pytest.raises(ShapeError, match=r"splitter_error_in has shape \(3,\)"):
        scattering(mesh, np.zeros(6), imperfections=MZIImperfections(np.zeros(3)))
    with pytest.raises(ShapeError, match="rows must be an integer >= 1, got 0"):
        hexagonal_mesh(0, 3)
    with pytest.raises(ShapeError, match="cols must be an integer >= 1, got -2"):
        square_mesh(2, -2)
    with pytest.raises(ShapeError, match="cols=1"):
        triangular_mesh(2, 1)
    with pytest.raises(SettingsError, match=r"kind must be one of .* got 'hexagon'"):
        lattice_mesh("hexagon", 2, 2)
    with pytest.raises(SettingsError, match=r"unit_length_um .* got -811"):
        square_mesh(1, 1, unit_length_um=-811)
    with pytest.raises(SettingsError, match=r"side must be one of .* got 'up'"):
        mesh.side_ports("up")
    with pytest.raises(SettingsError, match="face 1 is out of range"):
        mesh.face_cells(1)
    with pytest.raises(PortError, match=r"port 12 is out of range \[0, 11\]"):
        trace(mesh, np.zeros(6, int), 12)
    with pytest.raises(SettingsError, match=r"states must be BAR .* got 2"):
        trace(mesh, [0, 1, 2, 0, 0, 0], 0)
    with pytest.raises(PortError, match=r"out_port .* \[0, 11\]"):
        insertion_loss_db(np.eye(12), 0, 12)


def test_malformed_meshes_are_refused() -> None:
    good = {
        "kind": "line",
        "cell_positions_um": [[0.0, 0.0], [A, 0.0]],
        "links": [[2, 4], [3, 5]],
        "edge_ports": [0, 1, 6, 7],
        "edge_port_sides": ["west", "west", "east", "east"],
        "unit_length_um": A,
    }
    with pytest.raises(PortError, match="port-end 7 is used 0 times"):
        WaveguideMesh(**good | {"edge_ports": [0, 1, 6], "edge_port_sides": ["west"] * 3})
    with pytest.raises(PortError, match="port-end 0 is used 2 times"):
        WaveguideMesh(**good | {"edge_ports": [0, 1, 6, 0], "links": [[2, 4], [3, 5]]})
    with pytest.raises(PortError, match="joins two ends of one cell"):
        WaveguideMesh(**good | {"links": [[2, 3], [4, 5]]})
    with pytest.raises(PortError, match="port-end 9 is out of range"):
        WaveguideMesh(**good | {"edge_ports": [0, 1, 6, 9]})
    with pytest.raises(SettingsError, match="'up'"):
        WaveguideMesh(**good | {"edge_port_sides": ["west", "west", "east", "up"]})
    with pytest.raises(SettingsError, match="unit_length_um must be > 0 um, got 0"):
        WaveguideMesh(**good | {"unit_length_um": 0.0})
