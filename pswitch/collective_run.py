"""One collective of ``pswitch collective`` (:mod:`pswitch.collective`): compiled into the
switch's matchings, run on the switch ``--switch`` names, timed against an ideal electrical
switch, and printed; the sizes and limits the command's options take."""

from __future__ import annotations

import argparse
import contextlib
import math
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from photonics.chips import topologies
from photonics.errors import SettingsError

if TYPE_CHECKING:  # the compiler is imported when the command runs, not with its parser
    from firmware.electronics import DriverClass
    from firmware.fabric import CircuitSchedule, Collective, Link
    from firmware.fabric.collective_sweep import Reconfigure
    from firmware.sdk import Switch
    from photonics.chips.switch import Fabric

#: The algorithms by command-line name: (function name in firmware.fabric, all-reduce?).
ALGORITHMS = {
    "ring-all-reduce": ("ring_all_reduce", True),
    "halving-doubling": ("halving_doubling_all_reduce", True),
    "straggler-all-reduce": ("straggler_all_reduce", True),
    "reduce-scatter": ("ring_reduce_scatter", False),
    "all-gather": ("ring_all_gather", False),
    "all-to-all-shift": ("all_to_all_shift", False),
    "all-to-all-cover": ("all_to_all_pairs", False),
    "all-to-all-ring": ("all_to_all_ring", False),
}
#: Largest switch compiled here (as ``pswitch route``'s feed-forward switches).
MAX_PORTS = 256
#: Largest emulated feed-forward switch (as ``pswitch schedule``'s).
MAX_EMULATED_PORTS = 64
#: Largest buffer per rank, bytes (1 PiB).
MAX_BYTES = 2.0**50
#: Longest ``--straggler-ms`` (an hour).
MAX_STRAGGLER_MS = 3.6e6
#: Steps listed in the text output (all of them in ``--json``).
LIST_STEPS = 40

_UNITS = {
    "": 1,
    "b": 1,
    "kb": 1e3,
    "mb": 1e6,
    "gb": 1e9,
    "tb": 1e12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}


def size(text: str) -> float:
    """An argument type: a size in bytes, a number with an optional unit (KB, MB, GB, TB in
    powers of 1000; KiB, MiB, GiB, TiB in powers of 1024), e.g. 4096, 1e9, 64MiB, 1.5GB."""
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*([A-Za-z]*)\s*", text)
    value = math.nan
    if m and m.group(2).lower() in _UNITS:
        with contextlib.suppress(ValueError):
            value = float(m.group(1)) * _UNITS[m.group(2).lower()]
    if not 0 < value <= MAX_BYTES:  # NaN fails too
        raise argparse.ArgumentTypeError(
            f"needs a size > 0 and <= 1 PiB, a number with an optional unit (B, KB, MB, GB, TB, "
            f"KiB, MiB, GiB, TiB), e.g. 64MiB; got {text!r}"
        )
    return value


