"""Where a recirculating mesh's first-order leaks go (photonics.calibration.hex_extinction), against
the mesh's scattering solve, and the conservative per-state extinction."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from photonics.calibration.hex_extinction import (
    DEFAULT_SIGMAS,
    NO_READING_DB,
    UNKNOWN,
    conservative,
    default_extinction_db,
    exit_of,
    leak_exits,
    lit_hops,
)
from photonics.devices.mzi import MZIImperfections
from photonics.recirculating.mesh_scattering import scattering
from photonics.recirculating.switch_geometry import hexagonal_switch
from photonics.recirculating.waveguide_mesh import theta_of_states
from tests.strategies import seeds

MESH, _ = hexagonal_switch(8)


@given(seeds, st.data())
def test_a_cells_leak_leaves_where_the_scattering_solve_sends_it(seed, data) -> None:
    rng = np.random.default_rng(seed)
    states = rng.integers(0, 2, MESH.n_cells)
    partner = MESH.partner()
    port = data.draw(st.integers(0, MESH.n_ports - 1), label="edge port lit")
    hops = lit_hops(partner, states, int(MESH.edge_ports[port]))
    assert hops is not None  # from an edge port light always leaves again
    cell = hops[data.draw(st.integers(0, len(hops) - 1), label="hop")][0] // 4
    # only that cell's couplers are off (its bar and cross leaks both nonzero)
    e_in, e_out = np.zeros(MESH.n_cells), np.zeros(MESH.n_cells)
    e_in[cell], e_out[cell] = 0.03, 0.01
    S = scattering(
        MESH, theta_of_states(states), imperfections=MZIImperfections(e_in, e_out, 0.1, 0.1)
    )
    power = np.abs(S[:, port]) ** 2
    to_port = MESH.port_of_end()
    main = to_port[exit_of(partner, hops)]
    only = leak_exits(partner, states, [h for h in hops if h[0] // 4 == cell], skip=-1)
    lit = set(np.flatnonzero(power > 1e-8).tolist())
    # the path may cross the cell twice and leak into its own exit
    assert lit - {int(main)} == {int(to_port[x]) for x in only} - {int(main)}
    assert power[main] == power.max()


@given(seeds, st.data())
def test_cells_of_unknown_state_leak_both_ways(seed, data) -> None:
    rng = np.random.default_rng(seed)
    states = rng.integers(0, 2, MESH.n_cells)
    partner = MESH.partner()
    port = data.draw(st.integers(0, MESH.n_ports - 1), label="edge port lit")
    hops = lit_hops(partner, states, int(MESH.edge_ports[port]))
    assert hops is not None
    on_path = {e // 4 for e, _ in hops}
    unknown = states.copy()
    off_path = [c for c in range(MESH.n_cells) if c not in on_path]
    hidden = rng.choice(off_path, size=min(len(off_path), 8), replace=False)
    unknown[hidden] = UNKNOWN
    # whatever state the unknown cells are in, their leaks reach no other exit
    assert leak_exits(partner, states, hops, -1) <= leak_exits(partner, unknown, hops, -1)
    assert lit_hops(partner, unknown, int(MESH.edge_ports[port])) == hops


@given(
    st.lists(st.floats(20, 60) | st.just(np.nan), min_size=8, max_size=8),
    st.lists(st.booleans(), min_size=4, max_size=4),
)
def test_conservative_keeps_clean_readings_and_fills_the_rest_below_them(values, fitted) -> None:
    measured = np.array(values).reshape(2, 4)
    mask = np.array(fitted)
    out = conservative(measured, mask)
    clean = measured[:, mask][np.isfinite(measured[:, mask])]
    floor = default_extinction_db(clean)
    assert np.isnan(out[:, ~mask]).all()
    kept = np.isfinite(measured) & mask[None]
    np.testing.assert_array_equal(out[kept], measured[kept])
    assert np.all(out[~np.isfinite(measured) & mask[None]] == floor)
    if clean.size:  # DEFAULT_SIGMAS standard deviations out: below the median reading
        assert floor < np.median(clean)
    else:
        assert floor == NO_READING_DB


def test_the_default_is_the_leak_amplitude_3_5_sigmas_out() -> None:
    # amplitudes whose median is 0.6745 sigma with sigma = 0.01: the default is 3.5 sigma
    readings = -20 * np.log10(np.full(9, 0.6745 * 0.01))
    assert DEFAULT_SIGMAS == 3.5
    assert abs(default_extinction_db(readings) - -20 * np.log10(0.035)) < 1e-9
