"""The figures of ``docs/tutorial.md``: what its Python blocks print (run in order in one
namespace, as ``tests/test_docs.py`` runs them), the numbers its prose quotes from those runs
and from the model's defaults, and the install's warm-up and the bench's timings (from
``benchmarks/bench_cli.py`` and ``benchmarks/bench_hil.py``, the runs the README quotes)."""

from __future__ import annotations

import contextlib
import functools
import io
import re
from collections.abc import Callable
from typing import Any

from pswitch.figures._make import ALL, ROOT, Figure, benchmark, stamp, timed

PAGE = "docs/tutorial.md"
#: A Python block of a page, as ``tests/test_docs.py`` finds it.
FENCE = re.compile(r"^```python\n(.*?)^```", flags=re.DOTALL | re.MULTILINE)
#: What a block prints, by the first words of its code: the blocks of the page that print.
LIGHT, CALIBRATE, SCHEDULE = "dbm = sw.powers", "import tempfile", "from firmware.fabric import all"
FAILOVER, RINGS = "from firmware.fabric import Job", "ringed = "
BENCH_SWITCH, BENCH = "from hil.instruments", "from hil.bench import"
#: What the bench measures varies with the machine's load (it runs in real time): its leaks
#: (every reading but a routed port's -6.7 dBm) and the isolations are not compared.
BENCH_READINGS = (
    r"(?:\s*-(?!6\.7(?!\d))\d+\.\d*\s*)+",
    r"isolation (?:>= )?([\d.]+) dB",
    r"routes within ([\d.]+) dB",
)


@functools.cache
def run() -> tuple[tuple[str, str, dict[str, Any]], ...]:
    """Each Python block of the page run in order in one namespace: (its code, what it
    printed, the namespace after it)."""
    namespace: dict[str, Any] = {"__name__": "docs_tutorial"}
    out = []
    for found in FENCE.finditer((ROOT / PAGE).read_text()):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(found.group(1), PAGE, "exec"), namespace)
        out.append((found.group(1), printed.getvalue(), dict(namespace)))
    return tuple(out)


def block(start: str) -> tuple[str, dict[str, Any]]:
    """What the block whose code starts with ``start`` printed, and the namespace after it."""
    return next((printed, names) for code, printed, names in run() if code.startswith(start))


def prints(start: str, timed: bool = False) -> Callable[[], str]:
    """A block's maker: what the block whose code starts with ``start`` prints, in a text
    block (with a stamp when it holds timings)."""

    def make() -> str:
        text = f"```text\n{block(start)[0]}```\n"
        return text + (f"\n{stamp()}\n" if timed else "")

    return make


def printed(start: str, pattern: str, fmt: str = "{}") -> Callable[[], str]:
    """A value's maker: the groups of ``pattern`` in what a block printed, formatted."""

    def make() -> str:
        found = re.search(pattern, block(start)[0], re.MULTILINE)
        if found is None:
            raise RuntimeError(f"{pattern!r} is not in what the tutorial's block prints")
        return fmt.format(*found.groups())

    return make


def steps() -> tuple[float, float, int, int]:
    """The schedule's reconfigurations: shortest and longest (ms), and the heater channels the
    shortest and the longest wrote (0.5 ms each, the settling after the last well below)."""
    times = block(SCHEDULE)[1]["run"].reconfiguration_s
    channels = [int(t // 0.5e-3) for t in times]
    return 1e3 * min(times), 1e3 * max(times), min(channels), max(channels)


def settling() -> str:
    """A lone heater's settling time and the time constant it follows from."""
    from photonics.devices.thermal import DEFAULT_TAU_S, settling_time_s

    settle, tau = 1e6 * settling_time_s(DEFAULT_TAU_S), 1e6 * DEFAULT_TAU_S
    return f"{settle:.1f} us for a lone heater ({tau:.1f} us time constant, to 1e-3)"


def ring() -> str:
    """The default ring's linewidth (FWHM), pm."""
    from photonics.devices.ring import MicroRing

    return f"{1e3 * MicroRing().fwhm_nm():.0f} pm"


def tolerance() -> str:
    """The ring lock's tolerance: its fraction of the linewidth, and pm."""
    from firmware.controller.rings import RING_LOCK_TOLERANCE
    from photonics.devices.ring import MicroRing

    return f"{1e3 * RING_LOCK_TOLERANCE * MicroRing().fwhm_nm():.0f} pm"


def hil(ports: int) -> float:
    """A bench calibration's wall time over VISA, s: 8 ports in the full instrument benchmark
    (the README's run), 4 in its quick one."""
    if ports == 8:
        return benchmark("hil")["bench_calibration_s_8"]
    return benchmark("hil", "--quick")["bench_calibration_s_4"]


def _slow(make: Callable[[], str], timings: tuple[str, ...] = ()) -> Figure:
    return Figure(PAGE, make, timings, slow=True)


FIGURES: dict[str, Figure] = {
    "tutorial-warm": Figure(
        PAGE, timed(lambda: benchmark("cli", "--only", "warm_s")["warm_s"]), ALL, slow=True),
    "tutorial-settling": Figure(PAGE, settling),
    "tutorial-light": _slow(prints(LIGHT)),
    "tutorial-dark": _slow(printed(LIGHT, r"ports 4 and 6 read (\S+) and (\S+) dBm",
                                   "{} and {} dBm")),
    "tutorial-calibrate": _slow(prints(CALIBRATE)),
    "tutorial-isolation": _slow(printed(
        CALIBRATE, r"isolation >= ([\d.]+) dB.*\n.*true parameters: isolation >= ([\d.]+) dB",
        "{1} dB; the self-calibration reaches {0} dB")),
    "tutorial-schedule": _slow(prints(SCHEDULE)),
    "tutorial-steps": _slow(lambda: "{:.1f} to {:.1f} ms".format(*steps()[:2])),
    "tutorial-channels": _slow(lambda: "{} to {}".format(*steps()[2:])),
    "tutorial-failover": _slow(prints(FAILOVER)),
    "tutorial-rings": _slow(prints(RINGS)),
    "tutorial-linewidth": Figure(PAGE, ring),
    "tutorial-tolerance": Figure(PAGE, tolerance),
    "tutorial-bench-switch": _slow(prints(BENCH_SWITCH), BENCH_READINGS),
    "tutorial-bench": _slow(prints(BENCH), BENCH_READINGS),
    "tutorial-bench-4": Figure(PAGE, timed(lambda: hil(4)), ALL, slow=True),
    "tutorial-bench-8": Figure(PAGE, timed(lambda: hil(8)), ALL, slow=True),
}  # fmt: skip
