"""A bench configuration: the resource strings of a bench's instruments and what is on it.

The same file drives the emulated bench (``pswitch serve`` writes it) and a real one (written by
hand): only the resource strings differ. A versioned document of :mod:`firmware.documents`
(``"schema": "pswitch.bench"``, ``"version": 1``), written atomically.
"""

from __future__ import annotations

import math
import os
from dataclasses import MISSING, asdict, dataclass, fields
from typing import Any, Literal

from firmware.documents import ContentError, DocumentFormat, read_document, write_document
from photonics.errors import SettingsError

SCHEMA = "pswitch.bench"
VERSION = 1
LASERS = ("8164B", "TSL570")


@dataclass(frozen=True)
class BenchConfig:
    """What :class:`hil.bench.Bench` opens and how the chip on the bench is built.

    Resources (VISA resource strings): ``heater_driver`` (a Qontrol-style driver on a serial
    line), ``power_meter`` (an N7744A-style meter, channel k on chip output k), ``laser``
    (``laser_model`` 8164B or TSL570) and ``input_switch`` (the 8164B mainframe whose 1xN switch
    module feeds chip input k from its output k; empty: the laser's own mainframe), optionally
    ``switch`` (a pswitch controller). The chip: ``ports``, ``mesh``, ``chip_id``; the heater
    channels of its output rings (``ring_channels``, ring k in front of output k), the
    heaters' safe current ``max_current_mA`` and total ``power_budget_mW`` (None: the heater
    driver's full output), written into the heater driver's limits. Timing of
    the heater electronics, to wait before a reading: ``channel_write_s`` per channel written
    and ``settle_s`` of thermal settling. Light: ``wavelength_nm`` and ``laser_power_mW``.
    """

    heater_driver: str
    power_meter: str
    laser: str
    laser_model: Literal["8164B", "TSL570"] = "8164B"
    input_switch: str = ""
    switch: str = ""
    ports: int = 8
    mesh: str = "clements"
    chip_id: str = "chip"
    ring_channels: tuple[int, ...] = ()
    max_current_mA: float = 10.0
    power_budget_mW: float | None = None
    channel_write_s: float = 0.5e-3
    settle_s: float = 1e-4
    wavelength_nm: float = 1550.0
    laser_power_mW: float = 1.0
    timeout_s: float = 5.0

    def __post_init__(self) -> None:
        for name in ("heater_driver", "power_meter", "laser"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise SettingsError(f"bench config: {name} needs a resource string")
        if self.laser_model not in LASERS:
            raise SettingsError(f"laser_model must be one of {LASERS}, got {self.laser_model!r}")
        if isinstance(self.ports, bool) or not isinstance(self.ports, int) or self.ports < 2:
            raise SettingsError(f"ports must be an integer >= 2, got {self.ports!r}")
        object.__setattr__(self, "ring_channels", tuple(int(c) for c in self.ring_channels))
        for name in ("channel_write_s", "settle_s"):
            if not (math.isfinite(getattr(self, name)) and getattr(self, name) >= 0):
                raise SettingsError(f"{name} must be >= 0 s, got {getattr(self, name)}")
        budget = self.power_budget_mW
        if budget is not None and not (math.isfinite(budget) and budget > 0):
            raise SettingsError(f"power_budget_mW must be > 0 or None, got {budget}")
        for name in ("wavelength_nm", "laser_power_mW", "timeout_s", "max_current_mA"):
            if not (math.isfinite(getattr(self, name)) and getattr(self, name) > 0):
                raise SettingsError(f"{name} must be > 0, got {getattr(self, name)}")

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the configuration atomically (a crash leaves the old file or the new one)."""
        write_document(path, FORMAT, asdict(self))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> BenchConfig:
        """Read a configuration; a missing, malformed or newer file is refused with
        :class:`~photonics.errors.SettingsError`, naming the file and why. Fields left out
        take their defaults."""
        try:
            return read_document(path, FORMAT, _bench_config)
        except OSError as exc:
            raise SettingsError(f"cannot read bench config {path}: {exc}") from exc


def _bench_config(body: dict[str, Any]) -> BenchConfig:
    """The configuration in a file's fields; its ranges are checked by :class:`BenchConfig`."""
    try:
        return BenchConfig(**body)
    except TypeError as exc:  # a value of the wrong type, e.g. a string for a number
        raise ContentError(str(exc)) from exc


FORMAT = DocumentFormat(
    "bench config",
    SCHEMA,
    VERSION,
    tuple(f.name for f in fields(BenchConfig)),
    SettingsError,
    optional=frozenset(f.name for f in fields(BenchConfig) if f.default is not MISSING),
)
