"""The install step's warm-up (``python -m pswitch.warm``) leaves nothing for a command to
compile: every kernel of the package is in numba's on-disk cache, with every argument signature
that the commands call it with."""

import json
import subprocess
import sys

# A fresh interpreter, so that the kernels start with no signature loaded: warm up, then run
# commands that reach every kernel (feed-forward and recirculating switches, the pinned
# rerouters of a failover, the router's isolation rounds, a directed switch, decomposition, the
# settling of the demo's calibration) and report any signature they added, and what numba
# compiled for them.
SCRIPT = """
import contextlib, io, json
import numpy as np
from photonics import ClementsMesh, ReckMesh
from pswitch.warm import compiling, kernels, warm
from pswitch.cli import main

warm()
found = kernels()
before = {name: set(k.signatures) for name, k in found.items()}
# the cache index on disk, for the source as it is now (numba's own check of the source stamp)
cached = {name: len(k._cache._cache_file._load_index()) for name, k in found.items()}
commands = [
    ["demo", "--ports", "4", "--no-plots", "--json"],
    ["demo", "--ports", "8", "--mesh", "hexagonal", "--no-plots", "--json"],
    ["route", "0-9", "3-12", "--mesh", "hexagonal", "--ports", "16"],
    ["route", "--perm", "5,4,3,2,1,0", "--mesh", "switch6x6"],
    ["route", "0-5", "1-2", "--mesh", "reck", "--ports", "6"],
    ["schedule", "all-to-all", "--ports", "8", "--mesh", "hexagonal"],
]
U = np.linalg.qr(np.random.default_rng(1).normal(size=(8, 8)) + 1j)[0]
with compiling() as compiled, contextlib.redirect_stdout(io.StringIO()):
    for argv in commands:
        assert main(argv) == 0, argv
    for mesh in (ClementsMesh(8), ReckMesh(8)):
        mesh.transfer(mesh.decompose(U))
added = {n: sorted(map(str, set(k.signatures) - before[n])) for n, k in found.items()}
print(json.dumps({"cached": cached, "added": added, "compiled": compiled.kernels}))
"""


def test_after_the_warm_up_no_command_compiles_and_every_kernel_is_cached() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.splitlines()[-1])
    # every @njit function of the three kernel modules was found, and each is cached
    modules = {name.rsplit(".", 1)[0] for name in report["cached"]}
    assert modules == {
        "photonics.feedforward._kernels",
        "photonics.recirculating._route_kernel",
        "photonics.chips._pinned_kernel",
        "photonics.devices._settle_kernel",
    }
    assert len(report["cached"]) >= 20
    assert [name for name, entries in report["cached"].items() if entries == 0] == []
    # the commands used no signature the warm-up left out, so numba compiled nothing
    assert {name: sigs for name, sigs in report["added"].items() if sigs} == {}
    assert report["compiled"] == 0
