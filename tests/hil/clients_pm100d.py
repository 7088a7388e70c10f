"""Conformance checks of other labs' unmodified drivers (pm100d), registered with
:func:`tests.hil.clients.check`."""

from __future__ import annotations
