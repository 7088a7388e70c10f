"""Errors of the instrument layer; each names the resource it concerns."""

from __future__ import annotations

from photonics.errors import PswitchError


class InstrumentError(PswitchError):
    """An instrument session or driver failed; ``resource`` names the instrument."""

    def __init__(self, resource: str, message: str) -> None:
        self.resource, self.message = resource, message
        super().__init__(f"{resource}: {message}")


class InstrumentTimeoutError(InstrumentError):
    """The instrument did not answer within the session's timeout."""


class ConnectionLostError(InstrumentError):
    """The connection dropped and could not be re-established within the retries."""


class InstrumentReportedError(InstrumentError):
    """The instrument reported an error (its error queue, or an ``E<code>`` reply): ``code``."""

    def __init__(self, resource: str, code: int, message: str) -> None:
        self.code = code
        super().__init__(resource, f"error {code}: {message}")
