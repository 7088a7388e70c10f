"""Short reprs that say what an object is: topology, ports, size, calibrated state."""

import numpy as np

from photonics import ClementsMesh, ReckMesh
from photonics.calibration.selfcal import SelfCalibration
from photonics.chips.build import build_chip
from photonics.chips.calibration import Calibration
from photonics.chips.chip import Chip, ChipSpec
from photonics.recirculating.lattices import hexagonal_mesh


def test_meshes_and_chips_say_their_topology_and_size_in_one_short_line() -> None:
    assert repr(ClementsMesh(8)) == "ClementsMesh(n=8)"
    assert repr(ReckMesh(5)) == "ReckMesh(n=5)"
    mesh = hexagonal_mesh(3, 3)
    assert repr(mesh) == (
        f"<WaveguideMesh hexagonal: {mesh.n_ports} edge ports, {mesh.n_cells} cells, "
        f"{mesh.n_links} links, 811 um edges>"
    )
    chip = Chip(ChipSpec(n_ports=8, mesh="clements", seed=3, output_rings=True))
    assert repr(chip) == "<Chip clements: 8 ports, 28 MZIs, 72 heaters, output rings, seed 3>"
    cells = build_chip("hexagonal", 8, 2)
    assert repr(cells) == f"<MeshChip hexagonal: 8 endpoints, {cells.mesh.n_cells} cells, seed 2>"
    for thing in (mesh, chip, cells):
        assert "\n" not in repr(thing) and len(repr(thing)) < 100


def test_a_calibration_names_its_chip_and_counts_without_printing_its_arrays() -> None:
    ones = np.ones(64)
    fitted = np.arange(64) < 28
    cal = Calibration(
        chip_id="EMU-8",
        p_pi_mW=ones,
        bias_rad=0 * ones,
        a_ohm_per_mA2=ones,
        c_ohm=ones,
        created="2024-01-02T03:04:05+00:00",
        phase_fitted=fitted,
    )
    text = "<Calibration 'EMU-8': 64 heaters (28 phase-fitted), 0 rings, no crosstalk, created "
    assert repr(cal) == text + "2024-01-02T03:04:05+00:00>"
    found = SelfCalibration(cal, ("direct-top",) * 28, 1234)
    assert repr(found) == f"<SelfCalibration: 28 MZIs fitted from 1234 detector readings; {cal!r}>"
