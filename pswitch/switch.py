"""``pswitch switch``: talk to a switch controller from the command line (a real one, or the
one ``pswitch serve`` runs), through the SDK (:class:`firmware.sdk.Switch`) over VISA.

``--resource`` is any VISA resource the switch answers on (``TCPIP0::host::port::SOCKET``,
``ASRL/dev/ttyUSB0::INSTR``, ``GPIB0::5::INSTR``, ...; default: the ``PSWITCH_RESOURCE``
environment variable). The switch checks every command; its refusal (SCPI code and message)
exits 1 with one line and leaves the switch as it was.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from pswitch import args as types
from pswitch.route import _pair

EXAMPLES = """examples:
  pswitch serve --config bench.json &                        an emulated switch to try it on
  export PSWITCH_RESOURCE=TCPIP0::127.0.0.1::<port>::SOCKET  (the "switch" line it prints)
  pswitch switch idn
  pswitch switch connect 0-5 1-2                             apply a matching
  pswitch switch status                                      matching, status bits, errors
  pswitch switch powers --dbm                                light on every output photodiode
  pswitch switch disconnect                                  every circuit (or: disconnect 5)
"""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``switch`` to the ``pswitch`` subcommands."""
    parser = sub.add_parser(
        "switch",
        help="talk to a switch controller over VISA (connect, status, idn, powers)",
        description=types.plain(__doc__ or ""),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--resource",
        default=os.environ.get("PSWITCH_RESOURCE", ""),
        help="VISA resource of the switch (default: $PSWITCH_RESOURCE)",
    )
    parser.add_argument(
        "--visa-backend",
        default=os.environ.get("PSWITCH_VISA_BACKEND", ""),
        help="VISA library: @py pyvisa-py (default), @ivi the system's (NI, Keysight), "
        "FILE@sim a simulation (default: $PSWITCH_VISA_BACKEND)",
    )
    parser.add_argument(
        "--timeout", type=types.number(600, "s"), default=5.0, help="reply timeout, s"
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    # --json before the action or after it (`pswitch switch status --json`)
    json_too = argparse.ArgumentParser(add_help=False)
    json_too.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print the results as JSON"
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    def action(name: str, text: str) -> argparse.ArgumentParser:
        return actions.add_parser(name, help=text, parents=[json_too])

    connect = action("connect", "apply a matching (replacing the one applied)")
    connect.add_argument("pairs", nargs="+", type=_pair, metavar="A-B", help="ports that talk")
    disconnect = action("disconnect", "disconnect one port's circuit, or all")
    disconnect.add_argument("port", nargs="?", type=types.integer(0), help="a port (default all)")
    action("status", "the applied matching, status bits and queued errors")
    action("idn", "the switch's identification")
    powers = action("powers", "light at every output's monitor photodiode")
    powers.add_argument("--dbm", action="store_true", help="in dBm (default mW)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from firmware.sdk import Switch
    from hil.visa import Session
    from photonics.errors import SettingsError

    if not args.resource:
        raise SettingsError("give the switch's VISA resource: --resource R or PSWITCH_RESOURCE")
    session = Session(args.resource, timeout_s=args.timeout, backend=args.visa_backend or None)
    with Switch(session) as sw:
        result = _act(sw, args)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            print(f"{key}: {value}")
    return 0


def _act(sw: Any, args: argparse.Namespace) -> dict[str, Any]:
    """Do ``args.action`` on switch ``sw``; what to print."""
    from photonics import levels

    if args.action == "connect":
        took = sw.connect(args.pairs)
        return {"matching": _pairs(sw), "hardware_s": took}
    if args.action == "disconnect":
        took = sw.disconnect(args.port)
        return {"matching": _pairs(sw), "hardware_s": took}
    if args.action == "idn":
        return {"idn": sw.idn()}
    if args.action == "status":
        bits = sw.status()
        return {
            "matching": _pairs(sw),
            "set": [name for name, on in bits.items() if on],
            "errors": [f"{code},{message}" for code, message in sw.errors()],
        }
    mW = sw.powers()
    if args.dbm:
        return {"powers_dBm": [levels.dbm(p) for p in mW.tolist()]}
    return {"powers_mW": mW.tolist()}


def _pairs(sw: Any) -> list[list[int]]:
    return [list(p) for p in sw.matching().pairs]
