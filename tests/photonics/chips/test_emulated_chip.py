"""What the two emulated chips share (photonics.chips.emulated_chip): the fabrication spec's checks,
the draw of a chip from its seed, and the heaters' phases, limits and calibration."""

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from photonics import SettingsError
from photonics.chips.calibration import same_calibration
from photonics.chips.chip import Chip, ChipSpec
from photonics.chips.mesh_chip import MeshChip, MeshChipSpec
from photonics.recirculating.lattices import hexagonal_mesh
from tests.strategies import seeds

MESH = hexagonal_mesh(1, 2)
ENDS = (0, 3, 5, 9)


def make(kind: str, seed: int) -> Chip | MeshChip:
    if kind == "chip":
        return Chip(ChipSpec(n_ports=4, seed=seed, output_rings=True))
    return MeshChip(MESH, ENDS, MeshChipSpec(seed=seed))


@pytest.mark.parametrize("spec", [ChipSpec, MeshChipSpec])
@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"seed": True}, "seed must be an integer >= 0, got True"),
        ({"seed": -1}, "seed must be an integer >= 0, got -1"),
        ({"seed": 1.5}, "seed must be an integer >= 0, got 1.5"),
        ({"seed": "1"}, "seed must be an integer >= 0, got '1'"),
        ({"loss_db": math.nan}, "loss_db must be finite, got nan"),
        ({"p_pi_mW": math.inf}, "p_pi_mW must be finite, got inf"),
        ({"max_current_mA": -math.inf}, "max_current_mA must be finite, got -inf"),
        (
            {"power_budget_mW": math.nan},
            "power_budget_mW must be a number > 0, inf or None, got nan",
        ),
        ({"noise_floor_mW": True}, "noise_floor_mW must be a number, got True"),
        ({"splitter_sigma": "0.01"}, "splitter_sigma must be a number, got '0.01'"),
        ({"loss_sigma_db": -0.1}, "loss_sigma_db must be >= 0, got -0.1"),
        ({"p_pi_spread": -1}, "p_pi_spread must be >= 0, got -1"),
        ({"p_pi_mW": 0.0}, "p_pi_mW must be > 0, got 0.0"),
        ({"power_budget_mW": -5.0}, "power_budget_mW must be a number > 0, inf or None, got -5.0"),
        ({"crosstalk": 0.1}, "crosstalk must be a CrosstalkModel or None, got float"),
    ],
)
def test_both_specs_refuse_bad_fabrication_settings_naming_the_value(spec, kwargs, words) -> None:
    with pytest.raises(SettingsError, match="^" + re.escape(words)):
        spec(**kwargs)


@pytest.mark.parametrize(
    ("spec", "kwargs", "words"),
    [
        (ChipSpec, {"pitch_x_um": math.nan}, "pitch_x_um must be finite, got nan"),
        (ChipSpec, {"pitch_y_um": 0}, "pitch_y_um must be > 0, got 0"),
        (ChipSpec, {"ring_fab_sigma_nm": -0.3}, "ring_fab_sigma_nm must be >= 0, got -0.3"),
        (ChipSpec, {"mesh": "hex"}, "mesh must be one of"),
        (MeshChipSpec, {"waveguide_loss_db_per_cm": math.inf}, "waveguide_loss_db_per_cm must be"),
    ],
)
def test_each_spec_checks_its_own_settings(spec, kwargs, words) -> None:
    with pytest.raises(SettingsError, match="^" + re.escape(words)):
        spec(**kwargs)


def test_numpy_numbers_and_an_unlimited_power_budget_are_accepted() -> None:
    for spec in (ChipSpec, MeshChipSpec):
        assert spec(seed=np.int64(3), loss_db=np.float64(0.4), max_current_mA=np.int32(8)).seed == 3
        assert spec(power_budget_mW=math.inf).power_budget_mW == math.inf


