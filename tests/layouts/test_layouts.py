"""Layouts (gdsfactory) built from the models and checked against them: optical graph, metal,
the layout evaluated as a circuit, GDS files read back, the picture, and `pswitch layout`."""

import json
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import klayout.db as kdb
import matplotlib.pyplot
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from layouts.cells import (
    METAL,
    MZICellSettings,
    PadSettings,
    clear_cache,
    heated_mzi,
    nm,
)
from layouts.check import (
    check_layout,
    drawn_heaters_um,
    extract_graph,
    heaters_match,
    layout_transfer,
    metal_check,
)
from layouts.graph import CircuitGraph, compare, connection, feedforward_graph
from layouts.meshes import (
    LayoutSettings,
    feedforward_geometry,
    feedforward_layout,
    waveguide_mesh_layout,
)
from layouts.output import read_gds, render_png, scale_bar_um, write_gds
from layouts.rings import ring_layout
from photonics import ClementsMesh, MZIImperfections, ReckMesh
from photonics.chips.chip import Chip, ChipSpec
from photonics.devices.ring import MicroRing
from photonics.errors import SettingsError
from photonics.recirculating.lattices import hexagonal_mesh
from photonics.recirculating.switch_geometry import switch_6x6_mesh

SNAPSHOTS = Path(__file__).parent / "snapshots"
PSWITCH = shutil.which("pswitch", path=str(Path(sys.executable).parent))
NO_PADS = LayoutSettings(pads=None)


@pytest.fixture(autouse=True)
def _fresh_cells():
    """gdsfactory caches (and locks) every @gf.cell result: start each test without them."""
    clear_cache()
    yield
    clear_cache()


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    assert PSWITCH is not None, "the pswitch console script is not installed"
    return subprocess.run(
        [PSWITCH, *args], capture_output=True, text=True, timeout=300, cwd=cwd, check=False
    )


def test_importing_the_packages_and_the_cli_never_imports_gdsfactory() -> None:
    code = (
        "import sys, photonics, firmware, hil, pswitch.cli, layouts, pswitch.layout\n"
        "pswitch.cli.build_parser()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('gdsfactory', 'klayout')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "[]"


# --- cells --------------------------------------------------------------------------------


def test_heated_mzi_ports_sit_on_its_two_mode_lines() -> None:
    s = MZICellSettings(mode_pitch_um=50.0, heater_length_um=80.0)
    c = heated_mzi(s)
    ports = {p.name: p for p in c.ports}
    assert (ports["o1"].dx, ports["o1"].dy, ports["o1"].orientation) == (0, 0, 180)
    assert (ports["o2"].dx, ports["o2"].dy) == (0, -50)
    assert (ports["o3"].dx, ports["o3"].dy, ports["o3"].orientation) == (s.length_um, 0, 0)
    assert (ports["o4"].dx, ports["o4"].dy) == (s.length_um, -50)
    assert ports["e1"].port_type == ports["e2"].port_type == "electrical"
    # the heater spans the top arm between its terminals, and both are on the routing metal
    assert ports["e2"].dx - ports["e1"].dx > 80
    assert ports["e1"].layer == ports["e2"].layer == METAL
    assert c.info["length_um"] == s.length_um == 2 * (20 + 120) + 2 * 20 + 80


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: MZICellSettings(mode_pitch_um=10.0), "mode_pitch_um must be >= 20"),
        (lambda: MZICellSettings(heater_length_um=-1.0), "heater_length_um must be a number > 0"),
        (lambda: PadSettings(pad_size_um=90.0), "pad_pitch_um (80.0) must exceed pad_size_um"),
        (lambda: PadSettings(wire_width_um=12.0), "wire_pitch_um (10.0) must exceed"),
        (lambda: LayoutSettings(io_length_um=0), "io_length_um must be a number > 0"),
        (lambda: ring_layout(MicroRing(r2=None)), "an add-drop MicroRing (r2 set) is needed"),
        (lambda: feedforward_layout(hexagonal_mesh(1, 1)), "expected a FeedForwardMesh"),
    ],
)
def test_bad_settings_are_refused_with_a_message(make, words) -> None:
    with pytest.raises(SettingsError) as err:
        make()
    assert words in str(err.value)


