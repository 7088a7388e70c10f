"""A bench configuration: each instrument of a bench by role (model, VISA resource, channels
and how they are wired to the chip) and the chip on it.

The same file drives the emulated bench (``pswitch serve`` writes it) and a real one (written by
hand, see ``docs/bench.md``): only the resource strings and models differ. A versioned document
of :mod:`firmware.documents` (``"schema": "pswitch.bench"``, ``"version": 2``), written
atomically; a version 1 file (one N774x meter, channel k on output k) is read as the same bench.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import MISSING, asdict, dataclass, fields
from typing import Any

from firmware.documents import ContentError, DocumentFormat, read_document, write_document
from hil.instruments.registry import MODELS, ROLES, Role, model
from photonics.errors import SettingsError

SCHEMA = "pswitch.bench"
VERSION = 2


#: The line terminations an instrument's manual may give: LF, CR, CR LF.
TERMINATIONS = ("\n", "\r", "\r\n")


@dataclass(frozen=True)
class Instrument:
    """One instrument: its ``model`` (a name of :data:`hil.instruments.registry.MODELS`), its
    VISA ``resource``, the ``channels`` the bench uses (None: the model's) and, for a meter, the
    chip output on each channel (``ports[k]``, None: not wired), for the input switch the chip
    input fed by each of its outputs. Empty ``ports``: channel k on port k (a meter's numbered
    on from the previous meter's). ``read_termination`` and ``write_termination``: what ends the
    instrument's replies and the lines sent to it, as its manual frames them (one of
    :data:`TERMINATIONS`; a Santec TSL-570 replies with CR)."""

    model: str
    resource: str
    channels: int | None = None
    ports: tuple[int | None, ...] = ()
    read_termination: str = "\n"
    write_termination: str = "\n"

    def checked(self, role: Role) -> Instrument:
        """This instrument, its fields checked for ``role`` (:class:`SettingsError` naming
        the bad value)."""
        if not isinstance(self.model, str):
            raise SettingsError(f"{role}: model must be a string, got {self.model!r}")
        kind = model(self.model, role)
        if not isinstance(self.resource, str) or not self.resource.strip():
            raise SettingsError(f"{role} {self.model}: needs a VISA resource string")
        n = self.channels
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
            raise SettingsError(f"{role} {self.model}: channels must be an integer >= 1, got {n!r}")
        if n is not None and kind.channels and n > kind.channels:
            raise SettingsError(
                f"{role} {self.model}: has {kind.channels} channels, configured {n}"
            )
        ports = tuple(self.ports)
        if any(p is not None and (isinstance(p, bool) or not isinstance(p, int)) for p in ports):
            raise SettingsError(f"{role} {self.model}: ports must be integers or null, got {ports}")
        used = n or kind.channels
        if ports and used and len(ports) != used:
            raise SettingsError(
                f"{role} {self.model}: ports gives {len(ports)} chip ports for {used} channels"
            )
        for name in ("read_termination", "write_termination"):
            if getattr(self, name) not in TERMINATIONS:
                raise SettingsError(
                    f"{role} {self.model}: {name} must be one of {TERMINATIONS}, "
                    f"got {getattr(self, name)!r}"
                )
        return Instrument(
            self.model, self.resource, n, ports, self.read_termination, self.write_termination
        )

    @property
    def n_channels(self) -> int:
        """The channels used: configured, else the model's (0: found from the instrument)."""
        return self.channels or MODELS[self.model].channels


@dataclass(frozen=True)
class BenchConfig:
    """What :class:`hil.bench.Bench` opens and how the chip on the bench is built.

    Instruments (:class:`Instrument`): ``heater_driver`` (a Qontrol on a serial line),
    ``meters`` (one or more power meters that between them read every chip output once),
    ``laser``, ``input_switch`` (the 1xN module feeding the laser into one chip input; None:
    the module in the laser's 8164B mainframe), optionally ``switch`` (a pswitch controller's
    resource) and ``spare`` instruments a bench serves but the routines do not use. The VISA
    library: ``visa_backend`` (``@py`` pyvisa-py, ``@ivi`` the system's NI/Keysight VISA).

    The chip: ``ports``, ``mesh``, ``chip_id``; the heater channels of its output rings
    (``ring_channels``, ring k in front of output k), the heaters' safe current
    ``max_current_mA`` and total ``power_budget_mW`` (None: the heater driver's full output),
    written into the heater driver's limits. ``heater_layout``: where the chip's heaters are,
    for ``CAL:RUN`` to decide on and fit their thermal crosstalk: ``"drawn"``, where the
    project's wired layout draws them (:func:`photonics.feedforward.chip_geometry.drawn_layout`, a
    feed-forward chip), or ``""`` (not known: no crosstalk calibrated). Timing of the heater
    electronics, to wait before a reading: ``channel_write_s`` per channel written and
    ``settle_s`` of thermal settling. ``clock``: ``"real"`` (real instruments: the host sleeps
    through every settle) or ``"virtual"`` (an emulated bench on a virtual clock,
    :class:`hil.emulator.clock.VirtualClock`: the host sleeps nothing and each reading asks
    the meter to wait for the optics first, ``*WAI``, so the bench's time jumps instead).
    Light: ``wavelength_nm`` and ``laser_power_mW``. ``timeout_s`` of every instrument's
    replies. ``safe_current_mA``: what every heater is set to when the bench closes, with the
    laser off (the safe state).
    """

    heater_driver: Instrument
    meters: tuple[Instrument, ...]
    laser: Instrument
    input_switch: Instrument | None = None
    switch: str = ""
    spare: tuple[tuple[str, Instrument], ...] = ()
    visa_backend: str = "@py"
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
    safe_current_mA: float = 0.0
    heater_layout: str = "drawn"
    clock: str = "real"

    #: What ``heater_layout`` may say.
    HEATER_LAYOUTS = ("drawn", "")
    #: What ``clock`` may say.
    CLOCKS = ("real", "virtual")

    def __post_init__(self) -> None:
        if isinstance(self.ports, bool) or not isinstance(self.ports, int) or self.ports < 2:
            raise SettingsError(f"ports must be an integer >= 2, got {self.ports!r}")
        put = object.__setattr__
        put(self, "heater_driver", _instrument(self.heater_driver, "heater_driver"))
        put(self, "laser", _instrument(self.laser, "laser"))
        if self.input_switch is not None:
            put(self, "input_switch", _instrument(self.input_switch, "input_switch"))
        elif self.laser.model != "8164B":
            raise SettingsError(
                f"input_switch: a {self.laser.model} laser has no 1xN module; give the input "
                "switch (model 8164B-switch) and its resource"
            )
        if isinstance(self.meters, Mapping) or not self.meters:
            raise SettingsError("meters: give a list of one or more power meters")
        put(self, "meters", tuple(_instrument(m, "power_meter") for m in self.meters))
        self.meter_ports()  # every output read once
        for role, _ in self.spare:
            if role not in ROLES:
                raise SettingsError(f"spare: role must be one of {ROLES}, got {role!r}")
        put(self, "spare", tuple((r, _instrument(i, r)) for r, i in self.spare))
        for name in ("switch", "visa_backend", "mesh", "chip_id", "heater_layout", "clock"):
            if not isinstance(getattr(self, name), str):
                raise SettingsError(f"{name} must be a string, got {getattr(self, name)!r}")
        if self.heater_layout not in self.HEATER_LAYOUTS:
            raise SettingsError(
                f'heater_layout must be "drawn" or "" (not known), got {self.heater_layout!r}'
            )
        if self.clock not in self.CLOCKS:
            raise SettingsError(f'clock must be "real" or "virtual", got {self.clock!r}')
        put(self, "ring_channels", tuple(_integer("ring_channels", c) for c in self.ring_channels))
        for name in ("channel_write_s", "settle_s", "safe_current_mA"):
            value = _number(name, getattr(self, name))
            if value < 0:
                raise SettingsError(f"{name} must be >= 0, got {value}")
        budget = self.power_budget_mW
        if budget is not None and not (_number("power_budget_mW", budget) > 0):
            raise SettingsError(f"power_budget_mW must be > 0 or null, got {budget}")
        for name in ("wavelength_nm", "laser_power_mW", "timeout_s", "max_current_mA"):
            if not _number(name, getattr(self, name)) > 0:
                raise SettingsError(f"{name} must be > 0, got {getattr(self, name)}")
        if self.safe_current_mA > self.max_current_mA:
            raise SettingsError(
                f"safe_current_mA {self.safe_current_mA} is above max_current_mA "
                f"{self.max_current_mA}"
            )

    def meter_ports(self) -> list[tuple[int, int, int]]:
        """Where each chip output is read: ``(output, meter index, channel)`` by output.
        Every output 0 to ``ports - 1`` must be read by exactly one meter channel."""
        seen: dict[int, tuple[int, int]] = {}
        offset = 0
        for i, meter in enumerate(self.meters):
            n = meter.n_channels or len(meter.ports)
            if not n:
                raise SettingsError(f"meters[{i}] {meter.model}: give channels or ports")
            ports = meter.ports or tuple(
                p if p < self.ports else None for p in range(offset, offset + n)
            )
            offset += n
            for channel, port in enumerate(ports):
                if port is None:
                    continue
                if not 0 <= port < self.ports:
                    raise SettingsError(
                        f"meters[{i}] channel {channel}: chip output {port} is not one of the "
                        f"{self.ports} outputs"
                    )
                if port in seen:
                    raise SettingsError(
                        f"chip output {port} is wired to two meter channels "
                        f"(meters[{seen[port][0]}] and meters[{i}])"
                    )
                seen[port] = (i, channel)
        missing = sorted(set(range(self.ports)) - set(seen))
        if missing:
            raise SettingsError(f"no meter channel reads chip output(s) {missing}")
        return [(port, *seen[port]) for port in range(self.ports)]

    def input_ports(self) -> dict[int, int]:
        """The input switch's output feeding each chip input (``{input: switch output}``)."""
        ports = self.input_switch.ports if self.input_switch is not None else ()
        if not ports:
            return {k: k for k in range(self.ports)}
        found = {int(p): k for k, p in enumerate(ports) if p is not None}
        missing = sorted(set(range(self.ports)) - set(found))
        if missing:
            raise SettingsError(f"input_switch: no output feeds chip input(s) {missing}")
        return found

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the configuration atomically (a crash leaves the old file or the new one)."""
        body = asdict(self)
        body["spare"] = [{"role": role, **asdict(i)} for role, i in self.spare]
        write_document(path, FORMAT, body)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> BenchConfig:
        """Read a configuration; a missing, malformed or newer file is refused with
        :class:`~photonics.errors.SettingsError`, naming the file and why. Fields left out
        take their defaults."""
        try:
            return read_document(path, FORMAT, _bench_config)
        except OSError as exc:
            raise SettingsError(f"cannot read bench config {path}: {exc}") from exc


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise SettingsError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def _integer(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SettingsError(f"{name} must hold integers, got {value!r}")
    return value


def _instrument(value: Any, role: Role) -> Instrument:
    """An :class:`Instrument` from itself or from a file's object, checked for ``role``."""
    if isinstance(value, Instrument):
        return value.checked(role)
    if not isinstance(value, Mapping):
        raise SettingsError(
            f"{role}: give an object with model and resource, got {value!r}"
            + (" (a version 1 resource string?)" if isinstance(value, str) else "")
        )
    known = {f.name for f in fields(Instrument)}
    extra = sorted(set(value) - known)
    if extra:
        raise SettingsError(f"{role}: unexpected field(s) {', '.join(extra)}")
    if "model" not in value or "resource" not in value:
        raise SettingsError(f"{role}: needs model and resource")
    ports = value.get("ports", ())
    if not isinstance(ports, list | tuple):
        raise SettingsError(f"{role}: ports must be a list, got {ports!r}")
    return Instrument(
        value["model"],
        value["resource"],
        value.get("channels"),
        tuple(ports),
        value.get("read_termination", "\n"),
        value.get("write_termination", "\n"),
    ).checked(role)


def _bench_config(body: dict[str, Any]) -> BenchConfig:
    """The configuration in a file's fields; its ranges are checked by :class:`BenchConfig`."""
    body = dict(body)
    spare = body.get("spare", [])
    if not isinstance(spare, list) or not all(isinstance(s, dict) for s in spare):
        raise ContentError("spare must be a list of instruments, each with a role")
    body["spare"] = tuple(
        (s.get("role", ""), {k: v for k, v in s.items() if k != "role"}) for s in spare
    )
    for name in ("meters", "ring_channels"):
        if name in body and not isinstance(body[name], list):
            raise ContentError(f"{name} must be a list, got {body[name]!r}")
    try:
        return BenchConfig(**body)
    except TypeError as exc:  # a value of the wrong type
        raise ContentError(str(exc)) from exc


def _from_version_1(version: int, body: dict[str, Any]) -> dict[str, Any]:
    """A version 1 body as version 2: one N774x meter (its channels the chip's outputs, in
    order), the laser by ``laser_model``, the input switch by resource (empty: the laser's).
    Fields a file lacks stay missing (and are named so)."""
    body = dict(body)
    ports = body.get("ports", 8)
    if "heater_driver" in body:
        body["heater_driver"] = {"model": "Q8iv", "resource": body["heater_driver"]}
    if "power_meter" in body:
        meter = "N7744A" if isinstance(ports, int) and ports <= 4 else "N7745A"
        body["meters"] = [{"model": meter, "resource": body.pop("power_meter")}]
    model = body.pop("laser_model", "8164B")
    if "laser" in body:
        body["laser"] = {"model": model, "resource": body["laser"]}
    switch = body.pop("input_switch", "")
    body["input_switch"] = {"model": "8164B-switch", "resource": switch} if switch else None
    return body


FORMAT = DocumentFormat(
    "bench config",
    SCHEMA,
    VERSION,
    tuple(f.name for f in fields(BenchConfig)),
    SettingsError,
    optional=frozenset(f.name for f in fields(BenchConfig) if f.default is not MISSING),
    upgrade=_from_version_1,
)
