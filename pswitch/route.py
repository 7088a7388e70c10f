"""``pswitch route``: a matching or a permutation in, every cell's setting and the predicted
powers out.

Settings are cell angles (rad: theta 0 bar, pi/2 cross; phi and the output phases of a
feed-forward mesh); a chip's calibration turns them into heater currents when a switch applies
them. Powers are predicted for cells at the published typical figures (35 dB extinction,
0.5 dB loss): the transfer matrix of a feed-forward mesh, the scattering solve (loops
included) of a recirculating one. A circuit's isolation is its output's power from its own
input over the most from any other lit input: n/a (null in JSON) when no other input is lit.
An output that gets no light at all reads "dark" (null in JSON). With --band, the same
predictions across a band of wavelengths (couplers, losses and heater phases at each
wavelength, photonics.devices.dispersion): each circuit's worst loss and isolation over the band.
"""

from __future__ import annotations

import argparse
import json
import re
from typing import TYPE_CHECKING, Any

from photonics import levels
from photonics.chips import topologies
from photonics.errors import MatchingError, PortError, SettingsError
from pswitch import args as types

if TYPE_CHECKING:  # the numerics are imported when the command runs, not with its parser
    from photonics.matching import Matching, Permutation

#: The power matrix is printed up to this many ports (always in ``--json``).
MATRIX_PORTS = 16

EXAMPLES = """examples:
  pswitch route 0-5 1-3 2-4 --ports 8       pairs on an 8-port Clements switch
  pswitch route --perm 3,0,-,1              input i to output perm[i]; '-' leaves it dark
  pswitch route 0-5 1-2 --mesh reck --ports 6
  pswitch route 0-9 3-12 --mesh hexagonal --ports 16
  pswitch route --perm 5,4,3,2,1,0 --mesh switch6x6   the 6x6 switch's hexagonal mesh
  pswitch route 0-1 2-3 --json > settings.json
  pswitch route 0-5 1-3 2-4 --band 1530:1565:8   worst isolation over the C band, 8 points
"""


def _pair(text: str) -> tuple[int, int]:
    found = re.fullmatch(r"\s*(\d+)\s*[-:]\s*(\d+)\s*", text)
    if found is None:
        raise argparse.ArgumentTypeError(
            f"a pair is two ports joined by '-', e.g. 0-5; got {text!r}"
        )
    return int(found.group(1)), int(found.group(2))


def _perm(text: str) -> list[int | None]:
    out: list[int | None] = []
    for item in text.split(","):
        item = item.strip()
        if item == "-":
            out.append(None)
        elif item.isdigit():
            out.append(int(item))
        else:
            raise argparse.ArgumentTypeError(
                f"a permutation is output ports separated by commas, '-' for a dark input, "
                f"e.g. 3,0,-,1; got {text!r}"
            )
    return out


