"""Conformance checks of other labs' unmodified drivers (tsl570), registered with
:func:`tests.hil.clients.check`."""

from __future__ import annotations
