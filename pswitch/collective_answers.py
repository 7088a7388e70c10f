"""``pswitch collective sweep`` and ``pswitch collective training-step``: answers across message
sizes, rank counts and straggler delays, and a hybrid-parallel training step, on the switch
``--switch`` names (:func:`pswitch.collective_run.switch_of`)."""

from __future__ import annotations

import argparse
import math
from typing import Any

from photonics.errors import SettingsError
from pswitch import args as types
from pswitch.collective_run import (
    MAX_PORTS,
    describe,
    driver_of,
    human,
    link_of,
    ms,
    print_collective,
    size,
    switch_of,
    timings,
)

#: Message sizes of the sweep: from 1 KiB by this factor up to ``--bytes``.
SIZE_FACTOR = 32
#: Straggler delays of the sweep, as fractions of the ring all-reduce's time on the electrical
#: switch (largest rank count, ``--bytes``).
DELAY_FRACTIONS = (0.0, 0.03, 0.1, 0.3, 1.0, 3.0)
#: The training step's options and their defaults: (option, type, default, help).
TRAINING = (
    ("--dp", types.integer(1, MAX_PORTS), 1, "data-parallel replicas"),
    ("--tp", types.integer(1, MAX_PORTS), 1, "tensor-parallel shards"),
    ("--pp", types.integer(1, MAX_PORTS), 1, "pipeline stages"),
    ("--tp-bytes", size, 0.0, "bytes all-reduced in each tensor group after the forward pass"),
    ("--dp-bytes", size, 0.0, "bytes all-reduced in each data group (the gradients)"),
    ("--pp-bytes", size, 0.0, "bytes each pipeline stage sends the next"),
    ("--forward-ms", types.number(3.6e6, "ms"), 0.0, "the forward pass's computation, ms"),
    ("--backward-ms", types.number(3.6e6, "ms"), 0.0, "the backward pass's computation, ms"),
)


def add_training_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``training-step`` (refused with the other modes)."""
    group = parser.add_argument_group("training-step")
    for option, kind, _, text in TRAINING:
        group.add_argument(option, type=kind, default=None, help=f"{text} (default: none)")
    group.add_argument(
        "--all-reduce",
        choices=("ring", "halving-doubling"),
        default=None,
        help="the tensor and data groups' all-reduce (default ring)",
    )


def _dest(option: str) -> str:
    return option.lstrip("-").replace("-", "_")


def check_training(args: argparse.Namespace) -> int:
    """The training step's rank count; raises :class:`SettingsError` when options of another
    mode are given, or the job has fewer than 2 ranks or more than the switch can have."""
    for option, value in (("--ranks", args.ranks), ("--bytes", args.n_bytes)):
        if value is not None:
            raise SettingsError(
                f"training-step takes --dp, --tp, --pp and their bytes, not {option}"
            )
    ranks = math.prod(getattr(args, _dest(o)) or 1 for o in ("--dp", "--tp", "--pp"))
    if not 2 <= ranks <= MAX_PORTS:
        raise SettingsError(f"--dp x --tp x --pp must be 2..{MAX_PORTS} ranks, got {ranks}")
    return ranks


def refuse_training_options(args: argparse.Namespace) -> None:
    """Raise when a training-step option is given to another mode."""
    given = [o for o, *_ in TRAINING if getattr(args, _dest(o)) is not None]
    given += ["--all-reduce"] if args.all_reduce is not None else []
    if given:
        raise SettingsError(f"{given[0]} is for training-step, not {args.algorithm}")


def training(args: argparse.Namespace, ports: int) -> dict[str, Any]:
    """The training step on a switch of ``ports`` ports (checked by
    :func:`pswitch.collective.check`) and on the electrical one, with each phase's share."""
    from firmware.fabric import HybridJob, StepSettings, training_step

    value = {}
    for option, _, default, _ in TRAINING:
        given = getattr(args, _dest(option))
        value[_dest(option)] = default if given is None else given
    job = HybridJob(value["dp"], value["tp"], value["pp"], tuple(range(args.ranks)))
    step = StepSettings(
        value["forward_ms"] * 1e-3,
        value["backward_ms"] * 1e-3,
        value["tp_bytes"],
        value["dp_bytes"],
        value["pp_bytes"],
        args.all_reduce or "ring",
    )
    c = training_step(job, step)
    link = link_of(args)
    with switch_of(args, ports, link) as (fabric, reconfigure, source):
        schedule, optical, electrical = timings(c, fabric, link, 0.0, reconfigure)
    phases = []
    for label in dict.fromkeys(r.label for r in c.rounds):
        mine = [t for t in optical.steps if t.label == label]
        theirs = [t for t in electrical.steps if t.label == label]
        phases.append(
            {
                "phase": label,
                "matchings": len({st.matching for st in schedule.steps if st.label == label}),
                "compute_s": sum(t.compute_s for t in mine),
                "reconfigure_s": sum(t.reconfigure_s for t in mine),
                "optical_s": sum(t.end_s - t.start_s for t in mine),
                "electrical_s": sum(t.end_s - t.start_s for t in theirs),
            }
        )
    return {
        "algorithm": "training-step",
        **describe(c, schedule, optical, electrical, fabric, source),
        "mesh": args.mesh,
        "job": {"dp": job.dp, "tp": job.tp, "pp": job.pp},
        "settings": {**value, "all_reduce": step.all_reduce},
        "link": {"bandwidth_Bps": link.bandwidth_Bps, "alpha_s": link.alpha_s},
        "phases": phases,
    }


