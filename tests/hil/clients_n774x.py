"""Conformance checks of other labs' unmodified drivers (n774x), registered with
:func:`tests.hil.clients.check`."""

from __future__ import annotations
