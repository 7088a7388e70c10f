"""``python -m pswitch.warm``: compile every numba kernel of :mod:`photonics` into numba's
on-disk cache ahead of its first use, so that no command compiles. The Makefile's install step
runs it.

The kernels (``@njit(cache=True)`` in ``photonics/*/_*kernel*.py``) keep their machine code in
numba's cache: ``__pycache__`` next to their sources (``NUMBA_CACHE_DIR`` when set, or the
user's cache folder when the sources are not writable). The cache holds one entry per argument
signature (dtypes, ranks, layouts, read-only flags), so :func:`warm` compiles them through the
very code paths the product calls them from, on small meshes: a call that differs in any of
these would compile again. A test checks that it leaves no kernel, and no signature the
commands use, uncompiled.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
from numba.core import event
from numba.core.registry import CPUDispatcher

import photonics
from photonics.chips.build import build_chip
from photonics.chips.topologies import topology
from photonics.devices.mzi import MZIImperfections
from photonics.devices.transients import Settling, ThermalDynamics
from photonics.matching import Matching
from photonics.recirculating.waveguide_mesh import reach


def kernels() -> dict[str, CPUDispatcher]:
    """Every compiled kernel of :mod:`photonics` by ``module.name`` (its modules imported)."""
    found = {}
    for info in pkgutil.walk_packages(photonics.__path__, "photonics."):
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if isinstance(obj, CPUDispatcher) and obj.py_func.__module__ == info.name:
                found[f"{info.name}.{name}"] = obj
    return found


def warm() -> None:
    """Call every kernel once, with each argument signature the product uses (loaded from the
    cache when it is there, else compiled and cached)."""
    unitary = np.linalg.qr(np.random.default_rng(0).normal(size=(4, 4)) + 0j)[0]
    pairs = Matching([(0, 1), (2, 3)], 4)
    for name in ("clements", "reck", "hexagonal"):
        fabric = topology(name).fabric(4)
        plan = fabric.plan(pairs)  # route_labels; the router's negotiation and isolation
        fabric.rerouter(plan).pinned([(0, 1)], [(2, 3)])  # pinned routing; Dijkstra
    for name in ("clements", "reck"):
        mesh = topology(name).geometry(4).mesh
        settings = mesh.decompose(unitary)
        mesh.transfer(settings, MZIImperfections.typical())
    mesh = topology("hexagonal").geometry(4).mesh  # the calibration's route searches
    reach(mesh.partner(), mesh.edge_ports, np.ones(mesh.n_cells, dtype=bool))
    chip = build_chip("clements", 4)  # a write that moves two heaters: the settling search
    step = np.zeros(chip.n_heaters)
    step[:2] = 1.0
    Settling(chip.heaters.tau_s, chip.crosstalk, ThermalDynamics()).time_s(step, 1e-3)
    Settling(chip.heaters.tau_s, None, ThermalDynamics()).time_s(step, 1e-3)


class CompileTime:
    """What numba compiled in a :func:`compiling` block: ``seconds`` spent and the package's
    ``kernels`` signatures compiled (both 0 when every kernel came from the cache)."""

    seconds: float = 0.0
    kernels: int = 0


def _misses() -> int:
    return sum(sum(d.stats.cache_misses.values()) for d in kernels().values())


@contextmanager
def compiling() -> Iterator[CompileTime]:
    """Measure numba's compilation inside the block (its ``numba:compile`` events, which fire
    on a cache miss only, and the kernels' cache statistics)."""
    spent, before = CompileTime(), _misses()
    with event.install_timer("numba:compile", lambda s: setattr(spent, "seconds", s)):
        yield spent
    spent.kernels = _misses() - before


def main() -> int:
    with compiling() as compiled:
        warm()
    cache = ", ".join(sorted({k.stats.cache_path for k in kernels().values()}))
    if compiled.kernels:
        print(
            f"compiled {compiled.kernels} kernel signatures in {compiled.seconds:.1f} s into "
            f"numba's cache, {cache}"
        )
    else:
        print(f"kernels already compiled (numba's cache, {cache})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