def _band(text: str) -> tuple[float, float, int]:
    found = re.fullmatch(r"\s*([\d.]+)\s*:\s*([\d.]+)\s*:\s*(\d+)\s*", text)
    if found is None:
        raise argparse.ArgumentTypeError(
            f"a band is START:STOP:POINTS in nm, e.g. 1530:1565:8; got {text!r}"
        )
    start, stop, points = float(found.group(1)), float(found.group(2)), int(found.group(3))
    if not (1000 <= start <= stop <= 2000 and 1 <= points <= 1000):
        raise argparse.ArgumentTypeError(
            f"a band runs within 1000..2000 nm from low to high with 1..1000 points; got {text!r}"
        )
    return start, stop, points


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``route`` to the ``pswitch`` subcommands."""
    parser = sub.add_parser(
        "route",
        help="settings and predicted powers for a matching or permutation",
        description=types.plain(__doc__),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "pairs", nargs="*", type=_pair, metavar="A-B", help="a matching: ports that talk"
    )
    parser.add_argument(
        "--perm", type=_perm, default=None, help="a permutation instead: output of each input"
    )
    parser.add_argument(
        "--mesh", choices=topologies.names(), default="clements", help="the switch's mesh"
    )
    parser.add_argument(
        "--ports",
        type=types.integer(2),
        default=None,
        help="switch ports (default: the permutation's length, or the mesh's own: 8 for "
        "clements, reck and hexagonal)",
    )
    parser.add_argument(
        "--band",
        type=_band,
        default=None,
        metavar="START:STOP:POINTS",
        help="also predict over this band of wavelengths, nm (e.g. 1530:1565:8)",
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.set_defaults(run=run)


def request_of(
    pairs: list[tuple[int, int]], perm: list[int | None] | None, mesh: str, ports: int | None
) -> Matching | Permutation:
    """The request the command line names, checked against the mesh."""
    from photonics.matching import Matching, Permutation

    if bool(pairs) == (perm is not None):
        raise SettingsError("give either pairs (e.g. 0-5 1-3) or --perm, not both or neither")
    topology = topologies.topology(mesh)
    # on a recirculating mesh an undirected endpoint sends and receives on one edge port
    if perm is not None and topology.kind == "recirculating" and not topology.directed:
        raise SettingsError(f"a {mesh} switch's endpoints send and receive on one port: give pairs")
    if perm is None and topology.directed:
        raise SettingsError(f"the {mesh} switch joins inputs to other outputs: give --perm")
    low, high = topology.ports
    fixed = low if low == high else len(perm) if perm is not None else None
    if fixed is not None and ports not in (None, fixed):
        raise PortError(f"--ports {ports} does not fit: this request needs {fixed} ports")
    n = topology.check_ports(fixed or ports or topology.default_ports)
    if perm is not None:
        return Permutation(perm)
    try:
        return Matching(pairs, n)
    except PortError as exc:
        raise PortError(f"{exc} (--ports sets the switch size)") from None


def _circuits(request: Matching | Permutation) -> list[tuple[int, int]]:
    from photonics.matching import Permutation

    if isinstance(request, Permutation):
        return request.pairs()
    return [c for a, b in request.pairs for c in ((a, b), (b, a))]


def route(
    mesh_name: str,
    request: Matching | Permutation,
    band: tuple[float, float, int] | None = None,
) -> dict[str, Any]:
    """Route ``request`` on ``mesh_name``: settings, circuits and predicted powers (dB) as
    data. ``powers_db[out][in]``: power reaching output ``out`` from input ``in`` lit alone
    (1 mW in, dBm), None for dark inputs and dark outputs. A circuit's isolation is None
    when no other input is lit (``isolation_note`` says so). With ``band`` (start nm, stop nm,
    points), each circuit also gets its worst loss and isolation over that band."""
    import numpy as np

    from photonics.chips.switch import FeedForwardFabric
    from photonics.devices.dispersion import (
        DESIGN_WAVELENGTH_NM,
        band_extinction_db,
        imperfections_at,
    )
    from photonics.devices.dispersion import band as band_grid
    from photonics.devices.mzi import DEFAULT_LOSS_DB, PUBLISHED_EXTINCTION_DB, MZIImperfections
    from photonics.feedforward.meshes import FeedForwardMesh, MeshSettings
    from photonics.matching import Matching, Permutation
    from photonics.recirculating.mesh_scattering import scattering
    from photonics.recirculating.routing import DEFAULT_EXTINCTION_DB, Router, requests_for
    from photonics.recirculating.waveguide_mesh import CROSS

    imperfections = MZIImperfections.typical()
    n = request.n_ports
    circuits = _circuits(request)
    circuit_cells: dict[tuple[int, int], list[int]] = {}
    geometry = topologies.topology(mesh_name).geometry(n)
    if isinstance(geometry.mesh, FeedForwardMesh):
        mesh = geometry.mesh
        settings = mesh.route(request)
        P = np.abs(mesh.transfer(settings, imperfections)) ** 2
        if band is not None:  # one batched transfer, a row per wavelength
            lam = band_grid(*band)[:, None]
            scale = DESIGN_WAVELENGTH_NM / lam  # heater-set phases go as 1 / wavelength
            at = MeshSettings(
                settings.theta * scale, settings.phi * scale, settings.output_phase * scale
            )
            P_band = np.abs(mesh.transfer(at, imperfections_at(imperfections, lam))) ** 2
        cells = [
            {
                "cell": k,
                "column": int(mesh.columns[k]),
                "mode": int(mesh.modes[k]),
                "theta_rad": float(settings.theta[k]),
                "phi_rad": float(settings.phi[k]),
                "state": "cross" if settings.theta[k] > np.pi / 4 else "bar",
            }
            for k in range(mesh.n_mzis)
        ]
        traced = FeedForwardFabric(mesh).trace(settings.theta)
        circuit_cells = {(a, b): list(traced[a]) for a, b in circuits}
        extra: dict[str, Any] = {"output_phase_rad": settings.output_phase.tolist()}
        return_port = False  # an input and the output of the same number are different ports
    else:
        wg, inputs, outputs = geometry.mesh, list(geometry.inputs), list(geometry.outputs)
        directed = isinstance(request, Permutation)
        # over a band, the router predicts isolation with the cells' worst extinction there
        ext = band_extinction_db(imperfections, band_grid(*band)) if band else DEFAULT_EXTINCTION_DB
        result = Router(wg, extinction_db=ext).route(
            requests_for(request, (inputs, outputs) if directed else inputs), directed
        )
        if not result.ok:
            why = "; ".join(f"{pair}: {reason}" for pair, reason in result.failures.items())
            raise MatchingError(f"not realizable on this mesh: {why}")
        theta = result.theta()
        S = scattering(wg, theta, imperfections=imperfections)
        P = np.abs(S[np.ix_(outputs, inputs)]) ** 2
        if band is not None:  # loops resonate: one sparse solve per wavelength
            P_band = np.array(
                [
                    np.abs(
                        scattering(
                            wg,
                            theta * DESIGN_WAVELENGTH_NM / lam,
                            wavelength_nm=lam,
                            imperfections=imperfections_at(imperfections, lam),
                        )[np.ix_(outputs, inputs)]
                    )
                    ** 2
                    for lam in band_grid(*band)
                ]
            )
        index = {p: i for i, p in enumerate(inputs)} | {p: i for i, p in enumerate(outputs)}
        for path in result.paths:
            a, b = (index[p] for p in path.ports)
            circuit_cells[(a, b)] = [int(c) for c in path.cells]
            circuit_cells[(b, a)] = circuit_cells[(a, b)][::-1]
        cells = [
            {
                "cell": k,
                "theta_rad": float(theta[k]),
                "state": "cross" if result.states[k] == CROSS else "bar",
            }
            for k in range(wg.n_cells)
        ]
        extra = {
            "edge_ports_in": [int(p) for p in inputs],
            "edge_ports_out": [int(p) for p in outputs],
        }
        return_port = not directed  # an endpoint sends and receives on one edge port
    lit = sorted({src for src, _ in circuits})
    rows = []
    for src, dst in circuits:
        # a matching's endpoint gets its own light back through its port: return loss, not
        # crosstalk (as photonics.recirculating.routing.verify counts it)
        others = [P[dst, x] for x in lit if x != src and not (return_port and x == dst)]
        rows.append(
            {
                "source": src,
                "target": dst,
                "loss_db": float(-10 * np.log10(P[dst, src])),
                "isolation_db": levels.isolation_db(P[dst, src], others),
                "cells": circuit_cells[(src, dst)],
            }
        )
    band_result: dict[str, Any] = {}
    if band is not None:
        for row in rows:
            src, dst = row["source"], row["target"]
            others = [x for x in lit if x != src and not (return_port and x == dst)]
            row["band_loss_db"] = float(np.max(-10 * np.log10(P_band[:, dst, src])))
            row["band_isolation_db"] = levels.worst(
                levels.isolation_db(Pw[dst, src], [Pw[dst, x] for x in others]) for Pw in P_band
            )
        band_result = {
            "band_nm": band_grid(*band).tolist(),
            "band_worst_loss_db": max((r["band_loss_db"] for r in rows), default=0.0),
            "band_worst_isolation_db": levels.worst(r["band_isolation_db"] for r in rows),
        }
    undefined = any(r["isolation_db"] is None for r in rows)
    return {
        "mesh": mesh_name,
        "ports": n,
        "request": {"pairs": [list(p) for p in request.pairs]}
        if isinstance(request, Matching)
        else {"permutation": list(request.targets)},
        "imperfections": {
            "extinction_db": PUBLISHED_EXTINCTION_DB[1],
            "loss_db_per_cell": DEFAULT_LOSS_DB,
        },
        "cells": cells,
        **extra,
        "lit": lit,
        "circuits": rows,
        "worst_loss_db": max((r["loss_db"] for r in rows), default=0.0),
        "worst_isolation_db": levels.worst(r["isolation_db"] for r in rows),
        "isolation_note": levels.NO_OTHER_LIGHT if undefined else None,
        **band_result,
        "powers_db": [
            [levels.dbm(P[o, i]) if i in lit else None for i in range(n)] for o in range(n)
        ],
    }


def _grid(cells: list[dict[str, Any]]) -> list[str]:
    """A feed-forward mesh's cell states: one row per mode pair, one column per mesh column."""
    columns = max(c["column"] for c in cells) + 1
    modes = max(c["mode"] for c in cells) + 1
    art = [["." for _ in range(columns)] for _ in range(modes)]
    for c in cells:
        art[c["mode"]][c["column"]] = "X" if c["state"] == "cross" else "="
    return [f"  modes {m:>3}-{m + 1:<3} " + " ".join(row) for m, row in enumerate(art)]


