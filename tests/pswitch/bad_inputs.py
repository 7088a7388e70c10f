"""Bad command lines for every ``pswitch`` subcommand, each with words its one-line refusal
holds: run by tests/pswitch/test_bad_input.py in process and by benchmarks/bench_cli.py through
the real command. Each runs in a folder holding :data:`FILES` (made by :func:`prepare`), which
must hold nothing else afterwards: a refusal writes nothing.
"""

from __future__ import annotations

from pathlib import Path

#: The files a case may name, by name: contents (None: a folder).
FILES: dict[str, str | None] = {
    "partial.json": '{"schema": "pswitch.bench", "version": 1, "ports": 4}',
    "broken.json": '{"schema": "pswitch.bench", "vers',
    "exists.txt": "a file",
    "folder": None,
}

#: A ring all-reduce's command line, without and with its ranks and size.
_RING = ["collective", "ring-all-reduce"]
_RING4 = [*_RING, "--ranks", "4", "--bytes", "1"]
#: A training step's command line: 2 data-parallel replicas of 1 MB of gradients.
_TRAIN = ["collective", "training-step", "--dp", "2", "--dp-bytes", "1MB"]

#: (arguments, words the refusal holds)
CASES: list[tuple[list[str], str]] = [
    # the command itself (bare, it prints its help: tests/pswitch/test_help.py)
    (["frobnicate"], "invalid choice: 'frobnicate'"),
    (["--bogus", "demo"], "unrecognized arguments: --bogus"),
    # demo
    (["demo", "--seed", "-1"], "--seed: needs an integer >= 0, got -1"),
    (["demo", "--seed", "1.5"], "--seed: needs an integer >= 0, got '1.5'"),
    (["demo", "--ports", "7"], "ports must be even and in 4..32, got 7"),
    (["demo", "--ports", "1"], "--ports: needs an integer >= 2, got 1"),
    (["demo", "--ports", "40"], "ports must be even and in 4..32, got 40"),
    (["demo", "--ports", "10" * 20], "ports must be even and in 4..32"),
    (["demo", "--ports", "nan"], "--ports: needs an integer >= 2, got 'nan'"),
    (["demo", "--mesh", "torus"], "--mesh: invalid choice: 'torus'"),
    (["demo", "--mesh", "switch6x6"], "--mesh: invalid choice: 'switch6x6'"),
    (["demo", "--plots", "exists.txt"], "exists.txt is a file; give a folder"),
    (["demo", "--plots", "exists.txt/plots"], "is not a folder"),
    (["demo", "--plots", "p", "--no-plots"], "--no-plots: not allowed with argument --plots"),
    (["demo", "--plots", "/proc/plots"], "cannot write /proc/plots: folder /proc takes no files"),
    (["demo", "--json", "extra"], "unrecognized arguments: extra"),
    # serve
    (["serve", "--seconds", "-5"], "--seconds: needs a number of seconds > 0"),
    (["serve", "--seconds", "nan"], "--seconds: needs a number of seconds > 0"),
    (["serve", "--seconds", "inf"], "--seconds: needs a number of seconds > 0 and <= 1e+09"),
    (["serve", "--config", "/nonexistent/dir/b.json"], "folder /nonexistent/dir does not exist"),
    (["serve", "--config", "folder"], "folder is a folder; give a file name"),
    (["serve", "--config", "exists.txt/b.json"], "is not a folder"),
    (["serve", "--host", "999.1.1.1"], "--host: cannot serve on '999.1.1.1'"),
    (["serve", "--host", "x" * 300], "--host: cannot serve on"),
    (["serve", "--ports", "5"], "got 5"),
    (["serve", "--seed", "-3"], "--seed: needs an integer >= 0, got -3"),
    # route
    (["route"], "give either pairs"),
    (["route", "0-9"], "port 9 is out of range: ports are 0..7 (--ports sets the switch size)"),
    (["route", "0-x"], "a pair is two ports joined by '-'"),
    (["route", "0-1", "--ports", "0"], "--ports: needs an integer >= 2, got 0"),
    (["route", "2-2"], "port 2 is paired with itself"),
    (["route", "0-1", "1-2"], "port 1 is in two pairs"),
    (["route", "--perm", "1,1"], "output 1 is used twice"),
    (["route", "--perm", "a,b"], "a permutation is output ports separated by commas"),
    (["route", "0-1", "--perm", "1,0"], "give either pairs"),
    (["route", "--perm", "1,0", "--ports", "8"], "this request needs 2 ports"),
    (["route", "0-1", "--band", "1530-1565"], "a band is START:STOP:POINTS in nm"),
    (["route", "0-1", "--band", "1565:1530:8"], "within 1000..2000 nm from low to high"),
    (["route", "0-1", "--band", "900:1565:8"], "within 1000..2000 nm from low to high"),
    (["route", "0-1", "--band", "1530:1565:0"], "with 1..1000 points"),
    (["route", "--perm", "1,0", "--mesh", "hexagonal"], "give pairs"),
    (["route", "0-1", "--ports", "1000"], "a clements switch has 2..256 ports, got 1000"),
    (["route", "0-1", "--ports", "-4"], "--ports: needs an integer >= 2, got -4"),
    (["route", "0-1", "--ports", "1e9"], "--ports: needs an integer >= 2, got '1e9'"),
    (["route", "0-1", "--mesh", "nosuch"], "--mesh: invalid choice: 'nosuch'"),
    (["route", "0-1", "--mesh", "switch6x6"], "give --perm"),
    (["route", "0-1", "--mesh", "hexagonal", "--ports", "40"], "a hexagonal switch has 4..32"),
    # schedule
    (["schedule"], "required: kind"),
    (["schedule", "mesh"], "invalid choice: 'mesh'"),
    (["schedule", "all-to-all", "--shape", "4x4"], "--shape is for a ring or torus"),
    (["schedule", "all-to-all", "--spares", "3"], "--spares is for a ring or torus"),
    (["schedule", "all-to-all", "--endpoints", "0,1"], "--endpoints is for a ring or torus"),
    (["schedule", "ring", "--shape", "2x4"], "--shape is for a torus"),
    (["schedule", "torus", "--shape", "4by4"], "a torus shape is ROWSxCOLS"),
    (["schedule", "torus", "--ports", "16", "--shape", "3x5"], "rows x cols = 16 accelerators"),
    (["schedule", "torus", "--ports", "7"], "needs rows and columns >= 2, got 1x7"),
    (["schedule", "ring", "--ports", "8", "--endpoints", "0,9"], "uses port 9"),
    (["schedule", "ring", "--dwell-ms", "0"], "--dwell-ms: needs a number of ms > 0"),
    (["schedule", "ring", "--dwell-ms=-inf"], "--dwell-ms: needs a number of ms > 0"),
    (["schedule", "ring", "--dwell-ms", "1e300"], "--dwell-ms: needs a number of ms > 0"),
    (["schedule", "ring", "--endpoints", "1,x"], "ports separated by commas"),
    (["schedule", "all-to-all", "--ports", "1000"], "2..64 ports"),
    (["schedule", "all-to-all", "--ports", "0"], "--ports: needs an integer >= 2, got 0"),
    (["schedule", "ring", "--mesh", "hexagonal", "--ports", "40"], "a hexagonal switch has 4..32"),
    (["schedule", "ring", "--seed", "-1"], "--seed: needs an integer >= 0, got -1"),
    # collective
    (["collective"], "required: algorithm"),
    (["collective", "ring", "--ranks", "4", "--bytes", "1MB"], "invalid choice: 'ring'"),
    (["collective", "ring-all-reduce", "--bytes", "1MB"], "ring-all-reduce needs --ranks"),
    (["collective", "ring-all-reduce", "--ranks", "4"], "ring-all-reduce needs --bytes"),
    ([*_RING, "--ranks", "1", "--bytes", "1"], "--ranks: needs an integer in 2..256"),
    ([*_RING, "--ranks", "4", "--bytes", "0"], "--bytes: needs a size > 0"),
    (["collective", "ring-all-reduce", "--ranks", "4", "--bytes", "1XB"], "--bytes: needs a size"),
    ([*_RING4, "--driver", "warp"], "--driver: invalid choice: 'warp'"),
    # rack
    (["rack"], "required: study"),
    (["rack", "racetrack"], "invalid choice: 'racetrack'"),
    (["rack", "failover", "--plot", "map.txt"], "--plot writes a PNG"),
    (["rack", "straggler", "--driver", "bench"], "leave out --driver"),
    (["rack", "slicing", "--output", "rows"], "--output belong to sweep, not slicing"),
    (["rack", "sweep", "--drivers", "bench,warp"], "--drivers takes classes among"),
    (["rack", "slicing", "--jobs", "0"], "--jobs: needs"),
    (
        [*_RING4, "--driver", "parallel", "--switch", "TCPIP0::127.0.0.1::1::SOCKET"],
        "a switch's resource reports its own",
    ),
    (["collective", "ring-all-reduce", "--ranks", "4", "--bytes", "nan"], "--bytes: needs a size"),
    (["collective", "ring-all-reduce", "--ranks", "4", "--bytes", "1e300"], "<= 1 PiB"),
    (["collective", "ring-all-reduce", "--ranks", "8", "--ports", "4", "--bytes", "1"], "fewer"),
    (["collective", "straggler-all-reduce", "--ranks", "2", "--bytes", "1"], "--ranks >= 3"),
    ([*_RING4, "--mesh", "switch6x6"], "--mesh: invalid choice"),
    (
        [*_RING, "--ranks", "40", "--bytes", "1", "--mesh", "hexagonal"],
        "hexagonal switch has 4..32",
    ),
    ([*_RING, "--ranks", "100", "--bytes", "1"], "at most 64 ports, got 100: give --switch model"),
    ([*_RING4, "--seed", "-1"], "--seed: needs an integer >= 0, got -1"),
    ([*_RING4, "--dp", "2"], "--dp is for training-step, not ring-all-reduce"),
    (
        [*_TRAIN, "--ranks", "4"],
        "training-step takes --dp, --tp, --pp and their bytes, not --ranks",
    ),
    ([*_TRAIN, "--bytes", "1MB"], "not --bytes"),
    (
        ["collective", "training-step", "--dp", "1"],
        "--dp x --tp x --pp must be 2..256 ranks, got 1",
    ),
    ([*_TRAIN, "--tp", "0"], "--tp: needs an integer in 1..256, got 0"),
    ([*_TRAIN, "--forward-ms", "-1"], "--forward-ms: needs a number of ms > 0"),
    ([*_TRAIN, "--all-reduce", "tree"], "--all-reduce: invalid choice: 'tree'"),
    (["collective", "training-step", "--dp", "2", "--tp-bytes", "1MB"], "moves no bytes"),
    (["collective", "sweep", "--ranks", "2", "--bytes", "1MB"], "sweep needs --ranks >= 4"),
    (["collective", "sweep", "--ranks", "4", "--bytes", "1MB", "--straggler-ms", "1"], "leave"),
    ([*_RING4, "--straggler-ms", "-1"], "--straggler-ms: needs a number of ms > 0"),
    ([*_RING4, "--bandwidth-gbps", "0"], "--bandwidth-gbps: needs a number of Gb/s > 0"),
    ([*_RING4, "--alpha-us", "-1"], "--alpha-us: needs a number of us >= 0"),
    ([*_RING4, "--plot", "folder"], "folder is a folder"),
    ([*_RING4, "--plot", "/no/such/g.png"], "does not exist"),
    ([*_RING4, "--plot", "g.svg"], "ending .png"),
    # calibrate
    (["calibrate"], "required: --bench"),
    (["calibrate", "--bench", "partial.json"], "missing field(s) heater_driver, meters"),
    (["calibrate", "--bench", "broken.json"], "broken.json"),
    (["calibrate", "--bench", "/no/such/bench.json"], "cannot read bench config /no/such"),
    (["calibrate", "--bench", "folder"], "cannot read bench config folder"),
    (["calibrate", "--bench", "partial.json", "-o", "/nonexistent/c.json"], "does not exist"),
    (["calibrate", "--bench", "partial.json", "-o", "folder"], "folder is a folder"),
    # layout
    (["layout", "--png", "/nonexistent/dir/x.png"], "folder /nonexistent/dir does not exist"),
    (["layout", "-o", "/nonexistent/dir/x.gds"], "folder /nonexistent/dir does not exist"),
    (["layout", "-o", "folder"], "folder is a folder; give a file name"),
    (["layout", "--mesh", "ring", "--ports", "8"], "--ports is for a mesh"),
    (["layout", "--mesh", "hexagonal", "--ports", "64"], "a hexagonal switch has 4..32 ports"),
    (["layout", "--mesh", "ring", "--no-pads"], "--no-pads is for feed-forward meshes"),
    (["layout", "--mesh", "hexagonal", "--no-pads"], "--no-pads is for feed-forward meshes"),
    (["layout", "--ports", "1000"], "--ports: needs an integer in 2..128, got 1000"),
    (["layout", "--ports", "1"], "--ports: needs an integer in 2..128, got 1"),
    (["layout", "--mesh", "switch6x6", "--ports", "8"], "a switch6x6 switch has 6 ports, got 8"),
    (["layout", "--mesh", "nosuch"], "--mesh: invalid choice: 'nosuch'"),
    (["layout", "-o", "x.out"], "-o writes GDS; give a file name ending .gds, got x.out"),
    (["layout", "-o", "mesh.txt"], "-o writes GDS; give a file name ending .gds, got mesh.txt"),
    (["layout", "-o", "x.gds", "--png", "x.gds"], "--png writes a PNG; give a file name ending"),
    (["layout", "-o", "/proc/x.gds"], "cannot write /proc/x.gds: folder /proc takes no files"),
    # yield
    (["yield", "--chips", "0"], "--chips: needs an integer in 1..10000000, got 0"),
    (["yield", "--ports", "5"], "ports must be even and in 4..32, got 5"),
    (["yield", "--ports", "64"], "--ports: needs an integer in 4..32, got 64"),
    (["yield", "--coupler-sigma", "-0.01"], "--coupler-sigma: needs a number of splitting ratio"),
    (["yield", "--coupler-sigma", "nan"], "--coupler-sigma: needs a number of splitting ratio"),
    (["yield", "--heater-spread", "2"], "--heater-spread: needs a number of P_pi >= 0"),
    (["yield", "--min-isolation-db", "0"], "--min-isolation-db: needs a number of dB > 0"),
    (["yield", "--workers", "0"], "--workers: needs an integer in 1..1024, got 0"),
    (["yield", "--workers", "2", "--scheduler", "x:1"], "not allowed with argument --workers"),
    (["yield", "--scheduler", "garbage"], "--scheduler: needs a scheduler address"),
    (["yield", "--scheduler", "tcp://host:0"], "port 1..65535"),
    (["yield", "--mesh", "torus"], "--mesh: invalid choice: 'torus'"),
    (["yield", "--mesh", "hexagonal", "--pitch-x-um", "300"], "a hexagonal study takes no pitch_x"),
    (["yield", "--mesh", "hexagonal", "--output-rings"], "a hexagonal study takes no output_rings"),
    (["yield", "--sweep", "ring_sigma_nm=0.1,1"], "ring_sigma_nm is swept on a design without"),
    (["yield", "--ring-sigma-nm", "-1"], "--ring-sigma-nm: needs a number of nm >= 0"),
    (["yield", "--output", "exists.txt"], "exists.txt is a file; give a folder"),
    (["yield", "--output", "exists.txt/rows"], "is not a folder"),
    # bench
    (["bench", "nosuch"], "unknown benchmark 'nosuch': known cli, collectives, failover"),
    (["bench", "--dir", "/no/such"], "no benchmarks folder at /no/such"),
    (["bench", "router", "thermal", "--args=--json"], "--args goes to one benchmark"),
    (["bench", "--list", "router"], "--list lists every benchmark and stops"),
    (["bench", "router", '--args="unclosed'], "No closing quotation"),
]


def prepare(folder: Path) -> None:
    """Make :data:`FILES` in ``folder``."""
    for name, text in FILES.items():
        if text is None:
            (folder / name).mkdir()
        else:
            (folder / name).write_text(text)


def leftovers(folder: Path) -> list[str]:
    """What is in ``folder`` besides :data:`FILES` (and in its subfolder), sorted."""
    found = {str(p.relative_to(folder)) for p in folder.rglob("*")}
    return sorted(found - set(FILES))
