"""Tests of :mod:`firmware`."""