# --- the model's graph ----------------------------------------------------------------------


@pytest.mark.parametrize("cls", [ClementsMesh, ReckMesh])
@pytest.mark.parametrize("n", [2, 3, 4, 7, 8])
def test_model_graph_joins_every_mzi_port_once(cls, n) -> None:
    mesh = cls(n)
    graph = feedforward_graph(mesh)
    assert len(graph.elements) == mesh.n_mzis
    assert len(graph.connections) == 2 * mesh.n_mzis + n
    ends = [t for conn in graph.connections for t in conn]
    assert len(ends) == len(set(ends))  # each terminal in exactly one connection
    assert {f"in{m}" for m in range(n)} | {f"out{m}" for m in range(n)} <= set(ends)


@pytest.mark.parametrize("kind", ["clements", "reck"])
def test_logical_netlist_snapshot(kind) -> None:
    mesh = {"clements": ClementsMesh, "reck": ReckMesh}[kind](4)
    layout = feedforward_layout(mesh)
    extracted = extract_graph(layout.component)
    snapshot = (SNAPSHOTS / f"{kind}_4_graph.txt").read_text().splitlines()
    assert extracted.lines() == snapshot
    assert feedforward_graph(mesh).lines() == snapshot


# --- feed-forward meshes: built and checked ---------------------------------------------------


@pytest.mark.parametrize("cls", [ClementsMesh, ReckMesh])
@pytest.mark.parametrize("n", [4, 8, 16])
def test_mesh_with_pads_matches_its_model_and_has_one_metal_region_per_net(cls, n) -> None:
    mesh = cls(n)
    layout = feedforward_layout(mesh)
    check = check_layout(layout)
    assert check.graph.ok, str(check.graph)
    assert str(check.graph) == "layout matches the model"
    # every MZI heater's east terminal and every phase shifter's west terminal to its own pad;
    # each column's return takes its MZIs' west terminals and its input phase shifters' east
    # ones, one more return the output screen's
    pads = 2 * mesh.n_mzis + mesh.n + mesh.n_columns + 1
    assert layout.n_pads == pads and check.metal.expected == pads
    assert check.metal.regions == check.metal.expected, str(check.metal)
    assert check.metal.problems == ()
    names = {i.name for i in layout.component.insts}
    pairs = list(zip(mesh.columns, mesh.modes, strict=True))
    assert {f"pad_mzi_c{c}_m{m}.e2" for c, m in pairs} <= names
    assert {f"pad_ps_in_c{c}_m{m}.e1" for c, m in pairs} <= names
    assert {f"pad_ps_out_{j}.e1" for j in range(n)} | {"pad_return_out"} <= names


@pytest.mark.parametrize("cls", [ClementsMesh, ReckMesh])
def test_every_small_mesh_odd_or_even_matches_its_model(cls) -> None:
    failed = {}
    for n in range(2, 13):
        check = check_layout(feedforward_layout(cls(n)))
        if not check.ok:
            failed[n] = check.lines()
    assert failed == {}


def test_a_graph_that_cannot_be_drawn_west_to_east_is_refused() -> None:
    mesh = ClementsMesh(4)
    graph = feedforward_graph(mesh)
    wrong = (graph.connections - {connection("mzi_c0_m0.o3", "mzi_c2_m0.o1")}) | {
        connection("mzi_c0_m0.o3", "mzi_c0_m2.o1")
    }
    with pytest.raises(SettingsError) as err:
        feedforward_layout(mesh, graph=CircuitGraph(graph.elements, wrong))
    assert "cannot draw connection mzi_c0_m2.o1 -- mzi_c0_m0.o3" in str(err.value)


@pytest.mark.parametrize("cls", [ClementsMesh, ReckMesh])
def test_mesh_without_pads_keeps_every_heater_terminal_separate(cls) -> None:
    mesh = cls(8)
    layout = feedforward_layout(mesh, NO_PADS)
    check = check_layout(layout)
    assert check.ok, "\n".join(check.lines())
    assert check.metal.regions == 2 * (2 * mesh.n_mzis + mesh.n)  # two terminals per heater
    assert layout.n_pads == 0


