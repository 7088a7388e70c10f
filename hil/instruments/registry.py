"""The instrument models a bench can hold, by name, each with its role and driver.

A bench configuration (:mod:`hil.bench_config`) names each instrument by model; the bench
(:class:`hil.bench.Bench`) opens it with :func:`open_instrument`, which picks the driver here.
The roles and what a routine needs of each:

- ``power_meter``: :class:`PowerMeter` (channels read in one request, wavelength correction);
  the N774x family also logs (latency measurements);
- ``laser``: :class:`~hil.instruments.lasers.Laser`;
- ``input_switch``: :class:`~hil.instruments.switch.OpticalSwitch`, the 1xN module that feeds
  the laser into one chip input;
- ``heater_driver``: :class:`~hil.instruments.qontrol.Qontrol`, opened by the bench itself (it
  needs the bench's light to be the firmware's driver).

To add a model: write its driver (or reuse one) and add a :class:`Model` to :data:`MODELS`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

from hil.errors import InstrumentError
from hil.instruments.base import Connection
from hil.instruments.lasers import TSL570, Laser8164B
from hil.instruments.power_meters import N7744A, N7744A_CHANNELS, PM100D
from hil.instruments.switch import OpticalSwitch
from photonics.errors import SettingsError

Role = Literal["heater_driver", "power_meter", "laser", "input_switch"]
ROLES: tuple[Role, ...] = ("heater_driver", "power_meter", "laser", "input_switch")


class PowerMeter(Protocol):
    """What a bench routine needs from a power meter: ``n_channels`` channels, 0-based."""

    resource: str
    n_channels: int

    def set_wavelength_nm(self, nm: float) -> None: ...

    def read_all_mW(self, channels: Sequence[int] | None = None, wait: bool = False) -> np.ndarray:
        """A new reading of every channel, or of ``channels`` in that order, mW; with
        ``wait``, once pending operations have ended (``*WAI`` in the same line)."""
        ...


@dataclass(frozen=True)
class Model:
    """One instrument model: its ``name`` as a bench configuration writes it, its ``role``,
    who makes it, its channels (meters: detectors; 0: found from the instrument) and how its
    driver is built from a connection and the channels a bench uses (None: the model's)."""

    name: str
    role: Role
    maker: str
    channels: int
    build: Callable[[Connection, int | None], object]
    #: What its ``*IDN?`` reply's model field matches (a regular expression; "": not asked).
    identity: str = ""


def _n774x(name: str) -> Model:
    return Model(
        name,
        "power_meter",
        "Keysight",
        N7744A_CHANNELS[name],
        lambda conn, channels: N7744A(conn, channels or N7744A_CHANNELS[name]),
        r"N774\d[AC]?",
    )


MODELS: dict[str, Model] = {
    m.name: m
    for m in (
        *(_n774x(name) for name in N7744A_CHANNELS),
        Model("PM100D", "power_meter", "Thorlabs", 1, lambda conn, _: PM100D(conn), "PM100D"),
        Model("8164B", "laser", "Keysight", 0, lambda conn, _: Laser8164B(conn), r"816[34][AB]"),
        Model("TSL570", "laser", "Santec", 0, lambda conn, _: TSL570(conn), r"TSL-?570"),
        Model(
            "8164B-switch",
            "input_switch",
            "Keysight",
            0,
            lambda conn, _: OpticalSwitch(conn),
            r"816[34][AB]",
        ),
        Model("Q8iv", "heater_driver", "Qontrol", 0, None),
    )
}


def model(name: str, role: Role) -> Model:
    """The model called ``name``, which must have ``role``; :class:`SettingsError` naming the
    models of that role otherwise."""
    found = MODELS.get(name)
    if found is None or found.role != role:
        known = ", ".join(m.name for m in MODELS.values() if m.role == role)
        raise SettingsError(f"unknown {role.replace('_', ' ')} model {name!r}; known: {known}")
    return found


def models(role: Role) -> list[str]:
    """The names of the models of ``role``."""
    return [m.name for m in MODELS.values() if m.role == role]


def open_instrument(name: str, role: Role, conn: Connection, channels: int | None = None):
    """The driver of model ``name`` (of ``role``) on ``conn``, using ``channels`` channels
    (None: the model's), once the instrument's ``*IDN?`` says it is one
    (:func:`check_identity`)."""
    found = model(name, role)
    assert found.build is not None, f"{name} is opened by the bench"
    check_identity(found, conn)
    return found.build(conn, channels)


def check_identity(expected: Model, conn: Connection) -> None:
    """Raise :class:`~hil.errors.InstrumentError` naming what answered when the instrument on
    ``conn`` is not an ``expected`` (its ``*IDN?`` model field), before any command of its
    own is sent: a laser address that is a power meter says so."""
    if not expected.identity:
        return
    try:
        reply = conn.query("*IDN?")
    except InstrumentError as exc:
        raise InstrumentError(
            exc.resource,
            f"no answer to *IDN? from the {expected.role.replace('_', ' ')}: {exc.message}",
        ) from None
    fields = [f.strip() for f in reply.split(",")]
    if len(fields) >= 2 and re.fullmatch(expected.identity, fields[1], re.IGNORECASE):
        return
    answered = " ".join(fields[:2]) if len(fields) >= 2 else repr(reply)
    role = expected.role.replace("_", " ")
    raise InstrumentError(
        getattr(conn, "resource", "?"),
        f"the {role} should be a {expected.maker} {expected.name}, but a {answered} answered "
        f"(*IDN? {reply!r}): check the bench configuration's resource",
    )