def alpha(text: str) -> float:
    """An argument type: a step latency in us, >= 0 and <= 1 s."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 <= value <= 1e6:
        raise argparse.ArgumentTypeError(f"needs a number of us >= 0 and <= 1e+06, got {text!r}")
    return value


def check_switch(args: argparse.Namespace) -> int:
    """The port count of the switch ``--switch`` names for ``args.ranks`` ranks (``--ports``,
    else the ranks); raises :class:`SettingsError` where it cannot be."""
    ports = args.ranks if args.ports is None else args.ports
    if ports < args.ranks:
        raise SettingsError(f"--ports {ports} is fewer than --ranks {args.ranks}; one rank a port")
    if args.switch in ("emulator", "model"):
        topology = topologies.topology(args.mesh)
        topology.check_ports(ports)
        emulated = args.switch == "emulator" and topology.kind == "feedforward"
        if emulated and ports > MAX_EMULATED_PORTS:
            raise SettingsError(
                f"the emulated {args.mesh} switch has at most {MAX_EMULATED_PORTS} ports, "
                f"got {ports}: give --switch model for more"
            )
    return ports


def build(name: str, ranks: int, n_bytes: float) -> Collective:
    """The collective ``name`` (a key of :data:`ALGORITHMS`) of ``ranks`` ranks on ports 0..."""
    from firmware import fabric

    return getattr(fabric, ALGORITHMS[name][0])(range(ranks), n_bytes)


@contextlib.contextmanager
def switch_of(
    args: argparse.Namespace, ports: int, link: Link
) -> Iterator[tuple[Fabric, Reconfigure, str]]:
    """The switch ``--switch`` names, open while the block runs: its fabric (to compile for),
    how a compiled schedule's reconfiguration times are had (run on the switch from its
    cleared state, ``ROUT:CLE``, so collectives compared start alike; or the heater write
    model, from the idle chip), and where they come from, in words."""
    from firmware.fabric import HeaterWriteModel
    from firmware.sdk import Switch

    topology = topologies.topology(args.mesh)
    electronics = driver_of(args)
    if args.switch == "model":
        model = HeaterWriteModel(electronics)
        source = f"the heater write model ({electronics.name} driver)"
        yield topology.fabric(ports), lambda _: model, source
        return
    sw: Switch
    if args.switch == "emulator":
        sw = Switch.emulated(ports=ports, mesh=args.mesh, seed=args.seed, driver=electronics)
        fabric = sw.transport.controller.fabric
    else:
        from hil.visa import Session

        sw = Switch(Session(args.switch, timeout_s=60.0))
        if args.ports is not None and args.ports != sw.ports:
            sw.close()
            raise SettingsError(f"--ports {args.ports}: the switch has {sw.ports} ports")
        fabric = topology.fabric(sw.ports)
    with sw:
        idn = sw.idn()
        model = idn.split(",")[1] if "," in idn else idn
        name = sw.driver_class().name

        def run(s: CircuitSchedule) -> tuple[float, ...]:
            sw.disconnect()  # every collective starts from the cleared switch
            return sw.run_collective(s, link)

        yield fabric, run, f"switch {model} ({name} driver), its own times (SCH:LOAD, STAR, STEP)"


def driver_of(args: argparse.Namespace) -> DriverClass:
    """The driver class ``--driver`` names (the bench's when left out)."""
    from firmware.electronics import driver_class

    return driver_class(getattr(args, "driver", None) or "bench")


def link_of(args: argparse.Namespace) -> Link:
    from firmware.fabric import Link

    return Link(bandwidth_Bps=args.bandwidth_gbps * 1e9 / 8, alpha_s=args.alpha_us * 1e-6)


def timings(
    c: Collective, fabric: Fabric, link: Link, delay_s: float, reconfigure: Reconfigure
) -> tuple[Any, Any, Any]:
    """``c`` compiled for ``fabric``: (the schedule, its timing on the switch with the
    reconfiguration times ``reconfigure`` gives, the electrical switch's), with a straggler
    late by ``delay_s``."""
    from firmware.fabric import (
        circuit_timing,
        compile_collective,
        electrical_timing,
        with_straggler,
    )

    schedule = compile_collective(c, fabric.n_ports, fabric)
    optical = with_straggler(circuit_timing(schedule, link, reconfigure(schedule)), delay_s)
    electrical = with_straggler(electrical_timing(c, link), delay_s)
    return schedule, optical, electrical


def describe(
    c: Collective, schedule: Any, optical: Any, electrical: Any, fabric: Fabric, source: str
) -> dict[str, Any]:
    """One collective's steps and totals on the switch and the electrical one, as data."""
    steps = []
    for st, t in zip(schedule.steps, optical.steps, strict=True):
        steps.append(
            {
                "round": st.round_index,
                "label": st.label,
                "pairs": [list(p) for p in st.matching.pairs],
                "transfers": [[tr.src, tr.dst] for tr in st.transfers],
                "bytes_per_circuit": c.round_bytes(c.rounds[st.round_index], st.transfers),
                "reconfigure_s": t.reconfigure_s,
                "compute_s": t.compute_s,
                "start_s": t.start_s,
                "end_s": t.end_s,
            }
        )
    return {
        "name": c.name,
        "kind": c.kind,
        "ranks": len(c.ports),
        "ports": fabric.n_ports,
        "reconfiguration_source": source,
        "steps": steps,
        "rounds": len(c.rounds),
        "matchings": schedule.n_matchings,
        "reconfigurations": sum(1 for t in optical.steps if t.reconfigure_s > 0),
        "optical_total_s": optical.total_s,
        "electrical_total_s": electrical.total_s,
        "reconfigure_s": optical.reconfigure_s,
        "transfer_s": optical.transfer_s,
        "duty_cycle": optical.duty_cycle,
    }


def collective(args: argparse.Namespace, ports: int) -> dict[str, Any]:
    """Compile the collective, run it on a switch of ``ports`` ports (checked by
    :func:`pswitch.collective.check`) and time it; the steps, totals and the all-reduce
    comparison as data (s, bytes)."""
    link = link_of(args)
    delay_s = (args.straggler_ms or 0.0) * 1e-3
    c = build(args.algorithm, args.ranks, args.n_bytes)
    with switch_of(args, ports, link) as (fabric, reconfigure, source):
        schedule, optical, electrical = timings(c, fabric, link, delay_s, reconfigure)
        compare = []
        for name, (_, all_reduce) in ALGORITHMS.items():
            if not all_reduce or (name == "straggler-all-reduce" and args.ranks < 3):
                continue
            o, e = optical, electrical
            if name != args.algorithm:
                other = build(name, args.ranks, args.n_bytes)
                _, o, e = timings(other, fabric, link, delay_s, reconfigure)
            compare.append({"algorithm": name, "optical_s": o.total_s, "electrical_s": e.total_s})
    best = min(compare, key=lambda row: row["optical_s"])["algorithm"]
    return {
        "algorithm": args.algorithm,
        **describe(c, schedule, optical, electrical, fabric, source),
        "mesh": args.mesh,
        "bytes": args.n_bytes,
        "link": {"bandwidth_Bps": link.bandwidth_Bps, "alpha_s": link.alpha_s},
        "straggler_s": delay_s,
        "all_reduce_compare": compare,
        "best_optical_all_reduce": best,
    }


def human(n_bytes: float) -> str:
    """A size as people write it: ``1 GiB``, ``64 MiB``, ``1.5e+09 B``."""
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n_bytes >= scale and (n_bytes / scale).is_integer():
            return f"{n_bytes / scale:g} {unit}"
    return f"{n_bytes:.4g} B"


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f}"