def test_mzis_are_placed_from_the_model_geometry() -> None:
    mesh = ReckMesh(6)
    s = LayoutSettings()
    layout = feedforward_layout(mesh, s)
    insts = {i.name: i for i in layout.component.insts}
    x_pitch = {}
    for c, m in zip(mesh.columns, mesh.modes, strict=True):
        port = insts[f"mzi_c{c}_m{m}"].ports["o1"]
        assert port.dy == pytest.approx(-m * s.mzi.mode_pitch_um)
        x_pitch.setdefault(int(c), port.dx)
    xs = [x_pitch[c] for c in range(mesh.n_columns)]
    assert np.allclose(np.diff(xs), xs[1] - xs[0]) and xs[1] > s.mzi.length_um


def tampered(mesh, swap):
    """The model graph of ``mesh`` with the in ports of two connections swapped."""
    graph = feedforward_graph(mesh)
    (a, b), (c, d) = swap
    assert {connection(a, b), connection(c, d)} <= graph.connections
    conns = set(graph.connections) - {connection(a, b), connection(c, d)}
    conns |= {connection(a, d), connection(c, b)}
    return CircuitGraph(graph.elements, frozenset(conns))


def test_a_misconnected_layout_is_caught_and_the_difference_names_the_mzis() -> None:
    mesh = ClementsMesh(6)
    swap = (("mzi_c0_m0.o4", "mzi_c1_m1.o1"), ("mzi_c0_m2.o4", "mzi_c1_m3.o1"))
    layout = feedforward_layout(mesh, graph=tampered(mesh, swap))
    check = check_layout(layout)
    assert not check.ok
    assert check.graph.lines() == [
        "missing connection mzi_c0_m0.o4 -- mzi_c1_m1.o1",
        "missing connection mzi_c0_m2.o4 -- mzi_c1_m3.o1",
        "unexpected connection mzi_c0_m0.o4 -- mzi_c1_m3.o1",
        "unexpected connection mzi_c0_m2.o4 -- mzi_c1_m1.o1",
    ]
    assert check.metal.ok  # only the waveguides are wrong


def test_a_missing_waveguide_shows_as_an_open_port() -> None:
    mesh = ReckMesh(4)
    graph = feedforward_graph(mesh)
    cut = connection("mzi_c1_m1.o3", "mzi_c2_m0.o2")
    layout = feedforward_layout(
        mesh, NO_PADS, graph=CircuitGraph(graph.elements, graph.connections - {cut})
    )
    diff = compare(layout.model, extract_graph(layout.component))
    assert diff.lines() == [
        "missing connection mzi_c1_m1.o3 -- mzi_c2_m0.o2",
        "unexpected connection mzi_c1_m1.o3 -- (open)",
        "unexpected connection mzi_c2_m0.o2 -- (open)",
    ]


def test_an_extra_element_and_a_missing_one_are_named() -> None:
    mesh = ClementsMesh(4)
    layout = feedforward_layout(mesh, NO_PADS)
    other = feedforward_graph(ClementsMesh(5))
    diff = compare(other, extract_graph(layout.component))
    assert "missing element mzi_c1_m3" in diff.lines()
    assert "missing element mzi_c4_m2" in diff.lines()
    assert not diff.ok


# --- metal ----------------------------------------------------------------------------------


def _metal(component) -> kdb.Shapes:
    return component.shapes(component.kcl.layer(*METAL))


def test_a_shorted_layout_is_caught_and_the_short_names_both_heaters() -> None:
    mesh = ClementsMesh(8)
    layout = feedforward_layout(mesh)
    x_track0 = layout.component.insts["mzi_c0_m0"].ports["o3"].dx + 20  # channel margin
    # a sliver of metal across the first two wires east of column 0, above mode 0
    _metal(layout.component).insert(kdb.Box(nm(x_track0 - 3), nm(28), nm(x_track0 + 13), nm(32)))
    check = metal_check(layout)
    assert not check.ok
    assert check.regions == check.expected - 1
    assert "short: mzi_c0_m0.e2 and mzi_c0_m2.e2 are joined" in check.problems


