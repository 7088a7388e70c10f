"""Power levels as reported: dBm of a power (None when dark), a circuit's isolation (None when
nothing else is lit)."""

import math

from hypothesis import given
from hypothesis import strategies as st

from photonics import levels

powers = st.floats(0, 1e3, allow_nan=False)


@given(powers)
def test_a_power_is_dbm_above_the_dark_level_and_none_below(p: float) -> None:
    shown = levels.dbm(p)
    if p < levels.DARK_MW:
        assert shown is None
    else:
        assert shown is not None and math.isclose(10 ** (shown / 10), p, rel_tol=1e-9)
        assert shown >= -150 - 1e-9  # never the -300 of a floored zero


def test_zero_power_is_dark_not_minus_300_dbm() -> None:
    assert levels.dbm(0.0) is None
    assert levels.shown(levels.dbm(0.0), ".1f", "dark") == "dark"
    assert levels.shown(levels.dbm(1.0), ".1f", "dark") == "0.0"


@given(powers, st.lists(powers, max_size=5))
def test_isolation_is_defined_only_where_another_input_is_lit(s: float, leaks: list) -> None:
    iso = levels.isolation_db(s, leaks)
    if not leaks:
        assert iso is None
    else:
        assert iso is not None
        # a leak below the dark level counts as the dark level: a bound, never above this
        top = 10 * math.log10(max(s, levels.DARK_MW) / levels.DARK_MW)
        assert iso <= top + 1e-9
        if max(leaks) >= levels.DARK_MW and s >= levels.DARK_MW:
            assert math.isclose(iso, 10 * math.log10(s / max(leaks)), abs_tol=1e-9)


@given(st.lists(st.one_of(st.none(), st.floats(-50, 300)), max_size=6))
def test_the_worst_isolation_is_the_lowest_defined_one(isolations: list) -> None:
    defined = [i for i in isolations if i is not None]
    assert levels.worst(isolations) == (min(defined) if defined else None)
