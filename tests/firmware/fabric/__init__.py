"""Tests of :mod:`firmware.fabric`, one module per module of the package."""
