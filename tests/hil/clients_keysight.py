"""Conformance checks of other labs' unmodified drivers (keysight), registered with
:func:`tests.hil.clients.check`."""

from __future__ import annotations
