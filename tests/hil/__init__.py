"""Tests of :mod:`hil`."""
