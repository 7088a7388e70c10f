"""Emulated instruments: servers on loopback that impersonate a bench, backed by one chip."""