def print_training(r: dict[str, Any]) -> None:
    print_collective(r)
    print("phase  matchings  compute ms  reconfigure ms  optical ms  electrical ms")
    for p in r["phases"]:
        print(
            f"  {p['phase']:<4} {p['matchings']:>9} {ms(p['compute_s']):>11} "
            f"{ms(p['reconfigure_s']):>15} {ms(p['optical_s']):>11} {ms(p['electrical_s']):>14}"
        )
    print("(a reconfiguration after a computation overlaps it: the circuits are idle meanwhile)")


def rank_counts(most: int) -> list[int]:
    """4, 8, 16, .. up to ``most``, and ``most``."""
    out = [4 << k for k in range(max(0, most.bit_length() - 2)) if 4 << k <= most]
    return out if out and out[-1] == most else [*out, most]


def sizes_up_to(largest: float) -> list[float]:
    """1 KiB, 32 KiB, 1 MiB, .. below ``largest``, and ``largest`` (bytes)."""
    out = [2.0**10 * SIZE_FACTOR**k for k in range(12) if 2.0**10 * SIZE_FACTOR**k < largest]
    return [*out, largest]


def sweep(args: argparse.Namespace) -> dict[str, Any]:
    """Which all-reduce wins by size and rank count on the switch and on the electrical one,
    where reconfiguring pays against the static ring, the duty cycles, and the
    straggler-aware all-reduce's speed-up by rank count and delay (the options checked by
    :func:`pswitch.collective.check`)."""
    from firmware.fabric import (
        all_reduce_lines,
        all_to_all_crossover,
        crossover,
        electrical_timing,
        ring_all_reduce,
        straggler_sweep,
    )
    from photonics.chips.switch import FeedForwardFabric

    link = link_of(args)
    sizes = sizes_up_to(args.n_bytes)
    winners, ports_of, sources = [], {}, []
    for p in rank_counts(args.ranks):
        ports = args.ports or p
        with switch_of(args, ports, link) as (fabric, reconfigure, source):
            lines = all_reduce_lines(p, fabric, link, reconfigure, driver_of(args))
            a2a = None
            if isinstance(fabric, FeedForwardFabric):
                cross = all_to_all_crossover(p, fabric, link, reconfigure, driver_of(args))
                a2a = cross.crossover_bytes
        ports_of[str(p)] = fabric.n_ports
        sources.append(source)
        static = lines.static_ring
        rows = []
        for n in sizes:
            best_o, best_e = lines.best(n)
            rows.append(
                {
                    "bytes": n,
                    "optical_s": {k: v.at(n) for k, v in lines.optical.items()},
                    "electrical_s": {k: v.at(n) for k, v in lines.electrical.items()},
                    "duty_cycle": {k: lines.duty_cycle(k, n) for k in lines.optical},
                    "static_ring_s": None if static is None else static.at(n),
                    "best_optical": best_o,
                    "best_electrical": best_e,
                }
            )
        pays = None
        if static is not None:
            best = min(lines.optical.values(), key=lambda line: line.per_byte_s)
            pays = crossover(best, static)
        winners.append(
            {
                "ranks": p,
                "sizes": rows,
                "all_reduce_reconfiguring_beats_static_ring_above_bytes": pays,
                "all_to_all_cover_beats_static_ring_above_bytes": a2a,
            }
        )
    ring_s = electrical_timing(ring_all_reduce(range(args.ranks), args.n_bytes), link).total_s
    delays = [f * ring_s for f in DELAY_FRACTIONS]
    ranks3 = [p for p in rank_counts(args.ranks) if p >= 3]
    points = straggler_sweep(ranks3, delays, args.n_bytes, link)
    return {
        "algorithm": "sweep",
        "mesh": args.mesh,
        "reconfiguration_source": "; ".join(dict.fromkeys(sources)),
        "link": {"bandwidth_Bps": link.bandwidth_Bps, "alpha_s": link.alpha_s},
        "ports_of": ports_of,
        "winners": winners,
        "straggler_bytes": args.n_bytes,
        "straggler": [
            {
                "ranks": x.ranks,
                "delay_s": x.delay_s,
                "model_speedup": x.model_speedup,
                "compiled_speedup": x.compiled_speedup,
            }
            for x in points
        ],
    }