def test_a_cut_wire_is_caught_as_an_open_between_heater_and_pad() -> None:
    mesh = ClementsMesh(8)
    layout = feedforward_layout(mesh)
    x_track0 = layout.component.insts["mzi_c0_m0"].ports["o3"].dx + 20
    shapes = _metal(layout.component)
    metal = kdb.Region(shapes) - kdb.Region(
        kdb.Box(nm(x_track0 - 4), nm(25), nm(x_track0 + 4), nm(35))
    )
    shapes.clear()
    shapes.insert(metal)
    check = metal_check(layout)
    assert check.regions == check.expected + 1
    assert "open: mzi_c0_m0.e2 is split: mzi_c0_m0.e2 | pad_mzi_c0_m0.e2" in check.problems


def test_floating_metal_is_reported_where_it_is() -> None:
    layout = feedforward_layout(ClementsMesh(4), NO_PADS)
    _metal(layout.component).insert(kdb.Box(nm(-500), nm(-500), nm(-490), nm(-490)))
    check = metal_check(layout)
    assert check.problems == ("floating metal at (-495.0, -495.0) um, no terminal",)


# --- the layout as a circuit ----------------------------------------------------------------


@pytest.mark.parametrize("cls", [ClementsMesh, ReckMesh])
def test_layout_netlist_evaluated_as_a_circuit_equals_the_model_transfer(cls) -> None:
    mesh = cls(6)
    rng = np.random.default_rng(4)
    settings = mesh.random_settings(rng)
    chip = MZIImperfections.sample(mesh.n_mzis, rng, splitter_sigma=0.02, loss_db=0.5)
    graph = extract_graph(feedforward_layout(mesh, NO_PADS).component)
    for imperfections in (None, chip):
        M = layout_transfer(graph, mesh, settings, imperfections)
        assert np.abs(M - mesh.transfer(settings, imperfections)).max() < 1e-12
    swap = (("mzi_c0_m0.o4", "mzi_c1_m1.o1"), ("mzi_c0_m2.o4", "mzi_c1_m3.o1"))
    if cls is ReckMesh:
        swap = (("mzi_c2_m0.o4", "mzi_c3_m1.o1"), ("mzi_c2_m2.o4", "mzi_c3_m3.o1"))
    bad = extract_graph(feedforward_layout(mesh, NO_PADS, graph=tampered(mesh, swap)).component)
    assert np.abs(layout_transfer(bad, mesh, settings) - mesh.transfer(settings)).max() > 0.1


# --- recirculating meshes and rings ---------------------------------------------------------


@pytest.mark.parametrize("make", [lambda: hexagonal_mesh(3, 3), switch_6x6_mesh])
def test_hexagonal_mesh_matches_its_model(make) -> None:
    mesh = make()
    layout = waveguide_mesh_layout(mesh)
    check = check_layout(layout)
    assert check.ok, "\n".join(check.lines())
    assert check.metal.regions == 2 * mesh.n_cells
    assert len(extract_graph(layout.component).connections) == mesh.n_links + mesh.n_ports
    # each cell is centred where the model puts it (um)
    insts = {i.name: i for i in layout.component.insts}
    for cell, (x, y) in enumerate(mesh.cell_positions_um):
        box = insts[f"cell_{cell}"].dbbox()
        o1, o4 = insts[f"cell_{cell}"].ports["o1"], insts[f"cell_{cell}"].ports["o4"]
        assert ((o1.dx + o4.dx) / 2, (o1.dy + o4.dy) / 2) == pytest.approx((x, y), abs=1e-3)
        assert box.contains(kdb.DPoint(x, y))


def test_ring_layout_has_the_model_radius_and_two_wired_heater_terminals() -> None:
    ring = MicroRing(radius_um=12.0)
    layout = ring_layout(ring)
    check = check_layout(layout)
    assert check.ok, "\n".join(check.lines())
    assert check.metal.regions == 2 and layout.n_pads == 2
    inst = layout.component.insts["ring_0"]
    assert inst.cell.settings["radius"] == ring.radius_um
    assert extract_graph(layout.component).lines() == [
        "add -- ring_0.o4",
        "drop -- ring_0.o3",
        "in -- ring_0.o1",
        "ring_0.o2 -- through",
    ]


