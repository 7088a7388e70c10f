"""Shared hypothesis strategies and example objects for the tests."""

import numpy as np
from hypothesis import strategies as st
from scipy.stats import unitary_group

from photonics import Matching, Permutation
from photonics.chips.calibration import Calibration, RingTuning

seeds = st.integers(0, 2**32 - 1)

_json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
#: Any value JSON holds exactly (floats finite).
json_values = st.recursive(
    _json_scalars,
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=30,
)


def same_json(a, b) -> bool:
    """Equal with types and float bits: ``1 != 1.0``, ``True != 1``, ``-0.0 != 0.0``."""
    # repr of a float round-trips exactly and shows the sign of zero; json keeps key order
    return a == b and repr(a) == repr(b)


def haar_unitaries(n: int) -> st.SearchStrategy[np.ndarray]:
    return seeds.map(lambda s: unitary_group.rvs(n, random_state=s))


@st.composite
def permutations(draw: st.DrawFn, n: int, partial: bool = True) -> Permutation:
    targets = draw(st.permutations(range(n)))
    if partial:
        dark = draw(st.sets(st.integers(0, n - 1), max_size=n))
        return Permutation([None if i in dark else j for i, j in enumerate(targets)])
    return Permutation(list(targets))


@st.composite
def matchings(draw: st.DrawFn, n: int) -> Matching:
    order = draw(st.permutations(range(n)))
    k = draw(st.integers(0, n // 2))
    return Matching([(order[2 * i], order[2 * i + 1]) for i in range(k)], n)


#: The ``created`` time of the example calibrations.
CREATED = "2026-01-02T03:04:05.123456+00:00"


def small_calibration(**overrides) -> Calibration:
    """A 3-heater, 2-ring calibration with crosstalk; ``overrides`` replace its arguments."""
    kwargs = dict(
        chip_id="hex6-0042",
        p_pi_mW=[21.4, 22.8, 1.34],
        bias_rad=[0.0, 3.1, 6.2],
        a_ohm_per_mA2=[0.5, 0.45, 0.55],
        c_ohm=[500.0, 512.5, 488.25],
        created=CREATED,
        crosstalk=[[0.0, 0.11, 0.002], [0.1, 0.0, 0.025], [0.0, 0.03, 0.0]],
        rings=(RingTuning(1550.12, 0.0184, 1e-4), RingTuning(1551.0, 0.02)),
    )
    kwargs.update(overrides)
    return Calibration(**kwargs)


# ---- command lines for the switch, well formed or not -------------------------------------------
#: Argument tokens that probe the parser's corners: MIN/MAX/DEF in any case, unit suffixes,
#: whole floats for integers, huge, tiny, negative and non-finite numbers, quotes, separators.
SCPI_TOKENS = (
    *("MIN", "MAX", "DEF", "min", "Def", "ON", "OFF", "BAR", "CROSS"),
    *("-1", "2.0", "20e-1", "0.99999999999999999", "+3", "-0", ".5", ".", "1e", "e5"),
    *("1e400", "-1e400", "1e-400", "1e32001", "9" * 300, "inf", "nan", "NaN", "1" * 5000),
    *("1.5mA", "2 ms", "3kV", "1ks", "4 nm", "5MA", "1mW", "2 C", "1 dB", "0.5 A"),
    *('"x;y?"', "'a,b'", '"', "''", '"?"', " ", "@", "#", "*", "?", ":", ";"),
)
_ascii = st.characters(min_codepoint=32, max_codepoint=126)
#: Mostly small numbers (ports, channels, mA), so that many commands run; then the corners.
scpi_tokens = st.one_of(
    st.integers(0, 8).map(str),
    st.floats(0, 10).map(lambda x: f"{x:.3g}"),
    st.sampled_from(SCPI_TOKENS),
    st.integers().map(str) | st.floats().map(repr) | st.text(_ascii, max_size=6),
)


@st.composite
def scpi_commands(draw: st.DrawFn, headers: list[str]) -> str:
    """One command: mostly a header of ``headers`` (query forms end in ``?``), else one with
    its ``?`` flipped, or any short text; then arguments, mostly comma-separated."""
    head = draw(st.sampled_from(headers))
    odd = draw(st.integers(0, 9))
    if odd == 0:
        head = draw(st.text(_ascii, max_size=8))
    elif odd == 1:
        head = head[:-1] if head.endswith("?") else head + "?"
    args = draw(st.lists(scpi_tokens, max_size=6))
    sep = draw(st.sampled_from([",", ",", ",", ", ", ",,", ";"]))
    return head + (draw(st.sampled_from([" ", " ", "\t", ""])) + sep.join(args) if args else "")


def scpi_headers(specs) -> list[str]:
    """Every header of the commands ``specs`` (:class:`firmware.commands.Spec`), long and short,
    with ``?`` for the query forms: what :func:`scpi_lines` takes."""
    return [
        name + suffix
        for spec in specs
        for name in (spec.header, spec.short)
        for suffix, form in (("", spec.settable), ("?", spec.queryable))
        if form
    ]


def scpi_lines(headers: list[str]) -> st.SearchStrategy[str | bytes]:
    """Lines for a device whose commands are ``headers`` (query forms ending in ``?``): mostly
    ``;``-joined commands, then any text and any bytes (ASCII or not)."""
    joined = st.lists(scpi_commands(headers), min_size=1, max_size=5).map(";".join)
    return st.one_of(*[joined] * 6, st.text(max_size=40), st.binary(max_size=40))