def _print(r: dict[str, Any]) -> None:
    n, cells = r["ports"], r["cells"]
    cross = sum(c["state"] == "cross" for c in cells)
    print(f"{r['mesh']} switch, {n} ports, {len(cells)} cells ({cross} cross, rest bar)")
    if "column" in cells[0]:
        print("cell states by column (X cross, = bar, . no cell):")
        print("\n".join(_grid(cells)))
    imp = r["imperfections"]
    print(
        f"predicted for cells at {imp['extinction_db']:.0f} dB extinction and "
        f"{imp['loss_db_per_cell']} dB loss:"
    )
    print("  circuit        loss dB   isolation dB   cells")
    for c in r["circuits"]:
        path = f"{c['source']:>3} -> {c['target']:<3}"
        iso = levels.shown(c["isolation_db"], ".1f", "n/a")
        print(f"  {path:<12} {c['loss_db']:8.2f} {iso:>14}   {len(c['cells'])}")
    worst, note = r["worst_isolation_db"], r["isolation_note"]
    why = f"{note}, so nothing can leak into its output" if note else ""
    print(
        f"worst loss {r['worst_loss_db']:.2f} dB, worst isolation "
        + (f"n/a ({why})" if worst is None else f"{worst:.1f} dB")
        + (f" (n/a where {why})" if worst is not None and note else "")
    )
    if "band_nm" in r:
        lam, band_iso = r["band_nm"], r["band_worst_isolation_db"]
        print(
            f"over {lam[0]:g}-{lam[-1]:g} nm ({len(lam)} wavelengths): worst loss "
            f"{r['band_worst_loss_db']:.2f} dB, worst isolation "
            + levels.shown(band_iso, ".1f", "n/a")
            + ("" if band_iso is None else " dB")
        )
    if n <= MATRIX_PORTS:
        print(
            "power matrix, dBm for 1 mW into each lit input (rows outputs, columns inputs; "
            "- unlit):"
        )
        print("       " + "".join(f"{i:>7}" for i in range(n)))
        for o, row in enumerate(r["powers_db"]):
            cells = (
                "-" if i not in r["lit"] else levels.shown(v, ".1f", "dark")
                for i, v in enumerate(row)
            )
            print(f"  {o:>4} " + "".join(f"{c:>7}" for c in cells))


def run(args: argparse.Namespace) -> int:
    request = request_of(args.pairs, args.perm, args.mesh, args.ports)
    result = route(args.mesh, request, args.band)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _print(result)
    return 0