def print_collective(r: dict[str, Any]) -> None:
    gbps = r["link"]["bandwidth_Bps"] * 8 / 1e9
    size = f", {human(r['bytes'])} each" if "bytes" in r else ""
    print(
        f"{r['name']} of {r['ranks']} ranks{size}, on a {r['ports']}-port "
        f"{r['mesh']} switch ({gbps:g} Gb/s a port, alpha {r['link']['alpha_s'] * 1e6:g} us): "
        f"{r['rounds']} rounds, {len(r['steps'])} steps, {r['matchings']} matchings"
    )
    print(f"reconfiguration times: {r['reconfiguration_source']}")
    if r.get("straggler_s"):
        print(f"rank {r['ranks'] - 1} is late by {ms(r['straggler_s'])} ms")
    show = r["ports"] <= 16
    print(
        "  step  round  label            bytes/circuit  reconfigure ms  start ms    end ms"
        + ("  matching" if show else "  circuits")
    )
    for i, s in enumerate(r["steps"][:LIST_STEPS]):
        pairs = " ".join(f"{a}-{b}" for a, b in s["pairs"]) if show else len(s["pairs"])
        print(
            f"  {i:>4} {s['round']:>6}  {s['label']:<16} {s['bytes_per_circuit']:>13.0f} "
            f"{ms(s['reconfigure_s']):>15} {ms(s['start_s']):>9} {ms(s['end_s']):>9}  {pairs}"
        )
    if len(r["steps"]) > LIST_STEPS:
        print(f"  ... {len(r['steps']) - LIST_STEPS} more steps (all of them in --json)")
    ratio = r["optical_total_s"] / r["electrical_total_s"]
    print(
        f"total: optical {ms(r['optical_total_s'])} ms ({r['reconfigurations']} "
        f"reconfigurations, {ms(r['reconfigure_s'])} ms), ideal electrical "
        f"{ms(r['electrical_total_s'])} ms ({ratio:.2f}x); duty cycle "
        f"{100 * r['duty_cycle']:.1f} % (transfer time / total)"
    )
    if "all_reduce_compare" in r:
        _print_compare(r)


def _print_compare(r: dict[str, Any]) -> None:
    print("all-reduce at this size      optical ms  electrical ms")
    for row in r["all_reduce_compare"]:
        mark = (
            "  <- fastest on the optical switch"
            if row["algorithm"] == r["best_optical_all_reduce"]
            else ""
        )
        print(
            f"  {row['algorithm']:<24} {ms(row['optical_s']):>12} "
            f"{ms(row['electrical_s']):>14}{mark}"
        )