# --- files ----------------------------------------------------------------------------------


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def test_gds_is_written_read_back_and_rendered(tmp_path) -> None:
    mesh = ClementsMesh(8)
    layout = feedforward_layout(mesh)
    gds = write_gds(layout, tmp_path / "mesh.gds")
    contents = read_gds(gds)
    assert contents.top == layout.component.name
    # a phase shifter on each MZI's top input and each output, each splitting its waveguide
    shifters = 28 + 8
    assert contents.by_prefix == {"mzi": 28, "ps": shifters, "pad": 73, "wg": 2 * 28 + 8 + shifters}
    assert sum(n for cell, n in contents.by_cell.items() if cell.startswith("heated_mzi")) == 28
    assert contents.die_size_um == pytest.approx(layout.die_size_um)
    png = render_png(gds, tmp_path / "mesh.png", width_px=800)
    width, height = _png_size(png)
    assert width == 800 and 200 <= height < 800
    assert 2_000 < png.stat().st_size < 300_000
    # a scale bar in the lower left (it had none), black on the white margin
    image = matplotlib.pyplot.imread(png)
    corner = image[-height // 8 :, : width // 4, :3]
    assert (corner.sum(axis=2) < 0.3).sum() > 50
    # the ports named where they are (it had no labels): the image changes where they go
    named = [(p.name, *p.center) for p in layout.component.ports]
    labelled = matplotlib.pyplot.imread(render_png(gds, tmp_path / "l.png", 800, named))
    assert labelled.shape == image.shape and np.abs(labelled - image).sum() > 100


@given(st.floats(1e-3, 1e7))
def test_a_scale_bar_is_a_round_length_of_at_most_a_fifth_of_the_view(span_um) -> None:
    length = scale_bar_um(span_um)
    assert span_um / 50 <= length <= span_um / 5 * (1 + 1e-12)
    mantissa = length / 10 ** np.floor(np.log10(length) + 1e-12)
    assert min(abs(mantissa - m) for m in (1, 2, 5)) < 1e-9


# --- the command line -----------------------------------------------------------------------


def test_cli_writes_gds_and_png_and_prints_counts_and_checks(tmp_path) -> None:
    done = run(
        "layout", "--mesh", "clements", "--ports", "8", "-o", "mesh.gds", "--png", "mesh.png",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "mesh.gds").stat().st_size > 10_000
    assert _png_size(tmp_path / "mesh.png")[0] == 1600
    assert "clements layout: 28 MZIs, 73 pads; die 5.98 x 1.13 mm" in done.stdout
    assert "graph: matches the model" in done.stdout
    assert "metal: ok, 73 regions, 73 expected" in done.stdout
    # the default chip model's heaters (2K + n) are the ones drawn
    assert "heaters: 64 drawn, 64 in the model; every one within 1 um" in done.stdout


def test_cli_json_for_a_hexagonal_mesh(tmp_path) -> None:
    done = run("layout", "--mesh", "switch6x6", "-o", "hex.gds", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    r = json.loads(done.stdout)
    assert r["elements"] == 71 and r["gds_instances"]["cell"] == 71
    assert r["ok"] and r["metal_regions"] == 142 and r["graph_differences"] == []


def test_cli_help_lists_the_layout_command_with_examples(tmp_path) -> None:
    done = run("layout", "--help", cwd=tmp_path)
    assert done.returncode == 0
    assert "pswitch layout --mesh clements --ports 8 -o mesh.gds --png mesh.png" in done.stdout


# --- the caller's PDK ----------------------------------------------------------------------


def test_building_checking_and_writing_a_layout_leave_the_callers_active_pdk(tmp_path) -> None:
    """A user's own PDK stays active through every builder, check and writer, and a process with
    no PDK active is left with none."""
    import gdsfactory as gf
    import gdsfactory.pdk

    generic = gf.gpdk.PDK
    user = gf.Pdk(name="user_pdk", layers=generic.layers, cross_sections=generic.cross_sections)
    before = gdsfactory.pdk._ACTIVE_PDK
    try:
        for active in (user, None):
            if active is None:
                gdsfactory.pdk._ACTIVE_PDK = None
            else:
                active.activate()
            layout = feedforward_layout(ClementsMesh(4))
            assert gdsfactory.pdk._ACTIVE_PDK is active
            assert check_layout(layout).ok
            ring_layout()
            waveguide_mesh_layout(hexagonal_mesh(3, 3))
            render_png(write_gds(layout, tmp_path / "m.gds"), tmp_path / "m.png", width_px=400)
            assert gdsfactory.pdk._ACTIVE_PDK is active
    finally:
        if before is not None:
            before.activate(force=True)


def test_the_heater_check_compares_count_and_positions_with_the_chip_model() -> None:
    chip = Chip(ChipSpec(n_ports=4))
    layout = feedforward_layout(chip.mesh, NO_PADS)
    drawn = drawn_heaters_um(layout.component)
    assert len(drawn) == chip.n_heaters == 2 * 6 + 4  # MZIs, input phase shifters, output screen
    # the mzi of column c, mode m: its heater on mode m's line
    cells = layout.component.insts
    pitch = cells["mzi_c1_m1"].dcenter[0] - cells["mzi_c0_m0"].dcenter[0]
    x, y = drawn["mzi_c1_m1"]
    assert y == pytest.approx(-60.0) and x == pytest.approx(drawn["mzi_c0_m0"][0] + pitch)
    own = chip.heater_positions_um
    assert heaters_match(layout, own).ok
    moved = own.copy()
    moved[2, 0] += 2.0  # one heater 2 um off
    found = heaters_match(layout, moved)
    assert not found.ok and found.missing == (2,) and len(found.extra) == 1
    assert found.max_error_um == pytest.approx(2.0)
    # a model of the MZI heaters only (what the layout drew before): the count differs
    found = heaters_match(layout, own[: chip.mesh.n_mzis])
    assert (found.drawn, found.expected) == (16, 6) and not found.ok
    assert any("drawn heaters the model lacks: 10" in line for line in found.lines())


def test_the_default_layout_draws_every_heater_of_the_default_chip_where_the_chip_has_it() -> None:
    # issue 21's regression: the default layout drew the 28 MZI heaters of an 8-port Clements
    # chip whose model has 64 (28 MZIs, 28 input phase shifters, 8 outputs) on another grid
    chip = Chip(ChipSpec(n_ports=8))
    layout = feedforward_layout(chip.mesh)
    check = check_layout(layout, chip.heater_positions_um)
    assert check.heaters is not None
    assert (check.heaters.drawn, check.heaters.expected) == (64, 64)
    assert check.heaters.ok and check.heaters.max_error_um < 1e-6, check.lines()
    assert check.ok, "\n".join(check.lines())  # wired to pads with no short, open or stray metal
    assert chip.geometry == feedforward_geometry(chip.mesh)
    # a chip on a plain grid (pitches given) is a different chip: the check says so
    grid = Chip(ChipSpec(n_ports=8, pitch_x_um=300.0, pitch_y_um=60.0))
    assert not check_layout(layout, grid.heater_positions_um).ok


@pytest.mark.parametrize("cls", [ClementsMesh, ReckMesh])
@pytest.mark.parametrize("n", [3, 8])
def test_a_layout_and_the_chip_model_share_one_geometry(cls, n) -> None:
    mesh = cls(n)
    for settings in (NO_PADS, LayoutSettings(mzi=MZICellSettings(heater_length_um=150.0))):
        layout = feedforward_layout(mesh, settings)
        geometry = feedforward_geometry(mesh, settings)
        chip = Chip(ChipSpec(n_ports=n, mesh=mesh.kind, geometry=geometry))
        check = check_layout(layout, chip.heater_positions_um)
        assert check.heaters is not None and check.heaters.drawn == 2 * mesh.n_mzis + n
        assert check.ok and check.heaters.max_error_um < 1e-6, check.lines()
    # the phase shifters are waveguide to the graph
    settings_ = mesh.random_settings(np.random.default_rng(n))
    assert np.allclose(
        layout_transfer(extract_graph(layout.component), mesh, settings_),
        mesh.transfer(settings_),
        atol=1e-12,
    )
    # the longer heaters widen the gap, so the default chip model is not this layout's
    assert not heaters_match(
        layout, Chip(ChipSpec(n_ports=n, mesh=mesh.kind)).heater_positions_um
    ).ok
