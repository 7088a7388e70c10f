"""The package's error hierarchy.

Every invalid input raises a subclass of :class:`InvalidInputError` (itself a ``ValueError``)
whose message names the bad value and the allowed range.
"""


class PswitchError(Exception):
    """Base of every error raised by pswitch."""


class InvalidInputError(PswitchError, ValueError):
    """An argument is outside what the function accepts."""


class PortError(InvalidInputError):
    """A port index is out of range, or used twice."""


class MatchingError(InvalidInputError):
    """A matching or permutation is malformed (self-pair, not an involution, ...)."""


class ShapeError(InvalidInputError):
    """An array has the wrong shape or size for the mesh or element."""


class SettingsError(InvalidInputError):
    """A setting or model parameter is out of its allowed range (or not finite)."""


class NotUnitaryError(InvalidInputError):
    """A matrix that must be unitary is not, within the stated tolerance."""


class LimitError(InvalidInputError):
    """A request would exceed a hardware limit (channel current, total power budget)."""


class FitError(PswitchError):
    """Measurements do not determine the fitted parameters (too few points, no contrast, ...)."""
