"""Heater driver classes: how long a switch's electronics take to apply a new configuration,
from a lab bench to the physical limit (``docs/physics.md``, section 7.4, has the sources).

A reconfiguration is the electronics' time (:meth:`DriverClass.electronics_s`) followed by the
heaters' thermal settling, which the emulated driver and the heater write model compute from
the chip (:mod:`photonics.devices.transients`). The classes differ only in the electronics:

- ``bench``: a lab heater driver on a serial line writes one channel after another, 0.5 ms
  each (the emulated Qontrol's figure);
- ``parallel``: discrete multichannel DACs, one SPI bus each (40 channels, 24-bit words at
  50 MHz: 0.48 us a channel), every output updated at once on a load pulse and settled in
  20 us (Analog Devices AD5370 data sheet, Rev. 0);
- ``product``: the published programmable-photonics product, 15 ms for the smallest change up
  to 90 ms when every channel changes, dominated by its driver electronics (Perez-Lopez et al.,
  Nat. Commun. 15, 1563 (2024)); in between, pro rata of the channels written (an assumption);
- ``integrated``: a driver co-packaged with the chip, one DAC per heater on a parallel bus, no
  serial loading, the DAC settled in 3 us (a DAC core of the AD5381 class, data sheet Rev. D,
  t17).

Times in s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from photonics.errors import SettingsError

#: Time to write one heater channel on the lab bench's serial driver, s.
BENCH_CHANNEL_S = 0.5e-3


@dataclass(frozen=True)
class DriverClass:
    """A heater driver's timing (s): ``update_s`` once per reconfiguration, ``channel_s`` per
    channel loaded one after another on a bus of ``bus_channels`` channels (0: one bus for
    every channel; several buses load at once), and ``full_s`` pro rata of the channels written
    (all of them: ``full_s``)."""

    name: str
    update_s: float = 0.0
    channel_s: float = 0.0
    bus_channels: int = 0
    full_s: float = 0.0
    summary: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        for key in ("update_s", "channel_s", "full_s"):
            value = getattr(self, key)
            if not (isinstance(value, int | float) and math.isfinite(value) and value >= 0):
                raise SettingsError(f"{key} must be a time >= 0 s, got {value!r}")
        if isinstance(self.bus_channels, bool) or not (
            isinstance(self.bus_channels, int) and self.bus_channels >= 0
        ):
            raise SettingsError(f"bus_channels must be an integer >= 0, got {self.bus_channels!r}")

    def electronics_s(self, channels: int, n_channels: int) -> float:
        """The electronics' time to write ``channels`` of the driver's ``n_channels``, s (0 when
        nothing is written); the heaters' settling comes after it."""
        if not 0 <= channels <= n_channels or n_channels < 1:
            raise SettingsError(f"channels must be in 0..{n_channels}, got {channels}")
        if channels == 0:
            return 0.0
        serial = min(channels, self.bus_channels) if self.bus_channels else channels
        return self.update_s + serial * self.channel_s + self.full_s * channels / n_channels


BENCH = DriverClass(
    "bench", channel_s=BENCH_CHANNEL_S, summary="lab driver, channels written one by one"
)
PARALLEL = DriverClass(
    "parallel",
    update_s=20e-6,
    channel_s=24 / 50e6,
    bus_channels=40,
    summary="40-channel DACs on their own buses, updated at once",
)
PRODUCT = DriverClass(
    "product", update_s=15e-3, full_s=75e-3, summary="published product, 15-90 ms"
)
INTEGRATED = DriverClass("integrated", update_s=3e-6, summary="co-packaged, one DAC per heater")
#: The classes by name, slowest first.
DRIVER_CLASSES = {d.name: d for d in (PRODUCT, BENCH, PARALLEL, INTEGRATED)}


def driver_class(name: str) -> DriverClass:
    """The class called ``name`` (a key of :data:`DRIVER_CLASSES`)."""
    try:
        return DRIVER_CLASSES[name]
    except KeyError:
        raise SettingsError(
            f"unknown driver class {name!r}; the classes are {', '.join(DRIVER_CLASSES)}"
        ) from None