@settings(max_examples=10, deadline=None)
@given(seeds, st.sampled_from(["chip", "mesh"]))
def test_same_seed_same_chip_of_either_kind(seed, kind) -> None:
    a, b, c = make(kind, seed), make(kind, seed), make(kind, seed + 1)
    for field in ("splitter_error_in", "splitter_error_out", "loss_bar_db", "loss_cross_db"):
        assert np.array_equal(getattr(a.imperfections, field), getattr(b.imperfections, field))
    assert same_calibration(a.factory_calibration(), b.factory_calibration())
    assert not same_calibration(a.factory_calibration(), c.factory_calibration())
    rng = np.random.default_rng(seed)
    current = rng.uniform(0, 4, (3, a.n_heaters))
    field = rng.normal(size=a.n_ports) + 1j * rng.normal(size=a.n_ports)
    assert np.array_equal(a.detect(current, field), b.detect(current, field))


@settings(max_examples=10, deadline=None)
@given(seeds, st.sampled_from(["chip", "mesh"]))
def test_fabrication_is_drawn_from_the_seed_in_one_order(seed, kind) -> None:
    # splitter errors (2, cells), loss (cells), P_pi (heaters), bias (heaters), then the output
    # rings' offsets: chips made before the emulated-chip core was shared are made again
    chip = make(kind, seed)
    spec = chip.spec
    cells = chip.imperfections.loss_bar_db.size
    phase_heaters = chip.n_heaters - (chip.n_ports if kind == "chip" else 0)
    rng = np.random.default_rng(seed)
    split = rng.normal(0.0, spec.splitter_sigma, (2, cells)).clip(-0.5, 0.5)
    loss = np.maximum(spec.loss_db + rng.normal(0.0, spec.loss_sigma_db, cells), 0.0)
    p_pi = spec.p_pi_mW * np.maximum(1 + rng.normal(0.0, spec.p_pi_spread, phase_heaters), 0.2)
    bias = rng.uniform(0, 2 * np.pi, phase_heaters)
    assert np.array_equal(chip.imperfections.splitter_error_in, split[0])
    assert np.array_equal(chip.imperfections.splitter_error_out, split[1])
    assert np.array_equal(chip.imperfections.loss_cross_db, loss)
    assert np.array_equal(chip.heaters.p_pi_mW[:phase_heaters], p_pi)
    assert np.array_equal(chip.heaters.bias_rad[:phase_heaters], bias)
    if kind == "chip":
        offset_nm = rng.normal(0.0, spec.ring_fab_sigma_nm, chip.n_ports)
        fsr = spec.ring.reference_fsr_nm
        assert np.array_equal(chip.heaters.bias_rad[phase_heaters:], 2 * np.pi * offset_nm / fsr)
    assert chip.heaters.power_budget_mW == 2 * spec.p_pi_mW * chip.n_heaters


@pytest.mark.parametrize("kind", ["chip", "mesh"])
def test_conditions_are_checked_alike(kind) -> None:
    chip = make(kind, 0)
    zero, light = np.zeros(chip.n_heaters), np.ones(chip.n_ports)
    with pytest.raises(SettingsError, match=r"wavelength_nm must be in 1000\.\.2000 nm, got 500"):
        chip.detect(zero, light, wavelength_nm=500)
    with pytest.raises(SettingsError, match=r"wavelength_nm must be in 1000\.\.2000 nm, got nan"):
        chip.detect(zero, light, wavelength_nm=math.nan)
    with pytest.raises(SettingsError, match="delta_T_K must be finite"):
        chip.detect(zero, light, delta_T_K=math.inf)
    with pytest.raises(SettingsError, match="delta_T_K must be one number of kelvin"):
        chip.detect(zero, light, delta_T_K=np.zeros(2))
    with pytest.raises(SettingsError, match="input_field must be finite"):
        chip.detect(zero, np.full(chip.n_ports, np.nan))
    noisy = chip.detect(np.stack([zero] * 2000), light, rng=np.random.default_rng(1))
    assert np.std(noisy - chip.detect(zero, light)) == pytest.approx(
        chip.spec.noise_floor_mW, rel=0.1
    )