def _bytes(n: float | None) -> str:
    return "never" if n is None else human(n)


def print_sweep(r: dict[str, Any]) -> None:
    gbps = r["link"]["bandwidth_Bps"] * 8 / 1e9
    print(
        f"all-reduce on the {r['mesh']} switch ({gbps:g} Gb/s a port, alpha "
        f"{r['link']['alpha_s'] * 1e6:g} us; reconfiguration times: {r['reconfiguration_source']})"
    )
    names = list(r["winners"][0]["sizes"][0]["optical_s"])
    head = "".join(f"{n + ' ms':>22}" for n in names)
    print(f"ranks {'size':>10}{head}{'static ring ms':>16}  fastest here / electrical  duty")
    for w in r["winners"]:
        for row in w["sizes"]:
            cells = "".join(f"{ms(row['optical_s'][n]):>22}" for n in names)
            static = row["static_ring_s"]
            st = f"{ms(static):>16}" if static is not None else f"{'-':>16}"
            duty = row["duty_cycle"][row["best_optical"]]
            print(
                f"{w['ranks']:>5} {human(row['bytes']):>10}{cells}{st}  "
                f"{row['best_optical']} / {row['best_electrical']}  {100 * duty:.1f} %"
            )
        ar = _bytes(w["all_reduce_reconfiguring_beats_static_ring_above_bytes"])
        a2a = _bytes(w["all_to_all_cover_beats_static_ring_above_bytes"])
        print(
            f"      reconfiguring per step beats the static ring: all-reduce above {ar}, "
            f"all-to-all (cover) above {a2a}"
        )
    print(
        f"straggler-aware all-reduce over ring, {human(r['straggler_bytes'])}, counted from the "
        "straggler's arrival (published cost model / schedule compiled here)"
    )
    ranks = sorted({x["ranks"] for x in r["straggler"]})
    delays = sorted({x["delay_s"] for x in r["straggler"]})
    print("  delay ms" + "".join(f"{str(p) + ' ranks':>18}" for p in ranks))
    for d in delays:
        cells = ""
        for p in ranks:
            x = next(x for x in r["straggler"] if x["ranks"] == p and x["delay_s"] == d)
            cells += f"{x['model_speedup']:>10.2f} / {x['compiled_speedup']:<5.2f}"
        print(f"  {d * 1e3:>8.3f}{cells}")
