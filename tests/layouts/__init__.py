"""Tests of :mod:`layouts`."""
